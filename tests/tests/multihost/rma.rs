//! One-sided roles for jobs across hosts (run by `rma_hosts.rs` in 1+1,
//! 2+2 and 2+1 layouts): every flavor with derived datatypes on both
//! sides under fence, atomics as distributed counters with exact totals
//! under lock and lock_all, post-start-complete-wait, a target computing
//! without calling MPI while remote origins lock, put, accumulate and
//! flush, errors, and a rank that dies holding a lock others wait for. Every value is checked against a serial model; a
//! wrong one fails its rank and so the job.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use oxmpi::datatype::{BasicType, Datatype};
use oxmpi::ops::Op;
use oxmpi::rma::{At, Buf, LockType, OneSided, Win, Window};
use oxmpi::{Comm, ErrorClass, SplitType};

/// Increments per rank in the counter role.
const TICKETS: u64 = 200;

/// Runs role `role` on this rank.
pub fn run(role: &str) {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    match role {
        "flavors" => flavors(&world),
        "counter" => counter(&world),
        "accumulate" => accumulate_family(&world),
        "pscw" => pscw(&world),
        "busy" => busy_target(&world),
        "errors" => errors(&world),
        "dies" => dies_holding_a_lock(&world),
        other => panic!("unknown rma role {other}"),
    }
    universe.finalize().expect("finalize");
}

const FLAVORS: [&str; 4] = ["create", "allocate", "shared", "dynamic"];

/// A window of 8 ints of `flavor`; for create and dynamic, over `own`.
/// Returns the window and every rank's displacement of its first int.
fn window_of(world: &Comm, flavor: &str, own: &mut [i32; 8]) -> (Win, Vec<isize>) {
    let bytes = std::mem::size_of_val(own);
    let win = match flavor {
        // SAFETY: `own` outlives the window (freed before it goes).
        "create" => unsafe { Win::create(world, own.as_mut_ptr().cast(), bytes, 4) },
        "allocate" => Win::allocate(world, bytes, 4),
        "shared" => Win::allocate_shared(world, bytes, 4, false),
        "dynamic" => Win::create_dynamic(world),
        _ => unreachable!(),
    }
    .unwrap_or_else(|e| panic!("{flavor} window: {e}"));
    let n = world.size() as usize;
    if flavor != "dynamic" {
        let (base, _, _) = win.local();
        // SAFETY: the window's 8 ints on this rank.
        unsafe { std::slice::from_raw_parts_mut(base as *mut i32, 8) }.fill(-1);
        return (win, vec![0; n]);
    }
    own.fill(-1);
    win.attach(own.as_mut_ptr() as usize, bytes).unwrap();
    let mut addrs = vec![0u64; n];
    world.allgather(&[own.as_ptr() as u64], &mut addrs).unwrap();
    (win, addrs.iter().map(|&a| a as isize).collect())
}

/// This rank's 8 ints of the window.
fn local_of(win: &Win, flavor: &str, own: &[i32; 8]) -> Vec<i32> {
    if flavor == "dynamic" || flavor == "create" {
        return own.to_vec();
    }
    // SAFETY: the window's 8 ints on this rank, no epoch writing them now.
    unsafe { std::slice::from_raw_parts(win.local().0 as *const i32, 8) }.to_vec()
}

