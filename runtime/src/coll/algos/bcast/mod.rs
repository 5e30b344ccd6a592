//! Broadcast algorithms.

pub(crate) mod binomial;
pub(crate) mod chain;
pub(crate) mod scatter_allgather;

use super::AlgoInfo;

/// Every broadcast algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO, scatter_allgather::INFO, chain::INFO];
