//! Linear scatter: the root sends every rank its block directly, all p-1
//! sends posted at once. Nothing forwarded, no scratch memory; blocks may
//! differ in size (scatterv).

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "linear",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Rooted,
    cost,
    phases: None,
    build: Build::Scatter(build_call),
};

/// The same algorithm for scatterv (blocks of any size).
pub(crate) const INFO_V: AlgoInfo = AlgoInfo {
    name: "linear",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Rooted,
    cost,
    phases: None,
    build: Build::Scatterv(build_v),
};

/// At the root, sends `parts[r]` to rank r; elsewhere receives into
/// `mine`. Empty blocks are skipped on both sides.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    parts: &[Buf],
    mine: Buf,
    root: usize,
    after: &[usize],
) -> Vec<usize> {
    if ctx.rank != root {
        let rcv = s.recv_some(root as i32, ctx.tag(0), mine, after);
        return then(after, [rcv]);
    }
    let sends: Vec<Option<usize>> = (0..ctx.size)
        .filter(|&r| r != root)
        .map(|r| s.send_some(ctx.world(r), ctx.tag(0), parts[r], after))
        .collect();
    then(after, sends)
}

/// [`build`] for a scatter call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Even,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, &r.parts(ctx.size), r.mine, r.root, after)
}

/// [`build`] for a scatterv call of the registry.
pub(super) fn build_v(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Parts,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.parts, r.mine, r.root, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n * t.be)
}
