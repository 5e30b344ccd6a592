//! Reduce-scatter through the communicator's shared-memory area (`coll/area`):
//! every rank posts its whole input and folds its own block of all of them in rank order. No messages; where the area cannot serve the call (ranks
//! on several hosts, a persistent call, device memory, a payload larger
//! than `OXMPI_SHM_COLL_BYTES`) it builds the pairwise exchange instead.

use crate::coll::algos::{area_cost, AlgoInfo, Build};
use crate::coll::area::{self, Op};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::Schedule;

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "shm",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::SharedArea,
    cost,
    phases: None,
    build: Build::ReduceScatter(build_call),
};

/// Adds the call's steps.
fn build_call(ctx: &Ctx, s: &mut Schedule, r: &super::Split<'_>, after: &[usize]) -> Vec<usize> {
    let whole = r.off[ctx.size];
    match area::usable(ctx, whole) {
        Some(a) => area::add(
            ctx,
            s,
            a,
            Op::ReduceScatter {
                input: r.input.slice(0, whole),
                off: r.off.to_vec(),
                out: r.out,
                op: r.op.clone(),
            },
            after,
        ),
        None => super::pairwise::build_call(ctx, s, r, after),
    }
}

/// Predicted seconds: the whole input in; a block of every rank's read and reduced.
fn cost(m: &Model, a: &Args) -> f64 {
    let (p, n) = (a.ranks as f64, a.bytes as f64);
    area_cost(m, a, n, (p - 1.0) / p * n, (p - 1.0) / p * n)
}
