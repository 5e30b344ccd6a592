//! Driver calls in the context that owns the memory, and their errors.
//!
//! A program may have made any context current (a primary context through
//! the runtime API, or one of its own): the device path pushes the context
//! of the buffer it works on and pops it afterwards, leaving the
//! program's state as it was.

use cudarc::driver::{result::DriverError, sys};

use crate::error::Error;

/// A driver error as an [`Error::Device`] naming the call.
pub(crate) fn device_error(what: &'static str, e: DriverError) -> Error {
    let name = e
        .error_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "CUDA error".into());
    Error::Device {
        what,
        reason: format!("{name} ({})", e.0 as i32),
    }
}

/// `r` with a driver error turned into [`Error::Device`].
pub(crate) fn check<T>(what: &'static str, r: Result<T, DriverError>) -> Result<T, Error> {
    r.map_err(|e| device_error(what, e))
}

/// `cuCtxPushCurrent` now, `cuCtxPopCurrent` on drop.
pub(crate) struct Entered(());

impl Entered {
    /// Makes `ctx` current on this thread until the guard drops.
    pub(crate) fn enter(ctx: sys::CUcontext) -> Result<Entered, Error> {
        // SAFETY: `ctx` is a live context the driver reported for memory
        // the program owns; pushing it changes only this thread's stack.
        check("cuCtxPushCurrent", unsafe {
            sys::cuCtxPushCurrent_v2(ctx).result()
        })?;
        Ok(Entered(()))
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context `enter` pushed on this thread.
        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    }
}
