//! oxrun's PMI server checked byte for byte: this test binary re-runs itself
//! under oxrun as the ranks (role chosen by OXRUN_TEST_ROLE), speaks raw
//! PMI-1 / PMI-2 over PMI_FD and panics on any reply that differs from the
//! wire format. The parent asserts on oxrun's exit code and messages.

mod common;

use std::time::Duration;

use common::pmi::Pmi;

const LIMIT: Duration = Duration::from_secs(60);

fn role_pmi1(p: &mut Pmi) {
    let (r, n) = (p.rank, p.size);
    p.init1();
    p.ask1(
        "cmd=get_maxes\n",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
    );
    p.ask1("cmd=get_appnum\n", "cmd=appnum appnum=0\n");
    p.ask1(
        "cmd=get_universe_size\n",
        &format!("cmd=universe_size size={n}\n"),
    );
    let kvs = p.kvsname();
    assert!(kvs.starts_with("kvs_"), "{kvs}");
    p.ask1(
        &format!("cmd=get kvsname={kvs} key=PMI_process_mapping\n"),
        &format!("cmd=get_result rc=0 msg=success value=(vector,(0,1,{n}))\n"),
    );
    p.ask1(
        &format!("cmd=put kvsname={kvs} key=card-{r} value=v\\ {r}\n"),
        "cmd=put_result rc=0 msg=success\n",
    );
    p.ask1("cmd=barrier_in\n", "cmd=barrier_out\n");
    for other in 0..n {
        p.ask1(
            &format!("cmd=get kvsname={kvs} key=card-{other}\n"),
            &format!("cmd=get_result rc=0 msg=success value=v\\ {other}\n"),
        );
    }
    p.ask1(
        &format!("cmd=get kvsname={kvs} key=nothing\n"),
        "cmd=get_result rc=-1 msg=key_nothing_not_found value=unknown\n",
    );
    // A second epoch: new keys become visible after the next barrier.
    p.second_epoch(&kvs);
    p.ask1("cmd=finalize\n", "cmd=finalize_ack\n");
}

fn role_pmi2(p: &mut Pmi) {
    let (r, n) = (p.rank, p.size);
    p.ask1(
        "cmd=init pmi_version=2 pmi_subversion=0\n",
        "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n",
    );
    let jobid = std::env::var("PMI_JOBID").unwrap();
    p.ask2(
        &format!("cmd=fullinit;pmijobid={jobid};pmirank={r};threaded=FALSE;"),
        &format!("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank={r};size={n};appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
    );
    p.ask2(
        "cmd=job-getid;",
        &format!("cmd=job-getid-response;rc=0;jobid={jobid};"),
    );
    p.ask2(
        "cmd=info-getjobattr;key=PMI_process_mapping;",
        &format!("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,{n}));"),
    );
    p.ask2(
        "cmd=info-getjobattr;key=universeSize;",
        &format!("cmd=info-getjobattr-response;rc=0;found=TRUE;value={n};"),
    );
    p.ask2(
        &format!("cmd=kvs-put;key=bc-{r};value=addr={r};"),
        "cmd=kvs-put-response;rc=0;",
    );
    p.ask2("cmd=kvs-fence;", "cmd=kvs-fence-response;rc=0;");
    for other in 0..n {
        p.ask2(
            &format!("cmd=kvs-get;jobid={jobid};srcid=-1;key=bc-{other};"),
            &format!("cmd=kvs-get-response;rc=0;found=TRUE;value=addr={other};"),
        );
    }
    p.ask2(
        &format!("cmd=kvs-get;jobid={jobid};srcid=-1;key=none;"),
        "cmd=kvs-get-response;rc=0;found=FALSE;",
    );
    // Node attributes: rank 0 puts, the others wait for it.
    if r == 0 {
        p.ask2(
            "cmd=info-putnodeattr;key=shm;value=seg1;",
            "cmd=info-putnodeattr-response;rc=0;",
        );
    }
    p.ask2(
        "cmd=info-getnodeattr;key=shm;wait=TRUE;",
        "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=seg1;",
    );
    p.ask2("cmd=finalize;", "cmd=finalize-response;rc=0;");
}

fn run_role(role: &str) {
    let mut p = Pmi::from_env();
    match role {
        "pmi1" => role_pmi1(&mut p),
        "pmi2" => role_pmi2(&mut p),
        "garbage" => {
            p.send(b"hello world\n");
            std::thread::sleep(Duration::from_secs(20));
        }
        "oversized" => {
            p.send(&vec![b'x'; 70_000]);
            std::thread::sleep(Duration::from_secs(20));
        }
        "before_init" => {
            p.send(b"cmd=get_maxes\n");
            std::thread::sleep(Duration::from_secs(20));
        }
        "bad_pmi2_length" => {
            p.ask1(
                "cmd=init pmi_version=2 pmi_subversion=0\n",
                "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n",
            );
            p.send(b"abcdefcmd=x;");
            std::thread::sleep(Duration::from_secs(20));
        }
        "abort" | "abort256" => {
            p.init1();
            let code = if role == "abort" { 9 } else { 256 };
            if p.rank == p.size - 1 {
                p.send(format!("cmd=abort exitcode={code} message=giving\\ up\n").as_bytes());
            }
            std::thread::sleep(Duration::from_secs(20));
        }
        "no_finalize" => {
            p.init1();
            if p.rank != 0 {
                std::thread::sleep(Duration::from_secs(20));
            }
        }
        "silent_exit" | "silent_exit_first" => {
            // The last rank ends at once without PMI; the others fence.
            if p.rank == p.size - 1 {
                return;
            }
            if role == "silent_exit_first" {
                std::thread::sleep(Duration::from_millis(500));
            }
            p.init1();
            // Before the fix nobody ended the job: give up after a while,
            // exiting 0 so that oxrun's exit code shows the hang.
            p.wait_in_fence_then_exit();
        }
        "late_init" => {
            if p.rank == p.size - 1 {
                std::thread::sleep(Duration::from_secs(2));
            }
            role_pmi1(&mut p);
        }
        other => panic!("unknown role {other}"),
    }
}

/// The entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXRUN_TEST_ROLE") {
        run_role(&role);
    }
}

