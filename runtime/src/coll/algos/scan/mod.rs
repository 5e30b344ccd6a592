//! Scan and exscan algorithms. Both keep rank order (a rank's result is
//! x_0 op x_1 op ... op x_rank, without x_rank for exscan), so any
//! operation works. Rank 0's exscan output is left untouched, as MPI
//! leaves it undefined.

pub(crate) mod linear;
pub(crate) mod recursive_doubling;

use super::AlgoInfo;

/// Every scan / exscan algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_doubling::INFO, linear::INFO];
