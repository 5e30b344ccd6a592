//! Scan and exscan algorithms. Both keep rank order (a rank's result is
//! x_0 op x_1 op ... op x_rank, without x_rank for exscan), so any
//! operation works. Rank 0's exscan output is left untouched, as MPI
//! leaves it undefined.

pub(crate) mod linear;
pub(crate) mod recursive_doubling;

use super::AlgoInfo;
use crate::coll::sched::{Buf, Reducer};

/// Every scan / exscan algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_doubling::INFO, linear::INFO];

/// A scan (or exscan) of `input` into `out`.
#[derive(Clone, Copy)]
pub struct Prefix<'a> {
    /// This rank's contribution; `None` when it is already in `out` (in place).
    pub input: Option<Buf>,
    /// The result.
    pub out: Buf,
    /// The operation.
    pub op: &'a Reducer,
    /// Whether `op` is commutative.
    pub commutative: bool,
    /// Exscan: leave this rank's own contribution out.
    pub exclusive: bool,
}

super::family_build!(build, Scan, Prefix<'_>, linear::build_call);
