//! Requests for non-blocking operations (Rust API). A [`Request`] borrows
//! the buffer it reads or writes until it completes; dropping one that is
//! still running waits for it, so a buffer can never be released early.
//!
//! Files: this one ([`Request`]), `many.rs` (completing several at once),
//! `sweep.rs` ([`Sweep`]: many requests under one engine lock and poll;
//! [`settle_all`] / [`settle_some`]: waiting without completing).

use std::marker::PhantomData;

use crate::datatype::stage::CollStage;
use crate::error::Error;
use crate::p2p::request::ReqId;
use crate::progress::{Rt, Runtime};
use crate::status::Status;

mod many;
mod sweep;

pub use crate::p2p::request::Ticket;
pub use many::{test_all, test_any, test_some, wait_all, wait_any, wait_some};
pub(crate) use sweep::settle_with_tickets;
pub use sweep::{settle_all, settle_some, Sweep};

/// A pending (or finished, not yet waited) operation.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let peer = (world.rank() + 1) % world.size();
/// let from = (world.rank() + world.size() - 1) % world.size();
/// let out = [world.rank(); 4];
/// let mut inb = [0i32; 4];
/// let r = world.irecv(&mut inb, from, 0)?;
/// let s = world.isend(&out, peer, 0)?;
/// let statuses = oxmpi::wait_all(vec![r, s])?;
/// assert_eq!(statuses[0].source, from);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[must_use = "a request must be waited on or tested"]
pub struct Request<'a> {
    rt: RtRef,
    id: Option<ReqId>,
    ready: Option<Status>,
    /// An error [`Request::peek`] found, kept for the completing call
    /// (boxed: rare, and a request is moved around in vectors).
    failed: Option<Box<Error>>,
    /// A collective's temporaries for non-contiguous datatypes, finished
    /// (unpacked) when the outcome is taken from the engine.
    stage: Option<Box<CollStage>>,
    _buf: PhantomData<&'a mut [u8]>,
}

/// The runtime a request runs on: counted, or borrowed for the whole
/// process from a communicator that is never dropped (the C front end's
/// predefined ones), so that making and dropping such a request touches
/// no reference count (two atomic read-modify-writes fewer a message).
#[derive(Clone)]
pub(crate) enum RtRef {
    Counted(Rt),
    Static(&'static Runtime),
}

impl std::ops::Deref for RtRef {
    type Target = Runtime;

    #[inline(always)]
    fn deref(&self) -> &Runtime {
        match self {
            RtRef::Counted(rt) => rt,
            RtRef::Static(rt) => rt,
        }
    }
}

impl<'a> Request<'a> {
    pub(crate) fn pending(rt: Rt, id: ReqId) -> Request<'a> {
        Request::pending_on(RtRef::Counted(rt), id)
    }

    /// A running request on a runtime that lives as long as the process.
    #[inline]
    pub(crate) fn pending_static(rt: &'static Runtime, id: ReqId) -> Request<'a> {
        Request::pending_on(RtRef::Static(rt), id)
    }

    #[inline]
    pub(crate) fn pending_on(rt: RtRef, id: ReqId) -> Request<'a> {
        Request {
            rt,
            id: Some(id),
            ready: None,
            failed: None,
            stage: None,
            _buf: PhantomData,
        }
    }

