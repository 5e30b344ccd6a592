//! Context ids: which ids a new communicator gets, agreed by the ranks
//! that build it (the protocol is `agreement.rs`).
//!
//! # Ids
//!
//! A communicator takes a pair of context ids: `2k` for point-to-point
//! traffic and `2k + 1` for its collectives (what `barrier.rs` and the
//! collective module assume). Pair 0 is `MPI_COMM_WORLD`, pair 1
//! `MPI_COMM_SELF`. Each process keeps a bitmap of its free pairs
//! ([`MAX_COMMS`] bits, one per pair; a set bit is free). Ids from
//! [`CREATE_GROUP_BASE`] up are never handed out: `MPI_Comm_create_group`
//! agrees over `CREATE_GROUP_BASE + parent context`.
//!
//! # Agreement
//!
//! Optimistic, in rounds of two bitwise-AND allreduces over the ranks that
//! take part: (1) every member offers its free bitmap (a rank that will not
//! be a member offers all ones), and the lowest bit of the AND is the
//! candidate; (2) every member holds the candidate if it is still free
//! here (another agreement of this process may have taken it meanwhile)
//! and the ranks AND their "held" flags. All held: the id is taken. Else
//! the holders give it back and a new round starts. A held candidate is
//! never offered, so concurrent agreements of one process (threads, or
//! non-blocking `MPI_Comm_idup`s waiting for their peers) never take the
//! same id, and an agreement that waits for its peers holds at most one
//! id: no agreement waits for another, so none can deadlock another.
//!
//! Communicators built at once from the same parent with disjoint members
//! (the colors of one split) share the id, which is fine: a process
//! belongs to at most one of them.
//!
//! Freeing (explicitly or on drop) sets the bit again on that process
//! only; a later agreement simply avoids ids still taken anywhere. So dup
//! and free can cycle forever; only holding [`MAX_COMMS`] communicators at
//! once on some member exhausts the ids, which is reported as
//! [`crate::Error::ContextIdsExhausted`] when a round's AND is empty while no
//! process held a candidate of another agreement.

use std::sync::Mutex;

use super::lock;

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
/// Words of a bitmap.
pub(crate) const WORDS: usize = MAX_COMMS / 64;

/// First context id of `MPI_Comm_create_group`'s agreements (above every
/// id a communicator can get).
pub(crate) const CREATE_GROUP_BASE: u32 = 0x4000_0000;

/// First context id of communicators that span jobs (spawned children and
/// their parents; above every id the pool gives, below
/// `CREATE_GROUP_BASE`). Such ids are never reused: each process counts
/// up, and a new communicator takes the largest count of its members.
pub(crate) const BRIDGE_CONTEXT_BASE: u32 = 0x2000_0000;

static NEXT_BRIDGE_CONTEXT: std::sync::atomic::AtomicU32 =
    std::sync::atomic::AtomicU32::new(BRIDGE_CONTEXT_BASE);

/// This process's next free id for a communicator that spans jobs.
pub(crate) fn bridge_counter() -> u32 {
    NEXT_BRIDGE_CONTEXT.load(std::sync::atomic::Ordering::Relaxed)
}

/// Takes context pair `ctx` (agreed as the members' largest counter).
pub(crate) fn take_bridge_context(ctx: u32) {
    NEXT_BRIDGE_CONTEXT.fetch_max(ctx + 2, std::sync::atomic::Ordering::Relaxed);
}

/// A process's free context ids.
pub(crate) struct Pool {
    state: Mutex<PoolState>,
}

struct PoolState {
    /// Bit `k` set: pair `k` (ids `2k`, `2k + 1`) is free.
    free: [u64; WORDS],
    /// Candidates held by agreements in their second phase.
    held: usize,
}

impl Pool {
    /// All pairs free except those of world and self.
    pub(crate) fn new() -> Pool {
        let mut free = [u64::MAX; WORDS];
        free[0] &= !0b11;
        Pool {
            state: Mutex::new(PoolState { free, held: 0 }),
        }
    }

    /// A round's offer: the free pairs (all ones for a rank that will not
    /// be a member), then 1 if no candidate is held here (so an empty AND
    /// means exhaustion, not a passing conflict).
    pub(crate) fn offer(&self, member: bool) -> [u64; WORDS + 1] {
        let mut words = [u64::MAX; WORDS + 1];
        let s = lock(&self.state);
        if member {
            words[..WORDS].copy_from_slice(&s.free);
        }
        words[WORDS] = u64::from(s.held == 0 || !member);
        words
    }

    /// Holds pair `pair` for an agreement if it is free here.
    pub(crate) fn hold(&self, pair: usize) -> bool {
        let mut s = lock(&self.state);
        let bit = 1u64 << (pair % 64);
        if s.free[pair / 64] & bit == 0 {
            return false;
        }
        s.free[pair / 64] &= !bit;
        s.held += 1;
        true
    }

    /// Ends the hold of `pair`: keeps it taken, or gives it back.
    pub(crate) fn settle(&self, pair: usize, keep: bool) {
        let mut s = lock(&self.state);
        s.held -= 1;
        if !keep {
            s.free[pair / 64] |= 1 << (pair % 64);
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
    pub(crate) fn free_count(&self) -> usize {
        let s = lock(&self.state);
        s.free.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// The lowest set bit of a bitmap.
pub(crate) fn lowest_set(words: &[u64]) -> Option<usize> {
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
        assert_eq!(lowest_set(&pool.offer(true)[..WORDS]), Some(2));
        assert!(pool.hold(2));
        pool.settle(2, true);
        assert_eq!(pool.free_count(), MAX_COMMS - 3);
        pool.release(4);
        assert_eq!(pool.free_count(), MAX_COMMS - 2);
        pool.release(2 * MAX_COMMS as u32 + 8); // out of range: ignored
        assert_eq!(pool.free_count(), MAX_COMMS - 2);
    }

    #[test]
    fn a_held_candidate_is_not_offered_and_marks_the_offer() {
        let pool = Pool::new();
        assert!(pool.hold(2));
        let offer = pool.offer(true);
        assert_eq!(lowest_set(&offer[..WORDS]), Some(3));
        assert_eq!(offer[WORDS], 0, "a hold makes an empty AND a conflict");
        assert!(!pool.hold(2), "held by another agreement");
        pool.settle(2, false);
        assert_eq!(lowest_set(&pool.offer(true)[..WORDS]), Some(2));
        assert_eq!(pool.offer(true)[WORDS], 1);
        let outside = pool.offer(false);
        assert!(outside[..WORDS].iter().all(|&w| w == u64::MAX) && outside[WORDS] == 1);
    }

    #[test]
    fn lowest_common_bit() {
        assert_eq!(lowest_set(&[0, 0]), None);
        assert_eq!(lowest_set(&[0, 0b1000]), Some(67));
        assert_eq!(lowest_set(&[0b110 & 0b011, 1]), Some(1));
    }
}
