//! Epochs: fence, passive target (lock / unlock / lock_all / flush), and
//! post-start-complete-wait. What each rank has open is local state
//! ([`Epoch`]); what ranks tell each other goes through the window's
//! control block (see [`super::control`]), so no call waits for another
//! rank's progress, only for its decisions (a lock being released, a post).

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{fence, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::control::EXCLUSIVE;
use super::{
    rma_error, Win, MODE_NOCHECK, MODE_NOPRECEDE, MODE_NOPUT, MODE_NOSTORE, MODE_NOSUCCEED,
};
use crate::error::{Error, ErrorClass};
use crate::group::Group;

/// A passive-target lock's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockType {
    /// `MPI_LOCK_EXCLUSIVE`.
    Exclusive,
    /// `MPI_LOCK_SHARED`.
    Shared,
}

/// A lock this rank holds: its kind, and whether it was taken
/// (`MPI_MODE_NOCHECK` takes nothing).
#[derive(Debug, Clone, Copy)]
struct Held {
    kind: LockType,
    taken: bool,
}

/// What this rank has open on a window.
#[derive(Debug)]
pub(super) struct Epoch {
    /// Between fences (a fence without `MPI_MODE_NOSUCCEED` opens one).
    fence: bool,
    locks: BTreeMap<usize, Held>,
    /// `MPI_Win_lock_all`, and whether its locks were taken.
    lock_all: Option<bool>,
    /// `MPI_Win_start`'s targets.
    access: Option<Vec<usize>>,
    /// `MPI_Win_post`'s origins.
    exposure: Option<Vec<usize>>,
    /// Posts consumed, per target.
    posts_seen: Vec<u32>,
    /// Completions consumed, per origin.
    dones_seen: Vec<u32>,
    /// The targets [`EpochCell`]'s summary shows open one by one.
    flagged: Vec<usize>,
}

/// A rank's [`Epoch`] behind its lock, with a lock-free summary of the
/// targets an operation may reach now: what every operation reads (no
/// lock on the common path). A guard of the epoch republishes the summary
/// when it drops, still holding the lock, so a reader that finds a target
/// closed and then takes the lock sees the truth.
pub(super) struct EpochCell {
    state: Mutex<Epoch>,
    /// What is open to every target: [`FENCE`], [`LOCK_ALL`].
    open_all: AtomicU8,
    /// Per target, what is open to it: [`LOCKED`], [`STARTED`].
    open_to: Vec<AtomicU8>,
}

/// A fence epoch is open.
const FENCE: u8 = 1;
/// `MPI_Win_lock_all` is open.
const LOCK_ALL: u8 = 2;
/// This rank holds a lock on the target.
const LOCKED: u8 = 1;
/// The target is in this rank's `MPI_Win_start` group.
const STARTED: u8 = 2;

impl EpochCell {
    pub(super) fn new(n: usize) -> EpochCell {
        EpochCell {
            state: Mutex::new(Epoch::new(n)),
            open_all: AtomicU8::new(0),
            open_to: (0..n).map(|_| AtomicU8::new(0)).collect(),
        }
    }

    pub(super) fn lock(&self) -> EpochGuard<'_> {
        EpochGuard {
            guard: crate::comm::lock(&self.state),
            cell: self,
            changed: false,
        }
    }

    /// Whether the summary shows an access epoch open to `rank` (false
    /// means: ask [`Epoch::check_access`] under the lock).
    #[inline]
    pub(super) fn open_to(&self, rank: usize) -> bool {
        self.open_all.load(Ordering::Acquire) != 0
            || self.open_to[rank].load(Ordering::Acquire) != 0
    }

    /// Whether the summary shows a passive-target epoch open to `rank`
    /// (false means: ask under the lock).
    #[inline]
    pub(super) fn passive_to(&self, rank: usize) -> bool {
        self.open_all.load(Ordering::Acquire) & LOCK_ALL != 0
            || self.open_to[rank].load(Ordering::Acquire) & LOCKED != 0
    }

    fn publish(&self, e: &mut Epoch) {
        let all = if e.fence { FENCE } else { 0 } | if e.lock_all.is_some() { LOCK_ALL } else { 0 };
        self.open_all.store(all, Ordering::Release);
        if e.flagged.is_empty() && e.locks.is_empty() && e.access.is_none() {
            return; // no target open one by one, before or after (fences)
        }
        // The list's buffer is reused: no allocation once it has grown.
        let mut flagged = std::mem::take(&mut e.flagged);
        for &r in &flagged {
            self.open_to[r].store(0, Ordering::Release);
        }
        flagged.clear();
        flagged.extend(e.locks.keys().chain(e.access.iter().flatten()));
        for &r in e.locks.keys() {
            self.open_to[r].fetch_or(LOCKED, Ordering::Release);
        }
        for &r in e.access.iter().flatten() {
            self.open_to[r].fetch_or(STARTED, Ordering::Release);
        }
        e.flagged = flagged;
    }
}

