//! Linear gather: every rank sends its block straight to the root, which
//! posts all p-1 receives at once, each into its final place. p-1 messages
//! into one rank, nothing forwarded, no scratch memory; blocks may differ
//! in size (gatherv).

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
    build: Build::Gather(build_call),
};

/// The same algorithm for gatherv (blocks of any size).
pub(crate) const INFO_V: AlgoInfo = AlgoInfo {
    name: "linear",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Rooted,
    cost,
    phases: None,
    build: Build::Gatherv(build_v),
};

/// Sends `mine` to `root`; at the root, receives rank r's block into
/// `parts[r]` (`parts` matters at the root only). Empty blocks are skipped
/// on both sides.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    mine: Buf,
    parts: &[Buf],
    root: usize,
    after: &[usize],
) -> Vec<usize> {
    if ctx.rank != root {
        let snd = s.send_some(ctx.world(root), ctx.tag(0), mine, after);
        return then(after, [snd]);
    }
    let recvs: Vec<Option<usize>> = (0..ctx.size)
        .filter(|&r| r != root)
        .map(|r| s.recv_some(r as i32, ctx.tag(0), parts[r], after))
        .collect();
    then(after, recvs)
}

/// [`build`] for a gather call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Even,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.mine, &r.parts(ctx.size), r.root, after)
}

/// [`build`] for a gatherv call of the registry.
pub(super) fn build_v(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Parts,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.mine, r.parts, r.root, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n * t.be)
}
