//! Allgather algorithms. Every rank's block has the same size; the receive
//! buffer holds block r at offset r * block, and the caller has already put
//! its own block in place.

pub(crate) mod bruck;
pub(crate) mod recursive_doubling;
pub(crate) mod ring;

use super::AlgoInfo;

/// Every allgather algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_doubling::INFO, bruck::INFO, ring::INFO];
