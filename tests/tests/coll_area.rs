//! Small collectives through the communicator's shared-memory area
//! (`coll/area`) in real processes: chosen by the cost model on one host
//! (the selection log says `shm`), and ranks blocked in them, more ranks
//! than cores included, sleep instead of spinning.

use std::time::{Duration, Instant};

use oxmpi::ops::Op;
use oxmpi_tests::{oxrun, role_job, JobOutcome};

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    match std::env::var("OXMPI_TEST_ROLE").as_deref() {
        Ok("idle") => idle_role(),
        Ok("leader_leaves_first") => leader_leaves_first_role(),
        Ok(other) => panic!("unknown role {other}"),
        Err(_) => {}
    }
}

fn job(n: usize, env: &[(&str, &str)]) -> JobOutcome {
    role_job_as(n, "idle", env)
}

fn role_job_as(n: usize, role: &str, env: &[(&str, &str)]) -> JobOutcome {
    let mut env = env.to_vec();
    env.push(("OXMPI_DEBUG", "coll"));
    role_job(&oxrun(), n, role, &env, Duration::from_secs(120))
}

/// CPU time this process used so far (user and system).
fn cpu_time() -> Duration {
    // SAFETY: an all-zero rusage is a valid value; getrusage writes into it.
    let mut u: nix::libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { nix::libc::getrusage(nix::libc::RUSAGE_SELF, &mut u) };
    let tv = |t: nix::libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// The last rank sleeps before each of an allreduce and a non-blocking
/// barrier; the others wait in them meanwhile, and must have used little
/// CPU doing so. The results are checked against the serial sum.
fn idle_role() {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let (me, last, p) = (world.rank(), world.size() - 1, world.size() as u64);
    // Warm up: the area is made at the first call.
    let mut x = [me as u64 + 1, 7];
    world.allreduce_in_place(&mut x, &Op::SUM).unwrap();
    assert_eq!(x, [p * (p + 1) / 2, 7 * p]);
    let nap = Duration::from_millis(1500);
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    if me == last {
        std::thread::sleep(nap);
    }
    let mut y = [me as u64 * 3];
    world.allreduce_in_place(&mut y, &Op::SUM).unwrap();
    assert_eq!(y[0], 3 * p * (p - 1) / 2);
    if me == last {
        std::thread::sleep(nap);
    }
    world.ibarrier().unwrap().wait().unwrap();
    let (cpu, wall) = (cpu_time() - cpu0, wall0.elapsed());
    if me != last {
        assert!(wall > 2 * nap - nap / 4, "rank {me} waited only {wall:?}");
        assert!(
            cpu < wall / 5,
            "rank {me} used {cpu:?} of CPU in {wall:?} blocked in shared-memory collectives"
        );
    }
    universe.finalize().unwrap();
}

#[test]
fn blocked_ranks_sleep_in_shared_memory_collectives() {
    // Two ranks on two cores, and four on two (oversubscribed).
    for n in [2, 4] {
        let out = job(n, &[]);
        assert!(out.success(), "{n} ranks:\n{}", out.describe());
        assert!(
            out.stderr
                .lines()
                .any(|l| l.starts_with("oxmpi[coll]: allreduce ") && l.contains("-> shm ")),
            "{n} ranks: the cost model did not pick shm for an 8-byte allreduce:\n{}",
            out.stderr
        );
    }
}

#[test]
fn message_algorithms_when_the_area_is_off() {
    let out = job(2, &[("OXMPI_SHM_COLL_BYTES", "0")]);
    assert!(out.success(), "{}", out.describe());
    assert!(
        !out.stderr.contains("-> shm "),
        "shm chosen with OXMPI_SHM_COLL_BYTES=0:\n{}",
        out.stderr
    );
}

/// Rank 0 makes a communicator's area at a bcast it roots, returns at once
/// and frees the communicator, then opens files (taking the freed
/// descriptor numbers) while the others, late, open the area from its
/// set-up message: they must still find it, and the value.
fn leader_leaves_first_role() {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let me = world.rank();
    for round in 0..10u64 {
        let comm = world.dup().unwrap();
        if me != 0 {
            std::thread::sleep(Duration::from_millis(30));
        }
        let mut x = [if me == 0 { 1000 + round } else { 0 }];
        comm.bcast(&mut x, 0).unwrap();
        assert_eq!(x[0], 1000 + round, "rank {me}, round {round}");
        drop(comm);
        let _files: Vec<_> = (0..4)
            .map(|_| std::fs::File::open("/proc/self/stat").unwrap())
            .collect();
        world.barrier().unwrap();
    }
    universe.finalize().unwrap();
}

#[test]
fn members_open_the_area_after_the_leader_freed_it() {
    for n in [2, 3, 4] {
        let out = role_job_as(n, "leader_leaves_first", &[]);
        assert!(out.success(), "{n} ranks:\n{}", out.describe());
        assert!(
            out.stderr.contains("oxmpi[coll]: bcast 8 B") && out.stderr.contains("-> shm "),
            "{n} ranks: the bcast did not go through the area:\n{}",
            out.stderr
        );
    }
}
