//! A blocking binomial broadcast without a schedule: [`TreeBcast`].
//!
//! The same messages as the binomial schedule (`algos/bcast/binomial.rs`:
//! one from the parent, then one to each child, all with the call's step-0
//! tag), started and waited for on the calling thread. A small broadcast
//! then costs its eager sends and one receive, not a schedule's vectors,
//! boxed steps and dependency walk; called back to back, the root's eager
//! sends run ahead of the leaves as far as the rings allow.

use super::ctx::Ctx;
use super::sched::Schedule;
use crate::comm::Comm;
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::ReqId;

/// A planned blocking binomial broadcast of `len` bytes at `buf`.
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

/// A binomial tree has at most one child per bit of the rank.
const MAX_CHILDREN: usize = usize::BITS as usize;

impl TreeBcast {
    /// The broadcast `ctx` describes, rooted at `root`.
    pub(crate) fn new(ctx: &Ctx, buf: *mut u8, len: usize, root: usize) -> TreeBcast {
        TreeBcast {
            buf,
            len,
            root,
            seq: ctx.seq,
        }
    }

    /// Runs the broadcast on the calling thread. A failed receive (a
    /// truncation) is reported after the children were still sent to, as
    /// the schedule does.
    pub(crate) fn run(self, comm: &Comm) -> Result<(), Error> {
        let rt = comm.rt();
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        let context = comm.inner.context + 1;
        let tag = super::tag::tag(self.seq, 0);
        let vr = (rank + size - self.root) % size;
        let absolute = |rel: usize| (rel + self.root) % size;
        // Lowest set bit of the relative rank: the parent's distance, and
        // the bound below which the children lie (the root: all of them).
        let low = if vr == 0 {
            size.next_power_of_two()
        } else {
            1 << vr.trailing_zeros()
        };
        let mut outcome = Ok(());
        if vr != 0 {
            let pattern = Pattern {
                context,
                source: SourceSel::Rank(absolute(vr - low) as i32),
                tag: TagSel::Tag(tag),
            };
            let mut engine = rt.engine();
            // SAFETY: waited on below, before `buf` is released.
            let id = unsafe { engine.start_recv(pattern, self.buf, self.len) };
            outcome = rt.wait_request_from(engine, id).map(drop);
        }
        let mut pending = [ReqId(0); MAX_CHILDREN];
        let mut waiting = 0;
        {
            let mut engine = rt.engine();
            let mut mask = low >> 1;
            while mask > 0 {
                if vr + mask < size {
                    let child = comm.inner.world_of[absolute(vr + mask)];
                    if engine.queued_to(child) >= QUEUE_CAP {
                        // The child is a ring and a queue behind: let it
                        // take the queue before adding to it (back-to-back
                        // calls would otherwise buffer without bound). A
                        // queue, not the ring's edge, so that the root
                        // does not poll the ring's index at every call
                        // while its leaf pops.
                        drop(engine);
                        rt.wait_until(|e| (e.queued_to(child) == 0).then_some(()));
                        engine = rt.engine();
                    }
                    // SAFETY: an eager send is complete here; another is
                    // waited on below, before `buf` is released.
                    let id = unsafe {
                        engine.start_send(
                            child,
                            context,
                            rank as i32,
                            tag,
                            self.buf,
                            self.len,
                            false,
                        )
                    };
                    if let Some(id) = id {
                        pending[waiting] = id;
                        waiting += 1;
                    }
                }
                mask >>= 1;
            }
        }
        for &id in &pending[..waiting] {
            let sent = rt.wait_request(id).map(drop);
            outcome = outcome.and(sent);
        }
        outcome
    }

    /// The same broadcast as a schedule (for a non-blocking start).
    pub(crate) fn into_schedule(self, comm: &Comm) -> Schedule {
        let ctx = Ctx {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            world_of: std::borrow::Cow::Borrowed(&comm.inner.world_of),
            seq: self.seq,
            nodes: None,
            model: comm.rt().selector().model(),
            area: None,
        };
        let mut s = Schedule::new();
        let buf = Schedule::user(self.buf, self.len);
        super::algos::bcast::binomial::build(&ctx, &mut s, buf, self.root, 0, &[]);
        s
    }
}
