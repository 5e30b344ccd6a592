//! One-sided communication (MPI 4.0 chapter 12): windows and the RMA
//! operations and synchronization on them, at the layer above the
//! collectives (a window is created and freed collectively over a private
//! duplicate of its communicator).
//!
//! Design (see docs/ARCHITECTURE.md, "One-sided communication"):
//!
//! - Every window has one segment per host (a memfd made by the window's
//!   first rank, mapped by all: [`memory::SharedRegion`]) holding its
//!   [`control::Control`] block and, for `MPI_Win_allocate` and
//!   `MPI_Win_allocate_shared`, every rank's window memory. So puts, gets
//!   and accumulates to those windows are plain loads and stores by the
//!   origin; the target's progress is never needed.
//! - `MPI_Win_create` over memory from `MPI_Alloc_mem` (itself a memfd,
//!   [`alloc_mem`]) is mapped by the peers the same way; over any other
//!   memory the origin moves bytes with CMA (`process_vm_readv` /
//!   `process_vm_writev`), still without the target. Dynamic windows are
//!   CMA to attached regions, published in the control block.
//! - Every operation completes before its call returns (but a put to
//!   another host, acknowledged at the next flush, unlock, fence or
//!   complete), so flushes are memory fences and an epoch's end only
//!   synchronizes.
//! - Passive target: a lock word per rank in the control block (an
//!   exclusive bit or a count of shared holders), taken with atomics by the
//!   origin. Accumulates hold the target's accumulate lock around the
//!   read-modify-write of their elements: per-element atomicity for every
//!   predefined op and type, CMA or mapped alike.
//! - Targets on other hosts are reached through their window service
//!   ([`remote`]): a thread of the target process that applies requests
//!   to its memory and its host's control block, so that path needs
//!   nothing of the target's application either.

mod access;
pub mod control;
mod create;
mod device;
mod fast;
pub mod memory;
mod ops;
mod remote;
mod sync;
mod window;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub use memory::{alloc_mem, allocated_region, free_mem};
pub use ops::{At, Buf};
pub(crate) use remote::stop_services;
pub use sync::LockType;
pub use window::{Access, Exposure, Fence, Local, Lock, LockAll, OneSided, Window};

use crate::comm::Comm;
use crate::error::{Error, ErrorClass};
use access::Target;
use control::Control;
use memory::SharedRegion;
use sync::{EpochCell, EpochGuard};

/// `MPI_MODE_NOCHECK`.
pub const MODE_NOCHECK: i32 = 1024;
/// `MPI_MODE_NOSTORE`.
pub const MODE_NOSTORE: i32 = 2048;
/// `MPI_MODE_NOPUT`.
pub const MODE_NOPUT: i32 = 4096;
/// `MPI_MODE_NOPRECEDE`.
pub const MODE_NOPRECEDE: i32 = 8192;
/// `MPI_MODE_NOSUCCEED`.
pub const MODE_NOSUCCEED: i32 = 16384;

/// How a window's memory came to be (`MPI_WIN_CREATE_FLAVOR`; the values
/// are MPICH's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `MPI_Win_create`: the program's memory.
    Create = 1,
    /// `MPI_Win_allocate`.
    Allocate = 2,
    /// `MPI_Win_create_dynamic`: regions attached later.
    Dynamic = 3,
    /// `MPI_Win_allocate_shared`.
    Shared = 4,
}

/// The error `class` with `reason`.
pub(crate) fn rma_error(class: ErrorClass, reason: impl Into<String>) -> Error {
    Error::Rma {
        class,
        reason: reason.into(),
    }
}

/// A window: memory of every rank of a communicator that the others read
/// and write with one-sided operations. Cloning gives another handle to
/// the same window; [`Win::free`] ends it collectively.
#[derive(Clone)]
pub struct Win {
    inner: Arc<Inner>,
}

struct Inner {
    /// A private duplicate of the creating communicator.
    comm: Comm,
    flavor: Flavor,
    /// This rank in `comm`.
    me: usize,
    /// Every rank's memory, as this rank reaches it.
    targets: Vec<Target>,
    /// The same, as the fast path reaches it (mapped targets only).
    direct: Vec<fast::Direct>,
    /// Whether accumulates use hardware atomics where they can (every
    /// rank maps every rank's memory: see [`fast`]'s atomicity rule).
    atomics: bool,
    control: Control,
    /// The window's segment (control block, and the memory of allocated windows).
    _segment: SharedRegion,
    /// Peers' `MPI_Alloc_mem` regions mapped here (windows over them).
    _peer_maps: Vec<SharedRegion>,
    epoch: EpochCell,
    /// Regions this rank attached (dynamic windows).
    attached: Mutex<Vec<(usize, usize)>>,
    freed: AtomicBool,
    /// Requests to and from ranks on other hosts (windows that span hosts).
    remote: Option<remote::Link>,
}

impl std::fmt::Debug for Win {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Win {{ flavor: {:?}, rank: {}, size: {} }}",
            self.inner.flavor,
            self.inner.me,
            self.inner.targets.len()
        )
    }
}

impl Win {
    /// The window's group's size.
    pub fn size(&self) -> i32 {
        self.inner.targets.len() as i32
    }

    /// This process's rank in the window's group.
    pub fn rank(&self) -> i32 {
        self.inner.me as i32
    }

    /// How the window was made.
    pub fn flavor(&self) -> Flavor {
        self.inner.flavor
    }

