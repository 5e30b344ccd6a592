//! The lock around the progress engine.
//!
//! Every call locks the engine at least once (a blocking receive locks it
//! on every poll of its wait loop), so the uncontended cost is on the
//! latency path. A standard mutex releases with an atomic swap (it must
//! learn whether a waiter sleeps in the kernel); this lock never puts a
//! waiter to sleep, so releasing is a plain store, one atomic read-modify-
//! write fewer per lock. Waiters spin briefly, then yield: the engine is
//! held only for a pass over the rings, and blocking calls sleep on the
//! transport's doorbell outside the lock, never inside it.

use std::ops::{Deref, DerefMut};

use crate::atomic::{spin_loop, yield_now, AtomicBool, Ordering, UnsafeCell};

/// A lock whose holder is never put to sleep waiting for it (see the
/// module docs).
pub struct EngineLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and at most one guard
// exists at a time (`lock` returns only after winning the flag).
unsafe impl<T: Send> Sync for EngineLock<T> {}
// SAFETY: as for `Mutex<T>`.
unsafe impl<T: Send> Send for EngineLock<T> {}

/// Polls of a held lock before yielding the CPU to its holder.
const SPINS: u32 = 64;

impl<T> EngineLock<T> {
    /// A lock holding `value`, unlocked.
    pub fn new(value: T) -> EngineLock<T> {
        EngineLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Locks, waiting for the holder if there is one.
    #[inline(always)]
    pub fn lock(&self) -> EngineGuard<'_, T> {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        EngineGuard { lock: self }
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut polls = 0u32;
        loop {
            if !self.locked.load(Ordering::Relaxed)
                && self
                    .locked
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            if polls < SPINS {
                polls += 1;
                spin_loop();
            } else {
                yield_now();
            }
        }
    }
}

/// Access to the locked value; releases on drop (also when unwinding: the
/// engine keeps no invariant a panicking user callback could break).
pub struct EngineGuard<'a, T> {
    lock: &'a EngineLock<T>,
}

impl<T> Deref for EngineGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock.
        self.lock.value.with(|v| unsafe { &*v })
    }
}

impl<T> DerefMut for EngineGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the lock.
        self.lock.value.with_mut(|v| unsafe { &mut *v })
    }
}

impl<T> Drop for EngineGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_take_turns() {
        let lock = Arc::new(EngineLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut g = lock.lock();
                        let v = *g;
                        std::hint::black_box(&v);
                        *g = v + 1;
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*lock.lock(), 80_000);
    }

    #[test]
    fn a_panic_releases_the_lock() {
        let lock = Arc::new(EngineLock::new(1));
        let l2 = Arc::clone(&lock);
        let r = std::thread::spawn(move || {
            let _g = l2.lock();
            panic!("user callback failed");
        })
        .join();
        assert!(r.is_err());
        assert_eq!(*lock.lock(), 1);
    }
}
