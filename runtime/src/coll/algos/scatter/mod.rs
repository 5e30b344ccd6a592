//! Scatter algorithms. The root's send buffer holds rank r's block in
//! `parts[r]`; the caller copies the root's own block. Scatterv uses
//! [`linear`] only: its block sizes are known at the root alone.

pub(crate) mod binomial;
pub(crate) mod linear;

use super::AlgoInfo;

/// Every scatter algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[binomial::INFO, linear::INFO];

/// Every scatterv algorithm.
pub(crate) const ALL_V: &[AlgoInfo] = &[linear::INFO_V];

pub use super::gather::{Even, Parts};

super::family_build!(build, Scatter, Even, linear::build_call);
super::family_build!(build_v, Scatterv, Parts<'_>, linear::build_v);
