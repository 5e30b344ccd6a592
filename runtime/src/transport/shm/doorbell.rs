//! Per-rank futex doorbells in the segment, for blocking waits.
//!
//! A rank with nothing to do sleeps on its own doorbell; a peer that pushes
//! into one of its rings rings it. The protocol (sleeper: read the sequence
//! number, check every ring once more, sleep unless it moved; peer: push,
//! then ring) is [`oxmpi_sync::doorbell`], which loom model-checks; this
//! file gives it the bell's words in the segment and the `futex` system
//! call. The futex is shared (no `FUTEX_PRIVATE_FLAG`): waiter and waker
//! are different processes.

use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use oxmpi_sync::doorbell::Futex;
pub use oxmpi_sync::doorbell::Wake;

use super::layout::{Bell, Header, Padded};
use super::map::Mapping;

/// One local rank's doorbell (see the module docs).
///
/// ```no_run
/// use std::time::Duration;
/// use oxmpi::transport::shm::Wake;
/// # use oxmpi::bootstrap::{connect, Bootstrap};
/// # use oxmpi::config::Config;
/// # use oxmpi::transport::shm::{ShmConfig, ShmNode};
/// # let mut boot = connect()?;
/// # let node = ShmNode::establish(&mut *boot, &ShmConfig::from_config(&Config::from_env()?))?;
/// let mine = node.doorbell(node.local_rank());
/// let seen = mine.current();
/// // ... check the rings; nothing there, so sleep until a peer rings ...
/// match mine.wait(seen, Some(Duration::from_millis(10))) {
///     Wake::Woken => println!("something arrived (or a signal came)"),
///     Wake::TimedOut => println!("quiet for 10 ms"),
/// }
/// node.doorbell((node.local_rank() + 1) % node.local_size()).ring(); // wake a peer
/// assert!(mine.node_asleep() < node.local_size()); // this rank is awake
/// # boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug)]
pub struct Doorbell {
    _map: Arc<Mapping>,
    bell: NonNull<Padded<Bell>>,
    /// The node's count of ranks asleep on their doorbells.
    asleep: NonNull<AtomicU32>,
}

// SAFETY: the pointer targets atomics in shared memory kept alive by `_map`;
// every access is atomic, so any thread (or process) may use it concurrently.
unsafe impl Send for Doorbell {}
// SAFETY: as above.
unsafe impl Sync for Doorbell {}

impl Doorbell {
    /// The doorbell at `offset` of `map`; its sleeps are counted in the
    /// node header's `asleep` word.
    pub(crate) fn new(map: &Arc<Mapping>, offset: usize) -> Doorbell {
        Doorbell {
            bell: NonNull::from(map.at::<Padded<Bell>>(offset)),
            asleep: NonNull::from(&map.at::<Header>(0).asleep),
            _map: Arc::clone(map),
        }
    }

    fn bell(&self) -> &Bell {
        // SAFETY: checked in bounds and aligned by `Mapping::at`; the mapping
        // lives as long as `_map`.
        unsafe { &self.bell.as_ref().0 }
    }

    /// The sequence number now; pass it to [`wait`](Doorbell::wait).
    ///
    /// See the example on [`Doorbell`].
    pub fn current(&self) -> u32 {
        self.bell().current()
    }

    /// Wakes whoever sleeps on this doorbell; no system call unless
    /// someone announced it is sleeping.
    ///
    /// See the example on [`Doorbell`].
    pub fn ring(&self) {
        self.bell().ring(&SharedFutex);
    }

    /// Sleeps until the sequence number differs from `seen` (a ring since
    /// `seen` was read), `timeout` passes (`None`: no limit), or a signal
    /// arrives.
    ///
    /// See the example on [`Doorbell`].
    pub fn wait(&self, seen: u32, timeout: Option<Duration>) -> Wake {
        self.bell()
            .wait(seen, timeout, self.asleep_counter(), &SharedFutex)
    }

