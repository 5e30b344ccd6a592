//! Binomial reduce to rank 0 followed by a binomial broadcast: 2 lg p
//! messages of the whole buffer. Keeps rank order: any operation.

use crate::coll::algos::{bcast, reduce, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "reduce_bcast",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Tree,
    cost,
    phases: None,
    build: Build::Allreduce(build_call),
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

/// [`build`] for an allreduce call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Reduction,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.op, r.commutative, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    2.0 * t.lg * (t.al + t.n * t.be) + t.lg * t.n * t.ga
}
