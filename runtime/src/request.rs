//! Requests for non-blocking operations (Rust API). A [`Request`] borrows
//! the buffer it reads or writes until it completes; dropping one that is
//! still running waits for it, so a buffer can never be released early.

use std::marker::PhantomData;

use crate::comm::Comm;
use crate::datatype::stage::{CollStage, Plan};
use crate::error::Error;
use crate::p2p::engine::MessageHandle;
use crate::p2p::request::ReqId;
use crate::progress::Rt;
use crate::status::{Status, PROC_NULL};

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
    rt: Rt,
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

impl<'a> Request<'a> {
    pub(crate) fn pending(rt: Rt, id: ReqId) -> Request<'a> {
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
        Request {
            rt,
            id: None,
            ready: Some(status),
            failed: None,
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
    fn collect(&mut self, engine: &mut crate::p2p::engine::Engine) -> bool {
        let Some(id) = self.id else { return true };
        let Some(outcome) = engine.reqs.take_finished(id) else {
            return false;
        };
        self.id = None;
        match self.settle(outcome) {
            Ok(s) => self.ready = Some(s),
            Err(e) => self.failed = Some(Box::new(e)),
        }
        true
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
            self.id = None;
            match self.settle(outcome) {
                Ok(s) => self.ready = Some(s),
                Err(e) => self.failed = Some(Box::new(e)),
            }
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

/// Waits for every request (`MPI_Waitall`); statuses in order. The first
/// error is returned after all requests have completed.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (me, p) = (world.rank(), world.size());
/// let mut bufs = vec![[0i32; 1]; p as usize];
/// let mut reqs = Vec::new();
/// for (src, b) in bufs.iter_mut().enumerate() {
///     reqs.push(world.irecv(b, src as i32, 0)?);
/// }
/// for dst in 0..p {
///     reqs.push(world.isend(std::slice::from_ref(&me), dst, 0)?);
/// }
/// let statuses = oxmpi::wait_all(reqs)?; // in the order of `reqs`
/// assert_eq!(statuses.len(), 2 * p as usize);
/// assert!(bufs.iter().enumerate().all(|(src, b)| b[0] == src as i32));
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn wait_all(mut requests: Vec<Request<'_>>) -> Result<Vec<Status>, Error> {
    // One wait for the lot: each pass of the engine takes every outcome
    // that is there, in order, from where the last pass stopped (no lock
    // and no poll per request). Outcomes are kept in the requests as they
    // are taken, so a wait that unwinds leaves every request consistent.
    if let Some(rt) = any_rt(&requests) {
        let mut next = 0;
        rt.wait_until(|e| {
            while let Some(r) = requests.get_mut(next) {
                if !r.collect(e) {
                    return None;
                }
                next += 1;
            }
            Some(())
        });
    }
    let mut out = Vec::with_capacity(requests.len());
    let mut first_err = None;
    for r in requests.iter_mut() {
        match r.wait_mut() {
            Ok(s) => out.push(s),
            Err(e) => {
                if let Error::Truncated { status, .. } = &e {
                    out.push(*status);
                } else {
                    out.push(Status::empty());
                }
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn any_rt(requests: &[Request<'_>]) -> Option<Rt> {
    requests.iter().find(|r| !r.is_null()).map(|r| r.rt.clone())
}

/// Waits until one request completes (`MPI_Waitany`): its index and status,
/// or `None` if every request is null. The completed request becomes null.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (mut a, mut b) = ([0u8], [0u8]);
/// let me = world.rank();
/// let mut reqs = vec![world.irecv(&mut a, me, 1)?, world.irecv(&mut b, me, 2)?];
/// world.send(&[2u8], world.rank(), 2)?;
/// let (i, st) = oxmpi::wait_any(&mut reqs)?.expect("a request is pending");
/// assert_eq!((i, st.tag), (1, 2));
/// world.send(&[1u8], world.rank(), 1)?;
/// assert_eq!(oxmpi::wait_any(&mut reqs)?.map(|(i, _)| i), Some(0));
/// assert!(oxmpi::wait_any(&mut reqs)?.is_none()); // all null now
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn wait_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>, Error> {
    let Some(rt) = any_rt(requests) else {
        return Ok(None);
    };
    loop {
        if let Some((i, s)) = test_any(requests)? {
            return Ok(Some((i, s)));
        }
        rt.wait_until(|e| {
            requests
                .iter()
                .any(|r| {
                    r.ready.is_some()
                        || r.failed.is_some()
                        || r.id.is_some_and(|id| e.reqs.is_done(id))
                })
                .then_some(())
        });
    }
}

/// Completes one request if any has finished (`MPI_Testany`).
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut buf = [0u8];
/// let mut reqs = vec![world.irecv(&mut buf, world.rank(), 0)?];
/// assert!(oxmpi::test_any(&mut reqs)?.is_none()); // nothing sent yet
/// world.send(&[1u8], world.rank(), 0)?;
/// while oxmpi::test_any(&mut reqs)?.is_none() {}
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn test_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>, Error> {
    if let Some(rt) = any_rt(requests) {
        rt.poke();
    }
    for (i, r) in requests.iter_mut().enumerate() {
        if !r.is_null() && r.done() {
            return r.test().map(|s| s.map(|s| (i, s)));
        }
    }
    Ok(None)
}

/// Waits until at least one request completes and completes all that have
/// (`MPI_Waitsome`): (index, status) pairs; empty if all are null.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut bufs = [[0u8]; 3];
/// let mut reqs = Vec::new();
/// for (tag, b) in bufs.iter_mut().enumerate() {
///     reqs.push(world.irecv(b, world.rank(), tag as i32)?);
/// }
/// for tag in 0..3 {
///     world.send(&[tag as u8], world.rank(), tag)?;
/// }
/// let mut done = 0;
/// while done < 3 {
///     done += oxmpi::wait_some(&mut reqs)?.len(); // (index, status) pairs
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn wait_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>, Error> {
    let Some(rt) = any_rt(requests) else {
        return Ok(Vec::new());
    };
    loop {
        let done = test_some(requests)?;
        if !done.is_empty() {
            return Ok(done);
        }
        rt.wait_until(|e| {
            requests
                .iter()
                .any(|r| {
                    r.ready.is_some()
                        || r.failed.is_some()
                        || r.id.is_some_and(|id| e.reqs.is_done(id))
                })
                .then_some(())
        });
    }
}

/// Completes every request that has finished (`MPI_Testsome`).
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut bufs = [[0u8]; 2];
/// let mut reqs = Vec::new();
/// for (tag, b) in bufs.iter_mut().enumerate() {
///     reqs.push(world.irecv(b, world.rank(), tag as i32)?);
/// }
/// world.send(&[0u8], world.rank(), 0)?;
/// let mut finished = Vec::new();
/// while finished.is_empty() {
///     finished = oxmpi::test_some(&mut reqs)?;
/// }
/// assert_eq!(finished[0].0, 0); // only the tag-0 receive could finish
/// world.send(&[1u8], world.rank(), 1)?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn test_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>, Error> {
    if let Some(rt) = any_rt(requests) {
        rt.poke();
    }
    let mut out = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if !r.is_null() && r.done() {
            if let Some(s) = r.test()? {
                out.push((i, s));
            }
        }
    }
    Ok(out)
}

/// Completes all requests if all have finished (`MPI_Testall`); otherwise
/// `None` and none is completed.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (mut a, mut b) = ([0u8], [0u8]);
/// let me = world.rank();
/// let mut reqs = vec![world.irecv(&mut a, me, 1)?, world.irecv(&mut b, me, 2)?];
/// world.send(&[1u8], world.rank(), 1)?;
/// assert!(oxmpi::test_all(&mut reqs)?.is_none()); // tag 2 is still pending
/// world.send(&[2u8], world.rank(), 2)?;
/// let statuses = loop {
///     if let Some(s) = oxmpi::test_all(&mut reqs)? {
///         break s;
///     }
/// };
/// assert_eq!(statuses.len(), 2);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn test_all(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>, Error> {
    if let Some(rt) = any_rt(requests) {
        rt.poke();
    }
    if !requests.iter().all(|r| r.is_null() || r.done()) {
        return Ok(None);
    }
    requests
        .iter_mut()
        .map(|r| r.wait_mut())
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A message removed from matching by a matched probe (`MPI_Message`).
///
/// ```no_run
/// use oxmpi::{Message, Status};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // Hand a probed message to whoever knows its type.
/// fn receive_floats(msg: Message, st: Status) -> Result<Vec<f64>, oxmpi::Error> {
///     let mut v = vec![0.0; st.count_of(8).unwrap_or(0)];
///     msg.recv(&mut v)?;
///     Ok(v)
/// }
/// world.send(&[1.0f64, 2.0], world.rank(), 0)?;
/// let (msg, st) = world.mprobe(world.rank(), 0)?;
/// assert_eq!(receive_floats(msg, st)?, [1.0, 2.0]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Message {
    comm: Comm,
    handle: Option<MessageHandle>,
}

impl Message {
    pub(crate) fn new(comm: Comm, handle: MessageHandle) -> Message {
        Message {
            comm,
            handle: Some(handle),
        }
    }
    pub(crate) fn no_proc(comm: Comm) -> Message {
        Message { comm, handle: None }
    }

    /// Receives this message (`MPI_Mrecv`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(b"abc", world.rank(), 0)?;
    /// let (msg, st) = world.mprobe(oxmpi::ANY_SOURCE, 0)?;
    /// let mut buf = vec![0u8; st.count];
    /// let got = msg.recv(&mut buf)?;
    /// assert_eq!((buf.as_slice(), got.count), (&b"abc"[..], 3));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn recv<T: crate::buffer::Scalar>(self, buf: &mut [T]) -> Result<Status, Error> {
        let (ptr, len) = crate::buffer::bytes_of_mut(buf);
        // SAFETY: the request is waited on before `buf`'s borrow ends.
        unsafe { self.irecv_raw(ptr, len) }?.wait()
    }

    /// Starts receiving this message into raw bytes (`MPI_Imrecv`).
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(&[1u32, 2], world.rank(), 0)?;
    /// let (msg, st) = world.mprobe(world.rank(), 0)?;
    /// let mut buf = vec![0u8; st.count];
    /// // SAFETY: `buf` outlives the request, which is waited on below.
    /// let req = unsafe { msg.irecv_raw(buf.as_mut_ptr(), buf.len()) }?;
    /// assert_eq!(req.wait()?.count, 8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn irecv_raw(self, buf: *mut u8, cap: usize) -> Result<Request<'static>, Error> {
        match self.handle {
            // SAFETY: forwarded from the caller's contract.
            Some(h) => Ok(unsafe { self.comm.start_mrecv(h, buf, cap) }),
            None => Ok(Request::finished(self.comm.rt().clone(), Status::empty())),
        }
    }

    /// Starts receiving this message into the elements `plan` describes
    /// (`MPI_Imrecv` with a datatype; a non-contiguous type is unpacked in
    /// flight).
    ///
    /// # Safety
    /// The buffer has room for the elements and stays writable until the
    /// request completes.
    ///
    /// ```no_run
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let every_other = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// every_other.commit();
    /// world.send(&[1i32, 2], world.rank(), 0)?;
    /// let (msg, _) = world.mprobe(world.rank(), 0)?;
    /// let mut buf = [0i32; 3];
    /// // SAFETY: `buf` has room for the element and outlives the request.
    /// let req = unsafe { msg.irecv_plan(&Plan::new(&every_other, buf.as_mut_ptr().cast(), 1)?) }?;
    /// req.wait()?;
    /// assert_eq!(buf, [1, 0, 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn irecv_plan(self, plan: &Plan) -> Result<Request<'static>, Error> {
        let dst = match plan {
            // SAFETY: the caller's contract.
            &Plan::Bytes { ptr, len } => return unsafe { self.irecv_raw(ptr, len) },
            Plan::Typed(dst) => dst,
        };
        match self.handle {
            // SAFETY: forwarded from the caller's contract.
            Some(h) => unsafe { self.comm.start_mrecv_typed(h, dst) },
            None => Ok(Request::finished(self.comm.rt().clone(), Status::empty())),
        }
    }
}

enum PersistentOp {
    Send {
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    },
    Recv {
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    },
}

/// A persistent request (`MPI_Send_init` / `MPI_Recv_init`): started with
/// [`Persistent::start`] and completed with [`Persistent::wait`] as often as
/// needed; the buffer stays borrowed for the request's whole life.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut inb = [0u8; 32];
/// let mut halo = world.recv_init(&mut inb, world.rank(), 0)?;
/// for step in 0..3u8 {
///     assert!(!halo.is_active());
///     halo.start()?;
///     assert!(halo.is_active());
///     world.send(&[step; 32], world.rank(), 0)?;
///     halo.wait()?;
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Persistent<'a> {
    comm: Comm,
    op: PersistentOp,
    active: Option<Request<'static>>,
    _buf: PhantomData<&'a mut [u8]>,
}

impl<'a> Persistent<'a> {
    pub(crate) fn send(
        comm: Comm,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Self {
        Persistent {
            comm,
            op: PersistentOp::Send {
                buf,
                len,
                dest,
                tag,
                sync,
            },
            active: None,
            _buf: PhantomData,
        }
    }

    pub(crate) fn recv(comm: Comm, buf: *mut u8, cap: usize, source: i32, tag: i32) -> Self {
        Persistent {
            comm,
            op: PersistentOp::Recv {
                buf,
                cap,
                source,
                tag,
            },
            active: None,
            _buf: PhantomData,
        }
    }

    /// Starts the operation (`MPI_Start`). Starting an active request is an error.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let out = [1u8; 4];
    /// let mut send = world.send_init(&out, world.rank(), 0)?;
    /// send.start()?;
    /// assert!(send.start().is_err()); // still active
    /// world.recv(&mut [0u8; 4], world.rank(), 0)?;
    /// send.wait()?;
    /// send.start()?; // again, same buffer and peer
    /// world.recv(&mut [0u8; 4], world.rank(), 0)?;
    /// send.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn start(&mut self) -> Result<(), Error> {
        if self.active.is_some() {
            return Err(Error::State(
                "persistent request started while still active".into(),
            ));
        }
        // SAFETY: the buffer is borrowed for 'a, and `self` (which holds the
        // active request) cannot outlive 'a; Drop waits for it.
        let r = unsafe {
            match self.op {
                PersistentOp::Send {
                    buf,
                    len,
                    dest,
                    tag,
                    sync,
                } => self.comm.isend_raw(buf, len, dest, tag, sync),
                PersistentOp::Recv {
                    buf,
                    cap,
                    source,
                    tag,
                } => self.comm.irecv_raw(buf, cap, source, tag),
            }
        }?;
        self.active = Some(r);
        Ok(())
    }

