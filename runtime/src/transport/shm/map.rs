//! A `MAP_SHARED` mapping (memmap2's `MmapRaw`) and typed, bounds-checked
//! views into it.

use std::fs::File;
use std::ptr::NonNull;

use memmap2::{MmapOptions, MmapRaw};

use super::layout::Shared;
use crate::Error;

/// A read-write shared mapping, unmapped on drop.
///
/// `MmapRaw` rather than `MmapMut`: other processes write the segment
/// concurrently, so no `&mut [u8]` (or `&[u8]`) over it may ever exist;
/// every view is an atomic (`Shared`) or a raw byte pointer.
#[derive(Debug)]
pub(crate) struct Mapping {
    map: MmapRaw,
}

fn os(call: &'static str, source: std::io::Error) -> Error {
    Error::Os { call, source }
}

impl Mapping {
    /// Maps `len` bytes of `file` shared, read-write.
    pub fn of_file(file: &File, len: usize) -> Result<Mapping, Error> {
        if len == 0 {
            // memmap2 would map one byte of an empty file; a segment is never empty.
            return Err(os("mmap (length 0)", nix::errno::Errno::EINVAL.into()));
        }
        // The file is at least `len` long (the caller checked or set it).
        let map = MmapOptions::new()
            .len(len)
            .map_raw(file)
            .map_err(|e| os("mmap", e))?;
        Ok(Mapping { map })
    }

    /// Maps `len` zeroed bytes shared (a fresh memfd), for tests.
    #[cfg(test)]
    pub fn anonymous(len: usize) -> Result<Mapping, Error> {
        let fd = nix::sys::memfd::memfd_create(
            c"oxmpi-test",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .map_err(|e| os("memfd_create", e.into()))?;
        let file = File::from(fd);
        file.set_len(len as u64).map_err(|e| os("ftruncate", e))?;
        // The mapping keeps the memory alive after the file is closed.
        Mapping::of_file(&file, len)
    }

    fn base(&self) -> NonNull<u8> {
        NonNull::new(self.map.as_mut_ptr()).expect("mmap returned null")
    }

    /// A view of the `T` at `offset`.
    ///
    /// # Panics
    ///
    /// If `T` would not lie inside the mapping or `offset` is misaligned:
    /// offsets come from `Layout`, so this is a bug, not an input error.
    pub fn at<T: Shared>(&self, offset: usize) -> &T {
        let end = offset.checked_add(std::mem::size_of::<T>());
        assert!(
            end.is_some_and(|e| e <= self.map.len()),
            "shm view past the end"
        );
        assert_eq!(offset % std::mem::align_of::<T>(), 0, "misaligned shm view");
        // SAFETY: in bounds and aligned (checked above); `T: Shared` is valid
        // for every bit pattern and only allows atomic access, so other
        // processes writing it concurrently is no data race. The view
        // borrows `self`, so it cannot outlive the mapping.
        unsafe { &*self.base().as_ptr().add(offset).cast::<T>() }
    }

    /// Raw pointer to `len` bytes at `offset`, bounds-checked.
    pub fn bytes(&self, offset: usize, len: usize) -> NonNull<u8> {
        let end = offset.checked_add(len);
        assert!(
            end.is_some_and(|e| e <= self.map.len()),
            "shm bytes past the end"
        );
        // SAFETY: `offset <= len` of the mapping, so the result stays inside it.
        unsafe { self.base().add(offset) }
    }
}
