//! How an origin reaches one target's window memory: mapped into its own
//! address space (loads and stores), or through CMA
//! (`process_vm_readv` / `process_vm_writev`), in runs of bytes at offsets
//! from the target's window base.

use super::device::DeviceWay;
use crate::error::Error;
use crate::transport::shm::cma;

/// The way to a target's bytes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Access {
    /// Mapped here at this address (the target's window base as this
    /// process sees it).
    Mapped(usize),
    /// In process `pid`, read and written by CMA at the target's own addresses.
    Cma(i32),
    /// CUDA device memory, copied with the driver (never touched by the CPU).
    Device(DeviceWay),
    /// On another host: reached through its window service (`super::remote`).
    Remote,
}

/// One rank's window memory as this rank reaches it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Target {
    /// The window base in the target's own address space (0 for dynamic
    /// windows, whose displacements are addresses).
    pub base: usize,
    /// Bytes of window memory (dynamic windows: 0; their attached regions
    /// bound them instead).
    pub size: usize,
    /// Displacement unit.
    pub disp_unit: usize,
    pub access: Access,
}

/// Memory of another host is never read or written from here.
fn not_here() -> Error {
    Error::Service("a window target on another host reached as local memory".into())
}

/// Most iovecs one system call takes (`IOV_MAX` on Linux).
const IOV_MAX: usize = 1024;

impl Target {
    /// The base address where this process maps the target's memory.
    pub fn mapped(&self) -> Option<usize> {
        match self.access {
            Access::Mapped(p) => Some(p),
            Access::Cma(_) | Access::Device(_) | Access::Remote => None,
        }
    }

    /// Whether the target is on another host.
    pub fn is_remote(&self) -> bool {
        matches!(self.access, Access::Remote)
    }

    /// Copies `src` (packed) into the runs `(offset, len)` of the target,
    /// in order.
    ///
    /// # Safety
    /// The runs lie inside the target's window memory (checked by the caller).
    pub unsafe fn write(&self, runs: &[(usize, usize)], src: &[u8]) -> Result<(), Error> {
        match self.access {
            Access::Mapped(base) => {
                let mut at = 0;
                for &(off, len) in runs {
                    // SAFETY: inside the mapped window (the caller's
                    // promise), and `src` holds the runs' bytes in order.
                    unsafe { std::ptr::copy(src.as_ptr().add(at), (base + off) as *mut u8, len) };
                    at += len;
                }
                Ok(())
            }
            Access::Cma(pid) => {
                let mut at = 0;
                for chunk in runs.chunks(IOV_MAX) {
                    let total: usize = chunk.iter().map(|r| r.1).sum();
                    let remote: Vec<_> = chunk
                        .iter()
                        .map(|&(off, len)| nix::sys::uio::RemoteIoVec {
                            base: self.base + off,
                            len,
                        })
                        .collect();
                    let local = [std::io::IoSlice::new(&src[at..at + total])];
                    let pid_ = nix::unistd::Pid::from_raw(pid);
                    let done = nix::sys::uio::process_vm_writev(pid_, &local, &remote);
                    if done != Ok(total) {
                        // Partial or interrupted: the same bytes again, run by run.
                        let mut each = at;
                        for &(off, len) in chunk {
                            cma::write_to(pid, self.base + off, &src[each..each + len])?;
                            each += len;
                        }
                    }
                    at += total;
                }
                Ok(())
            }
            // SAFETY: the caller's promise.
            Access::Device(way) => unsafe { way.write(self.base, runs, src) },
            Access::Remote => Err(not_here()),
        }
    }

    /// Copies the runs `(offset, len)` of the target into `dst` (packed).
    ///
    /// # Safety
    /// As for [`Target::write`].
    pub unsafe fn read(&self, runs: &[(usize, usize)], dst: &mut [u8]) -> Result<(), Error> {
        match self.access {
            Access::Mapped(base) => {
                let mut at = 0;
                for &(off, len) in runs {
                    // SAFETY: as in `write`.
                    unsafe {
                        std::ptr::copy((base + off) as *const u8, dst.as_mut_ptr().add(at), len)
                    };
                    at += len;
                }
                Ok(())
            }
            Access::Cma(pid) => {
                let remote: Vec<(usize, usize)> = runs
                    .iter()
                    .map(|&(off, len)| (self.base + off, len))
                    .collect();
                let total: usize = runs.iter().map(|r| r.1).sum();
                cma::read_from(pid, &remote, &mut dst[..total])?;
                Ok(())
            }
            // SAFETY: the caller's promise.
            Access::Device(way) => unsafe { way.read(self.base, runs, dst) },
            Access::Remote => Err(not_here()),
        }
    }
}
