//! What the double knows about memory: device allocations (each a memfd
//! mapped at a `PROT_NONE` device address plus a read/write shadow),
//! managed allocations (the same, but the device address is CPU-accessible),
//! imported IPC mappings, and page-locked host ranges (ordinary CPU memory
//! recorded as registered). Lookups accept interior pointers.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, OwnedFd};

use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
use nix::sys::stat::fstat;
use nix::unistd::ftruncate;

use crate::abi::{code, CUresult};
use crate::arena::{self, Arena};

/// Memory each simulated device reports (`cuDeviceTotalMem`): 16 GiB.
pub(crate) const TOTAL_MEM: usize = 16 << 30;

/// How a device-range allocation came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `cuMemAlloc`: the CPU cannot touch it.
    Device,
    /// `cuMemAllocManaged`: the CPU can touch it at its device address.
    Managed,
    /// `cuIpcOpenMemHandle`: another process's device allocation.
    Imported,
}

/// The identity of a memfd: `(st_dev, st_ino)`.
pub(crate) type FileId = (u64, u64);

/// One range of the device address space in use.
pub(crate) struct DeviceAlloc {
    /// Bytes requested (the range `cuMemGetAddressRange` reports).
    pub len: usize,
    /// Bytes mapped (whole pages).
    pub mapped: usize,
    /// Where the double reads and writes the bytes.
    pub shadow: usize,
    /// The backing memfd; closed when the allocation goes.
    pub memfd: OwnedFd,
    /// The memfd's identity, checked by IPC importers.
    pub file_id: FileId,
    /// `CU_POINTER_ATTRIBUTE_BUFFER_ID`: unique for the process's life.
    pub buffer_id: u64,
    /// Device ordinal of the context that allocated it.
    pub device: i32,
    /// The context that allocated it.
    pub ctx: usize,
    /// How it was made.
    pub kind: Kind,
}

/// A page-locked host range.
pub(crate) struct HostRange {
    /// Bytes.
    pub len: usize,
    /// `CU_POINTER_ATTRIBUTE_BUFFER_ID`.
    pub buffer_id: u64,
    /// Device ordinal of the context current at allocation / registration.
    pub device: i32,
    /// That context.
    pub ctx: usize,
    /// Allocated by the double (`cuMemAllocHost` / `cuMemHostAlloc`, freed
    /// by `cuMemFreeHost`), as opposed to registered user memory.
    pub owned: bool,
}

/// All memory the double tracks.
pub(crate) struct Memory {
    arena: Option<Arena>,
    /// Device ranges by start address.
    pub device: BTreeMap<usize, DeviceAlloc>,
    /// Page-locked host ranges by start address.
    pub host: BTreeMap<usize, HostRange>,
    /// Bytes allocated per device ordinal.
    used: BTreeMap<i32, usize>,
    last_buffer_id: u64,
}

impl Memory {
    /// Nothing allocated; the address space is reserved on first use.
    pub(crate) const fn new() -> Memory {
        Memory {
            arena: None,
            device: BTreeMap::new(),
            host: BTreeMap::new(),
            used: BTreeMap::new(),
            last_buffer_id: 0,
        }
    }

    /// A buffer id never handed out before in this process.
    pub(crate) fn new_buffer_id(&mut self) -> u64 {
        self.last_buffer_id += 1;
        self.last_buffer_id
    }

    /// Bytes allocated on `device`.
    pub(crate) fn used(&self, device: i32) -> usize {
        self.used.get(&device).copied().unwrap_or(0)
    }

    /// Allocates `len` bytes of fresh device (or managed) memory.
    pub(crate) fn alloc(
        &mut self,
        len: usize,
        device: i32,
        ctx: usize,
        kind: Kind,
    ) -> Result<usize, CUresult> {
        if len == 0 {
            return Err(code::INVALID_VALUE);
        }
        if len > TOTAL_MEM - self.used(device) {
            return Err(code::OUT_OF_MEMORY);
        }
        let memfd = memfd_create(c"cuda-double", MemFdCreateFlag::MFD_CLOEXEC)
            .map_err(|_| code::OUT_OF_MEMORY)?;
        let mapped = arena::round_up(len);
        let size = i64::try_from(mapped).map_err(|_| code::OUT_OF_MEMORY)?;
        ftruncate(memfd.as_fd(), size).map_err(|_| code::OUT_OF_MEMORY)?;
        let addr = self.place(memfd, len, device, ctx, kind)?;
        *self.used.entry(device).or_insert(0) += len;
        Ok(addr)
    }

