//! Every collective of the area in the schedule simulator, at 1 to 9
//! ranks: many calls back to back in one schedule per rank, with no
//! dependencies between them (the area's own turns must order them and
//! keep each slot until its readers are done), on both channels, odd
//! sizes, a non-commutative operation, against serial results.

use super::{add, AreaState, Op};
use crate::coll::ctx::Ctx;
use crate::coll::sched::{Reducer, Schedule};
use crate::coll::sim::{self, compose, data, fold};
use crate::coll::tag;

/// One call of the test's sequence.
#[derive(Clone, Copy, Debug)]
enum Call {
    Barrier,
    Bcast(usize),
    Allreduce(bool),
    Reduce(usize),
    Allgather(usize),
    Alltoall(usize),
    ReduceScatter,
}

/// The sequence every rank runs, `rounds` times over.
fn calls(p: usize, rounds: usize) -> Vec<Call> {
    let once = [
        Call::Bcast(0),
        Call::Allreduce(true),
        Call::Barrier,
        Call::Allreduce(false),
        Call::Reduce(p - 1),
        Call::Allgather(3),
        Call::Alltoall(5),
        Call::ReduceScatter,
        Call::Bcast(p / 2),
        Call::Reduce(p / 2),
        Call::Allgather(0),
    ];
    (0..rounds).flat_map(|_| once).collect()
}

/// Bytes of a u32 reduction (odd element count) and of a composition.
const SUM_LEN: usize = 4 * 5;
const COMPOSE_LEN: usize = 8 * 3;

fn wrapping_sum() -> Reducer {
    sim::add()
}

/// Block offsets of the reduce-scatter: uneven, some empty, 4-byte units.
fn offsets(p: usize) -> Vec<usize> {
    let mut off = vec![0];
    for r in 0..p {
        off.push(off[r] + 4 * [1, 0, 3, 2][r % 4]);
    }
    off
}

/// Rank r's input to call i.
fn input(c: Call, r: usize, i: usize, p: usize) -> Vec<u8> {
    let salt = r + 7 * i;
    match c {
        Call::Barrier => Vec::new(),
        Call::Bcast(_) => data(salt, 13),
        Call::Allreduce(true) => data(salt, SUM_LEN),
        Call::Allreduce(false) | Call::Reduce(_) => data(salt, COMPOSE_LEN),
        Call::Allgather(b) => data(salt, b),
        Call::Alltoall(b) => data(salt, b * p),
        Call::ReduceScatter => data(salt, offsets(p)[p]),
    }
}

/// What rank r holds after call i (serially).
fn expected(c: Call, r: usize, i: usize, p: usize) -> Vec<u8> {
    let all: Vec<Vec<u8>> = (0..p).map(|q| input(c, q, i, p)).collect();
    match c {
        Call::Barrier => Vec::new(),
        Call::Bcast(root) => all[root].clone(),
        Call::Allreduce(true) => fold(&wrapping_sum(), &all),
        Call::Allreduce(false) => fold(&compose(), &all),
        Call::Reduce(root) if r == root => fold(&compose(), &all),
        Call::Reduce(_) => all[r].clone(),
        Call::Allgather(_) => all.concat(),
        Call::Alltoall(b) => all
            .iter()
            .flat_map(|x| x[r * b..(r + 1) * b].to_vec())
            .collect(),
        Call::ReduceScatter => {
            let off = offsets(p);
            let blocks: Vec<Vec<u8>> = all.iter().map(|x| x[off[r]..off[r + 1]].to_vec()).collect();
            fold(&wrapping_sum(), &blocks)
        }
    }
}

/// Whether rank r's call i is a reduce root with an output apart from
/// its input (every other pair of calls, so both channels have both
/// kinds; the other roots reduce in place).
fn root_apart(c: Call, r: usize, i: usize) -> bool {
    matches!(c, Call::Reduce(root) if root == r && (i / 2) % 2 == 1)
}

