//! The CUDA device path, through cudarc with the driver loaded at run time.
//!
//! Nothing here runs unless [`activate`] found a driver with a device
//! (`OXMPI_CUDA=auto`, the default, or `on`): until then [`active`] is one
//! relaxed load and every buffer is host memory, so a job without CUDA
//! pays nothing. cudarc panics when a library is missing, so the driver and
//! NVRTC are probed first with the same library names cudarc tries.
//!
//! Files: `ctx.rs` (the pointer's context around each driver call, error
//! conversion), `classify.rs` (memory kind of an address, cached by range
//! and validated by buffer id), `copy.rs` (copies and device scratch),
//! `reduce.rs` (NVRTC-compiled reduction kernels, cached per context),
//! `ipc.rs` (CUDA IPC handles and mappings, cached by buffer id),
//! `pipe.rs` (a device buffer copied to pinned memory chunk by chunk),
//! `streams.rs` (a communicator's streams, one per context).

mod classify;
mod copy;
mod ctx;
pub mod ipc;
mod pipe;
mod pool;
mod reduce;
mod streams;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

pub use classify::{classify, Classified};
pub use copy::{copy, copy_from_device, copy_to_device, DevBuf};
pub(crate) use ctx::device_error;
pub use ipc::IpcDesc;
pub use pipe::DevicePipe;
pub use reduce::{kernels_available, reduce_on_device, DeviceReduce};
pub use streams::{DeviceStreams, StreamRef};

use super::cuda_probe;
use crate::error::Error;

/// What kind of memory a buffer is.
///
/// ```
/// use oxmpi::mem::MemKind;
/// // Without a driver every buffer is host memory.
/// let x = [0u8; 4];
/// if !oxmpi::mem::cuda::active() {
///     assert_eq!(oxmpi::mem::cuda::kind_of(x.as_ptr()), MemKind::Host);
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// Ordinary host memory (the driver does not know it).
    Host,
    /// Host memory registered with or allocated by the driver (pinned).
    RegisteredHost,
    /// Managed (unified) memory: the CPU may touch it, the driver migrates it.
    Managed,
    /// Device memory: the CPU must never touch it.
    Device,
}

impl MemKind {
    /// Whether the CPU may not read or write this memory directly.
    pub fn is_device(self) -> bool {
        self == MemKind::Device
    }
}

/// Set once a driver with a device is loaded and initialised.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The outcome of the one activation attempt of this process.
static ACTIVATION: OnceLock<Result<bool, String>> = OnceLock::new();

/// Whether device buffers are possible in this process (a driver with a
/// device loaded). One relaxed load: the host path's only cost.
#[inline(always)]
pub fn active() -> bool {
    ACTIVE.load(Relaxed)
}

/// Loads the driver according to `mode` (`OXMPI_CUDA`: `auto`, `on`,
/// `off`), once per process; returns whether device buffers are possible.
/// `auto` without a driver or a device is `Ok(false)`; `on` without one is
/// an error naming why.
///
/// ```
/// use oxmpi::mem::cuda;
/// // `off` loads nothing and reports what is already so.
/// assert_eq!(cuda::activate("off")?, cuda::active());
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn activate(mode: &str) -> Result<bool, Error> {
    if mode == "off" {
        return Ok(active());
    }
    let outcome = ACTIVATION.get_or_init(|| {
        let probe = cuda_probe::probe_gpu();
        match probe.why_absent {
            None => {
                ACTIVE.store(true, Relaxed);
                Ok(true)
            }
            Some(why) => Err(why),
        }
    });
    match (outcome, mode) {
        (Ok(on), _) => Ok(*on),
        (Err(_), "auto") => Ok(false),
        (Err(why), _) => Err(Error::Device {
            what: "OXMPI_CUDA=on",
            reason: format!("no usable CUDA device: {why}"),
        }),
    }
}

/// The kind of memory at `ptr` ([`MemKind::Host`] whenever no driver is
/// active; a driver failure also reads as host memory, so the CPU path
/// reports it when it touches the buffer).
///
/// See the example on [`MemKind`].
#[inline]
pub fn kind_of(ptr: *const u8) -> MemKind {
    if !active() || ptr.is_null() {
        return MemKind::Host;
    }
    classify(ptr).map_or(MemKind::Host, |c| c.kind)
}

/// Whether `ptr` is device memory (false at once when no driver is active).
#[inline(always)]
pub fn is_device(ptr: *const u8) -> bool {
    active() && !ptr.is_null() && kind_of(ptr).is_device()
}

/// Waits for the work queued on a cudarc slice's stream: the data a send
/// reads is complete, a receive's buffer is no longer in use.
pub(crate) fn settle<T, S: cudarc::driver::DeviceSlice<T>>(buf: &S) -> Result<(), Error> {
    buf.stream()
        .synchronize()
        .map_err(|e| device_error("cuStreamSynchronize", e))
}
