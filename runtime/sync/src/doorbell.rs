//! The doorbell protocol: a rank with nothing to do sleeps on its own bell;
//! a peer that gives it work rings it. For the sleeper:
//!
//! ```text
//! let seen = bell.current();          // 1. read the sequence number
//! if nothing_pending() {              // 2. check for work once more
//!     bell.wait(seen, timeout, ..);   // 3. sleep unless it moved since 1
//! }
//! ```
//!
//! and for the peer: publish the work, then [`Bell::ring`]. `ring` bumps the
//! sequence word and wakes sleepers only when someone announced (in
//! `sleepers`) that it is about to sleep, so the common, busy case costs one
//! atomic add. The announce-then-recheck in `wait` and the bump-then-check in
//! `ring` are both `SeqCst`, so either the waiter sees the new sequence
//! number, or the ringer sees the sleeper and wakes it; the futex's own
//! compare of the word closes the remaining window.

use std::time::Duration;

use crate::atomic::AtomicU32;
use crate::atomic::Ordering::{Acquire, Relaxed, SeqCst};

/// How a [`Bell::wait`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The bell was rung (before or during the wait), or the sleep was
    /// interrupted: re-check for work either way.
    Woken,
    /// The timeout passed without a ring.
    TimedOut,
}

/// Sleeping on, and waking, a 32-bit word: `FUTEX_WAIT` and `FUTEX_WAKE`
/// in the runtime, a mutex and condition variable in the loom models.
pub trait Futex {
    /// Sleeps while `*word == seen` (compared atomically with going to
    /// sleep), until woken, `timeout` passes (`None`: no limit) or a signal
    /// arrives.
    fn wait(&self, word: &AtomicU32, seen: u32, timeout: Option<Duration>) -> Wake;
    /// Wakes every thread sleeping on `word`.
    fn wake(&self, word: &AtomicU32);
}

/// A doorbell's words (in the runtime: in the node's shared segment).
#[repr(C)]
#[derive(Debug, Default)]
pub struct Bell {
    /// Bumped by every ring; the futex word.
    pub seq: AtomicU32,
    /// How many threads announced they are about to sleep on `seq`.
    pub sleepers: AtomicU32,
}

impl Bell {
    /// The sequence number now; pass it to [`wait`](Bell::wait).
    #[inline]
    pub fn current(&self) -> u32 {
        self.seq.load(Acquire)
    }

    /// Wakes whoever sleeps on this bell; no call into `futex` unless
    /// someone announced it is sleeping.
    pub fn ring(&self, futex: &impl Futex) {
        self.seq.fetch_add(1, SeqCst);
        if self.sleepers.load(SeqCst) != 0 {
            futex.wake(&self.seq);
        }
    }

    /// Sleeps until the sequence number differs from `seen` (a ring since
    /// `seen` was read), `timeout` passes (`None`: no limit), or a signal
    /// arrives. `asleep` counts the threads actually asleep (for other
    /// ranks' spin decisions only).
    pub fn wait(
        &self,
        seen: u32,
        timeout: Option<Duration>,
        asleep: &AtomicU32,
        futex: &impl Futex,
    ) -> Wake {
        self.sleepers.fetch_add(1, SeqCst);
        let wake = if self.seq.load(SeqCst) != seen {
            Wake::Woken
        } else {
            // A count for other ranks' spin decisions only: no ordering needed.
            asleep.fetch_add(1, Relaxed);
            let wake = futex.wait(&self.seq, seen, timeout);
            asleep.fetch_sub(1, Relaxed);
            wake
        };
        self.sleepers.fetch_sub(1, SeqCst);
        wake
    }
}
