//! Recursive-doubling allgather: lg p rounds, each doubling the contiguous
//! range of blocks a rank holds. Power-of-two rank counts only.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "recursive_doubling",
    commutative_only: false,
    pow2_only: true,
    multi_node: false,
    pattern: Pattern::Halving,
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
    let mut last = after.to_vec();
    let mut mask = 1;
    let mut round = 0;
    while mask < p {
        let peer = ctx.rank ^ mask;
        let mine = (ctx.rank & !(mask - 1)) * block;
        let theirs = (peer & !(mask - 1)) * block;
        let snd = s.send(
            ctx.world(peer),
            ctx.tag(round),
            buf.slice(mine, mask * block),
            &last,
        );
        let rcv = s.recv(
            peer as i32,
            ctx.tag(round),
            buf.slice(theirs, mask * block),
            &last,
        );
        last = vec![snd, rcv];
        mask <<= 1;
        round += 1;
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
    t.lg * t.al + t.n * (t.p - 1.0) * t.be
}
