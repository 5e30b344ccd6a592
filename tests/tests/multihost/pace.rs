//! Role `pace`: fabric messages reach a rank whose recent traffic was all
//! shared memory (a rank with peers on both sides polls the fabric rarely
//! then; see runtime/src/transport/router/pace.rs). Run in a 2+2 job by
//! slot: ranks 0 and 1 share host A, ranks 2 and 3 host B. Every phase
//! ends only once the fabric message has been received, so a rank that
//! stopped looking at the fabric would hang the job (and fail the test
//! with the job's time limit); no phase asserts how long anything took.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oxmpi::{Comm, ANY_SOURCE};

/// Tags: the shared-memory ping-pong, then one per phase's fabric message.
const PING: i32 = 1;
const ANY: i32 = 10;
const BLOCKED: i32 = 11;
const THREADED: i32 = 12;
/// How long the host-B ranks wait before sending: ranks 0 and 1 are by
/// then long past any fabric traffic of their own.
const QUIET: Duration = Duration::from_millis(300);
/// How long a ping-pong phase runs before it gives up with a message (a
/// bound on liveness, far above what any phase needs; not a measurement).
const GIVE_UP: Duration = Duration::from_secs(60);

/// Runs the role in a 2+2 job by slot.
pub fn run() {
    let (universe, _) = oxmpi::init_thread(oxmpi::Threading::Multiple).expect("init");
    let world = universe.world();
    assert_eq!(world.size(), 4, "role pace runs on 2+2 ranks");
    let me = world.rank();
    any_source_while_shm_is_busy(&world, me);
    world.barrier().unwrap();
    blocking_wait_after_quiet(&world, me);
    world.barrier().unwrap();
    blocking_thread_beside_shm_traffic(&world, me);
    world.barrier().unwrap();
    universe.finalize().expect("finalize");
}

/// Rank 0's side of a ping-pong with rank 1 that runs until `done()`;
/// rank 1's side ([`pong_until_stopped`]) ends with it. Rank 0 never
/// blocks: it tests the reply (and calls `done`) until it is in, so it
/// never takes the last look at the fabric that precedes a sleep.
fn ping_until(world: &Comm, mut done: impl FnMut() -> bool, what: &str) -> u64 {
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut stop = false;
    loop {
        let mut back = [0u64; 2];
        world.send(&[rounds, stop as u64], 1, PING).unwrap();
        let mut r = world.irecv(&mut back, 1, PING).unwrap();
        while r.test().unwrap().is_none() {
            stop = stop || done();
        }
        drop(r);
        assert_eq!(back[0], rounds);
        if back[1] == 1 {
            return rounds;
        }
        stop = stop || done();
        rounds += 1;
        assert!(
            start.elapsed() < GIVE_UP,
            "{what}: not received after {rounds} shared-memory round trips"
        );
    }
}

fn pong_until_stopped(world: &Comm) {
    loop {
        let mut v = [0u64; 2];
        world.recv(&mut v, 0, PING).unwrap();
        world.send(&v, 0, PING).unwrap();
        if v[1] == 1 {
            return;
        }
    }
}

/// Rank 0 has an `MPI_ANY_SOURCE` receive posted while it ping-pongs with
/// rank 1 and tests it between round trips; rank 2 fills it later.
fn any_source_while_shm_is_busy(world: &Comm, me: i32) {
    match me {
        0 => {
            let mut got = [0i32];
            let mut r = world.irecv(&mut got, ANY_SOURCE, ANY).unwrap();
            let mut status = None;
            ping_until(
                world,
                || {
                    status = status.or_else(|| r.test().unwrap());
                    status.is_some()
                },
                "an ANY_SOURCE receive from the other host",
            );
            drop(r);
            let s = status.unwrap();
            assert_eq!((s.source, s.tag, got[0]), (2, ANY, 42));
        }
        1 => pong_until_stopped(world),
        2 => {
            std::thread::sleep(QUIET);
            world.send(&[42i32], 0, ANY).unwrap();
        }
        _ => {}
    }
}

/// After shared-memory traffic only, ranks 0 and 1 block in a receive
/// (rank 0 from any source, rank 1 from rank 3) that the other host's
/// ranks fill after a pause: found by a rare fabric poll while spinning,
/// or by the fabric's wake-up once asleep.
fn blocking_wait_after_quiet(world: &Comm, me: i32) {
    match me {
        0 | 1 => {
            let peer = 1 - me;
            for i in 0..20_000u32 {
                let mut v = [0u32];
                if me == 0 {
                    world.send(&[i], peer, PING).unwrap();
                    world.recv(&mut v, peer, PING).unwrap();
                } else {
                    world.recv(&mut v, peer, PING).unwrap();
                    world.send(&v, peer, PING).unwrap();
                }
                assert_eq!(v[0], i);
            }
            let from = if me == 0 { ANY_SOURCE } else { 3 };
            let mut v = [0i32];
            let s = world.recv(&mut v, from, BLOCKED).unwrap();
            assert_eq!((s.source, v[0]), (me + 2, 100 + me));
        }
        _ => {
            std::thread::sleep(QUIET);
            world.send(&[100 + me - 2], me - 2, BLOCKED).unwrap();
        }
    }
}

/// `MPI_THREAD_MULTIPLE`: one thread of rank 0 blocks in a receive from
/// rank 2 while another ping-pongs with rank 1 until the first is done.
fn blocking_thread_beside_shm_traffic(world: &Comm, me: i32) {
    match me {
        0 => {
            let received = AtomicBool::new(false);
            std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let mut v = [0i32];
                    let st = world.recv(&mut v, 2, THREADED).unwrap();
                    assert_eq!((st.source, v[0]), (2, 7));
                    received.store(true, Ordering::SeqCst);
                });
                ping_until(
                    world,
                    || received.load(Ordering::SeqCst),
                    "a blocking receive on another thread",
                );
                waiter.join().expect("the waiting thread panicked");
            });
        }
        1 => pong_until_stopped(world),
        2 => {
            std::thread::sleep(QUIET);
            world.send(&[7i32], 0, THREADED).unwrap();
        }
        _ => {}
    }
}