/// Per flavor, under fences: each rank puts 4 ints into the even slots of
/// its right neighbour (a vector type at the target), gets its left
/// neighbour's odd slots into a strided origin buffer, and every rank
/// accumulates into rank 0's odd slots; shared windows answer
/// shared_query for ranks of this host only.
fn flavors(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let int = Datatype::basic(BasicType::Int);
    let every_other = Datatype::vector(4, 1, 2, &int).unwrap();
    every_other.commit();
    let every_other8 = Datatype::vector(8, 1, 2, &int).unwrap();
    every_other8.commit();
    let host = world.split_type(SplitType::Shared, 0).unwrap().unwrap();
    let here = host.world_ranks().to_vec();
    for flavor in FLAVORS {
        let mut own = [0i32; 8];
        let (win, disp) = window_of(world, flavor, &mut own);
        win.fence(0).unwrap();
        let mine: Vec<i32> = (0..4).map(|i| me * 100 + i).collect();
        let at = |rank: i32, offset: isize, dt| At {
            rank,
            disp: disp[rank as usize] + offset * if flavor == "dynamic" { 4 } else { 1 },
            count: 1,
            dt,
        };
        let origin = Buf {
            addr: mine.as_ptr().cast(),
            count: 4,
            dt: &int,
        };
        // SAFETY: `mine` holds 4 ints.
        unsafe { win.put(origin, at(right, 0, &every_other)).unwrap() };
        win.fence(0).unwrap();
        let want_even: Vec<i32> = (0..4).map(|i| left * 100 + i).collect();
        let local = local_of(&win, flavor, &own);
        let even: Vec<i32> = local.iter().step_by(2).copied().collect();
        assert_eq!(even, want_even, "{flavor}: rank {me}'s even slots");
        // Left's 8 ints into every other int of a 16-int buffer.
        let mut wide = [7i32; 16];
        let into = Buf {
            addr: wide.as_mut_ptr().cast_const().cast(),
            count: 1,
            dt: &every_other8,
        };
        let contiguous8 = Datatype::contiguous(8, &int).unwrap();
        contiguous8.commit();
        // SAFETY: `wide` holds the 8 strided ints.
        unsafe { win.get(into, at(left, 0, &contiguous8)).unwrap() };
        win.fence(0).unwrap();
        let from_left: Vec<i32> = (0..4)
            .flat_map(|i| [(left + n - 1) % n * 100 + i, -1])
            .collect();
        let got: Vec<i32> = wide.iter().step_by(2).copied().collect();
        assert_eq!(got, from_left, "{flavor}: rank {me} got from {left}");
        assert!(wide.iter().skip(1).step_by(2).all(|&v| v == 7));
        // Everyone adds (me + 1) * (i + 1) into rank 0's odd slots (+1 for
        // the -1 already there).
        let add: Vec<i32> = (0..4).map(|i| (me + 1) * (i + 1)).collect();
        let origin = Buf {
            addr: add.as_ptr().cast(),
            count: 4,
            dt: &int,
        };
        // SAFETY: `add` holds 4 ints.
        unsafe {
            win.accumulate(origin, at(0, 1, &every_other), &Op::SUM, None)
                .unwrap()
        };
        win.fence(0).unwrap();
        if me == 0 {
            let total: i32 = (1..=n).sum();
            let want: Vec<i32> = (0..4).map(|i| total * (i + 1) - 1).collect();
            let odd: Vec<i32> = local_of(&win, flavor, &own)
                .into_iter()
                .skip(1)
                .step_by(2)
                .collect();
            assert_eq!(odd, want, "{flavor}: the sums on rank 0");
        }
        if flavor == "shared" {
            for r in 0..n {
                let w = world.world_ranks()[r as usize];
                match win.shared_query(r) {
                    Ok((addr, size, unit)) => {
                        assert!(here.contains(&w), "rank {me} maps rank {r} on another host");
                        assert_eq!((size, unit), (32, 4));
                        assert_ne!(addr, 0);
                    }
                    Err(e) => {
                        assert!(!here.contains(&w), "rank {me} cannot map rank {r}: {e}");
                        assert_eq!(e.class(), ErrorClass::RmaShared, "{e}");
                    }
                }
            }
        }
        win.fence(oxmpi::rma::MODE_NOSUCCEED).unwrap();
        if flavor == "dynamic" {
            win.detach(own.as_ptr() as usize).unwrap();
        }
        win.free().unwrap();
    }
}

/// Fetch-and-op tickets on rank 0 under shared locks and lock_all, and a
/// running maximum on the last rank: every ticket handed out exactly
/// once, the counter's final value exact.
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
            all.accumulate(world.size() - 1, 1, &[mine[mine.len() - 1]], &Op::MAX)
                .unwrap();
            all.end().unwrap();
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
        let top = win.local().unwrap()[1];
        assert!(top >= (n - 1) * TICKETS && top < n * TICKETS, "{top}");
    }
    win.free().unwrap();
}

