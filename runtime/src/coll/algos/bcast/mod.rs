//! Broadcast algorithms.

pub mod binomial;
pub mod chain;
pub mod scatter_allgather;

use super::AlgoInfo;

/// Every broadcast algorithm, in tie-break order.
pub const ALL: &[AlgoInfo] = &[binomial::INFO, scatter_allgather::INFO, chain::INFO];