/// The epoch, locked; republishes [`EpochCell`]'s summary when dropped
/// after a mutable borrow (a guard only read leaves it as it is).
pub(super) struct EpochGuard<'a> {
    guard: MutexGuard<'a, Epoch>,
    cell: &'a EpochCell,
    changed: bool,
}

impl Deref for EpochGuard<'_> {
    type Target = Epoch;
    fn deref(&self) -> &Epoch {
        &self.guard
    }
}

impl DerefMut for EpochGuard<'_> {
    fn deref_mut(&mut self) -> &mut Epoch {
        self.changed = true;
        &mut self.guard
    }
}

impl Drop for EpochGuard<'_> {
    fn drop(&mut self) {
        if self.changed {
            self.cell.publish(&mut self.guard);
        }
    }
}

fn sync_error(reason: impl Into<String>) -> Error {
    rma_error(ErrorClass::RmaSync, reason)
}

fn check_assert(assert: i32, allowed: i32, call: &str) -> Result<(), Error> {
    if assert & !allowed != 0 {
        return Err(rma_error(
            ErrorClass::Assert,
            format!("invalid `assert` {assert:#x} for {call}"),
        ));
    }
    Ok(())
}

impl Epoch {
    pub(super) fn new(n: usize) -> Epoch {
        Epoch {
            fence: false,
            locks: BTreeMap::new(),
            lock_all: None,
            access: None,
            exposure: None,
            posts_seen: vec![0; n],
            dones_seen: vec![0; n],
            flagged: Vec::new(),
        }
    }

    /// Whether an operation may target `rank` now.
    pub(super) fn check_access(&self, rank: usize) -> Result<(), Error> {
        let open = self.fence
            || self.lock_all.is_some()
            || self.locks.contains_key(&rank)
            || self.access.as_ref().is_some_and(|g| g.contains(&rank));
        if open {
            Ok(())
        } else {
            Err(sync_error(format!(
                "no access epoch is open to target rank {rank} (call MPI_Win_fence, \
                 MPI_Win_lock, MPI_Win_lock_all or MPI_Win_start first)"
            )))
        }
    }

    fn passive(&self, rank: usize) -> bool {
        self.lock_all.is_some() || self.locks.contains_key(&rank)
    }

    /// Fails while a lock or a PSCW epoch is open (`MPI_Win_free`).
    pub(super) fn check_closed(&self) -> Result<(), Error> {
        if !self.locks.is_empty() || self.lock_all.is_some() {
            return Err(sync_error("the window is still locked by this rank"));
        }
        if self.access.is_some() || self.exposure.is_some() {
            return Err(sync_error(
                "a post-start-complete-wait epoch is still open on this window",
            ));
        }
        Ok(())
    }
}

