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
pub(crate) mod shm;

use super::AlgoInfo;
use crate::coll::sched::Buf;

/// Every alltoall algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[bruck::INFO, scattered::INFO, pairwise::INFO, shm::INFO];

/// Every alltoallv / alltoallw algorithm (they must interoperate, see above).
pub(crate) const ALL_V: &[AlgoInfo] = &[scattered::INFO_V, pairwise::INFO_V];

/// An alltoall of equal blocks.
#[derive(Clone, Copy)]
pub struct Even {
    /// Block j for rank j, at `j * block`.
    pub send: Buf,
    /// Block i from rank i, at `i * block`.
    pub recv: Buf,
    /// Bytes per block.
    pub block: usize,
}

impl Even {
    /// `send` cut into the blocks of `p` ranks.
    pub fn send_parts(&self, p: usize) -> Vec<Buf> {
        cut(self.send, self.block, p)
    }

    /// `recv` cut into the blocks of `p` ranks.
    pub fn recv_parts(&self, p: usize) -> Vec<Buf> {
        cut(self.recv, self.block, p)
    }
}

/// `b` cut into `p` blocks of `block` bytes.
fn cut(b: Buf, block: usize, p: usize) -> Vec<Buf> {
    (0..p).map(|j| b.slice(j * block, block)).collect()
}

/// An alltoallv / alltoallw: blocks of any size.
#[derive(Clone, Copy)]
pub struct Parts<'a> {
    /// Block j for rank j.
    pub send: &'a [Buf],
    /// Block i from rank i.
    pub recv: &'a [Buf],
}

super::family_build!(build, Alltoall, Even, pairwise::build_call);
super::family_build!(build_v, Alltoallv, Parts<'_>, pairwise::build_v);
