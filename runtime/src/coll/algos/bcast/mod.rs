//! Broadcast algorithms.

pub(crate) mod binomial;
pub(crate) mod chain;
pub(crate) mod hierarchical;
pub(crate) mod scatter_allgather;

use super::AlgoInfo;
use crate::coll::ctx::Ctx;
use crate::coll::sched::{Buf, Schedule};

/// Every broadcast algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[
    binomial::INFO,
    scatter_allgather::INFO,
    chain::INFO,
    hierarchical::INFO,
];

/// Adds the steps of flat algorithm `name` broadcasting `buf` from `root`
/// (binomial for any other name; [`hierarchical`] takes a node view and
/// is built apart).
pub(crate) fn build(
    name: &str,
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    root: usize,
    after: &[usize],
) -> Vec<usize> {
    match name {
        "scatter_allgather" => scatter_allgather::build(ctx, s, buf, root, after),
        "chain" => chain::build(ctx, s, buf, root, after),
        _ => binomial::build(ctx, s, buf, root, 0, after),
    }
}
