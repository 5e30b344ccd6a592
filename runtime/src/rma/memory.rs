//! Memory that other processes of this host can map: a memfd per
//! allocation, shared with peers through `/proc/<pid>/fd/<fd>` (the same
//! way as the node segment of the shared-memory transport). What
//! `MPI_Alloc_mem` hands out, and what window segments are made of.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

use memmap2::{MmapOptions, MmapRaw};

use super::rma_error;
use crate::error::{Error, ErrorClass};

/// A zero-filled memfd mapped shared, read-write; unmapped and closed on drop.
#[derive(Debug)]
pub struct SharedRegion {
    /// Open while peers may still need to open it (`/proc/<pid>/fd/<fd>`).
    file: Option<File>,
    map: MmapRaw,
    len: usize,
}

fn os(call: &'static str, detail: String, e: std::io::Error) -> Error {
    Error::Os {
        call,
        source: std::io::Error::new(e.kind(), format!("{detail}: {e}")),
    }
}

/// The page size (mapping offsets and noncontiguous shared windows round to it).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { nix::libc::sysconf(nix::libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

impl SharedRegion {
    /// A new region of `len` bytes (at least one page is mapped, so a
    /// zero-byte region still has a unique address).
    pub fn create(len: usize, what: &str) -> Result<SharedRegion, Error> {
        let fd = nix::sys::memfd::memfd_create(
            c"oxmpi-rma",
            nix::sys::memfd::MemFdCreateFlag::MFD_CLOEXEC,
        )
        .map_err(|e| os("memfd_create", what.to_owned(), e.into()))?;
        let file = File::from(fd);
        let mapped = len.max(1);
        file.set_len(mapped as u64).map_err(|e| {
            rma_error(
                ErrorClass::NoMem,
                format!("cannot allocate {len} bytes for {what}: {e}"),
            )
        })?;
        Self::map(file, mapped, len, what)
    }

    /// Maps the region another process of this host created (`pid`, `fd`
    /// as it published them), `len` bytes long.
    pub fn open(pid: u32, fd: i32, len: usize) -> Result<SharedRegion, Error> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| os("open", format!("window memory {path}"), e))?;
        Self::map(file, len.max(1), len, "a peer's window memory")
    }

    fn map(file: File, mapped: usize, len: usize, what: &str) -> Result<SharedRegion, Error> {
        let map = MmapOptions::new()
            .len(mapped)
            .map_raw(&file)
            .map_err(|e| os("mmap", format!("{mapped} bytes for {what}"), e))?;
        Ok(SharedRegion {
            file: Some(file),
            map,
            len,
        })
    }

    /// The first byte.
    pub fn base(&self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    /// Bytes usable.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The descriptor peers open through `/proc/<pid>/fd/` (-1 once closed).
    pub fn fd(&self) -> i32 {
        self.file.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// Closes the descriptor once no peer needs to open the region any
    /// more (the mapping stays): windows hold no descriptors.
    pub fn close_file(&mut self) {
        self.file = None;
    }
}

// SAFETY: the mapping is plain shared memory; every access through it is
// by raw pointer (other processes write it concurrently anyway).
unsafe impl Send for SharedRegion {}
// SAFETY: as above.
unsafe impl Sync for SharedRegion {}

/// One `MPI_Alloc_mem` allocation.
enum Allocation {
    /// In a memfd that peers can map.
    Shared(SharedRegion),
    /// Private memory, when no memfd could be made (e.g. the process is
    /// out of descriptors): windows over it are reached by CMA.
    Private(memmap2::MmapMut),
}

impl Allocation {
    fn len(&self) -> usize {
        match self {
            Allocation::Shared(r) => r.len(),
            Allocation::Private(m) => m.len(),
        }
    }
}

/// `MPI_Alloc_mem`'s regions by base address.
static ALLOCATED: Mutex<BTreeMap<usize, Allocation>> = Mutex::new(BTreeMap::new());

/// `MPI_Alloc_mem`: `len` bytes that windows on this host expose without
/// a copy (peers map them), page-aligned.
///
/// ```
/// let p = oxmpi::rma::alloc_mem(100)?;
/// // SAFETY: 100 bytes were allocated at `p`.
/// unsafe { p.write_bytes(7, 100) };
/// assert!(oxmpi::rma::allocated_region(p as usize, 100).is_some());
/// oxmpi::rma::free_mem(p)?;
/// assert!(oxmpi::rma::free_mem(p).is_err()); // already freed
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn alloc_mem(len: usize) -> Result<*mut u8, Error> {
    if len > isize::MAX as usize {
        return Err(rma_error(
            ErrorClass::NoMem,
            format!("invalid `size` {len}: larger than the address space"),
        ));
    }
    let (base, allocation) = match SharedRegion::create(len, "MPI_Alloc_mem") {
        Ok(region) => (region.base(), Allocation::Shared(region)),
        Err(_) => {
            let mut map = MmapOptions::new().len(len.max(1)).map_anon().map_err(|e| {
                rma_error(
                    ErrorClass::NoMem,
                    format!("MPI_Alloc_mem cannot allocate {len} bytes: {e}"),
                )
            })?;
            (map.as_mut_ptr(), Allocation::Private(map))
        }
    };
    crate::comm::lock(&ALLOCATED).insert(base as usize, allocation);
    Ok(base)
}

/// `MPI_Free_mem`: frees what [`alloc_mem`] returned; anything else is
/// `MPI_ERR_BASE`.
pub fn free_mem(base: *mut u8) -> Result<(), Error> {
    match crate::comm::lock(&ALLOCATED).remove(&(base as usize)) {
        Some(_) => Ok(()),
        None => Err(rma_error(
            ErrorClass::Base,
            format!("invalid `base` {base:p}: not memory from MPI_Alloc_mem (or already freed)"),
        )),
    }
}

/// If `[addr, addr + len)` lies inside one region of [`alloc_mem`]: that
/// region's descriptor, its length and the offset of `addr` in it.
pub fn allocated_region(addr: usize, len: usize) -> Option<(i32, usize, usize)> {
    let map = crate::comm::lock(&ALLOCATED);
    let (&start, allocation) = map.range(..=addr).next_back()?;
    let offset = addr - start;
    let Allocation::Shared(region) = allocation else {
        return None;
    };
    let inside = offset.checked_add(len)? <= allocation.len().max(1);
    (inside && region.fd() >= 0).then(|| (region.fd(), region.len(), offset))
}
