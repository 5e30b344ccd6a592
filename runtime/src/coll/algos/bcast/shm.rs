//! Broadcast through the communicator's shared-memory area (`coll/area`):
//! the root posts the data, the others copy it. No messages; where the area cannot serve the call (ranks
//! on several hosts, a persistent call, device memory, a payload larger
//! than `OXMPI_SHM_COLL_BYTES`) it builds the binomial tree instead.

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
    build: Build::Bcast(build_call),
};

/// Adds the call's steps.
fn build_call(ctx: &Ctx, s: &mut Schedule, r: &super::Broadcast, after: &[usize]) -> Vec<usize> {
    match area::usable(ctx, r.buf.len) {
        Some(a) => area::add(
            ctx,
            s,
            a,
            Op::Bcast {
                buf: r.buf,
                root: r.root,
            },
            after,
        ),
        None => super::binomial::build_call(ctx, s, r, after),
    }
}

/// Predicted seconds: the root's copy in, each rank's copy out, plus the
/// binomial tree's latency, so the model never prefers the area for bcast
/// (`OXMPI_BCAST_ALGO=shm` still forces it). Measured side by side after
/// the direct path and the 64-slot ring (8 B, forced, back to back on a
/// quiet machine): at 2 ranks the area ties the tree (0.28-0.37 against
/// 0.39-0.40 us), at 4 ranks on 2 cores it loses (bcast 0.71-0.75 against
/// 0.43-0.68, ibcast 1.4-1.8 against 0.75-2.0): the tree's root returns
/// after its eager sends, the area's waits on readers that share cores.
fn cost(m: &Model, a: &Args) -> f64 {
    let n = a.bytes as f64;
    let tree = super::binomial::INFO.cost;
    area_cost(m, a, n, n, 0.0) + tree(m, a)
}
