//! Reduce algorithms.

pub(crate) mod binomial;
pub(crate) mod hierarchical;
pub(crate) mod shm;

use super::AlgoInfo;
use crate::coll::sched::{Buf, Reducer};

/// Every reduce algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO, shm::INFO, hierarchical::INFO];

/// A reduce of every rank's `buf` (in place: partial results overwrite
/// it) to `root`'s.
#[derive(Clone, Copy)]
pub struct ToRoot<'a> {
    /// This rank's contribution, and at the root the result.
    pub buf: Buf,
    /// The root's rank.
    pub root: usize,
    /// The operation.
    pub op: &'a Reducer,
    /// Whether `op` is commutative.
    pub commutative: bool,
}

super::family_build!(build, Reduce, ToRoot<'_>, binomial::build_call);
