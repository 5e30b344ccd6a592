//! Point-to-point on device buffers: the data moves through a host
//! temporary (copied from the device before a send starts, copied to the
//! device when a receive completes, only the bytes that arrived), so the
//! engine and the transports only ever see host memory. Non-contiguous
//! types over device memory are packed and unpacked through a host shadow
//! of the bytes they touch (see `datatype::stage`).

use super::Comm;
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
    /// Starts a send of device memory through a host temporary.
    ///
    /// # Safety
    /// The elements are readable (on the device) for the whole call.
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn isend_device(
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
    pub(crate) unsafe fn irecv_device(
        &self,
        dst: Placed,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>, Error> {
        let mut stage = CollStage::default();
        let cap = dst.len;
        let tmp = stage.stage_on_host(dst, Dir::Out);
        // SAFETY: the temporary lives in the stage, which the request keeps.
        let r = unsafe { self.irecv_raw(tmp, cap, source, tag) }?;
        Ok(r.with_stage(Some(stage)))
    }

    /// Starts receiving a matched message into device memory.
    ///
    /// # Safety
    /// As [`Comm::irecv_device`].
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn mrecv_device(
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
    /// As [`Comm::isend_device`].
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn send_device(
        &self,
        src: Placed,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract; waited on here.
        unsafe { self.isend_device(src, dest, tag, sync) }?
            .wait()
            .map(|_| ())
    }

    /// A blocking receive into device memory.
    ///
    /// # Safety
    /// As [`Comm::irecv_device`].
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn recv_device(
        &self,
        dst: Placed,
        source: i32,
        tag: i32,
    ) -> Result<Status, Error> {
        // SAFETY: the caller's contract; waited on here.
        unsafe { self.irecv_device(dst, source, tag) }?.wait()
    }
}
