//! Reduce-scatter algorithms (reduce_scatter with counts per rank, and
//! reduce_scatter_block with equal counts). Every rank's input holds p
//! blocks back to back, block r `len[r]` bytes at byte offset `off[r]`;
//! rank r ends with the reduction of every rank's block r. Every rank
//! knows every count, so empty blocks are skipped on both sides.

pub(crate) mod pairwise;
pub(crate) mod recursive_halving;
pub(crate) mod shm;

use super::AlgoInfo;
use crate::coll::sched::{Buf, Reducer};

/// Every reduce-scatter algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_halving::INFO, pairwise::INFO, shm::INFO];

/// A reduce-scatter of `input` (p blocks, block r at byte offsets
/// `off[r]..off[r + 1]`) into `out` (this rank's block of the result).
#[derive(Clone, Copy)]
pub struct Split<'a> {
    /// Every rank's whole input (not written).
    pub input: Buf,
    /// Block offsets, p + 1 of them.
    pub off: &'a [usize],
    /// This rank's block of the result.
    pub out: Buf,
    /// The operation.
    pub op: &'a Reducer,
    /// Whether `op` is commutative.
    pub commutative: bool,
}

impl Split<'_> {
    /// `input` cut into its blocks.
    pub fn parts(&self) -> Vec<Buf> {
        self.off
            .windows(2)
            .map(|w| self.input.slice(w[0], w[1] - w[0]))
            .collect()
    }
}

super::family_build!(build, ReduceScatter, Split<'_>, pairwise::build_call);
