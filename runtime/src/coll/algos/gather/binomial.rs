//! Binomial-tree gather: every rank collects its subtree's blocks (in
//! relative-rank order, in scratch) and sends them to its parent in one
//! message: lg p rounds at the root instead of p-1 messages. Equal block
//! sizes only (gather, not gatherv).

use crate::coll::algos::{subtree, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "binomial",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Tree,
    cost,
    phases: None,
    build: Build::Gather(build_call),
};

/// Gathers `block` bytes per rank: `mine` is this rank's block; at the
/// root, `recv` (`p * block` bytes) receives every other rank's block (the
/// caller places the root's own).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    mine: Buf,
    recv: Buf,
    block: usize,
    root: usize,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    if p == 1 || block == 0 {
        return after.to_vec();
    }
    let vr = ctx.relative(ctx.rank, root);
    let sub = subtree(vr, p);
    // Relative block i of the subtree lives at tmp[i * block]. A root of
    // rank 0 receives straight into place (relative = absolute).
    let tmp = if vr == 0 && root == 0 {
        recv
    } else if vr == 0 {
        s.temp(p * block)
    } else {
        s.temp(sub * block)
    };
    let mut done = after.to_vec();
    if vr != 0 {
        done.push(s.copy(mine, tmp.slice(0, block), after));
    }
    let mut mask = 1;
    while mask < sub {
        let child = ctx.absolute(vr + mask, root);
        let n = mask.min(p - vr - mask);
        let part = tmp.slice(mask * block, n * block);
        done.push(s.recv(child as i32, ctx.tag(0), part, after));
        mask <<= 1;
    }
    if vr != 0 {
        let parent = ctx.absolute(vr - (vr & vr.wrapping_neg()), root);
        let part = tmp.slice(0, sub * block);
        return vec![s.send(ctx.world(parent), ctx.tag(0), part, &done)];
    }
    if root == 0 {
        return done;
    }
    // Unrotate: relative [1, p-root) is absolute [root+1, p), relative
    // [p-root, p) is absolute [0, root).
    let hi = p - root - 1;
    let a = s.copy_some(
        tmp.slice(block, hi * block),
        recv.slice((root + 1) * block, hi * block),
        &done,
    );
    let b = s.copy(
        tmp.slice((p - root) * block, root * block),
        recv.slice(0, root * block),
        &done,
    );
    a.into_iter().chain([b]).collect()
}

/// [`build`] for a gather call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Even,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.mine, r.all, r.block, r.root, after)
}

/// Predicted seconds. The root receives (p-1) n either way; the tree pays lg p
/// latencies plus the copy out of its rotated scratch.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * t.al + 2.0 * (t.p - 1.0) * t.n * t.be
}