    /// Local ranks of the node asleep on their doorbells now.
    ///
    /// See the example on [`Doorbell`].
    pub fn node_asleep(&self) -> usize {
        self.asleep_counter().load(Ordering::Relaxed) as usize
    }

    fn asleep_counter(&self) -> &AtomicU32 {
        // SAFETY: a word of the header, in the mapping kept alive by `_map`.
        unsafe { self.asleep.as_ref() }
    }
}

/// The `futex` system call on words shared between processes.
struct SharedFutex;

impl Futex for SharedFutex {
    #[inline]
    fn wait(&self, word: &AtomicU32, seen: u32, timeout: Option<Duration>) -> Wake {
        futex_wait(word, seen, timeout)
    }

    #[inline]
    fn wake(&self, word: &AtomicU32) {
        futex_wake(word)
    }
}

/// `FUTEX_WAIT` on a shared word: sleeps while `*word == seen`.
fn futex_wait(word: &AtomicU32, seen: u32, timeout: Option<Duration>) -> Wake {
    let ts = timeout.map(|d| nix::libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as nix::libc::time_t,
        tv_nsec: d.subsec_nanos() as nix::libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const nix::libc::timespec);
    // SAFETY: `word` is a live, aligned u32 in a MAP_SHARED mapping; the
    // timespec (if any) outlives the call; FUTEX_WAIT does not write memory.
    let rc = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_futex,
            word.as_ptr(),
            nix::libc::FUTEX_WAIT,
            seen,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == -1 && nix::errno::Errno::last() == nix::errno::Errno::ETIMEDOUT {
        Wake::TimedOut
    } else {
        // 0 (woken), EAGAIN (value already changed), EINTR (signal).
        Wake::Woken
    }
}

/// `FUTEX_WAKE` of every sleeper on a shared word.
fn futex_wake(word: &AtomicU32) {
    // SAFETY: as in `futex_wait`; FUTEX_WAKE reads nothing but the address.
    unsafe {
        nix::libc::syscall(
            nix::libc::SYS_futex,
            word.as_ptr(),
            nix::libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<nix::libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::SeqCst;
    use std::time::Instant;

    fn bell() -> Doorbell {
        let map = Arc::new(Mapping::anonymous(4096).unwrap());
        Doorbell::new(&map, 1024)
    }

    #[test]
    fn stale_seen_returns_at_once_and_timeout_times_out() {
        let b = bell();
        let seen = b.current();
        b.ring();
        assert_eq!(b.wait(seen, Some(Duration::from_secs(10))), Wake::Woken);
        let t = Instant::now();
        let wake = b.wait(b.current(), Some(Duration::from_millis(50)));
        assert_eq!(wake, Wake::TimedOut);
        assert!(t.elapsed() >= Duration::from_millis(45));
    }

    #[test]
    fn ring_wakes_a_sleeping_thread() {
        let b = Arc::new(bell());
        for _ in 0..50 {
            let seen = b.current();
            let sleeper = {
                let b = Arc::clone(&b);
                std::thread::spawn(move || b.wait(seen, Some(Duration::from_secs(20))))
            };
            while b.bell().sleepers.load(SeqCst) == 0 && !sleeper.is_finished() {
                std::thread::yield_now();
            }
            b.ring();
            assert_eq!(sleeper.join().unwrap(), Wake::Woken);
        }
        assert_eq!(b.bell().sleepers.load(SeqCst), 0);
    }

    #[test]
    fn sleepers_are_counted_while_they_sleep() {
        let b = Arc::new(bell());
        assert_eq!(b.node_asleep(), 0);
        let seen = b.current();
        let sleeper = {
            let b = Arc::clone(&b);
            std::thread::spawn(move || b.wait(seen, Some(Duration::from_secs(20))))
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while b.node_asleep() == 0 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(b.node_asleep(), 1, "the sleeping thread is counted");
        b.ring();
        assert_eq!(sleeper.join().unwrap(), Wake::Woken);
        assert_eq!(b.node_asleep(), 0, "and no longer once awake");
    }
}
