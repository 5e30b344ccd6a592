//! Scatter algorithms. The root's send buffer holds rank r's block in
//! `parts[r]`; the caller copies the root's own block. Scatterv uses
//! [`linear`] only: its block sizes are known at the root alone.

pub(crate) mod binomial;
pub(crate) mod linear;

use super::AlgoInfo;
use crate::coll::sched::Buf;

/// Every scatter algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO, linear::INFO];

/// Every scatterv algorithm.
pub(crate) const ALL_V: &[AlgoInfo] = &[linear::INFO_V];

/// A scatter of equal blocks from `root`.
#[derive(Clone, Copy)]
pub struct Even {
    /// This rank's destination (at the root: its block in `all`).
    pub mine: Buf,
    /// The whole of the root's send buffer (matters at the root only).
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

/// A scatter of blocks of any size from `root` (scatterv).
#[derive(Clone, Copy)]
pub struct Parts<'a> {
    /// This rank's destination (at the root: its block).
    pub mine: Buf,
    /// Rank r's block of the root's send buffer (matters at the root only).
    pub parts: &'a [Buf],
    /// The root's rank.
    pub root: usize,
}

super::family_build!(build, Scatter, Even, linear::build_call);
super::family_build!(build_v, Scatterv, Parts<'_>, linear::build_v);
