//! An in-process simulator of collective schedules, for tests: the
//! schedules of all p ranks advance in turn, and messages wait in order in
//! a queue per (source, destination), matched by tag as MPI matches them.
//! It checks algorithms at rank counts the process tests cannot afford
//! (up to 40), and reports a deadlock as a schedule that cannot move.

use std::collections::VecDeque;

use super::ctx::Ctx;
use super::sched::{Buf, Reducer, Schedule, Step};

/// Messages waiting for a receiver: (tag, bytes), oldest first.
type Queue = VecDeque<(i32, Vec<u8>)>;

/// The view of rank `rank` of `size` (world ranks equal communicator ranks).
pub fn ctx(rank: usize, size: usize) -> Ctx<'static> {
    Ctx {
        rank,
        size,
        world_of: std::borrow::Cow::Owned((0..size).collect()),
        seq: 1,
        nodes: None,
        model: &super::model::Model::SHM,
        area: None,
    }
}

fn bytes<'a>(s: &mut Schedule, buf: Buf) -> &'a mut [u8] {
    if buf.len == 0 {
        return &mut [];
    }
    // SAFETY: the range lies inside a live buffer of the test.
    unsafe { std::slice::from_raw_parts_mut(s.ptr(buf), buf.len) }
}

/// Runs every rank's schedule to completion; panics on a deadlock, a
/// message of the wrong length or a failed step.
pub fn run(mut scheds: Vec<Schedule>) {
    let p = scheds.len();
    let mut queues: Vec<Vec<Queue>> = vec![vec![VecDeque::new(); p]; p];
    while !scheds.iter().all(Schedule::finished) {
        let mut moved = false;
        for (r, s) in scheds.iter_mut().enumerate() {
            for i in 0..s.steps.len() {
                if !s.ready(i) {
                    continue;
                }
                match s.steps[i] {
                    Step::Send { to, tag, buf } => {
                        let data = bytes(s, buf).to_vec();
                        queues[to][r].push_back((tag, data));
                    }
                    Step::Recv { from, tag, buf } => {
                        let q = &mut queues[r][from as usize];
                        let Some(at) = q.iter().position(|(t, _)| *t == tag) else {
                            continue;
                        };
                        let (_, data) = q.remove(at).unwrap_or_default();
                        assert_eq!(data.len(), buf.len, "rank {r} step {i}: message length");
                        bytes(s, buf).copy_from_slice(&data);
                    }
                    _ => {}
                }
                match s.steps[i] {
                    Step::Send { .. } | Step::Recv { .. } => s.finish(i),
                    Step::Poll(_) => {
                        if !s.poll_once(i, &|_| {}) {
                            continue;
                        }
                    }
                    _ => s.run_local(i),
                }
                moved = true;
            }
        }
        assert!(moved, "deadlock: no schedule can move");
    }
    for (r, q) in queues.iter().enumerate() {
        assert!(
            q.iter().all(VecDeque::is_empty),
            "rank {r}: unreceived messages"
        );
    }
    for s in scheds {
        assert!(s.error.is_none(), "{:?}", s.error);
    }
}

/// Wrapping u32 addition: commutative.
pub fn add() -> Reducer {
    Reducer::shared(|a: &[u8], b: &mut [u8]| {
        for (x, y) in a.chunks(4).zip(b.chunks_mut(4)) {
            let s = u32::from_le_bytes(x.try_into().unwrap_or_default())
                .wrapping_add(u32::from_le_bytes(y.try_into().unwrap_or_default()));
            y.copy_from_slice(&s.to_le_bytes());
        }
        Ok(())
    })
}

/// Composition of affine maps x -> a x + b (two u32 per element): the
/// input's map, then the inout's. Associative, not commutative.
pub fn compose() -> Reducer {
    Reducer::shared(|a: &[u8], b: &mut [u8]| {
        let word = |s: &[u8], i: usize| u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
        for (x, y) in a.chunks(8).zip(b.chunks_mut(8)) {
            let (a1, b1, a2, b2) = (word(x, 0), word(x, 4), word(y, 0), word(y, 4));
            y[..4].copy_from_slice(&a1.wrapping_mul(a2).to_le_bytes());
            y[4..].copy_from_slice(&a2.wrapping_mul(b1).wrapping_add(b2).to_le_bytes());
        }
        Ok(())
    })
}

/// `xs[lo] op ... op xs[hi-1]` with `f`, folded in rank order.
pub fn fold(f: &Reducer, xs: &[Vec<u8>]) -> Vec<u8> {
    let mut acc = xs[0].clone();
    for x in &xs[1..] {
        let mut next = x.clone();
        f(&acc, &mut next).unwrap_or_default();
        acc = next;
    }
    acc
}

/// Rank `r`'s `n` bytes: varied and never all equal.
pub fn data(r: usize, n: usize) -> Vec<u8> {
    (0..n).map(|i| (r * 37 + i * 11 + 1) as u8 | 1).collect()
}
