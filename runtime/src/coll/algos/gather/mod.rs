//! Gather algorithms. The root's receive buffer holds rank r's block in
//! `parts[r]`; the caller has already put the root's own block in place.
//! Gatherv uses [`linear`] only: its block sizes are known at the root
//! alone, so no rank can forward a subtree's blocks.

pub(crate) mod binomial;
pub(crate) mod linear;

use super::AlgoInfo;

/// Every gather algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO, linear::INFO];

/// Every gatherv algorithm.
pub(crate) const ALL_V: &[AlgoInfo] = &[linear::INFO];
