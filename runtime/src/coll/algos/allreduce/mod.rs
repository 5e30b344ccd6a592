//! Allreduce algorithms.

pub(crate) mod hierarchical;
pub(crate) mod rabenseifner;
pub(crate) mod recursive_doubling;
pub(crate) mod reduce_bcast;
pub(crate) mod ring;
pub(crate) mod shm;

use super::AlgoInfo;
use crate::coll::sched::{Buf, Reducer};

/// Every allreduce algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[
    recursive_doubling::INFO,
    rabenseifner::INFO,
    ring::INFO,
    reduce_bcast::INFO,
    hierarchical::INFO,
    shm::INFO,
];

/// What an allreduce combines: `count` elements of `elem` bytes in `buf`
/// (this rank's contribution, replaced by the result) with `op`.
#[derive(Clone, Copy)]
pub struct Reduction<'a> {
    /// The contribution and the result.
    pub buf: Buf,
    /// Elements.
    pub count: usize,
    /// Bytes per element.
    pub elem: usize,
    /// The operation.
    pub op: &'a Reducer,
    /// Whether `op` is commutative.
    pub commutative: bool,
}

super::family_build!(
    build,
    Allreduce,
    Reduction<'_>,
    recursive_doubling::build_call
);
