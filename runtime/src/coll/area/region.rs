//! The memory of a communicator's collective area: a memfd that its
//! leader creates and the other members open through
//! `/proc/<pid>/fd/<fd>` and map (no name in any file system, so nothing is
//! left behind), or, in tests, zeroed heap memory.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use memmap2::{MmapOptions, MmapRaw};

use crate::error::Error;

/// Mapped, zero-initialised memory shared by the members of one
/// communicator. Its first word counts the members that have mapped it
/// (the leader excepted).
pub(crate) struct Region {
    memory: Memory,
    len: usize,
    /// The leader's memfd, kept open until every member has opened it.
    file: Mutex<Option<File>>,
}

enum Memory {
    Mapped(MmapRaw),
    /// u64 words: 8-byte aligned, which is all the flags need (tests).
    #[cfg(test)]
    Heap(Box<[std::sync::atomic::AtomicU64]>),
}

fn os(call: &'static str, detail: String, e: std::io::Error) -> Error {
    Error::Os {
        call,
        source: std::io::Error::new(e.kind(), format!("{detail}: {e}")),
    }
}

impl Region {
    /// A new memfd of `len` bytes, mapped (the leader's side).
    pub(crate) fn create(len: usize) -> Result<Region, Error> {
        let what = "a communicator's collective area";
        let fd = nix::sys::memfd::memfd_create(
            c"oxmpi-coll",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .map_err(|e| os("memfd_create", what.to_owned(), e.into()))?;
        let file = File::from(fd);
        file.set_len(len as u64)
            .map_err(|e| os("ftruncate", format!("{len} bytes for {what}"), e))?;
        let map = Self::map(&file, len)?;
        Ok(Region {
            memory: Memory::Mapped(map),
            len,
            file: Mutex::new(Some(file)),
        })
    }

    /// Opens and maps the leader's memfd `fd` of process `pid`.
    pub(crate) fn open(pid: u32, fd: i32, len: usize) -> Result<Region, Error> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| os("open", format!("the collective area {path}"), e))?;
        let map = Self::map(&file, len)?;
        Ok(Region {
            memory: Memory::Mapped(map),
            len,
            file: Mutex::new(None),
        })
    }

    /// Zeroed process-local memory (the schedule simulator's ranks).
    #[cfg(test)]
    pub(crate) fn heap(len: usize) -> Region {
        let words = len.div_ceil(8);
        Region {
            memory: Memory::Heap((0..words).map(|_| Default::default()).collect()),
            len,
            file: Mutex::new(None),
        }
    }

    fn map(file: &File, len: usize) -> Result<MmapRaw, Error> {
        MmapOptions::new()
            .len(len)
            .map_raw(file)
            .map_err(|e| os("mmap", format!("{len} bytes of a collective area"), e))
    }

    /// The first byte.
    pub(crate) fn base(&self) -> *mut u8 {
        match &self.memory {
            Memory::Mapped(m) => m.as_mut_ptr(),
            #[cfg(test)]
            Memory::Heap(words) => words.as_ptr() as *mut u8,
        }
    }

    /// Bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The memfd's number in this process (the leader's), if still open.
    pub(crate) fn fd(&self) -> Option<i32> {
        crate::comm::lock(&self.file)
            .as_ref()
            .map(|f| f.as_raw_fd())
    }

    /// Closes the leader's memfd (every member has mapped it).
    pub(crate) fn close_file(&self) {
        crate::comm::lock(&self.file).take();
    }

    /// Members (the leader excepted) that have mapped the region.
    pub(crate) fn attached(&self) -> &AtomicU32 {
        debug_assert!(self.len >= 4);
        // SAFETY: the first word of the mapping, 8-byte aligned, used only
        // as this atomic.
        unsafe { &*self.base().cast::<AtomicU32>() }
    }

    /// The leader's side when its communicator goes: keeps the memfd open
    /// until all `members` have mapped it. A rooted call's root returns
    /// before the others have read the set-up message (a bcast's, say),
    /// and may free the communicator at once; closing the file then would
    /// make `/proc/<pid>/fd/<fd>` name nothing, or another file once the
    /// number is reused. Finalize's barrier comes after every member's
    /// calls, so a kept file is opened before the leader exits.
    pub(crate) fn linger(self: Arc<Self>, members: u32) {
        let mut kept = crate::comm::lock(&LINGERING);
        kept.retain(|(r, n)| r.attached().load(Ordering::Acquire) < *n);
        if self.fd().is_some() && self.attached().load(Ordering::Acquire) < members {
            kept.push((self, members));
        }
    }
}

/// Regions of dropped areas whose memfd some member has still to open,
/// with the number of members; pruned whenever one is added.
static LINGERING: Mutex<Vec<(Arc<Region>, u32)>> = Mutex::new(Vec::new());

// SAFETY: the memory is shared with other processes anyway; every access
// goes through raw pointers and atomics.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}
