//! Allreduce algorithms.

pub mod rabenseifner;
pub mod recursive_doubling;
pub mod reduce_bcast;
pub mod ring;

use super::AlgoInfo;

/// Every allreduce algorithm, in tie-break order.
pub const ALL: &[AlgoInfo] = &[
    recursive_doubling::INFO,
    rabenseifner::INFO,
    ring::INFO,
    reduce_bcast::INFO,
];
