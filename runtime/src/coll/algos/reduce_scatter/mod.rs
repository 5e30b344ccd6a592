//! Reduce-scatter algorithms (reduce_scatter with counts per rank, and
//! reduce_scatter_block with equal counts). Every rank's input holds p
//! blocks back to back, block r `len[r]` bytes at byte offset `off[r]`;
//! rank r ends with the reduction of every rank's block r. Every rank
//! knows every count, so empty blocks are skipped on both sides.

pub(crate) mod pairwise;
pub(crate) mod recursive_halving;

use super::AlgoInfo;

/// Every reduce-scatter algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_halving::INFO, pairwise::INFO];