/// A lock built from compare-and-swap on the last rank guards a plain
/// get-then-put of a second element (exact only if it excludes); then
/// get_accumulate with REPLACE and NO_OP against a serial model.
fn accumulate_family(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let last = n - 1;
    let mut win = Window::<i64>::allocate(world, 4).unwrap();
    {
        let all = win.lock_all().unwrap();
        for _ in 0..50 {
            while all.compare_and_swap(last, 0, 0, me as i64 + 1).unwrap() != 0 {
                std::thread::yield_now();
            }
            let mut v = [0i64];
            all.get(last, 1, &mut v).unwrap();
            all.put(last, 1, &[v[0] + 1]).unwrap();
            all.flush(Some(last)).unwrap();
            assert_eq!(
                all.compare_and_swap(last, 0, me as i64 + 1, 0).unwrap(),
                me as i64 + 1
            );
        }
        all.end().unwrap();
    }
    world.barrier().unwrap();
    let lock = win.lock(LockType::Exclusive, last).unwrap();
    let mut seen = [0i64; 2];
    lock.get_accumulate(last, 0, &[0; 2], &mut seen, &Op::NO_OP)
        .unwrap();
    assert_eq!(seen, [0, 50 * n as i64]);
    lock.end().unwrap();
    // Each rank swaps -1 - me into element 2 in turn: the values seen and
    // the last one left are every rank's exactly once, and the initial 0.
    let lock = win.lock(LockType::Exclusive, last).unwrap();
    let mut old = [0i64];
    lock.get_accumulate(last, 2, &[-1 - me as i64], &mut old, &Op::REPLACE)
        .unwrap();
    lock.end().unwrap();
    let mut olds = vec![0i64; n as usize];
    world.allgather(&old, &mut olds).unwrap();
    world.barrier().unwrap();
    if me == last {
        olds.push(win.local().unwrap()[2]);
        olds.sort_unstable();
        let mut want: Vec<i64> = (0..n as i64).map(|r| -1 - r).collect();
        want.push(0);
        want.sort_unstable();
        assert_eq!(olds, want);
    }
    win.free().unwrap();
}

/// Rank 0 exposes to every other rank, twice (counted epochs), and
/// waits once with `wait`, once by polling `test`.
fn pscw(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let mut win = Window::<i32>::allocate(world, n as usize).unwrap();
    let group = world.group();
    for round in 0..2 {
        if me == 0 {
            let others = group.excl(&[0]).unwrap();
            let mut exposure = win.post(&others).unwrap();
            if round == 0 {
                exposure.end().unwrap();
            } else {
                while !exposure.test().unwrap() {
                    std::thread::yield_now();
                }
                exposure.end().unwrap();
            }
            let want: Vec<i32> = (0..n)
                .map(|r| if r == 0 { 0 } else { r * 10 + round })
                .collect();
            assert_eq!(win.local().unwrap().to_vec(), want, "round {round}");
        } else {
            let zero = group.incl(&[0]).unwrap();
            let access = win.start(&zero).unwrap();
            access.put(0, me as usize, &[me * 10 + round]).unwrap();
            access.end().unwrap();
        }
        world.barrier().unwrap();
    }
    win.free().unwrap();
}

/// Rank 0 computes without calling MPI until every other rank has locked
/// its window, put into it, accumulated and flushed: it sees that only
/// through its own memory. If passive-target progress needed rank 0 to
/// call MPI, nothing would arrive and the job would time out.
fn busy_target(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let win = Win::allocate(world, 8 * (n as usize + 1), 8).unwrap();
    let base = win.local().0;
    world.barrier().unwrap();
    if me == 0 {
        // SAFETY: slot 0 of this rank's window, written by others only
        // through atomics-compatible 8-byte accumulates.
        let arrived = unsafe { &*(base as *const AtomicI64) };
        let give_up = Instant::now() + Duration::from_secs(60);
        while arrived.load(Ordering::Acquire) != (n - 1) as i64 {
            std::hint::spin_loop();
            assert!(
                Instant::now() < give_up,
                "the remote origins did not get through while rank 0 computed"
            );
        }
        // SAFETY: every origin wrote its slot before counting itself in.
        let slots = unsafe { std::slice::from_raw_parts(base as *const i64, n as usize + 1) };
        for (r, &v) in slots.iter().enumerate().take(n as usize).skip(1) {
            assert_eq!(v, r as i64 * 1000 + 7, "slot {r}");
        }
    } else {
        let long = Datatype::basic(BasicType::Int64);
        win.lock(LockType::Exclusive, 0, 0).unwrap();
        let v = [me as i64 * 1000 + 7];
        // SAFETY: `v` holds one i64.
        unsafe { win.put_bytes(v.as_ptr().cast(), 8, 0, me as isize).unwrap() };
        win.flush(Some(0)).unwrap();
        let mut back = [0i64];
        // SAFETY: `back` holds one i64.
        unsafe {
            win.get_bytes(back.as_mut_ptr().cast(), 8, 0, me as isize)
                .unwrap()
        };
        assert_eq!(back, v);
        win.unlock(0).unwrap();
        win.lock(LockType::Shared, 0, 0).unwrap();
        let one = [1i64];
        let origin = Buf {
            addr: one.as_ptr().cast(),
            count: 1,
            dt: &long,
        };
        let at = At {
            rank: 0,
            disp: 0,
            count: 1,
            dt: &long,
        };
        // SAFETY: `one` holds one i64.
        unsafe { win.accumulate(origin, at, &Op::SUM, None).unwrap() };
        win.flush(Some(0)).unwrap();
        win.unlock(0).unwrap();
    }
    world.barrier().unwrap();
    win.free().unwrap();
}