fn job(n: usize, role: &str) -> common::Outcome {
    let n = n.to_string();
    let mut args = vec!["-n".to_string(), n];
    args.extend(common::self_as_rank(role));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = common::command(&args);
    cmd.env_remove("RUST_BACKTRACE");
    common::run_cmd(cmd, None, LIMIT)
}

#[test]
fn pmi1_exchange_is_byte_exact() {
    for n in [1, 2, 5] {
        let out = job(n, "pmi1");
        assert_eq!(out.code, Some(0), "n={n}: {}", out.stderr);
    }
}

#[test]
fn pmi2_exchange_is_byte_exact() {
    for n in [1, 3] {
        let out = job(n, "pmi2");
        assert_eq!(out.code, Some(0), "n={n}: {}", out.stderr);
    }
}

#[test]
fn sixty_four_ranks_fence_and_exchange() {
    let out = job(64, "pmi1");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

fn assert_protocol_failure(role: &str, expected: &str) {
    let out = job(2, role);
    assert_ne!(out.code, Some(0), "{role}: {out:?}");
    assert!(
        out.elapsed < Duration::from_secs(5),
        "{role}: took {:?}",
        out.elapsed
    );
    let first = out
        .stderr
        .lines()
        .find(|l| l.starts_with("oxrun:"))
        .unwrap_or_default();
    assert!(first.contains(expected), "{role}: {}", out.stderr);
}

#[test]
fn malformed_oversized_and_out_of_protocol_messages_end_the_job() {
    assert_protocol_failure("garbage", "broke the PMI protocol");
    assert_protocol_failure("oversized", "exceeds the limit");
    assert_protocol_failure("before_init", "expected cmd=init first");
    assert_protocol_failure("bad_pmi2_length", "length prefix");
}

#[test]
fn pmi_abort_ends_the_job_with_its_code() {
    let out = job(3, "abort");
    assert_eq!(out.code, Some(9), "{out:?}");
    assert!(out.elapsed < Duration::from_secs(5));
    assert!(
        out.stderr.contains("rank 2") && out.stderr.contains("giving up"),
        "{}",
        out.stderr
    );
}

/// An abort code of 256 (low 8 bits 0) must not make oxrun exit 0.
#[test]
fn abort_code_256_gives_exit_status_1() {
    let out = job(2, "abort256");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("exit code 256 (exit status 1)"),
        "{}",
        out.stderr
    );
}

#[test]
fn exit_without_finalize_while_others_run_is_a_failure() {
    let out = job(2, "no_finalize");
    assert_ne!(out.code, Some(0));
    assert!(out.elapsed < Duration::from_secs(5));
    assert!(
        out.stderr.contains("rank 0") && out.stderr.contains("without finalizing"),
        "{}",
        out.stderr
    );
}

/// A rank that ends (exit 0) without ever speaking PMI while the others
/// wait for it in a fence (before it exits, or after) ends the job at once,
/// naming it.
#[test]
fn rank_gone_before_init_ends_a_waiting_fence() {
    for (n, role) in [
        (2, "silent_exit"),
        (3, "silent_exit"),
        (3, "silent_exit_first"),
    ] {
        let out = job(n, role);
        assert_eq!(out.code, Some(1), "{role} n={n}: {out:?}");
        assert!(
            out.elapsed < Duration::from_secs(3),
            "{role} n={n}: took {:?}",
            out.elapsed
        );
        let lines: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("oxrun:"))
            .collect();
        let last = format!("rank {} ", n - 1);
        assert!(
            lines.len() == 1
                && lines[0].contains(&last)
                && lines[0].contains("without initializing"),
            "{role} n={n}: {}",
            out.stderr
        );
    }
}

/// Ranks that never use PMI, and a rank that initializes late, are fine.
#[test]
fn non_mpi_ranks_and_late_init_still_succeed() {
    let out = common::run(&["-n", "3", "true"], LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = job(3, "late_init");
    assert_eq!(out.code, Some(0), "{out:?}");
}
