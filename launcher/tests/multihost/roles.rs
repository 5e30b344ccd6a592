//! What this test binary does when oxrun runs it as a rank (or a launch
//! command's wrapper runs it as an intruder or a probe): the role named by
//! OXRUN_TEST_ROLE.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use oxmpi_launcher::proto::ToController;

use super::netns_id;
use crate::common::pmi::Pmi;

/// Plays `role`.
pub fn play(role: &str) {
    match role {
        "pmi1" => role_pmi1(),
        "pmi2" => role_pmi2(),
        "intruder" => role_intruder(),
        "probe" => role_probe(),
        "fence_wait" => role_fence_wait(),
        other => panic!("unknown role {other}"),
    }
}

fn var(k: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| panic!("{k} not set"))
}

/// Checks that this rank runs in the namespace the test expects and returns
/// that host's name (`-` for the root namespace).
fn check_my_host(rank: usize) -> String {
    let hosts = var("OXRUN_TEST_HOSTS");
    let expected = hosts
        .split(',')
        .nth(rank)
        .expect("a host per rank")
        .to_string();
    let mine = netns_id("/proc/self/ns/net");
    let want = if expected == "-" {
        let root = var("OXRUN_TEST_ROOT_NETNS");
        let (dev, ino) = root.split_once(':').expect("dev:ino");
        (dev.parse().unwrap(), ino.parse().unwrap())
    } else {
        netns_id(&format!("/run/netns/{expected}"))
    };
    assert_eq!(mine, want, "rank {rank} should run on {expected}");
    expected
}

/// Every rank's host as the test placed them, and this rank's (checked).
fn hosts_and_mine(rank: usize) -> (Vec<String>, String) {
    let hosts = var("OXRUN_TEST_HOSTS")
        .split(',')
        .map(String::from)
        .collect();
    (hosts, check_my_host(rank))
}

/// PMI-1 put / barrier / get of every rank's key, across hosts. Each rank
/// publishes the host it verified it runs on; everyone checks everyone.
fn role_pmi1() {
    let mut p = Pmi::from_env();
    let (r, n) = (p.rank, p.size);
    let (hosts, me) = hosts_and_mine(r);
    p.init1();
    let kvs = p.kvsname();
    let mapping = var("OXRUN_TEST_MAPPING");
    p.ask1(
        &format!("cmd=get kvsname={kvs} key=PMI_process_mapping\n"),
        &format!("cmd=get_result rc=0 msg=success value={mapping}\n"),
    );
    // A value large enough to need several TCP segments once merged.
    let bulk = format!("{me}-{}", "x".repeat(900));
    p.ask1(
        &format!("cmd=put kvsname={kvs} key=host-{r} value={bulk}\n"),
        "cmd=put_result rc=0 msg=success\n",
    );
    p.ask1("cmd=barrier_in\n", "cmd=barrier_out\n");
    for (other, host) in hosts.iter().enumerate().take(n) {
        p.ask1(
            &format!("cmd=get kvsname={kvs} key=host-{other}\n"),
            &format!(
                "cmd=get_result rc=0 msg=success value={host}-{}\n",
                "x".repeat(900)
            ),
        );
    }
    // Second epoch.
    p.second_epoch(&kvs);
    p.ask1("cmd=finalize\n", "cmd=finalize_ack\n");
    println!("pmi1 rank {r} of {n} ok on {me}");
}

/// The same over PMI-2.
fn role_pmi2() {
    let mut p = Pmi::from_env();
    let (r, n) = (p.rank, p.size);
    let (hosts, me) = hosts_and_mine(r);
    p.ask1(
        "cmd=init pmi_version=2 pmi_subversion=0\n",
        "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n",
    );
    let jobid = var("PMI_JOBID");
    p.ask2(
        &format!("cmd=fullinit;pmijobid={jobid};pmirank={r};threaded=FALSE;"),
        &format!("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank={r};size={n};appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
    );
    let mapping = var("OXRUN_TEST_MAPPING");
    p.ask2(
        "cmd=info-getjobattr;key=PMI_process_mapping;",
        &format!("cmd=info-getjobattr-response;rc=0;found=TRUE;value={mapping};"),
    );
    p.ask2(
        &format!("cmd=kvs-put;key=bc-{r};value={me};"),
        "cmd=kvs-put-response;rc=0;",
    );
    p.ask2("cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;");
    for (other, host) in hosts.iter().enumerate().take(n) {
        p.ask2(
            &format!("cmd=kvs-get;jobid={jobid};srcid=-1;key=bc-{other};"),
            &format!("cmd=kvs-get-response;rc=0;found=TRUE;value={host};"),
        );
    }
    p.ask2("cmd=finalize;", "cmd=finalize-response;rc=0;");
    println!("pmi2 rank {r} of {n} ok on {me}");
}

/// Expects the controller to hang up on `stream` within a few seconds.
fn expect_dropped(mut stream: TcpStream, what: &str) {
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let mut buf = [0u8; 64];
    match stream.read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Ok(n) => panic!("intruder ({what}): the controller answered {n} bytes"),
        Err(e) => panic!("intruder ({what}): connection not dropped: {e}"),
    }
}

/// Run by a launch-command wrapper inside a test host before the real agent:
/// dials the controller like an agent would, without the secret.
fn role_intruder() {
    let addr = var("OXRUN_INTRUDER_ADDR");
    let host = var("OXRUN_INTRUDER_HOST");
    let connect = || TcpStream::connect(&addr).expect("intruder: connect to the controller");
    // The right host name, a wrong secret of the right length.
    let mut s = connect();
    let wrong = ToController::Hello {
        host: host.clone(),
        secret: "0".repeat(48),
    };
    s.write_all(&wrong.encode()).unwrap();
    expect_dropped(s, "wrong secret");
    // No secret at all.
    let mut s = connect();
    let empty = ToController::Hello {
        host: host.clone(),
        secret: String::new(),
    };
    s.write_all(&empty.encode()).unwrap();
    expect_dropped(s, "empty secret");
    // Another protocol entirely.
    let mut s = connect();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    expect_dropped(s, "http");
    // A well-formed frame that is not a Hello.
    let mut s = connect();
    s.write_all(&ToController::Done.encode()).unwrap();
    expect_dropped(s, "not a hello");
    eprintln!("intruder on {host}: 4 bogus connections dropped");
}

/// The last rank exits 0 at once without PMI; the others enter a fence
/// and wait (giving up, exit 0, after 10 s if nobody ends the job).
fn role_fence_wait() {
    let mut p = Pmi::from_env();
    if p.rank == p.size - 1 {
        return;
    }
    p.init1();
    p.wait_in_fence_then_exit();
}

/// Run by a launch-command wrapper in the root namespace: whether the
/// controller's port answers on the address agents dial and on loopback.
fn role_probe() {
    let addr = var("OXRUN_PROBE_ADDR");
    let port = addr.rsplit(':').next().unwrap_or_default();
    for (what, target) in [
        ("dial", addr.clone()),
        ("loopback", format!("127.0.0.1:{port}")),
    ] {
        let sock: std::net::SocketAddr = target.parse().expect("probe address");
        let answer = match TcpStream::connect_timeout(&sock, Duration::from_secs(2)) {
            Ok(_) => "accepted".to_string(),
            Err(e) => format!("refused ({e})"),
        };
        println!("{what} {answer}");
    }
}
