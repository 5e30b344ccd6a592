//! Broadcast algorithms.

pub(crate) mod binomial;
pub(crate) mod chain;
pub(crate) mod hierarchical;
pub(crate) mod scatter_allgather;
pub(crate) mod shm;

use super::AlgoInfo;
use crate::coll::sched::Buf;

/// Every broadcast algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[
    binomial::INFO,
    scatter_allgather::INFO,
    chain::INFO,
    hierarchical::INFO,
    shm::INFO,
];

/// A broadcast of `buf` from `root`.
#[derive(Clone, Copy)]
pub struct Broadcast {
    /// The root's data; everyone else's destination.
    pub buf: Buf,
    /// The root's rank.
    pub root: usize,
}

super::family_build!(build, Bcast, Broadcast, binomial::build_call);
