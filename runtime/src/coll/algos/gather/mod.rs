//! Gather algorithms. The root's receive buffer holds rank r's block in
//! `parts[r]`; the caller has already put the root's own block in place.
//! Gatherv uses [`linear`] only: its block sizes are known at the root
//! alone, so no rank can forward a subtree's blocks.

pub(crate) mod binomial;
pub(crate) mod linear;

use super::AlgoInfo;
use crate::coll::sched::Buf;

/// Every gather algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO, linear::INFO];

/// Every gatherv algorithm.
pub(crate) const ALL_V: &[AlgoInfo] = &[linear::INFO_V];

/// A gather of equal blocks to `root`, or a scatter from it (the same
/// call, the data flowing the other way).
#[derive(Clone, Copy)]
pub struct Even {
    /// This rank's block (at the root: its place in `all`).
    pub mine: Buf,
    /// The whole of the root's buffer (matters at the root only).
    pub all: Buf,
    /// Bytes per rank.
    pub block: usize,
    /// The root's rank.
    pub root: usize,
}

impl Even {
    /// `all` cut into the blocks of `p` ranks.
    pub fn parts(&self, p: usize) -> Vec<Buf> {
        (0..p)
            .map(|r| self.all.slice(r * self.block, self.block))
            .collect()
    }
}

/// A gather of blocks of any size to `root` (gatherv), or a scatter of
/// them from it (scatterv).
#[derive(Clone, Copy)]
pub struct Parts<'a> {
    /// This rank's block (at the root: its place).
    pub mine: Buf,
    /// Rank r's block of the root's buffer (matters at the root only).
    pub parts: &'a [Buf],
    /// The root's rank.
    pub root: usize,
}

super::family_build!(build, Gather, Even, linear::build_call);
super::family_build!(build_v, Gatherv, Parts<'_>, linear::build_v);
