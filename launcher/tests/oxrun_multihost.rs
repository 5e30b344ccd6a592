//! Multi-host launching, proved on this machine: each test builds two "hosts"
//! out of Linux network namespaces joined to the root namespace by a private
//! bridge (oxmpi-tests' fixture, tests/src/hosts.rs), and runs oxrun with `--launcher-cmd 'ip netns exec'` so that the
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
mod multihost;

use std::collections::BTreeSet;
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{processes_with, run_cmd, self_as_rank, wait_for_lines, wait_gone};
use multihost::jobs::{kill_oxrun_and_check, pmi_job};
use multihost::{
    netns_id, netns_of_pid, oxrun, oxrun_cmd, oxrun_cmd_via, oxrun_lines, roles, sorted_lines,
    TestNet, LIMIT, PROMPT,
};

/// The entry point of the re-run copies; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXRUN_TEST_ROLE") {
        roles::play(&role);
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
        wait_for_lines(&ready, 2, LIMIT);
        let ranks: Vec<i32> = processes_with(&marker)
            .into_iter()
            .filter(|&p| p != child.id() as i32)
            .collect();
        assert_eq!(ranks.len(), 2, "case {case}: ranks: {ranks:?}");
        // Heartbeats have flowed for a while: the job is well established.
        std::thread::sleep(Duration::from_millis(700));
        net.set_link(1, false);
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
        let left = net.wait_hosts_empty(CUT_PROMPT);
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
        net.set_link(1, true);
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
            wait_for_lines(&ready, 4, LIMIT);
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
    let left = net.wait_hosts_empty(PROMPT);
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

/// A starved agent or controller (as on a machine at load 30-50, which
/// delays heartbeats past 2 s) is not a lost host: its kernel still
/// acknowledges the beats. The remote agent and then oxrun itself are
/// stopped (SIGSTOP) for 3.5 s each, past the 2 s limit: the job runs on.
#[test]
fn a_stalled_agent_or_controller_does_not_lose_its_host() {
    let net = TestNet::new();
    let b = &net.hosts[1];
    let ready = net.dir.join("ready-stall");
    let script = format!("echo up >> {}; sleep 8; echo done", ready.display());
    let cmd = oxrun_cmd(&net, "a:1,b:1", &["-n", "2", "-l", "sh", "-c", &script]);
    let stopper = {
        let ready = ready.clone();
        let agent_marker = format!("--proxy-host {b}");
        std::thread::spawn(move || {
            wait_for_lines(&ready, 2, LIMIT);
            let agents = processes_with(&agent_marker);
            assert_eq!(agents.len(), 1, "b's agent: {agents:?}");
            // oxrun's command line is the only one with both.
            let script_text = ready.to_string_lossy().into_owned();
            let oxrun: Vec<i32> = processes_with("--control-addr")
                .into_iter()
                .filter(|p| processes_with(&script_text).contains(p))
                .collect();
            for (what, pids) in [("agent", agents), ("oxrun", oxrun)] {
                assert_eq!(pids.len(), 1, "{what}: {pids:?}");
                // SAFETY: kill(2) on a process of our own test job.
                unsafe { libc::kill(pids[0], libc::SIGSTOP) };
                std::thread::sleep(Duration::from_millis(3500));
                // SAFETY: as above.
                unsafe { libc::kill(pids[0], libc::SIGCONT) };
            }
        })
    };
    let out = run_cmd(cmd, None, LIMIT);
    stopper.join().unwrap();
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(oxrun_lines(&out).is_empty(), "{out:?}");
    assert_eq!(
        sorted_lines(&out.stdout),
        ["[0] done", "[1] done"],
        "{out:?}"
    );
}