    pub(crate) fn finished(rt: Rt, status: Status) -> Request<'a> {
        Request::finished_on(RtRef::Counted(rt), status)
    }

    /// A request complete as it started, with `status`.
    #[inline]
    pub(crate) fn finished_on(rt: RtRef, status: Status) -> Request<'a> {
        Request {
            rt,
            id: None,
            ready: Some(status),
            failed: None,
            stage: None,
            _buf: PhantomData,
        }
    }

    /// A request that failed as it started, with `error`.
    pub(crate) fn failed_on(rt: RtRef, error: Error) -> Request<'a> {
        Request {
            rt,
            id: None,
            ready: None,
            failed: Some(Box::new(error)),
            stage: None,
            _buf: PhantomData,
        }
    }

    /// Attaches the temporaries the operation uses; they are finished
    /// (unpacked) once, when its outcome arrives, and released with the
    /// request. The caller vouches that the buffers they refer to are
    /// borrowed for `'a`.
    pub(crate) fn with_stage(mut self, stage: Option<CollStage>) -> Self {
        let Some(stage) = stage else { return self };
        self.stage = Some(Box::new(stage));
        if self.id.is_none() {
            // Finished already: nothing arrives later.
            if let Some(s) = self.ready.take() {
                match self.settle(Ok(s)) {
                    Ok(s) => self.ready = Some(s),
                    Err(e) => self.failed = Some(Box::new(e)),
                }
            }
        }
        self
    }

    /// The outcome taken from the engine, after finishing the stage.
    fn settle(&mut self, outcome: Result<Status, Error>) -> Result<Status, Error> {
        match self.stage.take() {
            // SAFETY: the stage's buffers are borrowed for 'a, which the
            // request cannot outlive, and the operation has completed.
            Some(stage) => unsafe { stage.complete(outcome) },
            None => outcome,
        }
    }

    /// The status of an operation that completed as it started (an eager
    /// send, an operation with `PROC_NULL`), so that a caller can keep the
    /// status alone; the request back otherwise (running, failed, or
    /// with a stage to finish).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let r = world.isend(&[1u8], world.rank(), 0)?;
    /// match r.finished_now() {
    ///     Ok(status) => assert_eq!(status.count, 0), // eager: out already
    ///     Err(r) => drop(r.wait()?),
    /// }
    /// # world.recv(&mut [0u8], world.rank(), 0)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub fn finished_now(mut self) -> Result<Status, Self> {
        match self.ready {
            Some(s) if self.id.is_none() && s.truncated_from.is_none() => {
                self.ready = None;
                Ok(s)
            }
            _ => Err(self),
        }
    }

    /// Whether the request has no operation left (already waited or tested to completion).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut r = world.isend(&[1u8], world.rank(), 0)?;
    /// world.recv(&mut [0u8], world.rank(), 0)?;
    /// assert!(!r.is_null());
    /// r.wait_mut()?;
    /// assert!(r.is_null()); // completed: waiting again gives an empty status
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_null(&self) -> bool {
        self.id.is_none() && self.ready.is_none() && self.failed.is_none()
    }

    /// Whether dropping this request would do nothing: it is complete
    /// (nothing in the engine to wait for), keeps no error and no stage,
    /// and counts no reference to its runtime. A caller may then forget
    /// it instead of dropping it.
    #[inline]
    pub fn owns_nothing(&self) -> bool {
        self.id.is_none()
            && self.failed.is_none()
            && self.stage.is_none()
            && matches!(self.rt, RtRef::Static(_))
    }

    fn take_status(&mut self) -> Option<Result<Status, Error>> {
        if let Some(s) = self.ready.take() {
            return Some(s.check());
        }
        if let Some(e) = self.failed.take() {
            return Some(Err(*e));
        }
        let id = self.id?;
        let outcome = self.rt.engine().reqs.take_finished(id)?;
        self.id = None;
        Some(self.settle(outcome).and_then(Status::check))
    }

    /// Blocks until the operation completes (`MPI_Wait`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0i32; 2];
    /// let r = world.irecv(&mut buf, world.rank(), 0)?;
    /// world.send(&[5, 6], world.rank(), 0)?;
    /// let st = r.wait()?; // `buf` may be read again after this
    /// assert_eq!((buf, st.count), ([5, 6], 8));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn wait(mut self) -> Result<Status, Error> {
        self.wait_mut()
    }

    /// Like [`Request::wait`] without consuming the request (it becomes null).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut reqs = vec![world.isend(&[1u8], world.rank(), 0)?];
    /// world.recv(&mut [0u8], world.rank(), 0)?;
    /// for r in &mut reqs {
    ///     r.wait_mut()?; // completes in place; the request stays (null) in the vector
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn wait_mut(&mut self) -> Result<Status, Error> {
        if self.is_null() {
            return Ok(Status::empty());
        }
        if let Some(s) = self.ready.take() {
            return s.check();
        }
        if let Some(e) = self.failed.take() {
            return Err(*e);
        }
        let Some(id) = self.id else {
            return Ok(Status::empty());
        };
        // One lock per round: progress, then look (no separate first look).
        let outcome = self.rt.wait_until(|e| e.reqs.take_finished(id));
        self.id = None;
        self.settle(outcome).and_then(Status::check)
    }

    /// Takes this request's outcome from the engine if it has finished,
    /// keeping it in the request (`ready` or `failed`) for the completing
    /// call; returns whether the request has nothing left in the engine.
    #[inline]
    fn collect(&mut self, engine: &mut crate::p2p::engine::Engine) -> bool {
        let Some(id) = self.id else { return true };
        let outcome = match engine.reqs.take_ok(id) {
            Some(s) if self.stage.is_none() => {
                self.id = None;
                self.ready = Some(s);
                return true;
            }
            Some(s) => Ok(s),
            None => match engine.reqs.take_failed(id) {
                Some(e) => Err(e),
                None => return false,
            },
        };
        self.keep(outcome);
        true
    }

    /// Keeps an outcome taken from the engine (settled) for the call that
    /// completes the request.
    fn keep(&mut self, outcome: Result<Status, Error>) {
        self.id = None;
        match self.settle(outcome) {
            Ok(s) => self.ready = Some(s),
            Err(e) => self.failed = Some(Box::new(e)),
        }
    }

    /// Completes the request if it can (`MPI_Test`): `Ok(None)` while it runs.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u8; 4];
    /// let mut r = world.irecv(&mut buf, world.rank(), 0)?;
    /// let mut sent = false;
    /// let st = loop {
    ///     if let Some(st) = r.test()? {
    ///         break st;
    ///     }
    ///     if !sent {
    ///         world.send(&[1u8; 4], world.rank(), 0)?; // overlap work with the wait
    ///         sent = true;
    ///     }
    /// };
    /// assert_eq!(st.count, 4);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<Option<Status>, Error> {
        if self.is_null() {
            return Ok(Some(Status::empty()));
        }
        if let Some(s) = self.take_status() {
            return s.map(Some);
        }
        self.rt.poke();
        self.take_status().transpose()
    }

    /// The outcome of a finished operation without completing the request
    /// (`MPI_Request_get_status`, for the C front end): `None` while it
    /// runs. The request stays to be waited on or tested, which then
    /// returns the same outcome. `Ok` statuses may say the message was
    /// truncated ([`Status::check`] turns that into the error `wait`
    /// gives). A null request gives an empty status. Makes progress first.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut r = world.isend(&[1u8], world.rank(), 0)?;
    /// world.recv(&mut [0u8], world.rank(), 0)?;
    /// while r.peek().is_none() {} // look without completing
    /// assert!(!r.is_null());
    /// r.wait()?; // the same outcome, now completed
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn peek(&mut self) -> Option<Result<Status, &Error>> {
        if let Some(id) = self.id {
            self.rt.poke();
            let outcome = self.rt.engine().reqs.take_finished(id)?;
            self.keep(outcome);
        }
        match (&self.failed, self.ready) {
            (Some(e), _) => Some(Err(&**e)),
            (None, Some(s)) => Some(Ok(s)),
            (None, None) => Some(Ok(Status::empty())),
        }
    }

    /// Cancels a receive that has not been matched (`MPI_Cancel`); the
    /// request still has to be waited on, and its status says `cancelled`.
    /// Sends are never cancelled (MPI allows this): they complete normally.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u8; 8];
    /// let r = world.irecv(&mut buf, world.rank(), 77)?; // nobody sends tag 77
    /// r.cancel();
    /// assert!(r.wait()?.cancelled);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cancel(&self) {
        if let Some(id) = self.id {
            self.rt.engine().cancel(id);
        }
    }

    /// Whether the operation has finished, without completing the request
    /// (it stays to be waited on or tested). Makes progress first. For
    /// `MPI_Testall`, which must leave every request alone unless all are
    /// done (used by the C front end).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let r = world.isend(&[1u8], world.rank(), 0)?;
    /// world.recv(&mut [0u8], world.rank(), 0)?;
    /// while !r.is_complete() {}
    /// r.wait()?; // returns at once
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_complete(&self) -> bool {
        if self.is_null() || self.ready.is_some() || self.failed.is_some() {
            return true;
        }
        self.rt.poke();
        self.done()
    }

    fn done(&self) -> bool {
        self.ready.is_some()
            || self.failed.is_some()
            || self.id.is_some_and(|id| self.rt.engine().reqs.is_done(id))
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if self.id.is_some() {
            // The buffer is borrowed until completion: finish before it is released.
            let _ = self.wait_mut();
        }
    }
}