impl Win {
    /// Spins until `ready`, keeping this rank's own point-to-point
    /// progress going (a peer may wait on it meanwhile).
    fn spin_until(&self, mut ready: impl FnMut() -> bool) {
        let mut spins = 0u32;
        while !ready() {
            spins = spins.saturating_add(1);
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                self.inner.comm.rt().poke();
                std::thread::yield_now();
            }
        }
    }

    fn take_lock(&self, rank: usize, kind: LockType) -> Result<(), Error> {
        if let Some(link) = self.remote(rank) {
            return link.lock(rank, kind);
        }
        let word = self.inner.control.lock_word(rank);
        self.spin_until(|| {
            let v = word.load(Ordering::Relaxed);
            match kind {
                LockType::Exclusive => {
                    v == 0
                        && word
                            .compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                }
                LockType::Shared => {
                    v & EXCLUSIVE == 0
                        && word
                            .compare_exchange(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                }
            }
        });
        Ok(())
    }

    /// One attempt at a shared lock on `rank`, on this host or another.
    fn try_lock_shared(&self, rank: usize) -> Result<bool, Error> {
        match self.remote(rank) {
            Some(link) => link.try_lock(rank, LockType::Shared),
            None => Ok(self.try_take_shared(rank)),
        }
    }

    /// One attempt at a shared lock on `rank` (retried while only shared
    /// holders change the word).
    pub(super) fn try_take_shared(&self, rank: usize) -> bool {
        let word = self.inner.control.lock_word(rank);
        let mut v = word.load(Ordering::Relaxed);
        while v & EXCLUSIVE == 0 {
            match word.compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => v = now,
            }
        }
        false
    }

    pub(super) fn release_lock(&self, rank: usize, kind: LockType) -> Result<(), Error> {
        if let Some(link) = self.remote(rank) {
            return link.unlock(rank, kind);
        }
        let word = self.inner.control.lock_word(rank);
        match kind {
            LockType::Exclusive => word.store(0, Ordering::Release),
            LockType::Shared => {
                word.fetch_sub(1, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Holds `rank`'s accumulate lock while `f` runs.
    pub(super) fn with_acc_lock<R>(&self, rank: usize, f: impl FnOnce() -> R) -> R {
        let word = self.inner.control.acc_lock(rank);
        self.spin_until(|| {
            word.load(Ordering::Relaxed) == 0
                && word
                    .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
        });
        struct Release<'a>(&'a std::sync::atomic::AtomicU32);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let _release = Release(word);
        f()
    }

    /// `MPI_Win_fence`: collective; ends the previous fence epoch and,
    /// unless `MPI_MODE_NOSUCCEED`, opens the next.
    pub fn fence(&self, assert: i32) -> Result<(), Error> {
        let allowed = MODE_NOSTORE | MODE_NOPUT | MODE_NOPRECEDE | MODE_NOSUCCEED;
        check_assert(assert, allowed, "MPI_Win_fence")?;
        {
            let e = self.epoch()?;
            if !e.locks.is_empty()
                || e.lock_all.is_some()
                || e.access.is_some()
                || e.exposure.is_some()
            {
                return Err(sync_error(
                    "MPI_Win_fence while a lock or a post-start-complete-wait epoch is open",
                ));
            }
        }
        self.settle(None)?;
        // No memory fence around the barrier: its arrival is a release
        // store (or message) after this rank's stores to the window, its
        // departure an acquire load of every other rank's arrival, which
        // orders them for every rank's loads after the fence.
        self.inner.comm.barrier()?;
        self.epoch()?.fence = assert & MODE_NOSUCCEED == 0;
        Ok(())
    }

    /// `MPI_Win_lock`: an access epoch to `rank` (`assert` 0 or
    /// `MPI_MODE_NOCHECK`; `PROC_NULL`: nothing).
    pub fn lock(&self, kind: LockType, rank: i32, assert: i32) -> Result<(), Error> {
        check_assert(assert, MODE_NOCHECK, "MPI_Win_lock")?;
        if rank == crate::status::PROC_NULL {
            return self.check_live();
        }
        self.target(rank, "rank")?;
        let r = rank as usize;
        {
            let e = self.epoch()?;
            if e.lock_all.is_some() || e.locks.contains_key(&r) {
                return Err(sync_error(format!(
                    "target rank {rank} is already locked by this rank"
                )));
            }
        }
        let taken = assert & MODE_NOCHECK == 0;
        if taken {
            self.take_lock(r, kind)?;
        }
        self.epoch()?.locks.insert(r, Held { kind, taken });
        Ok(())
    }

    /// `MPI_Win_unlock`: completes the operations to `rank` and ends the epoch.
    pub fn unlock(&self, rank: i32) -> Result<(), Error> {
        if rank == crate::status::PROC_NULL {
            return self.check_live();
        }
        self.target(rank, "rank")?;
        let held = self.epoch()?.locks.remove(&(rank as usize));
        let Some(held) = held else {
            return Err(sync_error(format!(
                "MPI_Win_unlock: target rank {rank} is not locked by this rank"
            )));
        };
        self.settle(Some(rank as usize))?;
        fence(Ordering::SeqCst);
        if held.taken {
            self.release_lock(rank as usize, held.kind)?;
        }
        Ok(())
    }

    /// `MPI_Win_lock_all`: a shared access epoch to every rank.
    pub fn lock_all(&self, assert: i32) -> Result<(), Error> {
        check_assert(assert, MODE_NOCHECK, "MPI_Win_lock_all")?;
        {
            let e = self.epoch()?;
            if e.lock_all.is_some() || !e.locks.is_empty() {
                return Err(sync_error("the window is already locked by this rank"));
            }
        }
        let taken = assert & MODE_NOCHECK == 0;
        if taken {
            // All or none: a rank that finds one target locked exclusively
            // lets go of the others before it waits, so an exclusive holder
            // that goes on to lock more targets is never stuck behind it.
            let n = self.inner.targets.len();
            let mut failed = Ok(());
            self.spin_until(|| {
                for r in 0..n {
                    let taken = self.try_lock_shared(r);
                    if taken.as_ref().is_ok_and(|&t| t) {
                        continue;
                    }
                    let released = (0..r).try_for_each(|h| self.release_lock(h, LockType::Shared));
                    if let Err(e) = taken.and(released) {
                        failed = Err(e);
                        return true;
                    }
                    return false;
                }
                true
            });
            failed?;
        }
        self.epoch()?.lock_all = Some(taken);
        Ok(())
    }

    /// `MPI_Win_unlock_all`.
    pub fn unlock_all(&self) -> Result<(), Error> {
        let Some(taken) = self.epoch()?.lock_all.take() else {
            return Err(sync_error(
                "MPI_Win_unlock_all without MPI_Win_lock_all on this window",
            ));
        };
        self.settle(None)?;
        fence(Ordering::SeqCst);
        if taken {
            for r in 0..self.inner.targets.len() {
                self.release_lock(r, LockType::Shared)?;
            }
        }
        Ok(())
    }

    /// `MPI_Win_flush` / `_flush_local` (`rank`), `_flush_all` /
    /// `_flush_local_all` (`None`): operations complete as they are
    /// issued, but for puts to other hosts, whose acknowledgements are
    /// awaited here; then this orders memory.
    pub fn flush(&self, rank: Option<i32>) -> Result<(), Error> {
        if let Some(r) = rank.and_then(|r| usize::try_from(r).ok()) {
            if r < self.inner.targets.len()
                && self.inner.epoch.passive_to(r)
                && self.remote(r).is_none()
            {
                self.check_live()?;
                // Every operation to a target on this host completed in
                // its call: the flush only keeps them before what follows
                // (a compiler barrier on x86; see "One-sided
                // communication" in docs/ARCHITECTURE.md).
                fence(Ordering::AcqRel);
                return Ok(());
            }
        }
        let e = self.epoch()?;
        match rank {
            Some(crate::status::PROC_NULL) => {}
            Some(rank) => {
                self.target(rank, "rank")?;
                if !e.passive(rank as usize) {
                    return Err(sync_error(format!(
                        "flush: target rank {rank} is not locked by this rank"
                    )));
                }
            }
            None if e.lock_all.is_none() && e.locks.is_empty() => {
                return Err(sync_error("flush_all outside a passive-target epoch"));
            }
            None => {}
        }
        drop(e);
        match rank {
            Some(crate::status::PROC_NULL) => {}
            Some(rank) => self.settle(Some(rank as usize))?,
            None => self.settle(None)?,
        }
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// `MPI_Win_sync`: orders this process's loads and stores on the
    /// window memory with other processes' (the unified model).
    pub fn sync(&self) -> Result<(), Error> {
        self.check_live()?;
        fence(Ordering::SeqCst);
        Ok(())
    }

    /// The window ranks of `group`'s members (each must be in the window).
    fn ranks_of(&self, group: &Group) -> Result<Vec<usize>, Error> {
        let mine = self.inner.comm.world_ranks();
        group
            .world_ranks()
            .iter()
            .map(|w| {
                mine.iter()
                    .position(|m| m == w)
                    .ok_or_else(|| Error::InvalidArgument {
                        arg: "group",
                        reason: format!("world rank {w} is not in the window's group"),
                    })
            })
            .collect()
    }

    /// `MPI_Win_post`: exposes this rank's memory to `group`'s origins.
    pub fn post(&self, group: &Group, assert: i32) -> Result<(), Error> {
        check_assert(
            assert,
            MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT,
            "MPI_Win_post",
        )?;
        let origins = self.ranks_of(group)?;
        let mut e = self.epoch()?;
        if e.exposure.is_some() {
            return Err(sync_error("MPI_Win_post while an exposure epoch is open"));
        }
        fence(Ordering::SeqCst);
        for &o in &origins {
            self.signal_post(o)?;
        }
        e.exposure = Some(origins);
        Ok(())
    }

    /// `MPI_Win_start`: an access epoch to `group`'s targets, once each has posted.
    pub fn start(&self, group: &Group, assert: i32) -> Result<(), Error> {
        check_assert(assert, MODE_NOCHECK, "MPI_Win_start")?;
        let targets = self.ranks_of(group)?;
        let mut seen = {
            let e = self.epoch()?;
            if e.access.is_some() {
                return Err(sync_error("MPI_Win_start while an access epoch is open"));
            }
            e.posts_seen.clone()
        };
        for &t in &targets {
            let want = seen[t].wrapping_add(1);
            let mut failed = Ok(());
            self.spin_until(|| match self.posts_from(t) {
                Ok(count) => count.wrapping_sub(want) < u32::MAX / 2,
                Err(e) => {
                    failed = Err(e);
                    true
                }
            });
            failed?;
            seen[t] = want;
        }
        let mut e = self.epoch()?;
        e.posts_seen = seen;
        e.access = Some(targets);
        Ok(())
    }

    /// `MPI_Win_complete`: ends the access epoch of `MPI_Win_start`.
    pub fn complete(&self) -> Result<(), Error> {
        let Some(targets) = self.epoch()?.access.take() else {
            return Err(sync_error("MPI_Win_complete without MPI_Win_start"));
        };
        self.settle(None)?;
        fence(Ordering::SeqCst);
        for t in targets {
            self.signal_done(t)?;
        }
        Ok(())
    }

    /// Whether every origin of the exposure epoch has completed; consumes
    /// their completions when all have.
    fn exposure_done(&self, e: &mut Epoch) -> Result<bool, Error> {
        let Some(origins) = &e.exposure else {
            return Err(sync_error(
                "MPI_Win_wait / MPI_Win_test without MPI_Win_post",
            ));
        };
        let mut all = true;
        for &o in origins {
            let want = e.dones_seen[o].wrapping_add(1);
            all &= self.dones_from(o)?.wrapping_sub(want) < u32::MAX / 2;
        }
        if all {
            for o in e.exposure.take().unwrap_or_default() {
                e.dones_seen[o] = e.dones_seen[o].wrapping_add(1);
            }
            fence(Ordering::SeqCst);
        }
        Ok(all)
    }

    /// `MPI_Win_wait`: ends the exposure epoch once every origin completed.
    pub fn wait(&self) -> Result<(), Error> {
        if self.epoch()?.exposure.is_none() {
            return Err(sync_error("MPI_Win_wait without MPI_Win_post"));
        }
        let mut failed = None;
        self.spin_until(
            || match self.epoch().and_then(|mut e| self.exposure_done(&mut e)) {
                Ok(done) => done,
                Err(e) => {
                    failed = Some(e);
                    true
                }
            },
        );
        failed.map_or(Ok(()), Err)
    }

    /// `MPI_Win_test`: [`Win::wait`] without blocking; whether it ended the epoch.
    pub fn test(&self) -> Result<bool, Error> {
        let done = self.exposure_done(&mut *self.epoch()?)?;
        if !done {
            self.inner.comm.rt().poke();
        }
        Ok(done)
    }

    /// Fails unless a passive-target epoch to `rank` is open (what
    /// request-based operations need); `PROC_NULL` passes.
    pub fn check_passive(&self, rank: i32) -> Result<(), Error> {
        if rank == crate::status::PROC_NULL {
            return self.check_live();
        }
        self.target(rank, "target_rank")?;
        if !self.epoch()?.passive(rank as usize) {
            return Err(sync_error(format!(
                "request-based RMA operations need a passive-target epoch to rank {rank} \
                 (MPI_Win_lock or MPI_Win_lock_all)"
            )));
        }
        Ok(())
    }

    /// Checks that an operation may target `rank` now; `Ok(None)` for
    /// `PROC_NULL` (nothing to do).
    pub(super) fn access(&self, rank: i32) -> Result<Option<usize>, Error> {
        if rank == crate::status::PROC_NULL {
            self.check_live()?;
            return Ok(None);
        }
        self.target(rank, "target_rank")?;
        let r = rank as usize;
        if self.inner.epoch.open_to(r) {
            self.check_live()?;
        } else {
            self.epoch()?.check_access(r)?;
        }
        Ok(Some(r))
    }
}
