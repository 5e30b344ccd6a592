//! Alltoall algorithms, for alltoall (equal blocks), alltoallv and
//! alltoallw (per-peer sizes and displacements, in bytes here).
//!
//! [`pairwise`] and [`scattered`] move block `send[j]` of rank i into
//! `recv[i]` of rank j directly, and tag each message with the distance
//! `(j - i) mod p`. They therefore interoperate: for alltoallv a rank
//! chooses from its own send sizes, which other ranks do not know, so two
//! ranks may pick differently and still match every message.

pub(crate) mod bruck;
pub(crate) mod pairwise;
pub(crate) mod scattered;

use super::AlgoInfo;

/// Every alltoall algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[bruck::INFO, scattered::INFO, pairwise::INFO];

/// Every alltoallv / alltoallw algorithm (they must interoperate, see above).
pub(crate) const ALL_V: &[AlgoInfo] = &[scattered::INFO, pairwise::INFO];
