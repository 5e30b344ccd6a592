//! Allocation entry points: device, managed and page-locked host memory.

use std::ffi::{c_uint, c_void};
use std::num::NonZeroUsize;

use nix::sys::mman::{mmap_anonymous, MapFlags, ProtFlags};

use crate::abi::{code, CUdeviceptr, CUresult};
use crate::arena;
use crate::guard::{driver_api, put};
use crate::memory::{HostRange, Kind, TOTAL_MEM};
use crate::state::{self, State};

/// `CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST`: the valid managed flags.
const MANAGED_FLAGS: c_uint = 0x1 | 0x2;

/// Allocates device-range memory of `kind` in the current context.
///
/// # Safety
/// `dptr` must be null or valid for a write.
unsafe fn alloc(dptr: *mut CUdeviceptr, len: usize, kind: Kind) -> Result<(), CUresult> {
    let mut st = state::lock()?;
    let (ctx, context) = st.current()?;
    if dptr.is_null() {
        return Err(code::INVALID_VALUE);
    }
    let addr = st.mem.alloc(len, context.device, ctx, kind)?;
    put(dptr, addr as CUdeviceptr)
}

/// Records `addr..addr + len` as page-locked host memory.
fn record_host(st: &mut State, addr: usize, len: usize, owned: bool) -> Result<(), CUresult> {
    let (ctx, context) = st.current()?;
    let overlaps = st
        .mem
        .host
        .range(..addr + len)
        .next_back()
        .is_some_and(|(&start, range)| start + range.len > addr);
    if overlaps {
        return Err(code::HOST_MEMORY_ALREADY_REGISTERED);
    }
    let buffer_id = st.mem.new_buffer_id();
    let range = HostRange {
        len,
        buffer_id,
        device: context.device,
        ctx,
        owned,
    };
    st.mem.host.insert(addr, range);
    Ok(())
}

/// Allocates page-locked host memory (plain anonymous pages here).
///
/// # Safety
/// `pp` must be null or valid for a write.
unsafe fn alloc_host(pp: *mut *mut c_void, len: usize) -> Result<(), CUresult> {
    let mut st = state::lock()?;
    st.current()?;
    let size = NonZeroUsize::new(arena::round_up(len)).ok_or(code::INVALID_VALUE)?;
    if pp.is_null() {
        return Err(code::INVALID_VALUE);
    }
    // SAFETY: a fresh private mapping at an address the kernel picks.
    let addr = mmap_anonymous(
        None,
        size,
        ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
        MapFlags::MAP_PRIVATE,
    )
    .map_err(|_| code::OUT_OF_MEMORY)?
    .as_ptr() as usize;
    record_host(&mut st, addr, len, true)?;
    put(pp, addr as *mut c_void)
}

driver_api! {
    /// `cuMemAlloc_v2`: device memory the CPU cannot touch.
    fn cuMemAlloc_v2[cuMemAlloc](dptr: *mut CUdeviceptr, bytesize: usize) {
        alloc(dptr, bytesize, Kind::Device)
    }

    /// `cuMemAllocManaged`: device-range memory the CPU can also touch.
    fn cuMemAllocManaged(dptr: *mut CUdeviceptr, bytesize: usize, flags: c_uint) {
        if flags & !MANAGED_FLAGS != 0 || flags.count_ones() != 1 {
            return Err(code::INVALID_VALUE);
        }
        alloc(dptr, bytesize, Kind::Managed)
    }

    /// `cuMemFree_v2`: only the start of a device or managed allocation;
    /// 0 is accepted and ignored (as NVIDIA's driver does).
    fn cuMemFree_v2[cuMemFree](dptr: CUdeviceptr) {
        let mut st = state::lock()?;
        st.current()?;
        if dptr == 0 {
            return Ok(());
        }
        st.mem.release(dptr as usize, &[Kind::Device, Kind::Managed])
    }

    /// `cuMemGetInfo_v2`: for the current context's device.
    fn cuMemGetInfo_v2[cuMemGetInfo](free: *mut usize, total: *mut usize) {
        let st = state::lock()?;
        let (_, ctx) = st.current()?;
        put(free, TOTAL_MEM - st.mem.used(ctx.device))?;
        put(total, TOTAL_MEM)
    }

    /// `cuMemAllocHost_v2`.
    fn cuMemAllocHost_v2[cuMemAllocHost](pp: *mut *mut c_void, bytesize: usize) {
        alloc_host(pp, bytesize)
    }

    /// `cuMemHostAlloc`: flags are accepted and ignored.
    fn cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, _flags: c_uint) {
        alloc_host(pp, bytesize)
    }

    /// `cuMemFreeHost`: only what `cuMemAllocHost` / `cuMemHostAlloc` returned.
    fn cuMemFreeHost(p: *mut c_void) {
        let mut st = state::lock()?;
        st.current()?;
        let addr = p as usize;
        match st.mem.host.get(&addr) {
            Some(range) if range.owned => {
                arena::unmap(addr, arena::round_up(range.len));
                st.mem.host.remove(&addr);
                Ok(())
            }
            _ => Err(code::INVALID_VALUE),
        }
    }

    /// `cuMemHostRegister_v2`: records user memory as page-locked.
    fn cuMemHostRegister_v2[cuMemHostRegister](p: *mut c_void, bytesize: usize, _flags: c_uint) {
        let mut st = state::lock()?;
        let addr = p as usize;
        if addr == 0 || bytesize == 0 || st.mem.find_device(addr).is_some() {
            return Err(code::INVALID_VALUE);
        }
        record_host(&mut st, addr, bytesize, false)
    }

    /// `cuMemHostUnregister`: only the start of a registered range;
    /// memory from `cuMemAllocHost` is `INVALID_VALUE`, unknown memory
    /// `HOST_MEMORY_NOT_REGISTERED` (as NVIDIA's driver answers).
    fn cuMemHostUnregister(p: *mut c_void) {
        let mut st = state::lock()?;
        st.current()?;
        match st.mem.host.get(&(p as usize)) {
            Some(range) if !range.owned => {
                st.mem.host.remove(&(p as usize));
                Ok(())
            }
            Some(_) => Err(code::INVALID_VALUE),
            None => Err(code::HOST_MEMORY_NOT_REGISTERED),
        }
    }

    /// `cuMemHostGetDevicePointer_v2`: with unified addressing, the same address.
    fn cuMemHostGetDevicePointer_v2[cuMemHostGetDevicePointer](
        dptr: *mut CUdeviceptr,
        p: *mut c_void,
        flags: c_uint,
    ) {
        let st = state::lock()?;
        st.current()?;
        if flags != 0 || st.mem.find_host(p as usize).is_none() {
            return Err(code::INVALID_VALUE);
        }
        put(dptr, p as CUdeviceptr)
    }
}
