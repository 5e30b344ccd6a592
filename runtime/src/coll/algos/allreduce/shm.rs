//! Allreduce through the communicator's shared-memory area (`coll/area`):
//! every rank posts its contribution and folds all of them in rank order. No messages; where the area cannot serve the call (ranks
//! on several hosts, a persistent call, device memory, a payload larger
//! than `OXMPI_SHM_COLL_BYTES`) it builds recursive doubling instead.

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
    build: Build::Allreduce(build_call),
};

/// Adds the call's steps.
fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Reduction<'_>,
    after: &[usize],
) -> Vec<usize> {
    match area::usable(ctx, r.buf.len) {
        Some(a) => area::add(
            ctx,
            s,
            a,
            Op::Reduce {
                input: r.buf,
                buf: r.buf,
                root: None,
                op: r.op.clone(),
            },
            after,
        ),
        None => super::recursive_doubling::build_call(ctx, s, r, after),
    }
}

/// Predicted seconds: a copy in, every rank's data read and reduced.
fn cost(m: &Model, a: &Args) -> f64 {
    let (p, n) = (a.ranks as f64, a.bytes as f64);
    area_cost(m, a, n, (p - 1.0) * n, (p - 1.0) * n)
}
