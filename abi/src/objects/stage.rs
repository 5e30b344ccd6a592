//! Temporary buffers behind requests whose datatypes are not contiguous:
//! packed at each start, unpacked at completion ([`Staged`], by request
//! slot; see `api::datatype::p2p` for which operations need them).

use std::collections::BTreeMap;

use oxmpi::datatype::stage::{CollStage, Placed};
use oxmpi::{Error, Status};

use crate::errors::AbiError;

/// Unpacks what a completed receive into `tmp` stored (the status's byte
/// count, also on truncation) into `placed`, keeping the outcome.
///
/// # Safety
/// `placed`'s buffer has room for its elements.
unsafe fn unpack_received(
    placed: &Placed,
    tmp: &[u8],
    r: Result<Status, Error>,
) -> Result<Status, Error> {
    let got = match &r {
        Ok(s) | Err(Error::Truncated { status: s, .. }) => s.count,
        Err(_) => 0,
    };
    if got > 0 {
        // SAFETY: the caller's contract.
        unsafe { placed.unpack(tmp, got) }?;
    }
    r
}

/// A temporary buffer behind a request.
pub enum Stage {
    /// A non-blocking collective's temporaries, unpacked at completion
    /// and released with it.
    Coll(CollStage),
    /// A partitioned send: packed again at each start into the temporary.
    PersistentSend(Placed, Vec<u8>),
    /// A partitioned receive: unpacked from the temporary at each completion.
    PersistentRecv(Placed, Vec<u8>),
    /// A persistent collective's temporaries: packed again at each start,
    /// unpacked at each completion.
    PersistentColl(CollStage),
}

// SAFETY: the raw addresses in a stage are the program's buffers, which MPI
// lets any thread complete; the state lock serialises access.
unsafe impl Send for Stage {}

/// The stages of live requests, by request table slot. A bit per slot
/// says which have one, so the completion of a request without a stage
/// (nearly all) costs one bit test, not a map lookup.
pub struct Staged {
    stages: BTreeMap<usize, Stage>,
    marked: Vec<u64>,
}

impl Staged {
    /// No stages.
    pub const fn new() -> Staged {
        Staged {
            stages: BTreeMap::new(),
            marked: Vec::new(),
        }
    }

    /// Whether slot `slot` has a stage.
    #[inline]
    pub fn has(&self, slot: usize) -> bool {
        self.marked
            .get(slot / 64)
            .is_some_and(|w| w >> (slot % 64) & 1 != 0)
    }

    fn mark(&mut self, slot: usize, on: bool) {
        let word = slot / 64;
        if self.marked.len() <= word {
            self.marked.resize(word + 1, 0);
        }
        let bit = 1u64 << (slot % 64);
        if on {
            self.marked[word] |= bit;
        } else {
            self.marked[word] &= !bit;
        }
    }

    /// Removes the stage of `slot`, if any.
    #[inline(always)]
    fn take(&mut self, slot: usize) -> Option<Stage> {
        if !self.has(slot) {
            return None;
        }
        self.mark(slot, false);
        self.stages.remove(&slot)
    }

    /// Attaches `stage` to request slot `slot`.
    pub fn put(&mut self, slot: usize, stage: Stage) {
        self.stages.insert(slot, stage);
        self.mark(slot, true);
    }

    /// Forgets whatever a previous request in `slot` left (a new request
    /// takes the slot).
    #[inline]
    pub fn clear(&mut self, slot: usize) {
        self.take(slot);
    }

    /// A persistent request in `slot` starts: packs its send data (a
    /// partitioned send's, a persistent collective's).
    pub fn start(&mut self, slot: usize) -> Result<(), AbiError> {
        if !self.has(slot) {
            return Ok(());
        }
        match self.stages.get_mut(&slot) {
            // SAFETY: MPI's rule: the buffer given to MPI_Send_init holds
            // the data whenever the request is started.
            Some(Stage::PersistentSend(l, tmp)) => Ok(unsafe { l.pack_into(tmp) }?),
            // SAFETY: the same rule for MPI_<Coll>_init.
            Some(Stage::PersistentColl(c)) => Ok(unsafe { c.pack() }?),
            _ => Ok(()),
        }
    }

    /// The request in `slot` completed with `r`: unpacks a staged receive
    /// or collective and releases non-persistent stages.
    #[inline]
    pub fn complete(&mut self, slot: usize, r: Result<Status, Error>) -> Result<Status, Error> {
        if !self.has(slot) {
            return r;
        }
        self.complete_staged(slot, r)
    }

    #[inline(never)]
    fn complete_staged(&mut self, slot: usize, r: Result<Status, Error>) -> Result<Status, Error> {
        let (out, persistent) = match self.stages.get(&slot) {
            None => (r, false),
            // SAFETY: MPI's contract: the program's buffers are the
            // operation's until the request completes, which is now.
            Some(Stage::Coll(c)) => (unsafe { c.complete(r) }, false),
            Some(Stage::PersistentSend(..)) => (r, true),
            // SAFETY: as above.
            Some(Stage::PersistentRecv(l, tmp)) => (unsafe { unpack_received(l, tmp, r) }, true),
            // SAFETY: as above.
            Some(Stage::PersistentColl(c)) => (unsafe { c.complete(r) }, true),
        };
        if !persistent {
            self.take(slot);
        }
        out
    }

    /// The request in `slot` is freed, `running` or not: returns the
    /// temporary buffer to keep alive until it completes (a freed
    /// receive's data is not unpacked: MPI leaves the buffer undefined
    /// for a program that cannot tell when it completed).
    pub fn free(&mut self, slot: usize, running: bool) -> Option<Vec<u8>> {
        match self.take(slot)? {
            Stage::PersistentSend(_, v) | Stage::PersistentRecv(_, v) => Some(v),
            Stage::PersistentColl(c) if !running => {
                drop(c);
                None
            }
            Stage::Coll(c) | Stage::PersistentColl(c) => {
                // Freeing an active collective's request is erroneous
                // (MPI 4.0, 6.12 and 6.13); the operation may still use
                // the temporaries, so they are leaked rather than
                // released under it.
                std::mem::forget(c.into_buffers());
                None
            }
        }
    }
}

impl Default for Staged {
    fn default() -> Self {
        Staged::new()
    }
}
