//! Point-to-point on device buffers: the data moves through a host
//! temporary (copied from the device before a send starts, copied to the
//! device when a receive completes, only the bytes that arrived), so the
//! engine and the transports only ever see host memory. Non-contiguous
//! types over device memory are packed and unpacked through a host shadow
//! of the bytes they touch (see `datatype::stage`). The Rust API's
//! entry points for cudarc device slices are here too.

use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::Comm;
use crate::buffer::Scalar;
use crate::datatype::stage::{CollStage, Dir, Placed};
use crate::datatype::{BasicType, Datatype};
use crate::error::Error;
use crate::request::Request;
use crate::status::Status;

/// `len` bytes at `buf` as placed elements.
pub(crate) fn bytes_at(buf: *const u8, len: usize) -> Result<Placed, Error> {
    Placed::new(&Datatype::basic(BasicType::Byte), buf, len)
}

impl Comm {
    /// Starts a send of device memory that needs no host bounce (CUDA IPC
    /// to a rank of this host, or the pinned pipeline for large messages)
    /// when the engine chooses one for this size and peer; `None`
    /// otherwise (the caller stages it).
    ///
    /// # Safety
    /// `buf..buf+len` is device memory, unchanged until the request completes.
    pub(crate) unsafe fn isend_device(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
    ) -> Result<Option<Request<'static>>, Error> {
        let Some(peer) = self.dest("dest", dest)? else {
            return Ok(None);
        };
        let rt = self.rt();
        let (context, me) = (self.inner.context, self.rank());
        // SAFETY: the caller's contract.
        let id = unsafe {
            rt.engine()
                .start_send_device(peer, context, me, tag, buf, len)
        }?;
        Ok(id.map(|id| Request::pending(rt.clone(), id)))
    }

    /// Starts a send of device memory through a host temporary.
    ///
    /// # Safety
    /// The elements are readable (on the device) for the whole call.
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn isend_staged(
        &self,
        src: Placed,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Request<'static>, Error> {
        let mut stage = CollStage::default();
        let len = src.len;
        let tmp = stage.stage_on_host(src, Dir::In);
        // SAFETY: the caller's contract.
        unsafe { stage.pack() }?;
        // SAFETY: the temporary lives in the stage, which the request keeps.
        let r = unsafe { self.isend_raw(tmp, len, dest, tag, sync) }?;
        Ok(r.with_stage(Some(stage)))
    }

    /// Starts a receive into device memory through a host temporary.
    ///
    /// # Safety
    /// The elements are writable (on the device) until the request completes.
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn irecv_staged(
        &self,
        dst: Placed,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>, Error> {
        let mut stage = CollStage::default();
        let cap = dst.len;
        let contiguous = dst.dt.is_contiguous();
        let first = (dst.buf as *mut u8).wrapping_offset(dst.dt.true_lb());
        let tmp = stage.stage_on_host(dst, Dir::Out);
        if !contiguous || source == crate::status::PROC_NULL {
            // SAFETY: the temporary lives in the stage, which the request keeps.
            let r = unsafe { self.irecv_raw(tmp, cap, source, tag) }?;
            return Ok(r.with_stage(Some(stage)));
        }
        self.source(source)?;
        Self::recv_tag(tag)?;
        // A message sent by CUDA IPC may go straight to the device buffer.
        let alias = crate::p2p::engine::DeviceAlias {
            dst: first as usize,
            delivered: stage.delivered_flag(),
            copied: 0,
        };
        let rt = self.rt();
        // SAFETY: the temporary lives in the stage, which the request
        // keeps; the device buffer is the caller's, writable until then.
        let id = unsafe {
            rt.engine()
                .start_recv_aliased(self.pattern(source, tag), tmp, cap, alias)
        };
        Ok(Request::pending(rt.clone(), id).with_stage(Some(stage)))
    }

    /// Starts receiving a matched message into device memory.
    ///
    /// # Safety
    /// As [`Comm::irecv_staged`].
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn mrecv_staged(
        &self,
        h: crate::p2p::engine::MessageHandle,
        dst: Placed,
    ) -> Result<Request<'static>, Error> {
        let mut stage = CollStage::default();
        let cap = dst.len;
        let tmp = stage.stage_on_host(dst, Dir::Out);
        // SAFETY: the temporary lives in the stage, which the request keeps.
        let r = unsafe { self.start_mrecv(h, tmp, cap) };
        Ok(r.with_stage(Some(stage)))
    }

    /// A blocking send of device memory.
    ///
    /// # Safety
    /// As [`Comm::isend_staged`].
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn send_staged(
        &self,
        src: Placed,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract; waited on here.
        unsafe { self.isend_staged(src, dest, tag, sync) }?
            .wait()
            .map(|_| ())
    }

    /// A blocking receive into device memory.
    ///
    /// # Safety
    /// As [`Comm::irecv_staged`].
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn recv_staged(
        &self,
        dst: Placed,
        source: i32,
        tag: i32,
    ) -> Result<Status, Error> {
        // SAFETY: the caller's contract; waited on here.
        unsafe { self.irecv_staged(dst, source, tag) }?.wait()
    }
}

impl Comm {
    /// Sends a cudarc device slice (`MPI_Send` on device memory): its
    /// stream is synchronised first, then the data moves as for any device
    /// buffer.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let stream = CudaContext::new(0).unwrap().default_stream();
    /// if world.rank() == 0 {
    ///     let data = stream.clone_htod(&[1.0f32, 2.0]).unwrap();
    ///     world.send_device(&data, 1, 0)?;
    /// } else if world.rank() == 1 {
    ///     let mut got = stream.alloc_zeros::<f32>(2).unwrap();
    ///     world.recv_device(&mut got, 0, 0)?;
    ///     assert_eq!(stream.clone_dtoh(&got).unwrap(), [1.0, 2.0]);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn send_device<T: Scalar, S: DevicePtr<T>>(
        &self,
        buf: &S,
        dest: i32,
        tag: i32,
    ) -> Result<(), Error> {
        crate::mem::cuda::settle(buf)?;
        let stream = buf.stream().clone();
        let (ptr, _read) = buf.device_ptr(&stream);
        // SAFETY: the slice's `num_bytes` of device memory, borrowed for the call.
        unsafe { self.send_raw(ptr as *const u8, buf.num_bytes(), dest, tag, false) }
    }

    /// Receives into a cudarc device slice (`MPI_Recv` on device memory).
    ///
    /// See the example on [`Comm::send_device`].
    pub fn recv_device<T: Scalar, S: DevicePtrMut<T>>(
        &self,
        buf: &mut S,
        source: i32,
        tag: i32,
    ) -> Result<Status, Error> {
        crate::mem::cuda::settle(buf)?;
        let stream = buf.stream().clone();
        let len = buf.num_bytes();
        let (ptr, _write) = buf.device_ptr_mut(&stream);
        // SAFETY: the slice's bytes, borrowed mutably for the call.
        unsafe { self.recv_raw(ptr as *mut u8, len, source, tag) }
    }
}
