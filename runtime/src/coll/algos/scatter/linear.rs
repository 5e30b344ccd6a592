//! Linear scatter: the root sends every rank its block directly, all p-1
//! sends posted at once. Nothing forwarded, no scratch memory; blocks may
//! differ in size (scatterv).

use crate::coll::algos::{then, AlgoInfo};
use crate::coll::ctx::Ctx;
use crate::coll::sched::{Buf, Schedule};

/// Applicability.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "linear",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
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
