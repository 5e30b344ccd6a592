//! Binomial-tree scatter: the root sends each child its whole subtree's
//! blocks in one message, and every rank forwards the parts of its own
//! subtree: lg p rounds. Equal block sizes only (scatter, not scatterv).

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
    build: Build::Scatter(build_call),
};

/// Scatters `block` bytes per rank from `send` (`p * block` bytes, read at
/// the root only) into `mine` on every rank but the root (the caller
/// copies the root's own block).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    send: Buf,
    mine: Buf,
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
    // Relative block i of the subtree lives at tmp[i * block].
    let (tmp, ready) = if vr != 0 {
        let tmp = s.temp(sub * block);
        let parent = ctx.absolute(vr - (vr & vr.wrapping_neg()), root);
        let rcv = s.recv(parent as i32, ctx.tag(0), tmp.slice(0, sub * block), after);
        (tmp, vec![rcv])
    } else if root == 0 {
        (send, after.to_vec())
    } else {
        // Rotate so that relative order is contiguous.
        let tmp = s.temp(p * block);
        let lo = (p - root) * block;
        let a = s.copy(send.slice(root * block, lo), tmp.slice(0, lo), after);
        let b = s.copy(
            send.slice(0, root * block),
            tmp.slice(lo, root * block),
            after,
        );
        (tmp, vec![a, b])
    };
    let mut done = ready.clone();
    // Children are vr + mask for the powers of two below the subtree
    // size; the largest subtree first.
    let mut mask = sub.next_power_of_two() >> 1;
    while mask > 0 {
        let child = ctx.absolute(vr + mask, root);
        let n = mask.min(p - vr - mask);
        let part = tmp.slice(mask * block, n * block);
        done.push(s.send(ctx.world(child), ctx.tag(0), part, &ready));
        mask >>= 1;
    }
    if vr != 0 {
        done.push(s.copy(tmp.slice(0, block), mine, &ready));
    }
    done
}

/// [`build`] for a scatter call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Even,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.all, r.mine, r.block, r.root, after)
}

/// Predicted seconds. The root sends (p-1) n either way; the tree pays lg p
/// latencies plus the copy into its rotated scratch.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * t.al + 2.0 * (t.p - 1.0) * t.n * t.be
}