/// Runs `calls` at `p` ranks, calls alternately on the two channels.
fn run(p: usize, calls: &[Call]) {
    let areas = AreaState::simulated(p);
    let off = offsets(p);
    // Per rank and call: (input / in-place buffer, output buffer).
    let mut bufs: Vec<Vec<(Vec<u8>, Vec<u8>)>> = (0..p)
        .map(|r| {
            calls
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    let mine = input(c, r, i, p);
                    let out = match c {
                        Call::Allgather(b) => {
                            let mut all = vec![0u8; b * p];
                            all[r * b..(r + 1) * b].copy_from_slice(&mine);
                            all
                        }
                        Call::Alltoall(b) => vec![0u8; b * p],
                        Call::ReduceScatter => vec![0u8; off[r + 1] - off[r]],
                        _ if root_apart(c, r, i) => vec![0u8; mine.len()],
                        _ => Vec::new(),
                    };
                    (mine, out)
                })
                .collect()
        })
        .collect();
    let scheds = bufs
        .iter_mut()
        .enumerate()
        .map(|(r, calls_of_r)| {
            let mut s = Schedule::new();
            for (i, (&c, (mine, out))) in calls.iter().zip(calls_of_r.iter_mut()).enumerate() {
                let seq = if i % 2 == 0 { 1 } else { 1 | tag::BLOCKING };
                let ctx = Ctx {
                    seq,
                    area: Some(&areas[r]),
                    ..sim::ctx(r, p)
                };
                let b = |v: &mut Vec<u8>| Schedule::user(v.as_mut_ptr(), v.len());
                let op = match c {
                    Call::Barrier => Op::Barrier,
                    Call::Bcast(root) => Op::Bcast { buf: b(mine), root },
                    Call::Allreduce(commutative) => Op::Reduce {
                        input: b(mine),
                        buf: b(mine),
                        root: None,
                        op: if commutative {
                            wrapping_sum()
                        } else {
                            compose()
                        },
                    },
                    Call::Reduce(root) => Op::Reduce {
                        input: b(mine),
                        buf: if root_apart(c, r, i) { b(out) } else { b(mine) },
                        root: Some(root),
                        op: compose(),
                    },
                    // In place at even ranks, from a buffer of its own at odd ones.
                    Call::Allgather(_) => Op::Allgather {
                        input: if r % 2 == 0 {
                            b(out).slice(r * mine.len(), mine.len())
                        } else {
                            b(mine)
                        },
                        buf: b(out),
                        block: mine.len(),
                    },
                    Call::Alltoall(block) => Op::Alltoall {
                        send: b(mine),
                        recv: b(out),
                        block,
                    },
                    Call::ReduceScatter => Op::ReduceScatter {
                        input: b(mine),
                        off: off.clone(),
                        out: b(out),
                        op: wrapping_sum(),
                    },
                };
                add(&ctx, &mut s, &areas[r], op, &[]);
            }
            s
        })
        .collect();
    sim::run(scheds);
    for (r, calls_of_r) in bufs.iter().enumerate() {
        for (i, (&c, (mine, out))) in calls.iter().zip(calls_of_r).enumerate() {
            let got = match c {
                Call::Barrier => continue,
                Call::Allgather(_) | Call::Alltoall(_) | Call::ReduceScatter => out,
                _ if root_apart(c, r, i) => out,
                _ => mine,
            };
            assert_eq!(
                *got,
                expected(c, r, i, p),
                "{c:?} (call {i}) at rank {r} of {p}"
            );
        }
    }
}

#[test]
fn every_collective_back_to_back_matches_the_serial_result() {
    for p in 1..=9 {
        run(p, &calls(p, 4));
    }
}

#[test]
fn calls_on_one_channel_reuse_every_slot() {
    for p in [2, 3, 4] {
        let calls: Vec<Call> = (0..40).map(|i| Call::Bcast(i % p)).collect();
        run(p, &calls);
    }
}

#[test]
fn rooted_calls_reuse_the_small_ring_while_readers_post_their_flags_late() {
    // Bcasts on one channel, reduces on the other (`run` alternates), each
    // 1.5 times the ring: the root's reuse of a slot depends on flags that
    // bcast receivers and the reduce root post late.
    let n = 3 * super::SMALL_RINGS[0].1 as usize;
    for p in [2, 3] {
        let calls: Vec<Call> = (0..n)
            .map(|i| match i % 4 {
                0 => Call::Bcast(0),
                1 => Call::Reduce(0),
                2 => Call::Bcast(p - 1),
                _ => Call::Reduce(p - 1),
            })
            .collect();
        run(p, &calls);
    }
}

#[test]
fn a_writer_waits_until_nobody_reads_the_slot_it_reuses() {
    // A payload for each small ring, and a large one (the shallow ring).
    let mut len = 1;
    for (slot, depth) in super::SMALL_RINGS {
        writer_waits(len, depth);
        len = slot - super::STAMP + 1;
    }
    writer_waits(len, super::DEPTH);
}

/// Rank 0 broadcasts `len` bytes `DEPTH + 2` times while rank 1 does
/// nothing; `DEPTH` is the depth of the ring `len` bytes use.
#[allow(non_snake_case)]
fn writer_waits(len: usize, DEPTH: u64) {
    use std::sync::atomic::Ordering;
    let areas = AreaState::simulated(2);
    let mut x = vec![7u8; len];
    let ctx = Ctx {
        seq: 1,
        area: Some(&areas[0]),
        ..sim::ctx(0, 2)
    };
    // Rank 0 broadcasts DEPTH + 2 times while rank 1 does nothing yet.
    let mut s = Schedule::new();
    let calls = DEPTH as usize + 2;
    for _ in 0..calls {
        let buf = Schedule::user(x.as_mut_ptr(), len);
        add(&ctx, &mut s, &areas[0], Op::Bcast { buf, root: 0 }, &[]);
    }
    let flag_of_1 = |k: u64| {
        areas[1]
            .mapped
            .get()
            .unwrap()
            .flag(0, 1)
            .store(k, Ordering::Release)
    };
    assert!(
        !s.poll_once(1, &|_| {}),
        "the second call waits for its turn"
    );
    for i in 0..DEPTH as usize - 1 {
        assert!(
            s.poll_once(i, &|_| {}),
            "call {} has a slot of its own",
            i + 1
        );
    }
    // Call DEPTH (slot 0, unused so far) waits until rank 1 has entered call
    // 1, as the gate asks; call DEPTH + 1 reuses call 1's slot, which rank 1
    // may read until it enters call 2.
    let last = DEPTH as usize - 1;
    assert!(!s.poll_once(last, &|_| {}));
    flag_of_1(1);
    assert!(s.poll_once(last, &|_| {}));
    assert!(
        !s.poll_once(last + 1, &|_| {}),
        "call DEPTH + 1 would overwrite call 1's slot, which rank 1 may still read"
    );
    flag_of_1(2);
    assert!(s.poll_once(last + 1, &|_| {}));
    assert!(!s.poll_once(last + 2, &|_| {}));
    flag_of_1(3);
    assert!(s.poll_once(last + 2, &|_| {}));
}
