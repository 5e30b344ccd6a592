//! How often a rank with peers both on its host and on others polls the
//! fabric. A fabric poll (`fi_cq_read`, which over tcp also runs the
//! provider's progress and an `epoll_wait`) costs several times a
//! shared-memory poll, so polling it every time would make same-host pairs
//! of a multi-host job pay it on every message. The fabric is therefore
//! polled on every poll only while it is in use:
//!
//! - while operations wait on the provider (sends or direct transfers not
//!   yet complete, work it refused for now): only polls move them;
//! - for [`HOT_POLLS`] polls after fabric traffic (a send to a fabric peer,
//!   a poll that took completions): a reply, a credit or the next packet of
//!   a stream is likely on its way;
//! - on the poll right after a wait token is taken, the last look before
//!   the rank may sleep.
//!
//! Otherwise it is polled once every `OXMPI_OFI_COLD_POLLS` polls (256: a
//! shared-memory poll that finds nothing takes tens of nanoseconds, so the
//! fabric's share of a spinning rank's time stays near a tenth), so a
//! message from another host that nothing announced is still seen while
//! the rank spins, and a sleeping rank is woken by the fabric's wait object
//! anyway (router/watch.rs). Nothing is ever left unpolled: pacing only
//! decides how soon.
//!
//! Every counter is touched by the data path, which the engine runs under
//! its lock, so plain loads and stores suffice; only `force` is set from
//! outside it.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

/// Polls after fabric traffic during which the fabric is polled every
/// time: at about a microsecond each (a fabric poll over tcp), longer
/// than a round trip between hosts and the gaps of a rendezvous.
pub(super) const HOT_POLLS: u32 = 1024;

/// The pacing state of one router.
pub(super) struct Pace {
    /// Polls left that look at the fabric whatever else holds.
    hot: AtomicU32,
    /// Polls since the fabric was last looked at.
    skipped: AtomicU32,
    /// The next poll looks at the fabric (a wait token was taken).
    force: AtomicBool,
    /// Polls between looks while quiet (1: every poll).
    cold: u32,
}

impl Pace {
    /// Pacing that polls the fabric at least once every `cold` polls.
    pub(super) fn new(cold: u32) -> Pace {
        Pace {
            hot: AtomicU32::new(HOT_POLLS),
            skipped: AtomicU32::new(0),
            force: AtomicBool::new(false),
            cold: cold.max(1),
        }
    }

    /// Whether this poll looks at the fabric; `in_flight` says whether
    /// operations wait on the provider. Data path only.
    #[inline]
    pub(super) fn due(&self, in_flight: impl FnOnce() -> bool) -> bool {
        let hot = self.hot.load(Relaxed);
        let skipped = self.skipped.load(Relaxed) + 1;
        let force = self.force.load(Relaxed);
        if hot > 0 || force || skipped >= self.cold || in_flight() {
            self.hot.store(hot.saturating_sub(1), Relaxed);
            self.skipped.store(0, Relaxed);
            if force {
                self.force.store(false, Relaxed);
            }
            true
        } else {
            self.skipped.store(skipped, Relaxed);
            false
        }
    }

    /// Fabric traffic: poll it every time for a while. Data path only.
    #[inline]
    pub(super) fn traffic(&self) {
        self.hot.store(HOT_POLLS, Relaxed);
    }

    /// The next poll, on whichever thread, looks at the fabric: a thread is
    /// about to take its last look before sleeping. Any thread.
    pub(super) fn force(&self) {
        self.force.store(true, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many of `polls` polls look at the fabric.
    fn looks(p: &Pace, polls: u32, in_flight: bool) -> u32 {
        (0..polls).filter(|_| p.due(|| in_flight)).count() as u32
    }

    #[test]
    fn hot_after_traffic_then_one_look_in_cold_polls() {
        let p = Pace::new(8);
        assert_eq!(looks(&p, HOT_POLLS, false), HOT_POLLS);
        // Quiet: one look in eight.
        assert_eq!(looks(&p, 80, false), 10);
        p.traffic();
        assert_eq!(looks(&p, HOT_POLLS, false), HOT_POLLS);
        assert_eq!(looks(&p, 16, false), 2);
    }

    #[test]
    fn work_in_flight_and_a_forced_look_are_never_skipped() {
        let p = Pace::new(1000);
        looks(&p, HOT_POLLS, false);
        assert_eq!(looks(&p, 50, true), 50);
        assert!(!p.due(|| false));
        p.force();
        assert!(p.due(|| false));
        // Forcing is for one poll only.
        assert!(!p.due(|| false));
    }

    #[test]
    fn a_cold_interval_of_one_polls_every_time() {
        let p = Pace::new(1);
        looks(&p, HOT_POLLS, false);
        assert_eq!(looks(&p, 100, false), 100);
    }
}
