//! Point-to-point operations on a communicator (Rust API). Blocking calls
//! are the non-blocking ones waited on.

use super::Comm;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::error::Error;
use crate::p2p::engine::MessageHandle;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::request::{Message, Persistent, Request};
use crate::status::{Status, ANY_SOURCE, ANY_TAG, PROC_NULL};

impl Comm {
    fn pattern(&self, source: i32, tag: i32) -> Pattern {
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
    pub unsafe fn isend_raw(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Request<'static>, Error> {
        Self::send_tag(tag)?;
        let Some(peer) = self.dest("dest", dest)? else {
            return Ok(Request::finished(self.rt().clone(), Status::empty()));
        };
        if buf.is_null() && len > 0 {
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!("null buffer with {len} bytes to send"),
            });
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
        Ok(match id {
            Some(id) => Request::pending(self.rt().clone(), id),
            None => Request::finished(self.rt().clone(), Status::empty()),
        })
    }

    /// Starts a receive into raw bytes (the C front end's entry point).
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the request completes.
    pub unsafe fn irecv_raw(
        &self,
        buf: *mut u8,
        cap: usize,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(Request::finished(self.rt().clone(), Status::empty()));
        }
        if buf.is_null() && cap > 0 {
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!("null buffer for {cap} bytes"),
            });
        }
        let id = self
            .rt()
            .engine()
            .start_recv(self.pattern(source, tag), buf, cap);
        Ok(Request::pending(self.rt().clone(), id))
    }

    /// Blocking send of raw bytes (`MPI_Send`/`MPI_Ssend`): the request
    /// lives only inside the engine, so nothing is built per call.
    ///
    /// # Safety
    /// `buf..buf+len` is readable.
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
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!("null buffer with {len} bytes to send"),
            });
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
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!("null buffer for {cap} bytes"),
            });
        }
        let rt = self.rt();
        // SAFETY: waited on below, before `buf` is released.
        let id = unsafe { rt.engine().start_recv(self.pattern(source, tag), buf, cap) };
        rt.wait_request(id)
    }

    /// Non-blocking send (`MPI_Isend`). The buffer stays borrowed until the
    /// request completes.
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
    pub fn ssend<T: Scalar>(&self, buf: &[T], dest: i32, tag: i32) -> Result<(), Error> {
        let (ptr, len) = bytes_of(buf);
        // SAFETY: `buf` is borrowed for the whole call.
        unsafe { self.send_raw(ptr, len, dest, tag, true) }
    }

    /// Blocking receive (`MPI_Recv`). A message longer than `buf` gives
    /// [`Error::Truncated`] with the status of what was stored.
    pub fn recv<T: Scalar>(&self, buf: &mut [T], source: i32, tag: i32) -> Result<Status, Error> {
        let (ptr, len) = bytes_of_mut(buf);
        // SAFETY: `buf` is borrowed mutably for the whole call.
        unsafe { self.recv_raw(ptr, len, source, tag) }
    }

    /// Send and receive in one call (`MPI_Sendrecv`), deadlock-free.
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