    /// Waits for the started operation; an inactive request returns an empty status.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u16; 2];
    /// let mut recv = world.recv_init(&mut buf, world.rank(), 0)?;
    /// assert_eq!(recv.wait()?.source, oxmpi::PROC_NULL); // not started: empty status
    /// recv.start()?;
    /// world.send(&[1u16, 2], world.rank(), 0)?;
    /// assert_eq!(recv.wait()?.count, 4);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn wait(&mut self) -> Result<Status, Error> {
        match self.active.take() {
            Some(r) => r.wait(),
            None => Ok(Status {
                source: PROC_NULL,
                ..Status::empty()
            }),
        }
    }

    /// Tests the started operation.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u8];
    /// let mut recv = world.recv_init(&mut buf, world.rank(), 0)?;
    /// recv.start()?;
    /// world.send(&[1u8], world.rank(), 0)?;
    /// while recv.test()?.is_none() {}
    /// assert!(!recv.is_active());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<Option<Status>, Error> {
        let Some(r) = self.active.as_mut() else {
            return Ok(Some(Status::empty()));
        };
        let out = r.test()?;
        if out.is_some() {
            self.active = None;
        }
        Ok(out)
    }

    /// Whether a started operation has not been completed yet.
    ///
    /// See the example on [`Persistent`].
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }
}
