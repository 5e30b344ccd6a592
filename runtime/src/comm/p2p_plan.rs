//! Point-to-point on a [`Plan`]: `count` elements of a datatype at an
//! address, as the C ABI decodes `(buf, count, datatype)` and as the Rust
//! API's views describe their slices. A contiguous plan goes through the
//! raw-byte entry points; a typed (non-contiguous) one goes through the
//! engine's typed paths, which pack each packet straight from the layout
//! and unpack each arriving one straight into it: no temporary buffer.

use super::Comm;
use crate::datatype::stage::{Placed, Plan};
use crate::datatype::Cursor;
use crate::error::Error;
use crate::request::Request;
use crate::status::{Status, PROC_NULL};

impl Comm {
    /// Checks a send's tag and destination, and readies a typed source:
    /// `None` for `PROC_NULL`.
    fn typed_send(
        &self,
        src: &Placed,
        dest: i32,
        tag: i32,
    ) -> Result<Option<(usize, Cursor)>, Error> {
        Self::send_tag(tag)?;
        let Some(peer) = self.dest("dest", dest)? else {
            return Ok(None);
        };
        Ok(Some((peer, src.cursor()?)))
    }

    /// Checks a receive's source and tag, and readies a typed target:
    /// `None` for `PROC_NULL`.
    fn typed_recv(&self, dst: &Placed, source: i32, tag: i32) -> Result<Option<Cursor>, Error> {
        self.source(source)?;
        Self::recv_tag(tag)?;
        if source == PROC_NULL {
            return Ok(None);
        }
        Ok(Some(dst.cursor()?))
    }

