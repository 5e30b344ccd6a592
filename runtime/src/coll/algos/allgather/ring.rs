//! Ring allgather: p-1 steps, each passing one block to the right.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "ring",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Neighbour,
    cost,
    phases: None,
    build: Build::Allgather(build_call),
};

/// Fills every block of `buf` (`block` bytes each).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    block: usize,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    let (right, left) = ((ctx.rank + 1) % p, (ctx.rank + p - 1) % p);
    let blk = |i: usize| buf.slice((i % p) * block, block);
    let mut last = after.to_vec();
    for k in 0..p.saturating_sub(1) {
        let snd = s.send(ctx.world(right), ctx.tag(k), blk(ctx.rank + p - k), &last);
        let rcv = s.recv(
            left as i32,
            ctx.tag(k),
            blk(ctx.rank + 2 * p - k - 1),
            &last,
        );
        last = vec![snd, rcv];
    }
    last
}

/// [`build`] for an allgather call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Gathered,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.block, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n * t.be)
}
