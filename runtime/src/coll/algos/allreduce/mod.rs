//! Allreduce algorithms.

pub(crate) mod rabenseifner;
pub(crate) mod recursive_doubling;
pub(crate) mod reduce_bcast;
pub(crate) mod ring;

use super::AlgoInfo;

/// Every allreduce algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[
    recursive_doubling::INFO,
    rabenseifner::INFO,
    ring::INFO,
    reduce_bcast::INFO,
];
