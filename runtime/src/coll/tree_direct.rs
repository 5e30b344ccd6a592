//! A binomial broadcast without a schedule: [`TreeBcast`], run here
//! (blocking) or started as a small engine task (non-blocking,
//! `tree_ibcast.rs`).
//!
//! The same messages as the binomial schedule (`algos/bcast/binomial.rs`:
//! one from the parent, then one to each child, all with the call's step-0
//! tag), started and waited for on the calling thread. A small broadcast
//! then costs its eager sends and one receive, not a schedule's vectors,
//! boxed steps and dependency walk; called back to back, the root's eager
//! sends run ahead of the leaves as far as the rings allow.

use super::algos::bcast::binomial::Place;
use crate::comm::Comm;
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};

/// A planned binomial broadcast of `len` bytes at `buf`.
pub(crate) struct TreeBcast {
    buf: *mut u8,
    len: usize,
    root: usize,
    seq: u32,
}

// SAFETY: `buf` is the caller's, alive until the call completes (run here,
// or as a schedule whose request borrows it).
unsafe impl Send for TreeBcast {}

/// Packets a root may queue for a child whose ring is full before it
/// waits for the child to take them all.
const QUEUE_CAP: usize = 64;

impl TreeBcast {
    /// The broadcast of call `seq` (its tag sequence), rooted at `root`.
    pub(crate) fn new(seq: u32, buf: *mut u8, len: usize, root: usize) -> TreeBcast {
        TreeBcast {
            buf,
            len,
            root,
            seq,
        }
    }

    /// Runs the broadcast on the calling thread. A failed receive (a
    /// truncation) is reported after the children were still sent to, as
    /// the schedule does.
    pub(crate) fn run(self, comm: &Comm) -> Result<(), Error> {
        let rt = comm.rt();
        let place = self.place(comm);
        let context = comm.inner.context + 1;
        let tag = self.tag();
        let mut outcome = Ok(());
        if let Some(parent) = place.parent() {
            let pattern = Pattern {
                context,
                source: SourceSel::Rank(parent as i32),
                tag: TagSel::Tag(tag),
            };
            let mut engine = rt.engine();
            // SAFETY: waited on below, before `buf` is released.
            let id = unsafe { engine.start_recv(pattern, self.buf, self.len) };
            outcome = rt.wait_request_from(engine, id).map(drop);
        }
        // Sends still in flight: none for eager ones (no allocation then).
        let mut pending = Vec::new();
        {
            let mut engine = rt.engine();
            for child in place.children() {
                let child = comm.inner.world_of[child];
                if engine.queued_to(child) >= QUEUE_CAP {
                    // The child is a ring and a queue behind: let it take
                    // the queue before adding to it (back-to-back calls
                    // would otherwise buffer without bound). A queue, not
                    // the ring's edge, so that the root does not poll the
                    // ring's index at every call while its leaf pops.
                    drop(engine);
                    rt.wait_until(|e| (e.queued_to(child) == 0).then_some(()));
                    engine = rt.engine();
                }
                // SAFETY: an eager send is complete here; another is
                // waited on below, before `buf` is released.
                let id = unsafe {
                    engine.start_send(child, context, comm.rank(), tag, self.buf, self.len, false)
                };
                pending.extend(id);
            }
        }
        for id in pending {
            let sent = rt.wait_request(id).map(drop);
            outcome = outcome.and(sent);
        }
        outcome
    }

    /// This rank's place in the call's tree.
    #[inline]
    pub(crate) fn place(&self, comm: &Comm) -> Place {
        Place::new(comm.rank() as usize, comm.size() as usize, self.root)
    }

    /// The tag of every message of the call (step 0 of its sequence).
    #[inline]
    pub(crate) fn tag(&self) -> i32 {
        super::tag::tag(self.seq, 0)
    }

    /// The buffer and its length.
    #[inline]
    pub(crate) fn buf(&self) -> (*mut u8, usize) {
        (self.buf, self.len)
    }
}
