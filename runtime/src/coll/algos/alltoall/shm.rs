//! Alltoall through the communicator's shared-memory area (`coll/area`):
//! every rank posts all its blocks and takes its own block of each rank's. No messages; where the area cannot serve the call (ranks
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
    build: Build::Alltoall(build_call),
};

/// Adds the call's steps.
fn build_call(ctx: &Ctx, s: &mut Schedule, r: &super::Even, after: &[usize]) -> Vec<usize> {
    let all = r.block * ctx.size;
    match area::usable(ctx, all) {
        Some(a) => area::add(
            ctx,
            s,
            a,
            Op::Alltoall {
                send: r.send.slice(0, all),
                recv: r.recv,
                block: r.block,
            },
            after,
        ),
        None => super::pairwise::build_call(ctx, s, r, after),
    }
}

/// Predicted seconds: all of a rank's blocks in, a block of each rank out.
fn cost(m: &Model, a: &Args) -> f64 {
    let (p, n) = (a.ranks as f64, a.bytes as f64);
    area_cost(m, a, p * n, p * n, 0.0)
}
