//! Sleeping until the fabric delivers: on the completion queue's
//! descriptor (after `fi_trywait`) and an eventfd that another thread's
//! poll rings when it takes completions; a generation counter is the
//! token, so no wake-up is lost.
//!
//! A provider's descriptor may stay readable with nothing to take
//! (libfabric 1.17's `net` leaves its completion queue's signal set once
//! a connection exists): after a few such wake-ups in a row the sleeper
//! stops trusting it and naps, each nap twice the last up to
//! [`STALE_NAP_MAX`], until a poll takes a completion again.

use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use super::{FabricLink, PENDING_NAP};

/// Wake-ups by the descriptor with no completion after them before it is
/// taken for stale.
const STALE_AFTER: u32 = 3;
/// First nap once the descriptor is stale.
const STALE_NAP_MIN: Duration = Duration::from_micros(50);
/// Longest nap once the descriptor is stale: bounds how late a sleeping
/// rank sees a message, and costs ~1000 polls a second.
const STALE_NAP_MAX: Duration = Duration::from_millis(1);
/// `woke_at` when the last sleep did not end by the descriptor.
const NOT_WOKEN: u32 = u32::MAX;

/// Tracks wake-ups by the completion descriptor that no completion followed.
pub(crate) struct StaleWaitFd {
    /// The token of the last sleep the descriptor ended, or [`NOT_WOKEN`].
    woke_at: AtomicU32,
    /// Such wake-ups in a row with no completion taken since.
    empty_wakes: AtomicU32,
}

impl Default for StaleWaitFd {
    fn default() -> Self {
        StaleWaitFd {
            woke_at: AtomicU32::new(NOT_WOKEN),
            empty_wakes: AtomicU32::new(0),
        }
    }
}

impl StaleWaitFd {
    /// Called as a sleep with `token` starts: how long to nap instead of
    /// trusting the descriptor, or None to trust it.
    fn nap_before(&self, token: u32) -> Option<Duration> {
        if self.woke_at.load(SeqCst) != token {
            // A completion was taken since the descriptor last woke us.
            self.empty_wakes.store(0, SeqCst);
            return None;
        }
        let empty = self.empty_wakes.fetch_add(1, SeqCst) + 1;
        let over = empty.checked_sub(STALE_AFTER)?;
        Some((STALE_NAP_MIN * (1 << over.min(10))).min(STALE_NAP_MAX))
    }

    /// Called as a sleep with `token` ends: whether the descriptor ended it
    /// (or would have, had it not been left out as stale).
    fn ended(&self, token: u32, by_descriptor: bool) {
        let at = if by_descriptor { token } else { NOT_WOKEN };
        self.woke_at.store(at, SeqCst);
    }
}

impl FabricLink {
    /// How many polls took completions so far: taken before a last poll
    /// and passed to [`sleep`](Self::sleep), so that a completion another
    /// thread takes in between is not slept through.
    pub(crate) fn generation(&self) -> u32 {
        self.generation.load(SeqCst)
    }

    /// Sleeps until a completion may be waiting, another thread's poll
    /// took one since `token` (see [`generation`](Self::generation)), or
    /// `timeout`; returns whether something may have arrived (false: the
    /// time ran out quietly).
    pub(crate) fn sleep(&self, token: u32, timeout: Duration) -> bool {
        let Some(fd) = self.ep.wait_fd() else {
            // No descriptor: a short nap instead.
            std::thread::sleep(timeout.min(Duration::from_micros(50)));
            return true;
        };
        self.sleepers.fetch_add(1, SeqCst);
        if self.generation.load(SeqCst) != token {
            // Another thread's poll took completions since the token.
            self.sleepers.fetch_sub(1, SeqCst);
            return true;
        }
        // The provider may have work only a poll does (a connection being
        // made to a peer that is not polling yet): then sleep briefly, so
        // that a rank waiting on such a peer does not spin.
        let (timeout, quiet) = if self.ep.may_sleep() {
            (timeout, true)
        } else {
            (timeout.min(PENDING_NAP), false)
        };
        let nap = self.stale.nap_before(token);
        // A stale descriptor is left out (a negative fd is ignored): the
        // nap ends on the eventfd or the time.
        let (fd, timeout) = match nap {
            Some(nap) => (-1, timeout.min(nap)),
            None => (fd, timeout),
        };
        let mut fds = [
            nix::libc::pollfd {
                fd,
                events: nix::libc::POLLIN,
                revents: 0,
            },
            nix::libc::pollfd {
                fd: self.wake.as_raw_fd(),
                events: nix::libc::POLLIN,
                revents: 0,
            },
        ];
        let ts = nix::libc::timespec {
            tv_sec: timeout.as_secs().min(i32::MAX as u64) as nix::libc::time_t,
            tv_nsec: timeout.subsec_nanos() as nix::libc::c_long,
        };
        // SAFETY: two valid pollfds, a valid timespec, no signal mask.
        let n = unsafe { nix::libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        self.sleepers.fetch_sub(1, SeqCst);
        // A nap counts as a wake by the stale descriptor: the next nap grows.
        self.stale
            .ended(token, fds[0].revents != 0 || nap.is_some());
        if fds[1].revents != 0 {
            let mut count = [0u8; 8];
            // SAFETY: reads 8 bytes into `count` from our eventfd (non-blocking).
            unsafe { nix::libc::read(self.wake.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
        }
        n != 0 || !quiet || nap.is_some()
    }

    /// Wakes the threads sleeping in [`sleep`](Self::sleep): a poll took
    /// completions, possibly one a sleeper waits for. One atomic load when
    /// nobody sleeps.
    pub(super) fn wake_sleepers(&self) {
        if self.sleepers.load(SeqCst) > 0 {
            let one = 1u64.to_ne_bytes();
            // SAFETY: writes 8 bytes to our eventfd.
            unsafe { nix::libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_that_wakes_with_nothing_to_take_is_left_out_with_growing_naps() {
        let s = StaleWaitFd::default();
        // Wake-ups by the descriptor under one token: no completion taken.
        let mut naps = Vec::new();
        for _ in 0..12 {
            let nap = s.nap_before(7);
            s.ended(7, true);
            naps.push(nap);
        }
        assert_eq!(naps[0], None, "the first sleep trusts the descriptor");
        assert!(naps[..STALE_AFTER as usize].iter().all(Option::is_none));
        let napped: Vec<Duration> = naps.iter().flatten().copied().collect();
        assert_eq!(napped[0], STALE_NAP_MIN);
        assert!(napped.windows(2).all(|w| w[1] >= w[0]), "{napped:?}");
        assert_eq!(*napped.last().unwrap(), STALE_NAP_MAX);
    }

    #[test]
    fn a_completion_taken_or_a_quiet_sleep_trusts_the_descriptor_again() {
        let s = StaleWaitFd::default();
        for _ in 0..6 {
            s.nap_before(1);
            s.ended(1, true);
        }
        assert!(s.nap_before(1).is_some());
        s.ended(1, true);
        // A poll took completions: the token moved on.
        assert_eq!(s.nap_before(2), None);
        s.ended(2, false);
        // The time ran out without the descriptor: it is not stale.
        assert_eq!(s.nap_before(2), None);
    }
}
