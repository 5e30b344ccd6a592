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

/// Predicted seconds: the root's copy in and each rank's copy out, and,
/// for a payload too large for the deep rings of small slots, the
/// binomial tree's latency on top, so the model prefers the tree there
/// (`OXMPI_BCAST_ALGO=shm` still forces it). Measured side by side (best
/// of 5 runs of `coll.c`, forced, on 2 cores): 8 B through the area beats
/// the tree at 2 ranks (bcast 0.14 against 0.17 us, ibcast 0.15 against
/// 0.20) and at 4 (0.25 against 0.29, ibcast 0.38 against 0.67): the root
/// runs up to a ring ahead, 4 calls a cache line; 1 KiB, in the 8-deep
/// ring of large slots, loses (2 ranks 0.36 against 0.27, 4 ranks 1.14
/// against 0.78): the tree's root returns after its eager sends, the
/// area's soon waits for readers that share its cores.
fn cost(m: &Model, a: &Args) -> f64 {
    let n = a.bytes as f64;
    let shared = area_cost(m, a, n, n, 0.0);
    if area::in_small_ring(a.bytes) {
        shared
    } else {
        shared + (super::binomial::INFO.cost)(m, a)
    }
}
