//! A `MAP_SHARED` mapping and typed, bounds-checked views into it.

use std::fs::File;
use std::num::NonZeroUsize;
use std::ptr::NonNull;

use nix::sys::mman::{mmap, munmap, MapFlags, ProtFlags};

use super::layout::Shared;
use crate::Error;

/// A read-write shared mapping, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory; every view handed out is either an
// atomic (`Shared`) or a byte range whose access discipline the ring enforces.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

fn os(call: &'static str, e: nix::errno::Errno) -> Error {
    Error::Os {
        call,
        source: std::io::Error::from(e),
    }
}

fn nonzero(len: usize) -> Result<NonZeroUsize, Error> {
    NonZeroUsize::new(len).ok_or_else(|| os("mmap (length 0)", nix::errno::Errno::EINVAL))
}

impl Mapping {
    /// Maps `len` bytes of `file` shared, read-write.
    pub fn of_file(file: &File, len: usize) -> Result<Mapping, Error> {
        let prot = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
        // SAFETY: a fresh mapping chosen by the kernel aliases no Rust object;
        // the file is at least `len` long (the caller checked or set it).
        let ptr = unsafe { mmap(None, nonzero(len)?, prot, MapFlags::MAP_SHARED, file, 0) }
            .map_err(|e| os("mmap", e))?;
        Ok(Mapping {
            base: ptr.cast(),
            len,
        })
    }

    /// Maps `len` zeroed bytes shared with future children (tests).
    #[cfg(test)]
    pub fn anonymous(len: usize) -> Result<Mapping, Error> {
        let prot = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
        // SAFETY: as in `of_file`; anonymous memory is zero-filled.
        let ptr = unsafe {
            nix::sys::mman::mmap_anonymous(None, nonzero(len)?, prot, MapFlags::MAP_SHARED)
        }
        .map_err(|e| os("mmap", e))?;
        Ok(Mapping {
            base: ptr.cast(),
            len,
        })
    }

    /// A view of the `T` at `offset`.
    ///
    /// # Panics
    ///
    /// If `T` would not lie inside the mapping or `offset` is misaligned:
    /// offsets come from `Layout`, so this is a bug, not an input error.
    pub fn at<T: Shared>(&self, offset: usize) -> &T {
        let end = offset.checked_add(std::mem::size_of::<T>());
        assert!(end.is_some_and(|e| e <= self.len), "shm view past the end");
        assert_eq!(offset % std::mem::align_of::<T>(), 0, "misaligned shm view");
        // SAFETY: in bounds and aligned (checked above); `T: Shared` is valid
        // for every bit pattern and only allows atomic access, so other
        // processes writing it concurrently is no data race.
        unsafe { &*self.base.as_ptr().add(offset).cast::<T>() }
    }

    /// Raw pointer to `len` bytes at `offset`, bounds-checked.
    pub fn bytes(&self, offset: usize, len: usize) -> NonNull<u8> {
        let end = offset.checked_add(len);
        assert!(end.is_some_and(|e| e <= self.len), "shm bytes past the end");
        // SAFETY: `offset <= len` of the mapping, so the result stays inside it.
        unsafe { self.base.add(offset) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` came from a successful mmap; every view into it
        // borrows `self` (or holds an `Arc` of it), so none outlives it. An
        // error here could only mean bad arguments; there is nothing to do.
        let _ = unsafe { munmap(self.base.cast(), self.len) };
    }
}
