//! The rank programs of the reliability suite.

use std::time::{Duration, Instant};

/// The bytes rank 0 of the `ptrace` role exposes.
pub const PATTERN: &[u8; 16] = b"ptrace-me-please";
/// Where rank 0 of `ptrace` writes `pid:address` (a file name).
pub const TARGET_FILE_VAR: &str = "OXMPI_PTRACE_TARGET_FILE";
/// `pid:address` that the `cma_read` role reads 16 bytes at.
pub const TARGET_VAR: &str = "OXMPI_PTRACE_TARGET";
/// Exit status of `cma_read` when the kernel refused the read.
pub const DENIED: i32 = 3;

/// Rank 0 exposes [`PATTERN`]; rank 1 (a sibling) must read it with CMA;
/// then rank 0 publishes `pid:address` in the file named by
/// [`TARGET_FILE_VAR`] and stays until `<file>.done` appears.
fn ptrace() {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let word = Box::new(*PATTERN);
    let addr = word.as_ptr() as u64;
    if world.rank() == 0 {
        world
            .send(&[std::process::id() as u64, addr], 1, 0)
            .expect("send");
        let file = std::env::var(TARGET_FILE_VAR).expect("target file variable");
        let tmp = format!("{file}.tmp");
        std::fs::write(&tmp, format!("{}:{addr}", std::process::id())).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        let start = Instant::now();
        while !std::path::Path::new(&format!("{file}.done")).exists() {
            assert!(start.elapsed() < Duration::from_secs(30), "no {file}.done");
            std::thread::sleep(Duration::from_millis(5));
        }
    } else if world.rank() == 1 {
        let mut got = [0u64; 2];
        world.recv(&mut got, 0, 0).expect("recv");
        let mut buf = [0u8; 16];
        oxmpi::transport::shm::cma::read_from(got[0] as i32, &[(got[1] as usize, 16)], &mut buf)
            .expect("a sibling rank reads rank 0 with CMA");
        assert_eq!(&buf, PATTERN);
    }
    world.barrier().expect("barrier");
    drop(word);
    universe.finalize().expect("finalize");
}

/// Reads 16 bytes at [`TARGET_VAR`]: 0 when they are [`PATTERN`],
/// [`DENIED`] when the kernel refused, 1 otherwise.
fn cma_read() -> i32 {
    let target = std::env::var(TARGET_VAR).expect("target variable");
    let (pid, addr) = target.split_once(':').expect("pid:address");
    let (pid, addr): (i32, usize) = (pid.parse().unwrap(), addr.parse().unwrap());
    let mut buf = [0u8; 16];
    match oxmpi::transport::shm::cma::read_from(pid, &[(addr, 16)], &mut buf) {
        Ok(16) if &buf == PATTERN => 0,
        Err(e)
            if e.to_string().contains("ermission") || e.to_string().contains("not permitted") =>
        {
            eprintln!("cma_read: {e}");
            DENIED
        }
        other => {
            eprintln!("cma_read: {other:?}");
            1
        }
    }
}

/// Runs `role` as a rank (or, for `abort256`, as a singleton).
pub fn run(role: &str) {
    match role {
        "init" => {
            let universe = oxmpi::init().expect("init");
            let world = universe.world();
            for _ in 0..3 {
                world.barrier().expect("barrier");
            }
            universe.finalize().expect("finalize");
        }
        "abort256" => {
            let universe = oxmpi::init().expect("init");
            universe.abort(256, "abort with a code whose low 8 bits are 0");
        }
        "ptrace" => ptrace(),
        "unexpected_flood" => unexpected_flood(),
        "cma_read" => std::process::exit(cma_read()),
        other => panic!("unknown role {other}"),
    }
}

/// Messages and their size in `unexpected_flood`.
const FLOOD: (usize, usize) = (10_000, 64 * 1024);
/// Most peak resident memory rank 1 of `unexpected_flood` may reach.
pub const FLOOD_RSS_LIMIT_KB: u64 = 128 * 1024;

/// Peak resident set of this process (VmHWM), in KiB.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// Rank 0 starts 10,000 sends of 64 KiB to rank 1, which receives them
/// only after a barrier; rank 1's peak RSS must stay under the limit.
fn unexpected_flood() {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let (count, size) = FLOOD;
    if world.rank() == 0 {
        let buf: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let reqs: Vec<_> = (0..count)
            .map(|i| world.isend(&buf, 1, (i % 1000) as i32).expect("isend"))
            .collect();
        world.barrier().expect("barrier");
        oxmpi::wait_all(reqs).expect("wait_all");
    } else if world.rank() == 1 {
        world.barrier().expect("barrier");
        let mut buf = vec![0u8; size];
        for i in 0..count {
            let s = world.recv(&mut buf, 0, (i % 1000) as i32).expect("recv");
            assert_eq!(s.count, size);
            // Every byte of every 500th message, a few of the others.
            let step = if i % 500 == 0 { 1 } else { 4099 };
            assert!(
                (0..size).step_by(step).all(|j| buf[j] == (j % 251) as u8),
                "message {i} corrupted"
            );
            buf[0] = !buf[0];
        }
        let peak = peak_rss_kb();
        println!("receiver peak RSS {peak} kB");
        assert!(
            peak < FLOOD_RSS_LIMIT_KB,
            "receiver peak RSS {peak} kB, limit {FLOOD_RSS_LIMIT_KB} kB"
        );
    }
    universe.finalize().expect("finalize");
}