    /// Maps `memfd` (at least `len` bytes) at a new device address plus a
    /// shadow, and records it.
    pub(crate) fn place(
        &mut self,
        memfd: OwnedFd,
        len: usize,
        device: i32,
        ctx: usize,
        kind: Kind,
    ) -> Result<usize, CUresult> {
        let file_id = file_id(&memfd)?;
        let mapped = arena::round_up(len);
        if self.arena.is_none() {
            self.arena = Some(Arena::reserve()?);
        }
        let arena = self.arena.as_mut().ok_or(code::OUT_OF_MEMORY)?;
        let addr = arena.take(mapped)?;
        if let Err(err) = arena::map_device(&memfd, addr, mapped, kind == Kind::Managed) {
            arena.give_back(addr, mapped);
            return Err(err);
        }
        let shadow = match arena::map_shadow(&memfd, mapped) {
            Ok(shadow) => shadow,
            Err(err) => {
                arena.give_back(addr, mapped);
                return Err(err);
            }
        };
        let buffer_id = self.new_buffer_id();
        let alloc = DeviceAlloc {
            len,
            mapped,
            shadow,
            memfd,
            file_id,
            buffer_id,
            device,
            ctx,
            kind,
        };
        self.device.insert(addr, alloc);
        Ok(addr)
    }

    /// Unmaps and forgets the device range starting at `addr`, closing its
    /// memfd. `INVALID_VALUE` unless `addr` starts a range of one of `kinds`.
    pub(crate) fn release(&mut self, addr: usize, kinds: &[Kind]) -> Result<(), CUresult> {
        match self.device.get(&addr) {
            Some(alloc) if kinds.contains(&alloc.kind) => {}
            _ => return Err(code::INVALID_VALUE),
        }
        let alloc = self.device.remove(&addr).ok_or(code::INVALID_VALUE)?;
        arena::unmap(alloc.shadow, alloc.mapped);
        if let Some(arena) = self.arena.as_mut() {
            arena.give_back(addr, alloc.mapped);
        }
        if alloc.kind != Kind::Imported {
            if let Some(used) = self.used.get_mut(&alloc.device) {
                *used -= alloc.len;
            }
        }
        Ok(())
    }

    /// The device range containing `addr`, as `(start, allocation)`.
    pub(crate) fn find_device(&self, addr: usize) -> Option<(usize, &DeviceAlloc)> {
        let (&start, alloc) = self.device.range(..=addr).next_back()?;
        (addr - start < alloc.len).then_some((start, alloc))
    }

    /// The page-locked host range containing `addr`, as `(start, range)`.
    pub(crate) fn find_host(&self, addr: usize) -> Option<(usize, &HostRange)> {
        let (&start, range) = self.host.range(..=addr).next_back()?;
        (addr - start < range.len).then_some((start, range))
    }

    /// Where the double may access `len` bytes at `addr`, which must lie
    /// inside one device range or page-locked host range (what a device may
    /// address); `err` otherwise.
    pub(crate) fn device_span(
        &self,
        addr: usize,
        len: usize,
        err: CUresult,
    ) -> Result<*mut u8, CUresult> {
        if let Some((start, alloc)) = self.find_device(addr) {
            let offset = addr - start;
            return match offset.checked_add(len) {
                Some(end) if end <= alloc.len => Ok((alloc.shadow + offset) as *mut u8),
                _ => Err(err),
            };
        }
        if let Some((start, range)) = self.find_host(addr) {
            return match (addr - start).checked_add(len) {
                Some(end) if end <= range.len => Ok(addr as *mut u8),
                _ => Err(err),
            };
        }
        Err(err)
    }

    /// Where the double may access `len` bytes at `addr`, which may be any
    /// memory (unified addressing): device ranges go through their shadow,
    /// other addresses are host memory used as they are. A device address
    /// that no live allocation covers, or a null one, is `INVALID_VALUE`.
    pub(crate) fn any_span(&self, addr: usize, len: usize) -> Result<*mut u8, CUresult> {
        if self.find_device(addr).is_some() {
            return self.device_span(addr, len, code::INVALID_VALUE);
        }
        let in_arena = self.arena.as_ref().is_some_and(|a| a.contains(addr));
        if addr == 0 || in_arena {
            return Err(code::INVALID_VALUE);
        }
        Ok(addr as *mut u8)
    }
}

/// The identity of an open file.
pub(crate) fn file_id(fd: &OwnedFd) -> Result<FileId, CUresult> {
    let st = fstat(std::os::fd::AsRawFd::as_raw_fd(fd)).map_err(|_| code::OPERATING_SYSTEM)?;
    Ok((st.st_dev, st.st_ino))
}
