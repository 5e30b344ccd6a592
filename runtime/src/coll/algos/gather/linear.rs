//! Linear gather: every rank sends its block straight to the root, which
//! posts all p-1 receives at once, each into its final place. p-1 messages
//! into one rank, nothing forwarded, no scratch memory; blocks may differ
//! in size (gatherv).

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
