//! A device buffer copied to pinned host memory chunk by chunk on a
//! stream, so that a transfer can start on the first chunks while the
//! later ones are still being copied: the staging pipeline of device
//! messages that do not go by CUDA IPC (other hosts, `OXMPI_CUDA_IPC=0`).
//! [`DevicePipe::ready`] says how many leading bytes have arrived.

use cudarc::driver::{result, sys};

use super::classify::classify;
use super::ctx::{check, Entered};
use super::pool::Pool;
use crate::error::Error;

/// Pinned host buffers kept for the next pipe (at most 8, 256 MiB in all).
static PINNED: Pool = Pool::new(8, 256 << 20);

/// A device buffer on its way to pinned host memory.
pub struct DevicePipe {
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    host: *mut u8,
    cap: usize,
    len: usize,
    /// (end offset, event) of each chunk, in order; done ones removed.
    pending: std::collections::VecDeque<(usize, sys::CUevent)>,
    ready: usize,
}

// SAFETY: handles and a pinned buffer, used under the engine's lock.
unsafe impl Send for DevicePipe {}

impl DevicePipe {
    /// Starts copying `len` bytes of device memory at `src` to pinned host
    /// memory, in chunks of `chunk` bytes.
    ///
    /// # Safety
    /// `src` holds `len` bytes of device memory, unchanged until the pipe
    /// is dropped.
    pub unsafe fn start(src: *const u8, len: usize, chunk: usize) -> Result<DevicePipe, Error> {
        let ctx = classify(src)?.ctx as sys::CUcontext;
        let _in = Entered::enter(ctx)?;
        let (host, cap) = pinned(ctx, len)?;
        let stream = check(
            "cuStreamCreate",
            result::stream::create(result::stream::StreamKind::NonBlocking),
        )?;
        let mut pipe = DevicePipe {
            ctx,
            stream,
            host,
            cap,
            len,
            pending: Default::default(),
            ready: 0,
        };
        let chunk = chunk.max(4096);
        let mut at = 0;
        while at < len {
            let end = (at + chunk).min(len);
            // SAFETY: `host` has `cap` >= `len` bytes; the caller's contract on `src`.
            let dst = unsafe { std::slice::from_raw_parts_mut(host.add(at), end - at) };
            check("cuMemcpyDtoHAsync", unsafe {
                result::memcpy_dtoh_async(dst, src.add(at) as sys::CUdeviceptr, stream)
            })?;
            let event = check(
                "cuEventCreate",
                result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING),
            )?;
            pipe.pending.push_back((end, event));
            // SAFETY: a live event and stream of the current context.
            check("cuEventRecord", unsafe {
                result::event::record(event, stream)
            })?;
            at = end;
        }
        Ok(pipe)
    }

    /// The pinned host copy (its first [`ready`](Self::ready) bytes are valid).
    pub fn host(&self) -> *const u8 {
        self.host
    }

    /// Bytes from the start that have arrived in host memory.
    pub fn ready(&mut self) -> usize {
        while let Some(&(end, event)) = self.pending.front() {
            // SAFETY: an event this pipe recorded and has not destroyed.
            match unsafe { sys::cuEventQuery(event) } {
                sys::CUresult::CUDA_SUCCESS => {
                    self.ready = end;
                    self.pending.pop_front();
                    // SAFETY: done with it.
                    let _ = unsafe { result::event::destroy(event) };
                }
                _ => break,
            }
        }
        self.ready
    }

    /// Whether every byte has arrived.
    pub fn complete(&mut self) -> bool {
        self.ready() >= self.len
    }
}

impl Drop for DevicePipe {
    fn drop(&mut self) {
        if let Ok(_in) = Entered::enter(self.ctx) {
            // SAFETY: this pipe's stream and events; the copies must end
            // before the pinned buffer is reused.
            unsafe {
                let _ = result::stream::synchronize(self.stream);
                for (_, e) in self.pending.drain(..) {
                    let _ = result::event::destroy(e);
                }
                let _ = result::stream::destroy(self.stream);
            }
        }
        if PINNED.give(self.ctx as usize, self.host as usize, self.cap) {
            return;
        }
        if let Ok(_in) = Entered::enter(self.ctx) {
            // SAFETY: allocated by `pinned`, freed once.
            let _ = unsafe { result::free_host(self.host.cast()) };
        }
    }
}

/// Pinned host memory of at least `len` bytes for context `ctx` (current):
/// from the pool when one fits (and is not more than twice the size).
fn pinned(ctx: sys::CUcontext, len: usize) -> Result<(*mut u8, usize), Error> {
    if let Some((host, cap)) = PINNED.take(ctx as usize, len.max(1)) {
        return Ok((host as *mut u8, cap));
    }
    // SAFETY: the context is current; portable: usable from any context.
    let host = check("cuMemHostAlloc", unsafe {
        result::malloc_host(len.max(1), sys::CU_MEMHOSTALLOC_PORTABLE)
    })?;
    Ok((host.cast(), len.max(1)))
}
