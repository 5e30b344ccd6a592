//! Faults while fabric traffic is in flight: a rank SIGKILLed mid-stream
//! on the second host, and the second host's link cut mid-stream. Role
//! `stream:kill` / `stream:forever`: ranks pair across hosts (by node,
//! rank r's partner r ^ 1 sits on the other host) and exchange 64 KiB
//! messages both ways in a loop, eager packets and rendezvous alike in
//! flight. The tests time the job's end from the fault itself: the
//! killed rank stamps the wall-clock time it kills itself; the test takes
//! the cut's time.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oxmpi::Comm;
use oxmpi_tests::{role_job_on, JobOutcome};

use super::{hosts, LIMIT};

/// Bytes per message: above the fabric's eager packet, so rendezvous
/// transfers are in flight as well as packets.
const BYTES: usize = 64 << 10;
/// Exchanges before the stream counts as established.
const WARM: u64 = 50;
/// How long after the fault the job must have ended.
const PROMPT: Duration = Duration::from_secs(3);
/// Where the killed rank stamps its time / ranks report they stream.
const STAMP_VAR: &str = "OXMPI_TEST_STAMP";

pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The role: stream until killed (`forever`), or until rank 1 kills itself
/// (`kill`) after stamping the time into `$OXMPI_TEST_STAMP`.
pub fn stream_role(which: &str) {
    let universe = oxmpi::init().expect("init");
    let world: Comm = universe.world();
    let stamp = std::env::var(STAMP_VAR).expect(STAMP_VAR);
    let me = world.rank();
    let peer = me ^ 1;
    assert!(peer < world.size(), "stream needs an even number of ranks");
    let out = vec![me as u8; BYTES];
    let mut back = vec![0u8; BYTES];
    world.barrier().unwrap();
    for i in 0u64.. {
        world.sendrecv(&out, peer, 1, &mut back, peer, 1).unwrap();
        assert!(back.iter().all(|&b| b == peer as u8));
        if i == WARM && me == 0 {
            std::fs::write(format!("{stamp}.streaming"), b"up").unwrap();
        }
        if which == "kill" && me == 1 && i == 2 * WARM {
            std::fs::write(&stamp, now_ns().to_string()).unwrap();
            // SAFETY: raising SIGKILL on ourselves.
            unsafe { nix::libc::kill(nix::libc::getpid(), nix::libc::SIGKILL) };
        }
    }
}

/// How long after `fault_ns` (ns since the epoch) the job was seen to end.
pub fn ended_after(out: &JobOutcome, fault_ns: u128) -> Duration {
    let end = out.ended_at.duration_since(UNIX_EPOCH).unwrap().as_nanos();
    Duration::from_nanos(end.saturating_sub(fault_ns) as u64)
}

/// The launcher's own lines (the job's one-line verdict).
pub fn oxrun_lines(out: &JobOutcome) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("oxrun:"))
        .collect()
}

#[test]
fn a_rank_killed_mid_stream_on_the_second_host_ends_the_job_within_3_s() {
    let Some(h) = hosts(
        2,
        "a_rank_killed_mid_stream_on_the_second_host_ends_the_job_within_3_s",
    ) else {
        return;
    };
    let stamp = h.dir().join("killed-at");
    let env = [(STAMP_VAR, stamp.to_str().unwrap())];
    let by_node = ["--map-by", "node"];
    let out = role_job_on(&h, &[2, 2], &by_node, "stream:kill", &env, LIMIT);
    assert!(!out.success(), "{}", out.describe());
    let killed: u128 = std::fs::read_to_string(&stamp)
        .unwrap_or_else(|e| panic!("no stamp ({e}):\n{}", out.describe()))
        .parse()
        .unwrap();
    let took = ended_after(&out, killed);
    assert!(
        took < PROMPT,
        "ended {took:?} after the kill:\n{}",
        out.describe()
    );
    let lines = oxrun_lines(&out);
    assert_eq!(lines.len(), 1, "one line:\n{}", out.describe());
    assert!(
        lines[0].contains("rank 1") && lines[0].contains("SIGKILL"),
        "the line names the rank and the cause:\n{}",
        out.describe()
    );
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
    eprintln!(
        "killed mid-stream: the job ended {took:?} later: {}",
        lines[0]
    );
}

/// Waits for `path` to exist (the ranks stream), up to the job's limit.
pub fn wait_for(path: &Path) {
    let start = std::time::Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < LIMIT, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_link_cut_mid_stream_ends_the_job_within_3_s() {
    let Some(h) = hosts(2, "a_link_cut_mid_stream_ends_the_job_within_3_s") else {
        return;
    };
    let stamp = h.dir().join("cut");
    let streaming = h.dir().join("cut.streaming");
    let env = [(STAMP_VAR, stamp.to_str().unwrap())];
    let out = std::thread::scope(|s| {
        let job = s.spawn(|| role_job_on(&h, &[1, 1], &[], "stream:forever", &env, LIMIT));
        wait_for(&streaming);
        std::thread::sleep(Duration::from_millis(200));
        let cut = now_ns();
        h.set_link(1, false).unwrap();
        (job.join().unwrap(), cut)
    });
    let (out, cut) = out;
    let took = ended_after(&out, cut);
    h.set_link(1, true).unwrap();
    assert!(!out.success(), "{}", out.describe());
    assert!(
        took < PROMPT,
        "ended {took:?} after the cut:\n{}",
        out.describe()
    );
    let lines = oxrun_lines(&out);
    assert_eq!(lines.len(), 1, "one line:\n{}", out.describe());
    assert!(
        lines[0].contains(&h.names()[1]),
        "the line names the host:\n{}",
        out.describe()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
    eprintln!(
        "link cut mid-stream: the job ended {took:?} later: {}",
        lines[0]
    );
}
