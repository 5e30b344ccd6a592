//! Allgatherv algorithms. Block r (any size, zero included) goes to
//! `parts[r]` of every rank's receive buffer; the caller has already put
//! its own block in place. Every rank knows every block's size, so empty
//! blocks are skipped on both sides.

pub(crate) mod recursive_doubling;
pub(crate) mod ring;

use super::AlgoInfo;
use crate::coll::sched::Buf;

/// Every allgatherv algorithm, in tie-break order.
pub(crate) const ALL: &[AlgoInfo] = &[recursive_doubling::INFO, ring::INFO];

super::family_build!(build, Allgatherv, [Buf], ring::build);
