//! Context ids: which ids a new communicator gets, agreed by every rank of
//! its parent.
//!
//! # Ids
//!
//! A communicator takes a pair of context ids: `2k` for point-to-point
//! traffic and `2k + 1` for its collectives (what `barrier.rs` and the
//! collective module assume). Pair 0 is `MPI_COMM_WORLD`, pair 1
//! `MPI_COMM_SELF`. Each process keeps a bitmap of its free pairs
//! ([`MAX_COMMS`] bits, one per pair; a set bit is free).
//!
//! # Agreement
//!
//! Building a communicator is collective over the parent. Every rank puts
//! its bitmap (a rank that will not be a member of the new communicator
//! puts all ones: it has no use for the id) into a bitwise AND allreduce
//! over the parent (`agree::allreduce_and`); the lowest bit set in
//! the result is free on every member, and every rank computes the same
//! one. Members mark it taken; non-members leave their bitmap alone.
//! Communicators built at once from the same parent with disjoint members
//! (the colors of one split) share the id, which is fine: a process
//! belongs to at most one of them.
//!
//! Freeing (explicitly or on drop) sets the bit again on that process
//! only; a later agreement simply avoids ids still taken anywhere. So dup
//! and free can cycle forever; only holding [`MAX_COMMS`] communicators at
//! once on some member exhausts the ids, which is reported as
//! [`Error::ContextIdsExhausted`].
//!
//! # Threads
//!
//! Two threads may build communicators from different parents at the same
//! time. Their agreements must not both hand out the same free bit, so one
//! thread at a time owns the bitmap (MPICH's scheme): a thread that cannot
//! own it contributes all zeros and a "did not own" mark; any round where
//! some rank did not own the bitmap takes nothing and is retried. Among
//! waiting threads the one with the lowest parent context id goes first,
//! so that every process eventually gives the bitmap to the same parent
//! and the retries end.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{agree, lock, Comm};
use crate::error::Error;

/// Communicators (context-id pairs) a process can hold at once, the
/// predefined ones included.
///
/// ```no_run
/// use oxmpi::comm::context::MAX_COMMS;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut held = Vec::new();
/// let err = loop {
///     match world.dup() {
///         Ok(c) => held.push(c),
///         Err(e) => break e, // no context id left
///     }
/// };
/// assert!(held.len() < MAX_COMMS); // world and self take ids too
/// println!("{err}");
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub const MAX_COMMS: usize = 2048;
const WORDS: usize = MAX_COMMS / 64;

/// A process's free context ids.
pub(crate) struct Pool {
    state: Mutex<PoolState>,
}

struct PoolState {
    /// Bit `k` set: pair `k` (ids `2k`, `2k + 1`) is free.
    free: [u64; WORDS],
    /// A thread is in an agreement holding the bitmap.
    owned: bool,
    /// Parent contexts of the agreements in progress (with counts).
    waiting: BTreeMap<u32, usize>,
}

impl Pool {
    /// All pairs free except those of world and self.
    pub(crate) fn new() -> Pool {
        let mut free = [u64::MAX; WORDS];
        free[0] &= !0b11;
        Pool {
            state: Mutex::new(PoolState {
                free,
                owned: false,
                waiting: BTreeMap::new(),
            }),
        }
    }

    /// Returns the pair of `context` (its p2p id).
    pub(crate) fn release(&self, context: u32) {
        let pair = (context / 2) as usize;
        if pair < MAX_COMMS {
            lock(&self.state).free[pair / 64] |= 1 << (pair % 64);
        }
    }

    /// Free pairs on this process.
    #[cfg(test)]
    fn free_count(&self) -> usize {
        lock(&self.state).free_count()
    }
}

impl PoolState {
    fn free_count(&self) -> usize {
        self.free.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Collective over `parent`: agrees on a context pair free on every rank
/// that passes `member = true`, takes it on those ranks, and returns its
/// p2p context id on every rank.
pub(crate) fn agree(parent: &Comm, member: bool) -> Result<u32, Error> {
    let pool = &parent.inner.shared.pool;
    let key = parent.inner.context;
    *lock(&pool.state).waiting.entry(key).or_insert(0) += 1;
    let result = rounds(parent, member);
    let mut s = lock(&pool.state);
    if let Some(n) = s.waiting.get_mut(&key) {
        *n -= 1;
        if *n == 0 {
            s.waiting.remove(&key);
        }
    }
    result
}

fn rounds(parent: &Comm, member: bool) -> Result<u32, Error> {
    let pool = &parent.inner.shared.pool;
    let key = parent.inner.context;
    loop {
        // words[..WORDS]: offered pairs; words[WORDS]: 1 if this rank owned the bitmap.
        let mut words = [0u64; WORDS + 1];
        let owner = {
            let mut s = lock(&pool.state);
            let first = s.waiting.keys().next().copied();
            if !member {
                words = [u64::MAX; WORDS + 1];
                false
            } else if !s.owned && first == Some(key) {
                s.owned = true;
                words[..WORDS].copy_from_slice(&s.free);
                words[WORDS] = 1;
                true
            } else {
                false
            }
        };
        let agreed = agree::allreduce_and(parent, &mut words);
        let mut s = lock(&pool.state);
        if owner {
            s.owned = false;
        }
        agreed?;
        let all_owned = words[WORDS] == 1;
        match lowest_set(&words[..WORDS]) {
            Some(pair) => {
                if member {
                    s.free[pair / 64] &= !(1 << (pair % 64));
                }
                return Ok(2 * pair as u32);
            }
            None if all_owned => {
                return Err(Error::ContextIdsExhausted {
                    limit: MAX_COMMS,
                    free_here: s.free_count(),
                })
            }
            None => {
                drop(s);
                std::thread::yield_now();
            }
        }
    }
}

fn lowest_set(words: &[u64]) -> Option<usize> {
    words
        .iter()
        .enumerate()
        .find(|(_, w)| **w != 0)
        .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_pairs_are_taken_and_release_restores() {
        let pool = Pool::new();
        assert_eq!(pool.free_count(), MAX_COMMS - 2);
        assert_eq!(lowest_set(&lock(&pool.state).free), Some(2));
        lock(&pool.state).free[0] &= !(1 << 2);
        assert_eq!(pool.free_count(), MAX_COMMS - 3);
        pool.release(4);
        assert_eq!(pool.free_count(), MAX_COMMS - 2);
        pool.release(2 * MAX_COMMS as u32 + 8); // out of range: ignored
        assert_eq!(pool.free_count(), MAX_COMMS - 2);
    }

    #[test]
    fn lowest_common_bit() {
        assert_eq!(lowest_set(&[0, 0]), None);
        assert_eq!(lowest_set(&[0, 0b1000]), Some(67));
        assert_eq!(lowest_set(&[0b110 & 0b011, 1]), Some(1));
    }
}