/// Errors on remote and local targets alike: outside the window
/// (`MPI_ERR_RMA_RANGE`, also for a dynamic window's unattached address,
/// which only the target can tell), no epoch (`MPI_ERR_RMA_SYNC`); the
/// window stays usable.
fn errors(world: &Comm) {
    let (me, n) = (world.rank(), world.size());
    let win = Window::<u32>::allocate(world, 4).unwrap();
    let target = (me + 1) % n;
    let v = [0u8; 4];
    // SAFETY: `v` holds 4 bytes.
    let e = unsafe { win.raw().put_bytes(v.as_ptr(), 4, target, 0) }.unwrap_err();
    assert_eq!(e.class(), ErrorClass::RmaSync, "{e}");
    let all = win.lock_all().unwrap();
    let e = all.put(target, 3, &[1, 2]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::RmaRange, "{e}");
    let e = all.get(target, 100, &mut [0u32; 1]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::RmaRange, "{e}");
    all.accumulate(target, 0, &[1, 1, 1, 1], &Op::SUM).unwrap();
    all.end().unwrap();
    world.barrier().unwrap();
    let mut win = win;
    assert_eq!(win.local().unwrap().to_vec(), vec![1, 1, 1, 1]);
    win.free().unwrap();

    let dynamic = Win::create_dynamic(world).unwrap();
    let mut mem = [0u8; 16];
    dynamic.attach(mem.as_mut_ptr() as usize, 16).unwrap();
    let mut addrs = vec![0u64; n as usize];
    world.allgather(&[mem.as_ptr() as u64], &mut addrs).unwrap();
    dynamic.lock_all(0).unwrap();
    let t = addrs[target as usize] as isize;
    let byte = [9u8];
    // SAFETY: `byte` holds one byte.
    let e = unsafe { dynamic.put_bytes(byte.as_ptr(), 1, target, t + 16) }.unwrap_err();
    assert_eq!(e.class(), ErrorClass::RmaRange, "{e}");
    // SAFETY: as above.
    unsafe { dynamic.put_bytes(byte.as_ptr(), 1, target, t + 15) }.unwrap();
    dynamic.unlock_all().unwrap();
    world.barrier().unwrap();
    assert_eq!(mem[15], 9);
    dynamic.detach(mem.as_ptr() as usize).unwrap();
    dynamic.free().unwrap();
}

/// Rank 1 locks rank 0 exclusively, puts, and kills itself holding the
/// lock; every other rank then waits for that lock (rank 0 and its host's
/// ranks on the lock word, the others by requests to rank 0's service).
/// The job must end (the launcher sees rank 1 die), not hang.
fn dies_holding_a_lock(world: &Comm) {
    let me = world.rank();
    let win = Window::<u64>::allocate(world, 1).unwrap();
    if me == 1 {
        let lock = win.lock(LockType::Exclusive, 0).unwrap();
        lock.put(0, 0, &[42]).unwrap();
        world.barrier().unwrap();
        // SAFETY: raising SIGKILL on ourselves.
        unsafe { nix::libc::kill(nix::libc::getpid(), nix::libc::SIGKILL) };
        unreachable!("rank 1 outlived SIGKILL");
    }
    world.barrier().unwrap();
    let _never = win.lock(LockType::Exclusive, 0).unwrap();
    panic!("rank {me} took a lock that a dead rank holds");
}
