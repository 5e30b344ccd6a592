//! Device address space: one large `PROT_NONE` reservation, carved into
//! page-aligned ranges (first fit, freed ranges merge and are reused, as the
//! real driver reuses addresses). A range is backed by a memfd mapped twice:
//! at the device address (`PROT_NONE`, so the CPU faults on it, or
//! read/write for managed memory) and at a private read/write shadow address
//! through which the double copies and runs kernels.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;

use nix::sys::mman::{mmap, mmap_anonymous, munmap, MapFlags, ProtFlags};

use crate::abi::{code, CUresult};

/// Bytes of address space reserved for device memory (nothing is committed).
const RESERVED: usize = 256 << 30;
/// Granularity of device ranges: a page (the real driver aligns to >= 256 B).
pub(crate) const PAGE: usize = 4096;

/// The reserved device address range and its free list.
pub(crate) struct Arena {
    base: usize,
    /// Free ranges: start -> length.
    free: BTreeMap<usize, usize>,
}

/// `len` rounded up to whole pages.
pub(crate) fn round_up(len: usize) -> usize {
    len.div_ceil(PAGE) * PAGE
}

fn nonzero(len: usize) -> Result<NonZeroUsize, CUresult> {
    NonZeroUsize::new(len).ok_or(code::INVALID_VALUE)
}

impl Arena {
    /// Reserves the address range (`PROT_NONE`, `MAP_NORESERVE`).
    pub(crate) fn reserve() -> Result<Arena, CUresult> {
        // SAFETY: a fresh anonymous mapping at an address the kernel picks
        // aliases nothing.
        let base = unsafe {
            mmap_anonymous(
                None,
                nonzero(RESERVED)?,
                ProtFlags::PROT_NONE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE,
            )
        }
        .map_err(|_| code::OUT_OF_MEMORY)?
        .as_ptr() as usize;
        Ok(Arena {
            base,
            free: BTreeMap::from([(base, RESERVED)]),
        })
    }

    /// Whether `addr` lies in the device address range (allocated or not).
    pub(crate) fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr - self.base < RESERVED
    }

    /// Takes `len` bytes (a multiple of [`PAGE`]) of free address space.
    pub(crate) fn take(&mut self, len: usize) -> Result<usize, CUresult> {
        let (&start, &size) = self
            .free
            .iter()
            .find(|(_, &size)| size >= len)
            .ok_or(code::OUT_OF_MEMORY)?;
        self.free.remove(&start);
        if size > len {
            self.free.insert(start + len, size - len);
        }
        Ok(start)
    }

    /// Returns a range to the free list, merging it with its neighbours, and
    /// restores the `PROT_NONE` reservation over it.
    pub(crate) fn give_back(&mut self, start: usize, len: usize) {
        reserve_at(start, len);
        let (mut start, mut len) = (start, len);
        if let Some((&prev, &prev_len)) = self.free.range(..start).next_back() {
            if prev + prev_len == start {
                self.free.remove(&prev);
                start = prev;
                len += prev_len;
            }
        }
        if let Some(next_len) = self.free.remove(&(start + len)) {
            len += next_len;
        }
        self.free.insert(start, len);
    }
}

/// Maps `len` bytes of `fd` at the device address `addr` (inside the
/// reservation), inaccessible to the CPU unless `cpu_access`.
pub(crate) fn map_device(
    fd: &OwnedFd,
    addr: usize,
    len: usize,
    cpu_access: bool,
) -> Result<(), CUresult> {
    let prot = if cpu_access {
        ProtFlags::PROT_READ | ProtFlags::PROT_WRITE
    } else {
        ProtFlags::PROT_NONE
    };
    // SAFETY: `addr..addr + len` is a range of our own reservation that
    // nothing else uses; MAP_FIXED replaces exactly that range.
    unsafe {
        mmap(
            NonZeroUsize::new(addr),
            nonzero(len)?,
            prot,
            MapFlags::MAP_SHARED | MapFlags::MAP_FIXED,
            fd.as_fd(),
            0,
        )
    }
    .map(drop)
    .map_err(|_| code::MAP_FAILED)
}

/// Maps `len` bytes of `fd` read/write at an address the kernel picks.
pub(crate) fn map_shadow(fd: &OwnedFd, len: usize) -> Result<usize, CUresult> {
    // SAFETY: a new shared mapping of our memfd at a fresh address.
    unsafe {
        mmap(
            None,
            nonzero(len)?,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED,
            fd.as_fd(),
            0,
        )
    }
    .map(|p| p.as_ptr() as usize)
    .map_err(|_| code::MAP_FAILED)
}

/// Unmaps a shadow (or any mapping the double made outside the arena).
pub(crate) fn unmap(addr: usize, len: usize) {
    if let Some(ptr) = NonNull::new(addr as *mut std::ffi::c_void) {
        // SAFETY: the range is a mapping the double made and no longer uses.
        let _ = unsafe { munmap(ptr, len) };
    }
}

/// Puts a `PROT_NONE` reservation back over `addr..addr + len`.
fn reserve_at(addr: usize, len: usize) {
    let Some(len) = NonZeroUsize::new(len) else {
        return;
    };
    // SAFETY: the range is part of our reservation and its memfd mapping is
    // being retired; MAP_FIXED replaces exactly that range.
    let _ = unsafe {
        mmap_anonymous(
            NonZeroUsize::new(addr),
            len,
            ProtFlags::PROT_NONE,
            MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE | MapFlags::MAP_FIXED,
        )
    };
}
