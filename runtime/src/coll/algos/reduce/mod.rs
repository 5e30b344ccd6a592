//! Reduce algorithms.

pub(crate) mod binomial;

use super::AlgoInfo;

/// Every reduce algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO];
