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

/// Predicted seconds: the root's copy in, each rank's copy out. The root
/// of back-to-back calls posts up to `SMALL_DEPTH` (64) small payloads
/// ahead of its slowest reader before it waits, as an eager sender does,
/// and a blocking call runs without a schedule (`area/direct.rs`); before
/// both, the area's bcast was no faster than the binomial tree at 2 ranks
/// and 1.5x slower at 4 on 2 cores, and this cost added the tree's.
fn cost(m: &Model, a: &Args) -> f64 {
    let n = a.bytes as f64;
    area_cost(m, a, n, n, 0.0)
}
