//! Allgather algorithms. Every rank's block has the same size; the receive
//! buffer holds block r at offset r * block, and the caller has already put
//! its own block in place.

pub(crate) mod bruck;
pub(crate) mod recursive_doubling;
pub(crate) mod ring;
pub(crate) mod shm;

use super::AlgoInfo;
use crate::coll::sched::Buf;

/// Every allgather algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_doubling::INFO, bruck::INFO, ring::INFO, shm::INFO];

/// An allgather into `buf`, `block` bytes per rank.
#[derive(Clone, Copy)]
pub struct Gathered {
    /// Every rank's block, rank r's at `r * block`.
    pub buf: Buf,
    /// Bytes per rank.
    pub block: usize,
}

super::family_build!(build, Allgather, Gathered, ring::build_call);
