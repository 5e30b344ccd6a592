//! Copies between host and device memory, and device scratch buffers.

use cudarc::driver::{result, sys};

use super::classify::classify;
use super::ctx::{check, Entered};
use super::pool::Pool;
use crate::error::Error;

/// The context of whichever of `a`, `b` is device memory (null: neither).
fn owner(a: *const u8, b: *const u8) -> Result<sys::CUcontext, Error> {
    for p in [a, b] {
        let c = classify(p)?;
        if c.kind.is_device() {
            return Ok(c.ctx as sys::CUcontext);
        }
    }
    Ok(std::ptr::null_mut())
}

/// Copies `len` bytes from `src` to `dst`, either of which may be device
/// memory (unified addressing tells the driver which), and returns once
/// the bytes are in place: a kernel or another process may use them next.
///
/// # Safety
/// Both ranges are `len` bytes of live memory and do not overlap.
pub unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) -> Result<(), Error> {
    if len == 0 {
        return Ok(());
    }
    let ctx = owner(dst, src)?;
    if ctx.is_null() {
        // SAFETY: the caller's contract; both are host memory.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return Ok(());
    }
    let _in = Entered::enter(ctx)?;
    // SAFETY: the caller's contract; the owning context is current.
    check("cuMemcpy", unsafe {
        sys::cuMemcpy(dst as sys::CUdeviceptr, src as sys::CUdeviceptr, len).result()
    })?;
    // A copy from pageable memory may return before the device has the
    // bytes: wait for the legacy stream the copy ran on.
    // SAFETY: the null stream of the current context.
    check("cuStreamSynchronize", unsafe {
        result::stream::synchronize(std::ptr::null_mut())
    })
}

/// Copies `dst.len()` bytes from `src` (device memory) into host memory.
///
/// # Safety
/// `src` holds `dst.len()` bytes.
pub unsafe fn copy_from_device(dst: &mut [u8], src: *const u8) -> Result<(), Error> {
    // SAFETY: the caller's contract; `dst` is ours.
    unsafe { copy(dst.as_mut_ptr(), src, dst.len()) }
}

/// Copies `src` into device memory at `dst`.
///
/// # Safety
/// `dst` has room for `src.len()` bytes.
pub unsafe fn copy_to_device(dst: *mut u8, src: &[u8]) -> Result<(), Error> {
    // SAFETY: the caller's contract.
    unsafe { copy(dst, src.as_ptr(), src.len()) }
}

/// Device memory owned by the runtime (collective scratch), freed on drop.
#[derive(Debug)]
pub struct DevBuf {
    ptr: sys::CUdeviceptr,
    len: usize,
    /// Bytes allocated (a pooled buffer may be larger than `len`).
    cap: usize,
    ctx: sys::CUcontext,
}

// SAFETY: a device address and a context handle, usable from any thread.
unsafe impl Send for DevBuf {}

/// Device scratch freed recently, kept for the next collective (at most
/// 16 buffers, 1 GiB in all).
static POOL: Pool = Pool::new(16, 1 << 30);

impl DevBuf {
    /// `len` bytes (at least one) of device memory in context `ctx`.
    pub fn new(len: usize, ctx: usize) -> Result<DevBuf, Error> {
        let ctx = ctx as sys::CUcontext;
        if let Some((ptr, cap)) = POOL.take(ctx as usize, len.max(1)) {
            let ptr = ptr as sys::CUdeviceptr;
            return Ok(DevBuf { ptr, len, cap, ctx });
        }
        let _in = Entered::enter(ctx)?;
        // SAFETY: the context is current.
        let ptr = check("cuMemAlloc", unsafe { result::malloc_sync(len.max(1)) })?;
        Ok(DevBuf {
            ptr,
            len,
            cap: len.max(1),
            ctx,
        })
    }

    /// The device address.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr as *mut u8
    }

    /// Bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        if POOL.give(self.ctx as usize, self.ptr as usize, self.cap) {
            return;
        }
        if let Ok(_in) = Entered::enter(self.ctx) {
            // SAFETY: allocated by `new` in this context, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}
