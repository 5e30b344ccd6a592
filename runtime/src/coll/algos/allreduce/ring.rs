//! Ring: a reduce-scatter ring then an allgather ring, p-1 steps each, each
//! moving 1/p of the buffer; bandwidth-optimal, latency grows with p.
//! Combines out of rank order: commutative operations only.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::{block, Ctx};
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "ring",
    commutative_only: true,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Neighbour,
    cost,
    phases: None,
    build: Build::Allreduce(build_call),
};

/// Reduces `buf` (`count` elements of `elem` bytes) across all ranks.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    count: usize,
    elem: usize,
    op: &Reducer,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    if p == 1 {
        return after.to_vec();
    }
    let (rank, right, left) = (ctx.rank, (ctx.rank + 1) % p, (ctx.rank + p - 1) % p);
    let blk = |i: usize| {
        let (start, n) = block(count, p, i % p);
        buf.slice(start * elem, n * elem)
    };
    // Reduce-scatter: at step k send block rank-k, fold block rank-k-1 in.
    let mut last = after.to_vec();
    for k in 0..p - 1 {
        let out = blk(rank + p - k);
        let inb = blk(rank + 2 * p - k - 1);
        let tmp = s.temp(inb.len);
        let snd = s.send(ctx.world(right), ctx.tag(k), out, &last);
        let rcv = s.recv(left as i32, ctx.tag(k), tmp, &[]);
        last = vec![s.reduce(op, tmp, inb, &[rcv, snd])];
    }
    // Allgather: at step k pass on block rank+1-k, receive block rank-k.
    for k in 0..p - 1 {
        let out = blk(rank + 1 + p - k);
        let inb = blk(rank + p - k);
        let snd = s.send(ctx.world(right), ctx.tag(p - 1 + k), out, &last);
        let rcv = s.recv(left as i32, ctx.tag(p - 1 + k), inb, &last);
        last = vec![snd, rcv];
    }
    last
}

/// [`build`] for an allreduce call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Reduction,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.count, r.elem, r.op, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    2.0 * (t.p - 1.0) * t.al + 2.0 * t.n * t.frac * t.be + t.n * t.frac * t.ga
}
