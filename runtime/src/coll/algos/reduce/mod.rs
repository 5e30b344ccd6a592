//! Reduce algorithms.

pub mod binomial;

use super::AlgoInfo;

/// Every reduce algorithm, in tie-break order.
pub const ALL: &[AlgoInfo] = &[binomial::INFO];
