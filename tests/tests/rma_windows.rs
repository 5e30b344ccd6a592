//! The Rust API's typed windows (`oxmpi::rma::Window`) through the real
//! launcher: every epoch kind as a guard, each operation checked against
//! values computed serially, atomics as distributed counters with exact
//! totals, and errors as typed values. Each role re-runs this binary as
//! the ranks; a wrong value fails its rank and so the job.

use std::time::Duration;

use oxmpi::ops::Op;
use oxmpi::rma::{LockType, OneSided, Window};
use oxmpi::{Comm, ErrorClass};
use oxmpi_tests::{oxrun, role_job};

const LIMIT: Duration = Duration::from_secs(120);
/// Increments per rank in the counter roles.
const TICKETS: u64 = 500;

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    let Ok(role) = std::env::var("OXMPI_TEST_ROLE") else {
        return;
    };
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    match role.as_str() {
        "fence" => fence_ring(&world),
        "counter" => counter(&world),
        "pscw" => pscw(&world),
        "spinlock" => spinlock(&world),
        "accumulate" => accumulate_family(&world),
        "errors" => errors(&world),
        other => panic!("unknown role {other}"),
    }
    universe.finalize().expect("finalize");
}

fn check(ranks: &[usize], role: &str) {
    for &n in ranks {
        let out = role_job(&oxrun(), n, role, &[] as &[(&str, &str)], LIMIT);
        assert!(out.success(), "{role} on {n} ranks:\n{}", out.describe());
    }
}

/// Fence epochs: each rank puts its values into its right neighbour's
/// window and gets its left neighbour's back, two epochs in one guard.
fn fence_ring(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut win = Window::<f64>::allocate(world, 4).unwrap();
    {
        let mut epoch = win.fence().unwrap();
        let mine: Vec<f64> = (0..4).map(|i| (me * 10 + i) as f64).collect();
        epoch.put(right, 0, &mine).unwrap();
        epoch.advance().unwrap();
        let mut back = [0.0f64; 4];
        epoch.get(left, 0, &mut back).unwrap();
        epoch.end().unwrap();
        // Left's window holds what left's left neighbour put.
        let from = (left + n - 1) % n;
        let want: Vec<f64> = (0..4).map(|i| (from * 10 + i) as f64).collect();
        assert_eq!(back.to_vec(), want, "rank {me} got from {left}");
    }
    let local = win.local().unwrap();
    let want: Vec<f64> = (0..4).map(|i| (left * 10 + i) as f64).collect();
    assert_eq!(local.to_vec(), want, "rank {me}'s window");
    drop(local);
    win.free().unwrap();
}

/// Fetch-and-op tickets under shared locks and lock_all: every ticket
/// from 0 to n * TICKETS - 1 handed out exactly once, and the counter's
/// final value exact.
fn counter(world: &Comm) {
    let n = world.size() as u64;
    let mut win = Window::<u64>::allocate(world, 2).unwrap();
    let mut mine = Vec::new();
    for i in 0..TICKETS {
        if i % 2 == 0 {
            let lock = win.lock(LockType::Shared, 0).unwrap();
            mine.push(lock.fetch_and_op(0, 0, 1, &Op::SUM).unwrap());
            lock.end().unwrap();
        } else {
            let all = win.lock_all().unwrap();
            mine.push(all.fetch_and_op(0, 0, 1, &Op::SUM).unwrap());
            all.flush(Some(0)).unwrap();
            // And a running maximum of every rank's ticket on rank n-1.
            all.accumulate(world.size() - 1, 1, &[mine[mine.len() - 1]], &Op::MAX)
                .unwrap();
        }
    }
    let mut every = vec![0u64; (n * TICKETS) as usize];
    world.allgather(&mine, &mut every).unwrap();
    every.sort_unstable();
    assert!(
        every.iter().enumerate().all(|(i, &t)| t == i as u64),
        "tickets not a permutation"
    );
    world.barrier().unwrap();
    if world.rank() == 0 {
        assert_eq!(win.local().unwrap()[0], n * TICKETS);
    }
    if world.rank() == world.size() - 1 {
        let local = win.local().unwrap();
        assert!(
            local[1] >= (n - 1) * TICKETS && local[1] < n * TICKETS,
            "{}",
            local[1]
        );
    }
    win.free().unwrap();
}

/// Post-start-complete-wait: rank 0 exposes its window to everyone else,
/// who each write their own slot; rank 0 then sees every slot.
fn pscw(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let mut win = Window::<i32>::allocate(world, n as usize).unwrap();
    let group = world.group();
    if me == 0 {
        let others = group.excl(&[0]).unwrap();
        let mut exposure = win.post(&others).unwrap();
        while !exposure.test().unwrap() {
            std::thread::yield_now();
        }
        exposure.end().unwrap();
        let want: Vec<i32> = (0..n).map(|r| if r == 0 { 0 } else { r * r }).collect();
        assert_eq!(win.local().unwrap().to_vec(), want);
    } else {
        let zero = group.incl(&[0]).unwrap();
        let access = win.start(&zero).unwrap();
        access.put(0, me as usize, &[me * me]).unwrap();
        access.end().unwrap();
    }
    win.free().unwrap();
}

