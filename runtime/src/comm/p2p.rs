//! Point-to-point operations on a communicator (Rust API). Blocking calls
//! are the non-blocking ones waited on.

use super::Comm;
use super::{Message, Persistent};
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::error::Error;
use crate::p2p::engine::MessageHandle;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::ReqId;
use crate::request::{Request, Ticket};
use crate::status::{Status, ANY_SOURCE, ANY_TAG, PROC_NULL};

impl Comm {
    pub(crate) fn pattern(&self, source: i32, tag: i32) -> Pattern {
        Pattern {
            context: self.inner.context,
            source: if source == ANY_SOURCE {
                SourceSel::Any
            } else {
                SourceSel::Rank(source)
            },
            tag: if tag == ANY_TAG {
                TagSel::Any
            } else {
                TagSel::Tag(tag)
            },
        }
    }

    /// Starts a send of raw bytes (the C front end's entry point).
    ///
    /// # Safety
    /// `buf..buf+len` must stay readable until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let data = vec![7u8; 64];
    /// // SAFETY: `data` outlives the request, which is waited on below.
    /// let req = unsafe { world.isend_raw(data.as_ptr(), data.len(), 0, 3, false) }?;
    /// if world.rank() == 0 {
    ///     for source in 0..world.size() {
    ///         world.recv(&mut [0u8; 64], source, 3)?;
    ///     }
    /// }
    /// req.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn isend_raw(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Request<'static>, Error> {
        // SAFETY: the caller's contract.
        let r = unsafe { self.isend_raw_or_done(buf, len, dest, tag, sync) }?;
        Ok(r.unwrap_or_else(|| Request::finished(self.rt().clone(), Status::empty())))
    }

    /// [`Comm::isend_raw`] that makes no request for a send complete as it
    /// starts (an eager send, whose bytes are out; `PROC_NULL`): `None`
    /// then, its status being empty.
    ///
    /// # Safety
    /// As [`Comm::isend_raw`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let data = [1u8; 8];
    /// // SAFETY: `data` outlives the request, if there is one.
    /// let r = unsafe { world.isend_raw_or_done(data.as_ptr(), 8, world.rank(), 0, false) }?;
    /// assert!(r.is_none()); // eager: complete already
    /// world.recv(&mut [0u8; 8], world.rank(), 0)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub unsafe fn isend_raw_or_done(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Option<Request<'static>>, Error> {
        Self::send_tag(tag)?;
        let Some(peer) = self.dest("dest", dest)? else {
            return Ok(None);
        };
        if buf.is_null() && len > 0 {
            return Err(null_buffer(len, true));
        }
        if len > 0 && crate::mem::cuda::is_device(buf) {
            // SAFETY: the caller's contract.
            return unsafe { self.isend_device_any(buf, len, dest, tag, sync) }.map(Some);
        }
        let id = self.rt().engine().start_send(
            peer,
            self.inner.context,
            self.rank(),
            tag,
            buf,
            len,
            sync,
        );
        Ok(id.map(|id| Request::pending(self.rt().clone(), id)))
    }

    /// A send from device memory: CUDA IPC or the pinned pipeline when
    /// they apply, else staged through host memory.
    ///
    /// # Safety
    /// As [`Comm::isend_raw`].
    #[cold]
    unsafe fn isend_device_any(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Request<'static>, Error> {
        // SAFETY: the caller's contract.
        if let Some(r) = unsafe { self.isend_device(buf, len, dest, tag) }? {
            return Ok(r);
        }
        let src = super::p2p_device::bytes_at(buf, len)?;
        // SAFETY: the caller's contract.
        unsafe { self.isend_staged(src, dest, tag, sync) }
    }

    /// Starts a receive into raw bytes (the C front end's entry point).
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = vec![0u8; 16];
    /// // SAFETY: `buf` outlives the request, which is waited on below.
    /// let req = unsafe { world.irecv_raw(buf.as_mut_ptr(), buf.len(), oxmpi::ANY_SOURCE, 0) }?;
    /// world.send(&[1u8; 16], world.rank(), 0)?; // to itself
    /// assert_eq!(req.wait()?.count, 16);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn irecv_raw(
        &self,
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>, Error> {
        // SAFETY: the caller's contract.
        match unsafe { self.irecv_raw_start(buf, cap, source, tag) }? {
            Ok(id) => Ok(Request::pending(self.rt().clone(), id)),
            Err(done) => Ok(done),
        }
    }

    /// [`Comm::irecv_raw`] on a communicator that is never dropped (the C
    /// front end's predefined ones): the request refers to the runtime
    /// without a reference count, so making and completing it does no
    /// atomic read-modify-write for it.
    ///
    /// # Safety
    /// As [`Comm::irecv_raw`].
    #[inline]
    pub unsafe fn irecv_raw_static(
        &'static self,
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>, Error> {
        // SAFETY: the caller's contract.
        match unsafe { self.irecv_raw_start(buf, cap, source, tag) }? {
            // The communicator holds its runtime for as long as it lives: always.
            Ok(id) => Ok(Request::pending_static(self.rt(), id)),
            Err(done) => Ok(done),
        }
    }

    /// [`Comm::irecv_raw_static`] whose running request comes back as a
    /// [`Ticket`] when one can name it (the C front end then keeps it in
    /// the request handle: no table entry), else as a request.
    ///
    /// # Safety
    /// As [`Comm::irecv_raw`].
    #[inline]
    pub unsafe fn irecv_raw_ticket(
        &'static self,
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    ) -> Result<Result<Ticket, Request<'static>>, Error> {
        // SAFETY: the caller's contract.
        match unsafe { self.irecv_raw_start(buf, cap, source, tag) }? {
            Ok(id) => Ok(Ticket::of(id).ok_or_else(|| Request::pending_static(self.rt(), id))),
            Err(done) => Ok(Err(done)),
        }
    }

    /// The request a [`Ticket`] of this communicator names, for the calls
    /// that need one (cancel, free, errors, a wait in the runtime); `None`
    /// when it names no live request.
    pub fn ticket_request(&'static self, t: Ticket) -> Option<Request<'static>> {
        let id = self.rt().engine().reqs.resolve(t)?;
        Some(Request::pending_static(self.rt(), id))
    }

    /// Waits until every request of `requests` and every request
    /// `tickets` name has finished (`all`), or one of them has, on this
    /// communicator's runtime, keeping outcomes for the completing calls
    /// (as [`settle_all`](crate::request::settle_all) and
    /// [`settle_some`](crate::request::settle_some); a ticket's stays in
    /// the engine, and one naming no request counts as finished).
    pub fn settle_with_tickets(&self, requests: &mut [Request<'_>], tickets: &[Ticket], all: bool) {
        crate::request::settle_with_tickets(self.rt(), requests, tickets, all);
    }

    /// Posts [`Comm::irecv_raw`]'s receive: the engine request, or the
    /// request already made (`PROC_NULL`, a device buffer's staged receive).
    ///
    /// # Safety
    /// As [`Comm::irecv_raw`].
    #[inline(always)]
    unsafe fn irecv_raw_start(
        &self,
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    ) -> Result<Result<ReqId, Request<'static>>, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(Err(Request::finished(self.rt().clone(), Status::empty())));
        }
        if buf.is_null() && cap > 0 {
            return Err(null_buffer(cap, false));
        }
        if cap > 0 && crate::mem::cuda::is_device(buf) {
            let dst = super::p2p_device::bytes_at(buf, cap)?;
            // SAFETY: the caller's contract.
            return unsafe { self.irecv_staged(dst, source, tag) }.map(Err);
        }
        Ok(Ok(self.rt().engine().start_recv(
            self.pattern(source, tag),
            buf,
            cap,
        )))
    }

    /// Blocking send of raw bytes (`MPI_Send`/`MPI_Ssend`): the request
    /// lives only inside the engine, so nothing is built per call.
    ///
    /// # Safety
    /// `buf..buf+len` is readable.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// if me == 0 && p > 1 {
    ///     let msg = b"hello";
    ///     // SAFETY: `msg` is readable for the whole call.
    ///     unsafe { world.send_raw(msg.as_ptr(), msg.len(), 1, 0, false) }?;
    /// } else if me == 1 {
    ///     let mut buf = [0u8; 5];
    ///     // SAFETY: `buf` is writable for the whole call.
    ///     let st = unsafe { world.recv_raw(buf.as_mut_ptr(), buf.len(), 0, 0) }?;
    ///     assert_eq!((&buf, st.count), (b"hello", 5));
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub unsafe fn send_raw(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<(), Error> {
        Self::send_tag(tag)?;
        let Some(peer) = self.dest("dest", dest)? else {
            return Ok(());
        };
        if buf.is_null() && len > 0 {
            return Err(null_buffer(len, true));
        }
        if len > 0 && crate::mem::cuda::is_device(buf) {
            // SAFETY: the caller's contract; waited on here.
            if let Some(r) = unsafe { self.isend_device(buf, len, dest, tag) }? {
                return r.wait().map(|_| ());
            }
            let src = super::p2p_device::bytes_at(buf, len)?;
            // SAFETY: the caller's contract.
            return unsafe { self.send_staged(src, dest, tag, sync) };
        }
        let rt = self.rt();
        let context = self.inner.context;
        let me = self.rank();
        // SAFETY: waited on below, before `buf` is released.
        let id = unsafe {
            rt.engine()
                .start_send(peer, context, me, tag, buf, len, sync)
        };
        match id {
            None => Ok(()),
            Some(id) => rt.wait_request(id).map(|_| ()),
        }
    }

    /// Blocking receive of raw bytes into `cap` bytes at `buf` (`MPI_Recv`).
    ///
    /// # Safety
    /// `buf..buf+cap` is writable.
    ///
    /// See the example on [`Comm::send_raw`].
    #[inline(always)]
    pub unsafe fn recv_raw(
        &self,
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    ) -> Result<Status, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(Status::empty());
        }
        if buf.is_null() && cap > 0 {
            return Err(null_buffer(cap, false));
        }
        if cap > 0 && crate::mem::cuda::is_device(buf) {
            let dst = super::p2p_device::bytes_at(buf, cap)?;
            // SAFETY: the caller's contract.
            return unsafe { self.recv_staged(dst, source, tag) };
        }
        let rt = self.rt();
        let mut engine = rt.engine();
        // SAFETY: waited on below, before `buf` is released.
        let id = unsafe { engine.start_recv(self.pattern(source, tag), buf, cap) };
        rt.wait_request_from(engine, id)
    }

    /// Non-blocking send (`MPI_Isend`). The buffer stays borrowed until the
    /// request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// let out = [me as f64; 1024];
    /// let send = world.isend(&out, (me + 1) % p, 0)?; // `out` is borrowed until done
    /// let mut inb = [0.0f64; 1024];
    /// world.recv(&mut inb, (me + p - 1) % p, 0)?;
    /// send.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn isend<'a, T: Scalar>(
        &self,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>, Error> {
        let (ptr, len) = bytes_of(buf);
        // SAFETY: the request borrows `buf` for 'a.
        unsafe { self.isend_raw(ptr, len, dest, tag, false) }
    }

    /// Non-blocking synchronous send (`MPI_Issend`): completes once matched.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// let out = [me];
    /// let req = world.issend(&out, (me + 1) % p, 0)?;
    /// let mut got = [0i32];
    /// world.recv(&mut got, (me + p - 1) % p, 0)?;
    /// req.wait()?; // done: the receiver has matched the message
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn issend<'a, T: Scalar>(
        &self,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>, Error> {
        let (ptr, len) = bytes_of(buf);
        // SAFETY: the request borrows `buf` for 'a.
        unsafe { self.isend_raw(ptr, len, dest, tag, true) }
    }

    /// Non-blocking receive (`MPI_Irecv`); `source` may be `ANY_SOURCE` or
    /// `PROC_NULL`, `tag` may be `ANY_TAG`.
    ///
    /// ```no_run
    /// use oxmpi::ANY_SOURCE;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [0u64; 4];
    /// let req = world.irecv(&mut buf, ANY_SOURCE, 9)?; // `buf` is borrowed until done
    /// world.send(&[1u64, 2, 3, 4], world.rank(), 9)?;
    /// let st = req.wait()?;
    /// assert_eq!((st.source, buf), (world.rank(), [1, 2, 3, 4]));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn irecv<'a, T: Scalar>(
        &self,
        buf: &'a mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Request<'a>, Error> {
        let (ptr, len) = bytes_of_mut(buf);
        // SAFETY: the request borrows `buf` mutably for 'a.
        unsafe { self.irecv_raw(ptr, len, source, tag) }
    }

    /// Blocking send (`MPI_Send`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// if world.rank() == 0 {
    ///     world.send(&[1.0f64, 2.0], 1, 7)?;
    /// } else if world.rank() == 1 {
    ///     let mut buf = [0.0f64; 2];
    ///     let status = world.recv(&mut buf, 0, 7)?;
    ///     assert_eq!(status.count_of(8), Some(2));
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn send<T: Scalar>(&self, buf: &[T], dest: i32, tag: i32) -> Result<(), Error> {
        let (ptr, len) = bytes_of(buf);
        // SAFETY: `buf` is borrowed for the whole call.
        unsafe { self.send_raw(ptr, len, dest, tag, false) }
    }

    /// Blocking synchronous send (`MPI_Ssend`): returns once the receiver matched it.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// if world.rank() == 0 && world.size() > 1 {
    ///     world.ssend(&[42u32], 1, 0)?; // returns once rank 1 has matched it
    /// } else if world.rank() == 1 {
    ///     world.recv(&mut [0u32], 0, 0)?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ssend<T: Scalar>(&self, buf: &[T], dest: i32, tag: i32) -> Result<(), Error> {
        let (ptr, len) = bytes_of(buf);
        // SAFETY: `buf` is borrowed for the whole call.
        unsafe { self.send_raw(ptr, len, dest, tag, true) }
    }

    /// Blocking receive (`MPI_Recv`). A message longer than `buf` gives
    /// [`Error::Truncated`] with the status of what was stored.
    ///
    /// ```no_run
    /// use oxmpi::Error;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(&[1u8, 2, 3, 4], world.rank(), 0)?; // eager: completes at once
    /// let mut small = [0u8; 2];
    /// match world.recv(&mut small, world.rank(), 0) {
    ///     Err(Error::Truncated { status, message_len, .. }) => {
    ///         assert_eq!((status.count, message_len), (2, 4));
    ///     }
    ///     other => panic!("expected truncation, got {other:?}"),
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn recv<T: Scalar>(&self, buf: &mut [T], source: i32, tag: i32) -> Result<Status, Error> {
        let (ptr, len) = bytes_of_mut(buf);
        // SAFETY: `buf` is borrowed mutably for the whole call.
        unsafe { self.recv_raw(ptr, len, source, tag) }
    }

    /// Send and receive in one call (`MPI_Sendrecv`), deadlock-free.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// let (right, left) = ((me + 1) % p, (me + p - 1) % p);
    /// let mut from_left = [0i32];
    /// world.sendrecv(&[me], right, 0, &mut from_left, left, 0)?; // a ring shift
    /// assert_eq!(from_left[0], left);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv<S: Scalar, R: Scalar>(
        &self,
        sendbuf: &[S],
        dest: i32,
        sendtag: i32,
        recvbuf: &mut [R],
        source: i32,
        recvtag: i32,
    ) -> Result<Status, Error> {
        let r = self.irecv(recvbuf, source, recvtag)?;
        let s = self.isend(sendbuf, dest, sendtag)?;
        s.wait()?;
        r.wait()
    }

    /// Blocks until a matching message is available and returns its status
    /// without receiving it (`MPI_Probe`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(&[0.5f32; 10], world.rank(), 4)?;
    /// let st = world.probe(world.rank(), 4)?; // size the buffer before receiving
    /// let mut buf = vec![0.0f32; st.count_of(4).unwrap()];
    /// world.recv(&mut buf, st.source, st.tag)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn probe(&self, source: i32, tag: i32) -> Result<Status, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(Status::empty());
        }
        let pattern = self.pattern(source, tag);
        Ok(self.rt().wait_until(|e| e.probe(&pattern)))
    }

    /// Non-blocking probe (`MPI_Iprobe`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut polls = 0;
    /// let st = loop {
    ///     if let Some(st) = world.iprobe(oxmpi::ANY_SOURCE, oxmpi::ANY_TAG)? {
    ///         break st;
    ///     }
    ///     polls += 1; // do other work meanwhile
    ///     if polls == 1 {
    ///         world.send(&[1u8], world.rank(), 0)?;
    ///     }
    /// };
    /// assert_eq!(st.count, 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iprobe(&self, source: i32, tag: i32) -> Result<Option<Status>, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(Some(Status::empty()));
        }
        let pattern = self.pattern(source, tag);
        let mut engine = self.rt().engine();
        engine.progress();
        Ok(engine.probe(&pattern))
    }

    /// Matched probe (`MPI_Mprobe`): removes the message from matching so
    /// that only [`Message::recv`] can receive it.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(&[3u16, 4, 5], world.rank(), 0)?;
    /// // Only `msg.recv` can receive this message now, even with other threads probing.
    /// let (msg, st) = world.mprobe(world.rank(), 0)?;
    /// let mut buf = vec![0u16; st.count / 2];
    /// msg.recv(&mut buf)?;
    /// assert_eq!(buf, [3, 4, 5]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn mprobe(&self, source: i32, tag: i32) -> Result<(Message, Status), Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok((Message::no_proc(self.clone()), Status::empty()));
        }
        let pattern = self.pattern(source, tag);
        let (h, s) = self.rt().wait_until(|e| e.mprobe(&pattern));
        Ok((Message::new(self.clone(), h), s))
    }

    /// Non-blocking matched probe (`MPI_Improbe`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.send(&[9i64], world.rank(), 1)?;
    /// let (msg, st) = loop {
    ///     if let Some(found) = world.improbe(world.rank(), 1)? {
    ///         break found;
    ///     }
    /// };
    /// let mut v = [0i64];
    /// msg.recv(&mut v)?;
    /// assert_eq!((v[0], st.tag), (9, 1));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn improbe(&self, source: i32, tag: i32) -> Result<Option<(Message, Status)>, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(Some((Message::no_proc(self.clone()), Status::empty())));
        }
        let pattern = self.pattern(source, tag);
        let mut engine = self.rt().engine();
        engine.progress();
        Ok(engine
            .mprobe(&pattern)
            .map(|(h, s)| (Message::new(self.clone(), h), s)))
    }

    /// # Safety
    /// `buf..buf+cap` must stay writable until the request completes.
    pub(crate) unsafe fn start_mrecv(
        &self,
        h: MessageHandle,
        buf: *mut u8,
        cap: usize,
    ) -> Request<'static> {
        let id = self.rt().engine().start_mrecv(h, buf, cap);
        Request::pending(self.rt().clone(), id)
    }

    /// A persistent send (`MPI_Send_init`): start it any number of times.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// let out = [me; 8];
    /// let mut inb = [0i32; 8];
    /// let mut send = world.send_init(&out, (me + 1) % p, 0)?;
    /// let mut recv = world.recv_init(&mut inb, (me + p - 1) % p, 0)?;
    /// for _step in 0..100 {
    ///     recv.start()?;
    ///     send.start()?;
    ///     send.wait()?;
    ///     recv.wait()?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn send_init<'a, T: Scalar>(
        &self,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Persistent<'a>, Error> {
        Self::send_tag(tag)?;
        self.dest("dest", dest)?;
        let (ptr, len) = bytes_of(buf);
        Ok(Persistent::send(self.clone(), ptr, len, dest, tag, false))
    }

    /// A persistent receive (`MPI_Recv_init`).
    ///
    /// See the example on [`Comm::send_init`].
    pub fn recv_init<'a, T: Scalar>(
        &self,
        buf: &'a mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Persistent<'a>, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        let (ptr, len) = bytes_of_mut(buf);
        Ok(Persistent::recv(self.clone(), ptr, len, source, tag))
    }
}

/// The error of a null `buf` with `len` bytes to send or room for (kept out
/// of line: the blocking calls' fast paths stay small).
#[cold]
fn null_buffer(len: usize, send: bool) -> Error {
    let reason = if send {
        format!("null buffer with {len} bytes to send")
    } else {
        format!("null buffer for {len} bytes")
    };
    Error::InvalidArgument { arg: "buf", reason }
}
