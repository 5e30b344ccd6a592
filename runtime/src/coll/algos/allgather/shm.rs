//! Allgather through the communicator's shared-memory area (`coll/area`):
//! every rank posts its block and copies the others'. No messages; where the area cannot serve the call (ranks
//! on several hosts, a persistent call, device memory, a payload larger
//! than `OXMPI_SHM_COLL_BYTES`) it builds the ring instead.

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
    build: Build::Allgather(build_call),
};

/// Adds the call's steps.
fn build_call(ctx: &Ctx, s: &mut Schedule, r: &super::Gathered, after: &[usize]) -> Vec<usize> {
    match area::usable(ctx, r.block) {
        Some(a) => area::add(
            ctx,
            s,
            a,
            Op::Allgather {
                input: r.buf.slice(ctx.rank * r.block, r.block),
                buf: r.buf,
                block: r.block,
            },
            after,
        ),
        None => super::ring::build_call(ctx, s, r, after),
    }
}

/// Predicted seconds: a block in, the others' blocks out.
fn cost(m: &Model, a: &Args) -> f64 {
    let (p, n) = (a.ranks as f64, a.bytes as f64);
    area_cost(m, a, n, (p - 1.0) * n, 0.0)
}