/// A lock built from compare-and-swap guards a plain read-modify-write
/// of a second element: the total is exact only if the lock excludes.
fn spinlock(world: &Comm) {
    let n = world.size() as i64;
    let mut win = Window::<i64>::allocate(world, 2).unwrap();
    let me = world.rank() as i64 + 1;
    let all = win.lock_all().unwrap();
    for _ in 0..100 {
        while all.compare_and_swap(0, 0, 0, me).unwrap() != 0 {
            std::thread::yield_now();
        }
        let mut v = [0i64];
        all.get(0, 1, &mut v).unwrap();
        all.put(0, 1, &[v[0] + 1]).unwrap();
        all.flush(Some(0)).unwrap();
        assert_eq!(all.compare_and_swap(0, 0, me, 0).unwrap(), me);
    }
    all.end().unwrap();
    world.barrier().unwrap();
    if world.rank() == 0 {
        assert_eq!(win.local().unwrap().to_vec(), vec![0, 100 * n]);
    }
    win.free().unwrap();
}

/// Accumulate with SUM, get_accumulate with REPLACE and NO_OP, against
/// serially computed values.
fn accumulate_family(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let mut win = Window::<i32>::allocate(world, 8).unwrap();
    {
        let epoch = win.fence().unwrap();
        let add: Vec<i32> = (0..8).map(|i| me * 100 + i).collect();
        epoch.accumulate(0, 0, &add, &Op::SUM).unwrap();
        epoch.end().unwrap();
    }
    world.barrier().unwrap();
    let sum_of_ranks: i32 = (0..n).sum();
    let want: Vec<i32> = (0..8).map(|i| 100 * sum_of_ranks + n * i).collect();
    let lock = win.lock(LockType::Exclusive, 0).unwrap();
    let mut seen = [0i32; 8];
    lock.get_accumulate(0, 0, &[0; 8], &mut seen, &Op::NO_OP)
        .unwrap();
    assert_eq!(seen.to_vec(), want, "after the sums");
    lock.end().unwrap();
    world.barrier().unwrap();
    // Each rank swaps its rank into element 7 in turn; the values seen
    // and the last one left form every rank exactly once.
    let lock = win.lock(LockType::Exclusive, 0).unwrap();
    let mut old = [0i32];
    lock.get_accumulate(0, 7, &[-1 - me], &mut old, &Op::REPLACE)
        .unwrap();
    lock.end().unwrap();
    let mut olds = vec![0i32; n as usize];
    world.allgather(&old, &mut olds).unwrap();
    world.barrier().unwrap();
    if me == 0 {
        let last = win.local().unwrap()[7];
        olds.push(last);
        olds.sort_unstable();
        let mut want: Vec<i32> = (0..n).map(|r| -1 - r).collect();
        want.push(want_element_7(n));
        want.sort_unstable();
        assert_eq!(olds, want);
    }
    win.free().unwrap();
}

/// Element 7 after the sums (the value the first swap sees).
fn want_element_7(n: i32) -> i32 {
    100 * (0..n).sum::<i32>() + n * 7
}

/// Errors as typed values: a target beyond the window, a rank beyond the
/// communicator, mismatched result length; the window stays usable.
fn errors(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let win = Window::<u32>::allocate(world, 4).unwrap();
    let all = win.lock_all().unwrap();
    let e = all.put(0, 3, &[1, 2]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::RmaRange, "{e}");
    let e = all.get(0, 100, &mut [0u32; 1]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::RmaRange, "{e}");
    let e = all.put(n, 0, &[1]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Rank, "{e}");
    let e = all
        .get_accumulate(0, 0, &[1, 2], &mut [0u32; 1], &Op::SUM)
        .unwrap_err();
    assert!(e.to_string().contains("result"), "{e}");
    all.accumulate((me + 1) % n, 0, &[1, 1, 1, 1], &Op::SUM)
        .unwrap();
    all.end().unwrap();
    world.barrier().unwrap();
    let mut win = win;
    assert_eq!(win.local().unwrap().to_vec(), vec![1, 1, 1, 1]);
    win.free().unwrap();
}

#[test]
fn fence_epochs_put_and_get_around_a_ring() {
    check(&[1, 2, 4], "fence");
}

#[test]
fn fetch_and_op_tickets_are_a_permutation_and_the_counter_is_exact() {
    check(&[1, 3, 4], "counter");
}

#[test]
fn post_start_complete_wait_exposes_to_a_group() {
    check(&[2, 4], "pscw");
}

#[test]
fn a_compare_and_swap_lock_excludes() {
    check(&[2, 3], "spinlock");
}

#[test]
fn accumulate_replace_and_no_op_match_a_serial_model() {
    check(&[1, 2, 4], "accumulate");
}

#[test]
fn bad_targets_are_typed_errors_and_the_window_stays_usable() {
    check(&[1, 2], "errors");
}
