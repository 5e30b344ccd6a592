//! Binomial-tree reduce: lg p rounds, each rank sends its partial result
//! once. Partial results cover contiguous rank ranges combined in rank
//! order (tree rooted at rank 0 for non-commutative operations, then moved
//! to the root), so any operation works.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "binomial",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Tree,
    cost,
    phases: None,
    build: Build::Reduce(build_call),
};

/// Tag step of the final move to a non-zero root.
const MOVE_STEP: usize = 100;

/// Reduces `buf` towards `root`: every rank's `buf` is its contribution and
/// is overwritten with partial results; at `root` it ends as the result.
pub(crate) fn build_in_place(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    root: usize,
    op: &Reducer,
    commutative: bool,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    if p == 1 {
        return after.to_vec();
    }
    let tree_root = if commutative { root } else { 0 };
    let vr = ctx.relative(ctx.rank, tree_root);
    let tmp = s.temp(buf.len);
    let mut last = after.to_vec();
    let (mut mask, mut round) = (1, 0);
    while mask < p {
        if vr & mask != 0 {
            let parent = ctx.absolute(vr - mask, tree_root);
            last = vec![s.send(ctx.world(parent), ctx.tag(round), buf, &last)];
            break;
        }
        if vr + mask < p {
            let child = ctx.absolute(vr + mask, tree_root);
            let rcv = s.recv(child as i32, ctx.tag(round), tmp, &last);
            last = if commutative {
                vec![s.reduce(op, tmp, buf, &[rcv])]
            } else {
                // Ours are the lower ranks: buf = buf op tmp.
                let red = s.reduce(op, buf, tmp, &[rcv]);
                vec![s.copy(tmp, buf, &[red])]
            };
        }
        mask <<= 1;
        round += 1;
    }
    if tree_root != root {
        if ctx.rank == tree_root {
            last = vec![s.send(ctx.world(root), ctx.tag(MOVE_STEP), buf, &last)];
        } else if ctx.rank == root {
            last = vec![s.recv(tree_root as i32, ctx.tag(MOVE_STEP), buf, &last)];
        }
    }
    last
}

/// [`build`] for a reduce call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::ToRoot,
    after: &[usize],
) -> Vec<usize> {
    build_in_place(ctx, s, r.buf, r.root, r.op, r.commutative, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * (t.al + t.n * t.be + t.n * t.ga)
}
