//! Binomial reduce to rank 0 followed by a binomial broadcast: 2 lg p
//! messages of the whole buffer. Keeps rank order: any operation.

use crate::coll::algos::{bcast, reduce, AlgoInfo};
use crate::coll::ctx::Ctx;
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Applicability.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "reduce_bcast",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
};

/// Reduces `buf` across all ranks (`commutative`: whether `op` is).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    op: &Reducer,
    commutative: bool,
    after: &[usize],
) -> Vec<usize> {
    let done = reduce::binomial::build_in_place(ctx, s, buf, 0, op, commutative, after);
    bcast::binomial::build(ctx, s, buf, 0, 64, &done)
}