    /// The communicator the window runs on (a private duplicate of the
    /// one it was created over; its group is the window's group).
    pub fn comm(&self) -> &Comm {
        &self.inner.comm
    }

    /// This rank's window memory: (base address, bytes, displacement unit).
    /// Dynamic windows report (0, 0, 1).
    pub fn local(&self) -> (usize, usize, usize) {
        let t = &self.inner.targets[self.inner.me];
        (t.base, t.size, t.disp_unit)
    }

    /// `MPI_Win_shared_query`: the memory of `rank` as this process maps
    /// it (address, bytes, displacement unit); `rank` = `PROC_NULL` (-1)
    /// gives the first rank with memory. Only for windows whose memory
    /// every rank maps (allocate_shared; on one host also allocate).
    pub fn shared_query(&self, rank: i32) -> Result<(usize, usize, usize), Error> {
        let inner = &self.inner;
        if !matches!(inner.flavor, Flavor::Shared | Flavor::Allocate) {
            return Err(rma_error(
                ErrorClass::RmaFlavor,
                format!(
                    "MPI_Win_shared_query needs a window from MPI_Win_allocate_shared \
                     (this one is {:?})",
                    inner.flavor
                ),
            ));
        }
        let t = if rank == crate::status::PROC_NULL {
            match inner.targets.iter().find(|t| t.size > 0 && !t.is_remote()) {
                Some(t) => t,
                None => return Ok((0, 0, inner.targets[0].disp_unit)),
            }
        } else {
            self.target(rank, "rank")?
        };
        match t.mapped() {
            Some(p) => Ok((p, t.size, t.disp_unit)),
            None => Err(rma_error(
                ErrorClass::RmaShared,
                format!("rank {rank}'s window memory is not mapped by this process"),
            )),
        }
    }

    /// Fails with `MPI_ERR_WIN` once the window is freed.
    fn check_live(&self) -> Result<(), Error> {
        if self.inner.freed.load(Ordering::Acquire) {
            return Err(rma_error(ErrorClass::Win, "the window has been freed"));
        }
        Ok(())
    }

    /// Whether [`Win::free`] has run.
    pub fn is_freed(&self) -> bool {
        self.inner.freed.load(Ordering::Acquire)
    }

    /// The target `rank` (argument `arg`), checked.
    fn target(&self, rank: i32, arg: &'static str) -> Result<&Target, Error> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.inner.targets.get(r))
            .ok_or_else(|| Error::InvalidRank {
                arg,
                value: rank,
                size: self.size(),
            })
    }

    /// `MPI_Win_free`: collective; fails with `MPI_ERR_RMA_SYNC` while this
    /// rank holds a lock or has a PSCW epoch open.
    pub fn free(&self) -> Result<(), Error> {
        self.check_live()?;
        self.epoch()?.check_closed()?;
        self.settle(None)?;
        self.inner.comm.barrier()?;
        if let Some(link) = &self.inner.remote {
            link.stop()?;
        }
        self.inner.freed.store(true, Ordering::Release);
        self.inner.comm.clone().free()
    }

    fn epoch(&self) -> Result<EpochGuard<'_>, Error> {
        self.check_live()?;
        Ok(self.inner.epoch.lock())
    }
}

impl Win {
    /// `MPI_Win_attach`: exposes `len` bytes at `base` in this rank's
    /// part of a dynamic window (`MPI_ERR_RMA_FLAVOR` on other windows;
    /// at most [`control::MAX_ATTACHED`] regions at once).
    pub fn attach(&self, base: usize, len: usize) -> Result<(), Error> {
        self.check_live()?;
        if self.inner.flavor != Flavor::Dynamic {
            return Err(rma_error(
                ErrorClass::RmaFlavor,
                format!(
                    "MPI_Win_attach needs a window from MPI_Win_create_dynamic (this one is {:?})",
                    self.inner.flavor
                ),
            ));
        }
        let mut regions = crate::comm::lock(&self.inner.attached);
        if regions.len() >= control::MAX_ATTACHED {
            return Err(rma_error(
                ErrorClass::RmaAttach,
                format!(
                    "at most {} regions can be attached to a window at once",
                    control::MAX_ATTACHED
                ),
            ));
        }
        if regions.iter().any(|&(b, l)| base < b + l && b < base + len) {
            return Err(rma_error(
                ErrorClass::RmaAttach,
                format!("the region {base:#x}+{len} overlaps one already attached"),
            ));
        }
        // A device region's IPC handle is out before the region is.
        self.attach_device(base, len)?;
        regions.push((base, len));
        self.inner.control.publish_regions(self.inner.me, &regions);
        Ok(())
    }

    /// `MPI_Win_detach`: withdraws the region attached at `base`.
    pub fn detach(&self, base: usize) -> Result<(), Error> {
        self.check_live()?;
        if self.inner.flavor != Flavor::Dynamic {
            return Err(rma_error(
                ErrorClass::RmaFlavor,
                "MPI_Win_detach needs a window from MPI_Win_create_dynamic",
            ));
        }
        let mut regions = crate::comm::lock(&self.inner.attached);
        let Some(i) = regions.iter().position(|&(b, _)| b == base) else {
            return Err(rma_error(
                ErrorClass::RmaAttach,
                format!("no region is attached at {base:#x}"),
            ));
        };
        regions.remove(i);
        self.inner.control.publish_regions(self.inner.me, &regions);
        self.detach_device(base);
        Ok(())
    }
}
