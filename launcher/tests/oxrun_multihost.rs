//! Multi-host launching, proved on this machine: each test builds two "hosts"
//! out of Linux network namespaces joined to the root namespace by a private
//! bridge, and runs oxrun with `--launcher-cmd 'ip netns exec'` so that the
//! agents really start through a launch command, dial back over TCP to the
//! root-side address given by `--control-addr`, authenticate with the secret
//! and run their ranks inside the namespaces. Traffic never leaves the bridge.
//!
//! Needs root and iproute2 (CI's setup script provides both). Without them
//! these tests fail with a message saying so; they are never skipped.
//!
//! Like oxrun_pmi.rs, this binary re-runs itself under oxrun as the ranks
//! (OXRUN_TEST_ROLE picks what they do), and as an intruder that opens bogus
//! connections to the controller.

mod common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use common::{command, processes_with, run_cmd, wait_gone, Outcome};
use oxmpi_launcher::proto::ToController;

const LIMIT: Duration = Duration::from_secs(30);
/// How fast a failure or a lost controller must end the job.
const PROMPT: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------------------
// The fixture: two test hosts made of network namespaces.
// ---------------------------------------------------------------------------

static NEXT_NET: AtomicUsize = AtomicUsize::new(0);
static SWEEP: Once = Once::new();

/// Runs `ip ARGS`; Err carries the command and what it printed.
fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run 'ip': {e} (is iproute2 installed?)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "'ip {}' failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Holds an exclusive lock on a file shared by every test process while it
/// picks and claims a subnet.
struct NetLock(std::fs::File);

impl NetLock {
    fn take() -> NetLock {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("oxrun-multihost-net.lock"))
            .expect("open the subnet lock file");
        // SAFETY: flock on a descriptor we own.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(rc, 0, "flock: {}", std::io::Error::last_os_error());
        NetLock(file)
    }
}

impl Drop for NetLock {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Our objects are named `ox<pid>-<n>...`; the pid in a name.
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("ox")?;
    let (pid, tail) = rest.split_once('-')?;
    if tail.is_empty() || !tail.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes namespaces and links left by test processes that died without
/// running their destructors (SIGKILL), or by an earlier process with our pid.
fn sweep_stale() {
    let me = std::process::id() as i32;
    let stale = |name: &str| {
        owner_pid(name).is_some_and(|pid| pid == me || !Path::new(&format!("/proc/{pid}")).exists())
    };
    if let Ok(list) = ip(&["-o", "link", "show"]) {
        for line in list.lines() {
            // "7: ox123-0br: <...>" or "8: ox123-0a0@if9: <...>"
            let Some(name) = line.split(": ").nth(1) else {
                continue;
            };
            let name = name.split('@').next().unwrap_or(name);
            if stale(name) {
                let _ = ip(&["link", "del", name]);
            }
        }
    }
    if let Ok(list) = ip(&["netns", "list"]) {
        for line in list.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            if stale(name) {
                kill_netns_pids(name);
                let _ = ip(&["netns", "del", name]);
            }
        }
    }
}

