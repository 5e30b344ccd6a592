//! Allgather algorithms. Every rank's block has the same size; the receive
//! buffer holds block r at offset r * block, and the caller has already put
//! its own block in place.

pub mod bruck;
pub mod recursive_doubling;
pub mod ring;

use super::AlgoInfo;

/// Every allgather algorithm, in tie-break order.
pub const ALL: &[AlgoInfo] = &[recursive_doubling::INFO, bruck::INFO, ring::INFO];
