//! A non-blocking binomial broadcast without a schedule: [`TreeBcast::start`].
//!
//! The same messages as the binomial schedule and the blocking
//! [`TreeBcast::run`] (one from the parent, then one to each child, on the
//! call's step-0 tag), started under one engine lock. What the start
//! cannot finish (the parent's message is not there yet, a rendezvous
//! send to a child, an eager one waiting in the queue for room in the
//! child's ring) waits in a small engine task, [`TreeTask`], which sends
//! to the children once the parent's message is in. A call that
//! finishes as it starts (the root's eager sends; a leaf whose message
//! had arrived) makes no engine request and no task: its request is
//! complete as returned.

use super::tree_direct::TreeBcast;
use crate::comm::Comm;
use crate::error::Error;
use crate::p2p::engine::{Engine, Task};
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::{Pending, ReqId, ReqState};
use crate::request::{Request, RtRef};
use crate::status::Status;

/// What is left of a started broadcast: the parent's message, then the
/// sends to the children.
struct TreeTask {
    buf: *mut u8,
    len: usize,
    context: u32,
    rank: i32,
    tag: i32,
    /// The receive from the parent, while it runs.
    recv: Option<ReqId>,
    /// World ranks of the children, sent to once `recv` is done.
    children: Vec<usize>,
    /// Sends to children still in flight (rendezvous).
    sends: Vec<ReqId>,
    /// Children whose eager message waits in this rank's queue.
    queued: Vec<usize>,
    /// First error met (a truncated receive); the children are still sent to.
    error: Option<Error>,
    /// The collective's request, completed by [`Task::finish`].
    req: ReqId,
}

// SAFETY: `buf` is the caller's, alive until the request completes (MPI's
// contract, and the Rust API's request borrows it); it is touched only
// by the engine under its lock.
unsafe impl Send for TreeTask {}

/// The sends of a started broadcast that are not done yet: empty (no
/// allocation) when every send was eager and went straight into its
/// child's ring.
#[derive(Default)]
struct Sent {
    /// Requests of rendezvous sends.
    ids: Vec<ReqId>,
    /// Children (world ranks) whose message waits in this rank's queue
    /// for room in their ring.
    queued: Vec<usize>,
}

/// Sends `len` bytes at `buf` to each of `children` (world ranks). An
/// eager message that has to wait for room in its child's ring is
/// complete for the engine, but the broadcast is not done until it left
/// the queue: so that a root calling back to back waits for its children
/// (in `MPI_Wait`, which progresses) as the blocking call does, instead of
/// queueing copies without bound.
///
/// # Safety
/// `buf` is readable for `len` bytes until every send returned is done.
unsafe fn send_all(
    engine: &mut Engine,
    children: impl Iterator<Item = usize>,
    (context, rank, tag): (u32, i32, i32),
    buf: *mut u8,
    len: usize,
) -> Sent {
    // Packets still queued from earlier calls go first, where there is room.
    engine.flush_queued();
    let mut sent = Sent::default();
    for child in children {
        // SAFETY: the caller's contract.
        match unsafe { engine.start_send(child, context, rank, tag, buf, len, false) } {
            Some(id) => sent.ids.push(id),
            None if engine.queued_to(child) > 0 => sent.queued.push(child),
            None => {}
        }
    }
    sent
}

/// The error a finished receive from the parent leaves, if any.
fn received(outcome: Result<Status, Error>) -> Option<Error> {
    outcome.and_then(Status::check).err()
}

impl TreeBcast {
    /// Starts the broadcast on `comm`; the request completes with it. `rt`
    /// is `comm`'s runtime as the request will refer to it.
    pub(crate) fn start(self, comm: &Comm, rt: RtRef) -> Request<'static> {
        let place = self.place(comm);
        let (buf, len) = self.buf();
        let wire = (comm.inner.context + 1, comm.rank(), self.tag());
        let world = |r: usize| comm.inner.world_of[r];
        let mut engine = rt.engine();
        let mut error = None;
        if let Some(parent) = place.parent() {
            let pattern = Pattern {
                context: wire.0,
                source: SourceSel::Rank(parent as i32),
                tag: TagSel::Tag(wire.2),
            };
            // SAFETY: MPI's contract: `buf` stays valid until completion.
            let id = unsafe { engine.start_recv(pattern, buf, len) };
            match engine.reqs.take_finished(id) {
                Some(outcome) => error = received(outcome),
                None => {
                    let task = TreeTask {
                        recv: Some(id),
                        children: place.children().map(world).collect(),
                        ..TreeTask::new(buf, len, wire)
                    };
                    let req = register(&mut engine, task);
                    drop(engine);
                    return Request::pending_on(rt, req);
                }
            }
        }
        // SAFETY: as above.
        let sent = unsafe { send_all(&mut engine, place.children().map(world), wire, buf, len) };
        if sent.ids.is_empty() && sent.queued.is_empty() {
            drop(engine);
            return match error {
                None => Request::finished_on(rt, Status::empty()),
                Some(e) => Request::failed_on(rt, e),
            };
        }
        let task = TreeTask {
            sends: sent.ids,
            queued: sent.queued,
            error,
            ..TreeTask::new(buf, len, wire)
        };
        let req = register(&mut engine, task);
        drop(engine);
        Request::pending_on(rt, req)
    }
}

impl TreeTask {
    /// A task for `len` bytes at `buf` with the call's `wire` (context,
    /// rank, tag) that waits for nothing yet.
    fn new(buf: *mut u8, len: usize, (context, rank, tag): (u32, i32, i32)) -> TreeTask {
        TreeTask {
            buf,
            len,
            context,
            rank,
            tag,
            recv: None,
            children: Vec::new(),
            sends: Vec::new(),
            queued: Vec::new(),
            error: None,
            req: ReqId(0),
        }
    }
}

/// Gives `task` its request and the engine's care; returns the request.
fn register(engine: &mut Engine, mut task: TreeTask) -> ReqId {
    task.req = engine.reqs.insert(ReqState::Pending(Pending::Coll));
    let req = task.req;
    engine.add_task(Box::new(task));
    req
}

impl Task for TreeTask {
    fn advance(&mut self, engine: &mut Engine) -> bool {
        let mut moved = false;
        if let Some(id) = self.recv {
            let Some(outcome) = engine.reqs.take_finished(id) else {
                return false;
            };
            self.recv = None;
            self.error = received(outcome);
            let children = std::mem::take(&mut self.children);
            let wire = (self.context, self.rank, self.tag);
            // SAFETY: the caller's buffer lives until the request
            // completes, after these sends (see `TreeTask`).
            let sent = unsafe { send_all(engine, children.into_iter(), wire, self.buf, self.len) };
            self.sends = sent.ids;
            self.queued = sent.queued;
            moved = true;
        }
        if !self.queued.is_empty() {
            // The engine moved what it could before advancing its tasks.
            let before = self.queued.len();
            self.queued.retain(|&child| engine.queued_to(child) > 0);
            moved |= self.queued.len() != before;
        }
        let before = self.sends.len();
        self.sends
            .retain(|&id| match engine.reqs.take_finished(id) {
                None => true,
                Some(outcome) => {
                    if let Err(e) = outcome {
                        self.error.get_or_insert(e);
                    }
                    false
                }
            });
        moved || self.sends.len() != before
    }

    fn finished(&self) -> bool {
        self.recv.is_none() && self.sends.is_empty() && self.queued.is_empty()
    }

    fn finish(self: Box<Self>, engine: &mut Engine) {
        match self.error {
            Some(e) => engine.reqs.fail(self.req, e),
            None => engine.reqs.complete(self.req, Status::empty()),
        }
    }
}