fn kill_netns_pids(ns: &str) {
    if let Ok(pids) = ip(&["netns", "pids", ns]) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            // SAFETY: kill(2); only processes inside our own test namespace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Two test hosts (`hosts[0]`, `hosts[1]`): network namespaces attached to a
/// bridge in the root namespace. The bridge has `ctl_ip` (.1 of a private
/// /24 unique to this test); the hosts have .2 and .3. Everything is removed
/// on drop, also when the test fails.
struct TestNet {
    id: String,
    hosts: [String; 2],
    host_ips: [String; 2],
    ctl_ip: String,
    namespaces: Vec<String>,
    links: Vec<String>,
    dir: PathBuf,
}

impl TestNet {
    fn new() -> TestNet {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert_eq!(
            euid, 0,
            "oxrun_multihost builds test hosts from network namespaces and needs root \
             (running as uid {euid}); CI runs it as root with iproute2 installed"
        );
        SWEEP.call_once(sweep_stale);
        let n = NEXT_NET.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let id = format!("ox{pid}-{n}");
        let dir = std::env::temp_dir().join(format!("oxrun-multihost-{id}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut net = TestNet {
            hosts: [format!("{id}a"), format!("{id}b")],
            host_ips: [String::new(), String::new()],
            ctl_ip: String::new(),
            namespaces: Vec::new(),
            links: Vec::new(),
            dir,
            id,
        };
        if let Err(e) = net.build(pid as usize * 16 + n) {
            panic!("cannot build the test hosts: {e}\n(these tests need root and iproute2's 'ip netns'; CI provides both)");
        }
        net
    }

    fn build(&mut self, seed: usize) -> Result<(), String> {
        let bridge = format!("{}br", self.id);
        {
            let _lock = NetLock::take();
            // 10.200.0.0 - 10.231.255.0: pick a /24 that nothing here uses.
            let mut prefix = None;
            for attempt in 0..256 {
                let k = (seed + attempt * 97) % (32 * 256);
                let candidate = format!("10.{}.{}", 200 + k / 256, k % 256);
                let net = format!("{candidate}.0/24");
                let inside = ip(&["-4", "route", "show", "table", "all", "root", &net])?;
                let around = ip(&["-4", "route", "show", "table", "all", "match", &net])?;
                let used = !inside.trim().is_empty()
                    || around
                        .lines()
                        .any(|l| !l.starts_with("default") && !l.starts_with("broadcast"));
                if !used {
                    prefix = Some(candidate);
                    break;
                }
            }
            let prefix = prefix.ok_or("no free 10.200-231.x.0/24 subnet")?;
            ip(&["link", "add", &bridge, "type", "bridge"])?;
            self.links.push(bridge.clone());
            self.ctl_ip = format!("{prefix}.1");
            ip(&[
                "addr",
                "add",
                &format!("{}/24", self.ctl_ip),
                "dev",
                &bridge,
            ])?;
            ip(&["link", "set", &bridge, "up"])?;
            self.host_ips = [format!("{prefix}.2"), format!("{prefix}.3")];
        }
        for i in 0..2 {
            let ns = self.hosts[i].clone();
            let (outer, inner) = (format!("{ns}0"), format!("{ns}1"));
            ip(&["netns", "add", &ns])?;
            self.namespaces.push(ns.clone());
            ip(&[
                "link", "add", &outer, "type", "veth", "peer", "name", &inner, "netns", &ns,
            ])?;
            self.links.push(outer.clone());
            ip(&["link", "set", &outer, "master", &bridge, "up"])?;
            let addr = format!("{}/24", self.host_ips[i]);
            ip(&["-n", &ns, "addr", "add", &addr, "dev", &inner])?;
            ip(&["-n", &ns, "link", "set", &inner, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    /// oxrun arguments that make the namespaces the job's remote hosts.
    fn oxrun_args(&self, hosts: &str) -> Vec<String> {
        vec![
            "--launcher-cmd".into(),
            "ip netns exec".into(),
            "--control-addr".into(),
            self.ctl_ip.clone(),
            "--host".into(),
            hosts.into(),
        ]
    }

    /// `a:2,b:2` with the namespace names filled in for `a` and `b`.
    fn host_list(&self, pattern: &str) -> String {
        pattern
            .split(',')
            .map(|item| {
                let (name, slots) = item.split_once(':').unwrap_or((item, ""));
                let name = match name {
                    "a" => self.hosts[0].as_str(),
                    "b" => self.hosts[1].as_str(),
                    other => other,
                };
                if slots.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}:{slots}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Writes an executable shell script into this test's directory.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }
}

impl Drop for TestNet {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            kill_netns_pids(ns);
        }
        // Deleting the root-side end of a veth removes both ends at once
        // (namespace teardown would do it only asynchronously).
        for link in self.links.iter().rev() {
            let _ = ip(&["link", "del", link]);
        }
        for ns in &self.namespaces {
            let _ = ip(&["netns", "del", ns]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// (device, inode) of a network namespace file.
fn netns_id(path: &str) -> (u64, u64) {
    let m = std::fs::metadata(path).unwrap_or_else(|e| panic!("stat {path}: {e}"));
    (m.dev(), m.ino())
}

fn netns_of_pid(pid: i32) -> Option<(u64, u64)> {
    let m = std::fs::metadata(format!("/proc/{pid}/ns/net")).ok()?;
    Some((m.dev(), m.ino()))
}

// ---------------------------------------------------------------------------
// Running oxrun.
// ---------------------------------------------------------------------------

fn oxrun_cmd(net: &TestNet, hosts: &str, rest: &[&str]) -> Command {
    oxrun_cmd_via(net, "ip netns exec", hosts, rest)
}

/// oxrun on the test hosts with another launch command.
fn oxrun_cmd_via(net: &TestNet, launcher: &str, hosts: &str, rest: &[&str]) -> Command {
    let mut args = net.oxrun_args(&net.host_list(hosts));
    args[1] = launcher.to_string();
    args.extend(rest.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = command(&refs);
    cmd.env_remove("RUST_BACKTRACE");
    cmd
}

fn oxrun(net: &TestNet, hosts: &str, rest: &[&str]) -> Outcome {
    run_cmd(oxrun_cmd(net, hosts, rest), None, LIMIT)
}

fn oxrun_lines(out: &Outcome) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("oxrun:"))
        .collect()
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.sort();
    lines
}

/// A command line that re-runs this test binary as a rank with `role`.
fn self_as_rank(role: &str) -> Vec<String> {
    vec![
        "-x".into(),
        format!("OXRUN_TEST_ROLE={role}"),
        std::env::current_exe().unwrap().to_string_lossy().into(),
        "--exact".into(),
        "role_entry".into(),
        "--nocapture".into(),
        "--test-threads=1".into(),
        "-q".into(),
    ]
}

/// Waits until `path` has `n` lines.
fn wait_for_lines(path: &Path, n: usize) {
    let start = Instant::now();
    while std::fs::read_to_string(path)
        .map(|s| s.lines().count())
        .unwrap_or(0)
        < n
    {
        assert!(start.elapsed() < LIMIT, "ranks did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ---------------------------------------------------------------------------
// Roles: what this binary does when oxrun runs it as a rank or intruder.
// ---------------------------------------------------------------------------

/// The entry point of the re-run copies; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXRUN_TEST_ROLE") {
        match role.as_str() {
            "pmi1" => role_pmi1(),
            "pmi2" => role_pmi2(),
            "intruder" => role_intruder(),
            "probe" => role_probe(),
            "fence_wait" => role_fence_wait(),
            other => panic!("unknown role {other}"),
        }
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

struct Pmi {
    sock: UnixStream,
    rank: usize,
    size: usize,
}

impl Pmi {
    fn from_env() -> Pmi {
        let fd: i32 = var("PMI_FD").parse().unwrap();
        // SAFETY: oxrun handed us this descriptor for our exclusive use.
        let sock = unsafe { UnixStream::from_raw_fd(fd) };
        Pmi {
            sock,
            rank: var("PMI_RANK").parse().unwrap(),
            size: var("PMI_SIZE").parse().unwrap(),
        }
    }

    fn line(&mut self) -> String {
        let mut out = Vec::new();
        let mut b = [0u8];
        while b[0] != b'\n' {
            self.sock.read_exact(&mut b).expect("reply line");
            out.push(b[0]);
        }
        String::from_utf8(out).unwrap()
    }

    fn ask1(&mut self, msg: &str, expect: &str) {
        self.sock.write_all(msg.as_bytes()).unwrap();
        let got = self.line();
        assert_eq!(got, expect, "rank {} sent {msg:?}", self.rank);
    }

    fn ask2(&mut self, body: &str, expect: &str) {
        self.sock
            .write_all(format!("{:<6}{body}", body.len()).as_bytes())
            .unwrap();
        let mut len = [0u8; 6];
        self.sock.read_exact(&mut len).unwrap();
        let n: usize = std::str::from_utf8(&len).unwrap().trim().parse().unwrap();
        let mut reply = vec![0u8; n];
        self.sock.read_exact(&mut reply).unwrap();
        let got = String::from_utf8(reply).unwrap();
        assert_eq!(got, expect, "rank {} sent {body:?}", self.rank);
    }
}

/// PMI-1 put / barrier / get of every rank's key, across hosts. Each rank
/// publishes the host it verified it runs on; everyone checks everyone.
fn role_pmi1() {
    let mut p = Pmi::from_env();
    let (r, n) = (p.rank, p.size);
    let hosts: Vec<String> = var("OXRUN_TEST_HOSTS")
        .split(',')
        .map(String::from)
        .collect();
    let me = check_my_host(r);
    p.ask1(
        "cmd=init pmi_version=1 pmi_subversion=1\n",
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
    );
    p.sock.write_all(b"cmd=get_my_kvsname\n").unwrap();
    let kvs = p
        .line()
        .strip_prefix("cmd=my_kvsname kvsname=")
        .expect("my_kvsname reply")
        .trim()
        .to_string();
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
    p.ask1(
        &format!("cmd=put kvsname={kvs} key=second-{r} value={}\n", r * 10),
        "cmd=put_result rc=0 msg=success\n",
    );
    p.ask1("cmd=barrier_in\n", "cmd=barrier_out\n");
    let peer = (r + 1) % n;
    p.ask1(
        &format!("cmd=get kvsname={kvs} key=second-{peer}\n"),
        &format!("cmd=get_result rc=0 msg=success value={}\n", peer * 10),
    );
    p.ask1("cmd=finalize\n", "cmd=finalize_ack\n");
    println!("pmi1 rank {r} of {n} ok on {me}");
}

/// The same over PMI-2.
fn role_pmi2() {
    let mut p = Pmi::from_env();
    let (r, n) = (p.rank, p.size);
    let hosts: Vec<String> = var("OXRUN_TEST_HOSTS")
        .split(',')
        .map(String::from)
        .collect();
    let me = check_my_host(r);
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
    p.ask1(
        "cmd=init pmi_version=1 pmi_subversion=1\n",
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
    );
    p.sock.write_all(b"cmd=barrier_in\n").unwrap();
    p.sock
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut b = [0u8; 64];
    let _ = p.sock.read(&mut b);
    std::process::exit(0);
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

// ---------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------

const WHERE_AM_I: &str =
    "echo \"$PMI_RANK $PMI_SIZE $MPI_LOCALRANKID $MPI_LOCALNRANKS $(ip netns identify)\"";

#[test]
fn ranks_run_on_their_hosts_with_labels_and_placement() {
    let net = TestNet::new();
    let (a, b) = (&net.hosts[0], &net.hosts[1]);
    let start = Instant::now();

    // By slot: a gets 0,1 and b gets 2,3.
    let out = oxrun(&net, "a:2,b:2", &["-n", "4", "-l", "sh", "-c", WHERE_AM_I]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        sorted_lines(&out.stdout),
        [
            format!("[0] 0 4 0 2 {a}"),
            format!("[1] 1 4 1 2 {a}"),
            format!("[2] 2 4 0 2 {b}"),
            format!("[3] 3 4 1 2 {b}"),
        ]
    );

    // By node: round-robin.
    let out = oxrun(
        &net,
        "a:2,b:2",
        &["-n", "4", "-l", "--map-by", "node", "sh", "-c", WHERE_AM_I],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        sorted_lines(&out.stdout),
        [
            format!("[0] 0 4 0 2 {a}"),
            format!("[1] 1 4 0 2 {b}"),
            format!("[2] 2 4 1 2 {a}"),
            format!("[3] 3 4 1 2 {b}"),
        ]
    );

    // This host mixed in: rank 0 runs locally (no namespace name), and
    // oversubscription wraps around to the first host again.
    let out = oxrun(
        &net,
        "localhost:1,a:1,b:1",
        &["-n", "4", "-l", "sh", "-c", &format!("{WHERE_AM_I} >&2")],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let err: BTreeSet<&str> = out.stderr.lines().collect();
    let expected = [
        "[0] 0 4 0 2 ".to_string(),
        format!("[1] 1 4 0 1 {a}"),
        format!("[2] 2 4 0 1 {b}"),
        "[3] 3 4 1 2 ".to_string(),
    ];
    assert_eq!(
        err,
        expected.iter().map(String::as_str).collect(),
        "{out:?}"
    );
    eprintln!("placement test: 3 jobs in {:?}", start.elapsed());
}

fn pmi_job(net: &TestNet, role: &str, hosts: &str, n: usize, map: &str) -> (Outcome, Vec<String>) {
    let n_text = n.to_string();
    let mut rest = vec!["-n", n_text.as_str(), "--map-by", map];
    let rank_cmd = self_as_rank(role);
    rest.extend(rank_cmd.iter().map(String::as_str));
    let mut cmd = oxrun_cmd(net, hosts, &rest);
    let placement: Vec<String> = match (hosts, map) {
        ("a:2,b:2", "slot") => vec![0, 0, 1, 1],
        ("a:2,b:2", "node") => vec![0, 1, 0, 1],
        ("a:1,b:2", "slot") => vec![0, 1, 1],
        _ => panic!("placement for {hosts} by {map} not tabled"),
    }
    .into_iter()
    .map(|h| net.hosts[h].clone())
    .collect();
    let mapping = match (hosts, map) {
        ("a:2,b:2", "slot") => "(vector,(0,2,2))",
        ("a:2,b:2", "node") => "(vector,(0,2,1))",
        _ => "(vector,(0,1,1),(1,1,2))",
    };
    let root = netns_id("/proc/self/ns/net");
    cmd.env("OXRUN_TEST_HOSTS", placement.join(","))
        .env("OXRUN_TEST_MAPPING", mapping)
        .env("OXRUN_TEST_ROOT_NETNS", format!("{}:{}", root.0, root.1));
    (run_cmd(cmd, None, LIMIT), placement)
}

#[test]
fn pmi_exchange_across_hosts() {
    let net = TestNet::new();
    for (role, hosts, n, map) in [
        ("pmi1", "a:2,b:2", 4, "slot"),
        ("pmi1", "a:2,b:2", 4, "node"),
        ("pmi2", "a:2,b:2", 4, "slot"),
        ("pmi2", "a:1,b:2", 3, "slot"),
    ] {
        let start = Instant::now();
        let (out, placement) = pmi_job(&net, role, hosts, n, map);
        assert_eq!(out.code, Some(0), "{role} {hosts} by {map}: {out:?}");
        let mut expected: Vec<String> = placement
            .iter()
            .enumerate()
            .map(|(r, h)| format!("{role} rank {r} of {n} ok on {h}"))
            .collect();
        expected.sort();
        let got: Vec<String> = sorted_lines(&out.stdout)
            .into_iter()
            .filter(|l| l.starts_with(role))
            .collect();
        assert_eq!(got, expected, "{out:?}");
        eprintln!("{role} {hosts} by {map}: {:?}", start.elapsed());
    }
}

#[test]
fn remote_rank_failure_ends_the_job_promptly() {
    let net = TestNet::new();
    let b = &net.hosts[1];
    let marker = format!("9{}.5", std::process::id());
    let script = format!("if [ $PMI_RANK = 3 ]; then exit 5; fi; exec sleep {marker}");
    let out = oxrun(&net, "a:2,b:2", &["-n", "4", "sh", "-c", &script]);
    assert_eq!(out.code, Some(5), "{out:?}");
    assert!(out.elapsed < PROMPT, "took {:?}", out.elapsed);
    let msgs = oxrun_lines(&out);
    assert_eq!(msgs.len(), 1, "one line about the failure: {out:?}");
    assert!(
        msgs[0].contains("rank 3 (pid")
            && msgs[0].contains(&format!("on {b})"))
            && msgs[0].contains("exited with code 5"),
        "{msgs:?}"
    );
    let left = wait_gone(&marker, PROMPT);
    assert!(left.is_empty(), "ranks left behind: {left:?}");
    eprintln!("exit 5 on {b}: oxrun ended in {:?}", out.elapsed);

    let script = format!("if [ $PMI_RANK = 2 ]; then kill -s KILL $$; fi; exec sleep {marker}");
    let out = oxrun(&net, "a:2,b:2", &["-n", "4", "sh", "-c", &script]);
    assert_eq!(out.code, Some(128 + 9), "{out:?}");
    assert!(out.elapsed < PROMPT, "took {:?}", out.elapsed);
    let msgs = oxrun_lines(&out);
    assert_eq!(msgs.len(), 1, "one line about the failure: {out:?}");
    assert!(
        msgs[0].contains("rank 2 (pid")
            && msgs[0].contains(&format!("on {b})"))
            && msgs[0].contains("SIGKILL"),
        "{msgs:?}"
    );
    let left = wait_gone(&marker, PROMPT);
    assert!(left.is_empty(), "ranks left behind: {left:?}");
    eprintln!("SIGKILL on {b}: oxrun ended in {:?}", out.elapsed);

    // A failure while another host is still being reached: the job ends
    // now, without waiting for that host, and nothing starts there.
    let a = &net.hosts[0];
    let slow_marker = format!("4.{}", std::process::id());
    let slow = net.script(
        "slow",
        &format!("if [ \"$1\" = {a} ]; then sleep {slow_marker}; fi\nexec ip netns exec \"$@\"\n"),
    );
    let script = format!("if [ $PMI_RANK = 3 ]; then exit 5; fi; exec sleep {marker}");
    let cmd = oxrun_cmd_via(&net, &slow, "a:2,b:2", &["-n", "4", "sh", "-c", &script]);
    let out = run_cmd(cmd, None, LIMIT);
    assert_eq!(out.code, Some(5), "{out:?}");
    assert!(
        out.elapsed < PROMPT,
        "waited for the slow host: {:?}",
        out.elapsed
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "only the failure, no agent noise: {out:?}");
    assert!(
        lines[0].contains("rank 3 (pid") && lines[0].contains("exited with code 5"),
        "{out:?}"
    );
    for m in [marker.as_str(), slow_marker.as_str(), a.as_str()] {
        let left = wait_gone(m, PROMPT);
        assert!(left.is_empty(), "left behind ({m}): {left:?}");
    }
    eprintln!(
        "exit 5 on {b} while {a} is still starting: oxrun ended in {:?}",
        out.elapsed
    );
}

/// Starts a 4-rank job whose ranks (and a background child each) carry
/// `marker`, kills oxrun with SIGKILL and checks everything is gone.
fn kill_oxrun_and_check(net: &TestNet, launcher: &str, marker: &str, detached: bool) {
    let ready = net.dir.join(format!("ready-{marker}"));
    let script = format!(
        "sleep {marker} & echo up >> {}; exec sleep {marker}",
        ready.display()
    );
    let mut child = oxrun_cmd_via(net, launcher, "a:2,b:2", &["-n", "4", "sh", "-c", &script])
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 4);
    let oxrun_pid = child.id() as i32;
    let ranks: Vec<i32> = processes_with(marker)
        .into_iter()
        .filter(|&p| p != oxrun_pid)
        .collect();
    assert!(ranks.len() >= 8, "ranks and their children: {ranks:?}");
    let host_ns: Vec<_> = net
        .hosts
        .iter()
        .map(|h| netns_id(&format!("/run/netns/{h}")))
        .collect();
    for pid in &ranks {
        let ns = netns_of_pid(*pid);
        assert!(
            ns.is_some_and(|ns| host_ns.contains(&ns)),
            "rank process {pid} is not on a test host"
        );
    }
    // The agents: never the secret on their command lines; and, detached,
    // not children of oxrun (only the TCP connection can tell them).
    let agents = processes_with(&format!("--proxy-host {}", net.id));
    let agents: Vec<i32> = agents
        .into_iter()
        .filter(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "oxrun")
        })
        .collect();
    assert_eq!(agents.len(), 2, "one agent per host: {agents:?}");
    for &agent in &agents {
        let cmdline = std::fs::read(format!("/proc/{agent}/cmdline")).unwrap();
        let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        assert!(
            !words
                .iter()
                .any(|w| w.len() == 48 && w.iter().all(u8::is_ascii_hexdigit)),
            "secret on an agent's command line"
        );
        let stat = std::fs::read_to_string(format!("/proc/{agent}/stat")).unwrap();
        let ppid: i32 = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            ppid == child.id() as i32,
            !detached,
            "agent {agent} has parent {ppid}, oxrun is {}",
            child.id()
        );
    }
    let killed = Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let left = wait_gone(marker, PROMPT);
    assert!(left.is_empty(), "ranks left behind: {left:?}");
    let agents_left = wait_gone(&format!("--proxy-host {}", net.id), PROMPT);
    assert!(
        agents_left.is_empty(),
        "agents left behind: {agents_left:?}"
    );
    eprintln!(
        "kill -9 oxrun ({}): all gone in {:?}",
        if detached {
            "detached agents"
        } else {
            "agents are children"
        },
        killed.elapsed()
    );
}

#[test]
fn no_remote_orphans_after_oxrun_is_killed() {
    let net = TestNet::new();
    let pid = std::process::id();
    kill_oxrun_and_check(&net, "ip netns exec", &format!("6{pid}1.25"), false);
    // The launch command's own child runs the agent, and outlives oxrun (as
    // an sshd would): only the dropped TCP connection ends the agents.
    let detach = net.script(
        "detach",
        "sh -c 'ip netns exec \"$@\"; exit $?' sh \"$@\"\nexit $?\n",
    );
    kill_oxrun_and_check(&net, &detach, &format!("6{pid}2.25"), true);
}

#[test]
fn connections_without_the_secret_are_dropped() {
    let net = TestNet::new();
    let exe = std::env::current_exe().unwrap();
    // Before starting the real agent, the wrapper makes bogus connections
    // from inside the test host; they must be dropped and must not take
    // the host's place.
    let wrapper = net.script(
        "intrude",
        &format!(
            "ip netns exec \"$1\" env OXRUN_TEST_ROLE=intruder OXRUN_INTRUDER_ADDR=\"$4\" \
             OXRUN_INTRUDER_HOST=\"$1\" {} --exact role_entry --nocapture --test-threads=1 -q \
             </dev/null >{log}-\"$1\" 2>&1 || {{ echo 'intruder was not dropped' >&2; exit 3; }}\n\
             exec ip netns exec \"$@\"\n",
            exe.display(),
            log = net.dir.join("intruder").display(),
        ),
    );
    let cmd = oxrun_cmd_via(
        &net,
        &wrapper,
        "a:1,b:1",
        &["-n", "2", "-l", "sh", "-c", WHERE_AM_I],
    );
    let out = run_cmd(cmd, None, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let (a, b) = (&net.hosts[0], &net.hosts[1]);
    assert_eq!(
        sorted_lines(&out.stdout),
        [format!("[0] 0 2 0 1 {a}"), format!("[1] 1 2 0 1 {b}")],
        "{out:?}"
    );
    for h in &net.hosts {
        let log = std::fs::read_to_string(net.dir.join(format!("intruder-{h}"))).unwrap();
        assert!(
            log.contains(&format!("intruder on {h}: 4 bogus connections dropped")),
            "{log}"
        );
    }
    assert_eq!(out.stderr, "", "{out:?}");
    eprintln!("intruders dropped; job took {:?}", out.elapsed);
}

/// A remote rank that exits without speaking PMI while ranks on both
/// hosts wait in a fence ends the job promptly, naming it.
#[test]
fn remote_rank_gone_before_init_ends_the_fence() {
    let net = TestNet::new();
    let b = &net.hosts[1];
    for (hosts, n) in [("a:1,b:1", "2"), ("a:2,b:2", "4")] {
        let mut rest = vec!["-n", n];
        let rank_cmd = self_as_rank("fence_wait");
        rest.extend(rank_cmd.iter().map(String::as_str));
        let out = oxrun(&net, hosts, &rest);
        assert_eq!(out.code, Some(1), "{hosts}: {out:?}");
        assert!(out.elapsed < PROMPT, "{hosts}: took {:?}", out.elapsed);
        let msgs = oxrun_lines(&out);
        let last = n.parse::<usize>().unwrap() - 1;
        assert!(
            msgs.len() == 1
                && msgs[0].contains(&format!("rank {last} (pid"))
                && msgs[0].contains(&format!("on {b})"))
                && msgs[0].contains("without initializing"),
            "{hosts}: {out:?}"
        );
    }
}

/// With `--control-addr`, the controller listens on that address only: a
/// connection to the same port on loopback is refused.
#[test]
fn controller_listens_only_on_the_control_address() {
    let net = TestNet::new();
    let exe = std::env::current_exe().unwrap();
    let log = net.dir.join("probe");
    let wrapper = net.script(
        "probe",
        &format!(
            "OXRUN_TEST_ROLE=probe OXRUN_PROBE_ADDR=\"$4\" {} --exact role_entry --nocapture \
             --test-threads=1 -q </dev/null >{log}-\"$1\" 2>&1\n\
             exec ip netns exec \"$@\"\n",
            exe.display(),
            log = log.display(),
        ),
    );
    let cmd = oxrun_cmd_via(&net, &wrapper, "a:1,b:1", &["-n", "2", "true"]);
    let out = run_cmd(cmd, None, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    for h in &net.hosts {
        let text = std::fs::read_to_string(format!("{}-{h}", log.display())).unwrap();
        assert!(text.contains("dial accepted"), "{h}: {text}");
        assert!(text.contains("loopback refused"), "{h}: {text}");
    }
}

#[test]
fn failing_launch_command_ends_the_job_with_one_line() {
    let net = TestNet::new();
    let marker = format!("5{}.75", std::process::id());
    let sleeper = format!("sleep {marker}");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            "false".into(),
            "a:1,b:1",
            "could not start the agent on host",
        ),
        (
            "false".into(),
            "localhost:1,a:1",
            "could not start the agent on host",
        ),
        // ip netns exec into a namespace that does not exist.
        ("ip netns exec".into(), "a:1,nosuchns-ox:1", "nosuchns-ox"),
        (
            "/nonexistent/launcher".into(),
            "localhost:1,b:1",
            "cannot run launch command '/nonexistent/launcher'",
        ),
    ];
    for (launcher, hosts, expected) in cases {
        let cmd = oxrun_cmd_via(&net, &launcher, hosts, &["-n", "2", "sh", "-c", &sleeper]);
        let out = run_cmd(cmd, None, LIMIT);
        assert_ne!(out.code, Some(0), "{launcher} {hosts}: {out:?}");
        assert!(
            out.elapsed < PROMPT,
            "{launcher} {hosts}: took {:?}",
            out.elapsed
        );
        let msgs = oxrun_lines(&out);
        assert_eq!(msgs.len(), 1, "{launcher} {hosts}: {out:?}");
        assert!(msgs[0].contains(expected), "{launcher} {hosts}: {msgs:?}");
        let left = wait_gone(&marker, PROMPT);
        assert!(
            left.is_empty(),
            "{launcher} {hosts}: ranks left behind: {left:?}"
        );
        eprintln!(
            "launch command {launcher:?} on {hosts}: {:?}: {}",
            out.elapsed, msgs[0]
        );
    }
}

#[test]
fn stdin_reaches_rank_zero_on_a_remote_host() {
    let net = TestNet::new();
    let (a, b) = (&net.hosts[0], &net.hosts[1]);
    let script = "read x; echo \"$PMI_RANK:$x:$(ip netns identify)\"";
    let cmd = oxrun_cmd(&net, "a:1,b:1", &["-n", "2", "sh", "-c", script]);
    let out = run_cmd(cmd, Some(b"hello\n"), LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        sorted_lines(&out.stdout),
        [format!("0:hello:{a}"), format!("1::{b}")]
    );
    // A megabyte through the TCP link, byte for byte (checksummed).
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 7 + i / 251) as u8).collect();
    let script = "if [ $PMI_RANK = 0 ]; then cksum; else cat; echo none; fi";
    let cmd = oxrun_cmd(&net, "b:1,a:1", &["-n", "2", "-l", "sh", "-c", script]);
    let start = Instant::now();
    let out = run_cmd(cmd, Some(&data), LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let mut ck = Command::new("cksum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    ck.stdin.take().unwrap().write_all(&data).unwrap();
    let want = String::from_utf8(ck.wait_with_output().unwrap().stdout).unwrap();
    assert_eq!(
        sorted_lines(&out.stdout),
        [format!("[0] {}", want.trim_end()), "[1] none".to_string()],
        "{out:?}"
    );
    eprintln!("1 MiB of stdin to rank 0 on {b}: {:?}", start.elapsed());
}

// ---------------------------------------------------------------------------
// Faults across hosts: heartbeats between oxrun and the remote agents.
// ---------------------------------------------------------------------------

/// How fast a cut link must end the job (the heartbeat limit is 2 s).
const CUT_PROMPT: Duration = Duration::from_secs(3);

/// Live (not zombie) processes inside network namespace `ns`.
fn netns_pids(ns: &str) -> Vec<i32> {
    ip(&["netns", "pids", ns])
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
        })
        .collect()
}

/// Waits until neither test host has a process left, up to `limit`;
/// returns the survivors.
fn wait_hosts_empty(net: &TestNet, limit: Duration) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left: Vec<i32> = net.hosts.iter().flat_map(|h| netns_pids(h)).collect();
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Cutting a host's link mid-job (its veth goes down inside its namespace:
/// no FIN, no RST, TCP just waits) ends the job within 3 s with one line
/// naming that host, and nothing is left on either host. Twice: with the
/// plain launch command (oxrun kills it, which takes the agent along), and
/// with one that, like ssh, runs the agent in its own session so that only
/// the agent's own heartbeat check can end it and its ranks.
#[test]
fn a_cut_link_ends_the_job_within_3_s() {
    let net = TestNet::new();
    let b = net.hosts[1].clone();
    let pid = std::process::id();
    let detached_marker = format!("8{pid}0.25");
    let detach = net.script(
        "detach-b",
        &format!(
            "if [ \"$1\" = {b} ]; then\n  setsid -f ip netns exec \"$@\"\n  exec sleep {detached_marker}\nfi\n\
             exec ip netns exec \"$@\"\n"
        ),
    );
    for (case, launcher) in [(1, "ip netns exec"), (2, detach.as_str())] {
        let marker = format!("8{pid}{case}.5");
        let ready = net.dir.join(format!("ready-{case}"));
        let errors = net.dir.join(format!("stderr-{case}"));
        let script = format!("echo up >> {}; exec sleep {marker}", ready.display());
        let mut child = oxrun_cmd_via(&net, launcher, "a:1,b:1", &["-n", "2", "sh", "-c", &script])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&errors).unwrap())
            .spawn()
            .unwrap();
        wait_for_lines(&ready, 2);
        let ranks: Vec<i32> = processes_with(&marker)
            .into_iter()
            .filter(|&p| p != child.id() as i32)
            .collect();
        assert_eq!(ranks.len(), 2, "case {case}: ranks: {ranks:?}");
        // Heartbeats have flowed for a while: the job is well established.
        std::thread::sleep(Duration::from_millis(700));
        ip(&["-n", &b, "link", "set", &format!("{b}1"), "down"]).unwrap();
        let cut = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if cut.elapsed() > LIMIT {
                // SAFETY: kill(2) on the test's own child's process group.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                panic!("case {case}: oxrun still runs {LIMIT:?} after the cut");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = cut.elapsed();
        // Everything gone from both hosts: ranks, agents, launch commands.
        let left = wait_hosts_empty(&net, CUT_PROMPT);
        assert!(left.is_empty(), "case {case}: left on the hosts: {left:?}");
        for m in [marker.as_str(), detached_marker.as_str()] {
            let left = wait_gone(m, PROMPT);
            assert!(left.is_empty(), "case {case}: left behind ({m}): {left:?}");
        }
        let agents = wait_gone(&format!("--proxy-host {}", net.id), PROMPT);
        assert!(agents.is_empty(), "case {case}: agents left: {agents:?}");
        let stderr = std::fs::read_to_string(&errors).unwrap();
        assert_eq!(status.code(), Some(1), "case {case}: {status:?}: {stderr}");
        assert!(took < CUT_PROMPT, "case {case}: took {took:?}: {stderr}");
        let msgs: Vec<&str> = stderr.lines().filter(|l| l.starts_with("oxrun:")).collect();
        assert_eq!(msgs.len(), 1, "case {case}: one line: {stderr}");
        assert!(
            msgs[0].contains(&format!("lost contact with host {b} (no word for")),
            "case {case}: {stderr}"
        );
        if case == 2 {
            // Only the agent's own heartbeat check could end it.
            assert!(
                stderr.contains("lost contact with oxrun (no word for"),
                "case {case}: {stderr}"
            );
        }
        eprintln!(
            "case {case}: oxrun ended {took:?} after the cut: {}",
            msgs[0]
        );
        ip(&["-n", &b, "link", "set", &format!("{b}1"), "up"]).unwrap();
    }
}

/// SIGKILL to every rank of one host ends the job promptly, naming a rank
/// of that host; nothing is left.
#[test]
fn all_ranks_of_a_host_killed_end_the_job() {
    let net = TestNet::new();
    let b = &net.hosts[1];
    let marker = format!("7{}.5", std::process::id());
    let ready = net.dir.join("ready");
    let script = format!(
        "echo \"$PMI_RANK $$\" >> {}; exec sleep {marker}",
        ready.display()
    );
    let cmd = oxrun_cmd(&net, "a:2,b:2", &["-n", "4", "sh", "-c", &script]);
    let killer = {
        let ready = ready.clone();
        let b_ns = netns_id(&format!("/run/netns/{b}"));
        std::thread::spawn(move || {
            wait_for_lines(&ready, 4);
            let text = std::fs::read_to_string(&ready).unwrap();
            let on_b: Vec<i32> = text
                .lines()
                .filter_map(|l| l.split_once(' '))
                .filter(|(rank, _)| *rank == "2" || *rank == "3")
                .map(|(_, pid)| pid.parse().unwrap())
                .collect();
            assert_eq!(on_b.len(), 2, "{text}");
            for &pid in &on_b {
                assert_eq!(netns_of_pid(pid), Some(b_ns), "rank pid {pid} not on b");
            }
            let killed = Instant::now();
            for &pid in &on_b {
                // SAFETY: kill(2) on a rank of our own test job.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            killed
        })
    };
    let out = run_cmd(cmd, None, LIMIT);
    let killed = killer.join().unwrap();
    assert_eq!(out.code, Some(128 + 9), "{out:?}");
    assert!(
        killed.elapsed() < PROMPT,
        "took {:?} after the kill",
        killed.elapsed()
    );
    let msgs = oxrun_lines(&out);
    assert_eq!(msgs.len(), 1, "one line about the failure: {out:?}");
    assert!(
        (msgs[0].contains("rank 2 (pid") || msgs[0].contains("rank 3 (pid"))
            && msgs[0].contains(&format!("on {b})"))
            && msgs[0].contains("SIGKILL"),
        "{msgs:?}"
    );
    let left = wait_gone(&marker, PROMPT);
    assert!(left.is_empty(), "ranks left behind: {left:?}");
    let left = wait_hosts_empty(&net, PROMPT);
    assert!(left.is_empty(), "left on the hosts: {left:?}");
}

/// Heartbeats are between oxrun and the agents: ranks spinning on every
/// core of both hosts for 5 s, and a rank stopped (SIGSTOP) for 3 s, do not
/// make a host look lost.
#[test]
fn busy_or_stopped_ranks_do_not_lose_their_host() {
    let net = TestNet::new();
    let script = "if [ $PMI_RANK = 3 ]; then (sleep 3; kill -s CONT $$) & kill -s STOP $$; \
                  echo resumed; wait; else timeout 5 sh -c 'while :; do :; done'; echo spun; fi";
    let out = oxrun(&net, "a:2,b:2", &["-n", "4", "-l", "sh", "-c", script]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(oxrun_lines(&out).is_empty(), "{out:?}");
    assert_eq!(
        sorted_lines(&out.stdout),
        ["[0] spun", "[1] spun", "[2] spun", "[3] resumed"],
        "{out:?}"
    );
    assert!(out.elapsed >= Duration::from_secs(5), "{out:?}");
    eprintln!("busy and stopped ranks: job took {:?}", out.elapsed);
}