    /// Starts a send of the elements `plan` describes (`MPI_Isend` /
    /// `MPI_Issend` with a datatype): a non-contiguous type is packed in
    /// flight, straight from the buffer into the transport.
    ///
    /// # Safety
    /// The buffer holds the elements and stays readable until the
    /// request completes.
    ///
    /// ```no_run
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let every_other = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// every_other.commit();
    /// let data = [1i32, 0, 2, 0, 3];
    /// let me = world.rank();
    /// let plan = Plan::new(&every_other, data.as_ptr().cast(), 1)?;
    /// // SAFETY: `data` holds the element and outlives the request.
    /// let send = unsafe { world.isend_plan(&plan, me, 0, false) }?;
    /// let mut got = [0i32; 3];
    /// world.recv(&mut got, me, 0)?;
    /// send.wait()?;
    /// assert_eq!(got, [1, 2, 3]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn isend_plan(
        &self,
        plan: &Plan,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Request<'static>, Error> {
        let src = match plan {
            // SAFETY: the caller's contract.
            &Plan::Bytes { ptr, len } => {
                return unsafe { self.isend_raw(ptr, len, dest, tag, sync) }
            }
            Plan::Typed(src) => src,
        };
        if src.on_device() {
            // SAFETY: the caller's contract.
            return unsafe { self.isend_staged(src.clone(), dest, tag, sync) };
        }
        let rt = self.rt();
        let Some((peer, cursor)) = self.typed_send(src, dest, tag)? else {
            return Ok(Request::finished(rt.clone(), Status::empty()));
        };
        let (context, me) = (self.inner.context, self.rank());
        // SAFETY: the caller's contract.
        let id = unsafe {
            rt.engine()
                .start_send_typed(peer, context, me, tag, cursor, sync)
        };
        Ok(match id {
            Some(id) => Request::pending(rt.clone(), id),
            None => Request::finished(rt.clone(), Status::empty()),
        })
    }

    /// Blocking send of the elements `plan` describes (`MPI_Send` /
    /// `MPI_Ssend` with a datatype).
    ///
    /// # Safety
    /// The buffer holds the elements.
    ///
    /// ```no_run
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let col = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Double))?;
    /// col.commit();
    /// let (me, p) = (world.rank(), world.size());
    /// let m = [me as f64, -1.0, me as f64 + 0.5, -1.0];
    /// let mut got = [0.0f64; 2];
    /// let r = world.irecv(&mut got, (me + p - 1) % p, 0)?;
    /// // SAFETY: `m` holds the column for the whole call.
    /// unsafe { world.send_plan(&Plan::new(&col, m.as_ptr().cast(), 1)?, (me + 1) % p, 0, false) }?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn send_plan(
        &self,
        plan: &Plan,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<(), Error> {
        let src = match plan {
            // SAFETY: the caller's contract.
            &Plan::Bytes { ptr, len } => {
                return unsafe { self.send_raw(ptr, len, dest, tag, sync) }
            }
            Plan::Typed(src) => src,
        };
        if src.on_device() {
            // SAFETY: the caller's contract.
            return unsafe { self.send_staged(src.clone(), dest, tag, sync) };
        }
        let Some((peer, cursor)) = self.typed_send(src, dest, tag)? else {
            return Ok(());
        };
        let rt = self.rt();
        let (context, me) = (self.inner.context, self.rank());
        // SAFETY: waited on below, before the caller's buffer is released.
        let id = unsafe {
            rt.engine()
                .start_send_typed(peer, context, me, tag, cursor, sync)
        };
        match id {
            None => Ok(()),
            Some(id) => rt.wait_request(id).map(|_| ()),
        }
    }

    /// Starts a receive into the elements `plan` describes (`MPI_Irecv`
    /// with a datatype): a non-contiguous type is unpacked in flight,
    /// straight from the transport into the buffer. The status counts
    /// packed bytes ([`Status::count_in`] reads them against the type).
    ///
    /// # Safety
    /// The buffer has room for the elements and stays writable until the
    /// request completes.
    ///
    /// ```no_run
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let every_other = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// every_other.commit();
    /// let me = world.rank();
    /// let mut buf = [0i32; 5];
    /// let plan = Plan::new(&every_other, buf.as_mut_ptr().cast(), 1)?;
    /// // SAFETY: `buf` has room for the element and outlives the request.
    /// let r = unsafe { world.irecv_plan(&plan, me, 0) }?;
    /// world.send(&[7i32, 8, 9], me, 0)?;
    /// assert_eq!(r.wait()?.count_in(&every_other), Some(1));
    /// assert_eq!(buf, [7, 0, 8, 0, 9]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn irecv_plan(
        &self,
        plan: &Plan,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>, Error> {
        let dst = match plan {
            // SAFETY: the caller's contract.
            &Plan::Bytes { ptr, len } => return unsafe { self.irecv_raw(ptr, len, source, tag) },
            Plan::Typed(dst) => dst,
        };
        if dst.on_device() {
            // SAFETY: the caller's contract.
            return unsafe { self.irecv_staged(dst.clone(), source, tag) };
        }
        let rt = self.rt();
        let Some(cursor) = self.typed_recv(dst, source, tag)? else {
            return Ok(Request::finished(rt.clone(), Status::empty()));
        };
        let pattern = self.pattern(source, tag);
        // SAFETY: the caller's contract.
        let id = unsafe { rt.engine().start_recv_typed(pattern, cursor) };
        Ok(Request::pending(rt.clone(), id))
    }

    /// Blocking receive into the elements `plan` describes (`MPI_Recv`
    /// with a datatype). A longer message gives [`Error::Truncated`], with
    /// what fitted stored.
    ///
    /// # Safety
    /// The buffer has room for the elements.
    ///
    /// ```no_run
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let col = Datatype::vector(3, 1, 3, &Datatype::basic(BasicType::Double))?;
    /// col.commit();
    /// let me = world.rank();
    /// world.send(&[1.0f64, 2.0, 3.0], me, 0)?;
    /// let mut m = [0.0f64; 9];
    /// // SAFETY: `m` has room for the column for the whole call.
    /// let st = unsafe { world.recv_plan(&Plan::new(&col, m.as_mut_ptr().cast(), 1)?, me, 0) }?;
    /// assert_eq!((m[0], m[3], m[6], st.count), (1.0, 2.0, 3.0, 24));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn recv_plan(&self, plan: &Plan, source: i32, tag: i32) -> Result<Status, Error> {
        let dst = match plan {
            // SAFETY: the caller's contract.
            &Plan::Bytes { ptr, len } => return unsafe { self.recv_raw(ptr, len, source, tag) },
            Plan::Typed(dst) => dst,
        };
        if dst.on_device() {
            // SAFETY: the caller's contract.
            return unsafe { self.recv_staged(dst.clone(), source, tag) };
        }
        let Some(cursor) = self.typed_recv(dst, source, tag)? else {
            return Ok(Status::empty());
        };
        let rt = self.rt();
        let pattern = self.pattern(source, tag);
        // SAFETY: waited on below, before the caller's buffer is released.
        let id = unsafe { rt.engine().start_recv_typed(pattern, cursor) };
        rt.wait_request(id)
    }

    /// # Safety
    /// As [`Comm::irecv_plan`].
    pub(crate) unsafe fn start_mrecv_typed(
        &self,
        h: crate::p2p::engine::MessageHandle,
        dst: &Placed,
    ) -> Result<Request<'static>, Error> {
        if dst.on_device() {
            // SAFETY: the caller's contract.
            return unsafe { self.mrecv_staged(h, dst.clone()) };
        }
        let cursor = dst.cursor()?;
        // SAFETY: the caller's contract.
        let id = unsafe { self.rt().engine().start_mrecv_typed(h, cursor) };
        Ok(Request::pending(self.rt().clone(), id))
    }
}
