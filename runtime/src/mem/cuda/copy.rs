//! Copies between host and device memory, and device scratch buffers.

use std::sync::Mutex;

use cudarc::driver::{result, sys};

use super::classify::classify;
use super::ctx::{check, Entered};
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

/// Device scratch freed recently, kept for the next collective: `cuMemAlloc`
/// and `cuMemFree` are slow and the free synchronises the device. At most
/// [`POOL_BUFFERS`] buffers of at most [`POOL_BYTES`] bytes in all.
static POOL: Mutex<Vec<(usize, sys::CUdeviceptr, usize)>> = Mutex::new(Vec::new());
const POOL_BUFFERS: usize = 16;
const POOL_BYTES: usize = 1 << 30;

/// A pooled buffer of context `ctx` with room for `len` bytes (and not
/// more than twice that), taken out of the pool.
fn from_pool(ctx: sys::CUcontext, len: usize) -> Option<DevBuf> {
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    let i = pool
        .iter()
        .position(|&(c, _, cap)| c == ctx as usize && cap >= len && cap / 2 <= len)?;
    let (_, ptr, cap) = pool.swap_remove(i);
    Some(DevBuf { ptr, len, cap, ctx })
}

impl DevBuf {
    /// `len` bytes (at least one) of device memory in context `ctx`.
    pub fn new(len: usize, ctx: usize) -> Result<DevBuf, Error> {
        let ctx = ctx as sys::CUcontext;
        if let Some(b) = from_pool(ctx, len.max(1)) {
            return Ok(b);
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
        {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            let pooled: usize = pool.iter().map(|&(_, _, cap)| cap).sum();
            if pool.len() < POOL_BUFFERS && pooled + self.cap <= POOL_BYTES {
                pool.push((self.ctx as usize, self.ptr, self.cap));
                return;
            }
        }
        if let Ok(_in) = Entered::enter(self.ctx) {
            // SAFETY: allocated by `new` in this context, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}
