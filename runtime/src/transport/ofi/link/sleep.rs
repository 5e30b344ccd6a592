//! Sleeping until the fabric delivers: on the completion queue's
//! descriptor (after `fi_trywait`) and an eventfd that another thread's
//! poll rings when it takes completions; a generation counter is the
//! token, so no wake-up is lost.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use super::{FabricLink, PENDING_NAP};

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
        if fds[1].revents != 0 {
            let mut count = [0u8; 8];
            // SAFETY: reads 8 bytes into `count` from our eventfd (non-blocking).
            unsafe { nix::libc::read(self.wake.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
        }
        n != 0 || !quiet
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
