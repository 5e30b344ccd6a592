//! Which kind of memory an address is, asked of the driver once per call
//! and cached by allocation range.
//!
//! A device allocation's range, context and buffer id are kept; a later
//! address inside the range is validated by asking only its buffer id (the
//! driver never reuses one in a process), so memory freed and allocated
//! again at the same address is never taken for the old allocation.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use cudarc::driver::sys::{self, CUpointer_attribute as Attr};

use super::ctx::check;
use super::MemKind;
use crate::error::Error;

/// What the driver says of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    /// The memory kind.
    pub kind: MemKind,
    /// The context that owns it (null for host memory).
    pub ctx: usize,
    /// The allocation's unique id (0 for host memory).
    pub buffer_id: u64,
    /// First byte of the allocation (device memory only).
    pub base: usize,
    /// Bytes in the allocation (device memory only).
    pub len: usize,
}

/// Device allocations seen, by first address: `(classified)`. Bounded: the
/// cache is emptied when it grows past this many ranges.
static RANGES: Mutex<BTreeMap<usize, Classified>> = Mutex::new(BTreeMap::new());
const MAX_RANGES: usize = 4096;

/// The kind of memory at `ptr`, with its owner and range for device memory.
pub fn classify(ptr: *const u8) -> Result<Classified, Error> {
    let addr = ptr as usize;
    let cached = {
        let ranges = RANGES.lock().unwrap_or_else(|p| p.into_inner());
        ranges
            .range(..=addr)
            .next_back()
            .map(|(_, c)| *c)
            .filter(|c| addr < c.base + c.len)
    };
    if let Some(c) = cached {
        if buffer_id(addr)? == c.buffer_id {
            return Ok(c);
        }
    }
    let c = query(addr)?;
    let mut ranges = RANGES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(old) = cached {
        ranges.remove(&old.base);
    }
    if c.kind == MemKind::Device {
        if ranges.len() >= MAX_RANGES {
            ranges.clear();
        }
        ranges.insert(c.base, c);
    }
    Ok(c)
}

/// The buffer id of the allocation holding `addr` (0 when none).
fn buffer_id(addr: usize) -> Result<u64, Error> {
    let mut id = 0u64;
    // SAFETY: BUFFER_ID writes one u64.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            (&mut id as *mut u64).cast(),
            Attr::CU_POINTER_ATTRIBUTE_BUFFER_ID,
            addr as sys::CUdeviceptr,
        )
    };
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(id),
        // Not (or no longer) memory the driver knows.
        sys::CUresult::CUDA_ERROR_INVALID_VALUE => Ok(0),
        other => check("cuPointerGetAttribute", other.result()).map(|()| 0),
    }
}

/// Asks the driver everything about `addr` in one call.
fn query(addr: usize) -> Result<Classified, Error> {
    let mut mem_type: u32 = 0;
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    let mut id: u64 = 0;
    let mut managed: u32 = 0;
    let mut start: sys::CUdeviceptr = 0;
    let mut size: usize = 0;
    let mut attrs = [
        Attr::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        Attr::CU_POINTER_ATTRIBUTE_CONTEXT,
        Attr::CU_POINTER_ATTRIBUTE_BUFFER_ID,
        Attr::CU_POINTER_ATTRIBUTE_IS_MANAGED,
        Attr::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        Attr::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut c_void; 6] = [
        (&mut mem_type as *mut u32).cast(),
        (&mut ctx as *mut sys::CUcontext).cast(),
        (&mut id as *mut u64).cast(),
        (&mut managed as *mut u32).cast(),
        (&mut start as *mut sys::CUdeviceptr).cast(),
        (&mut size as *mut usize).cast(),
    ];
    // SAFETY: each data slot has the size its attribute writes (the
    // boolean IS_MANAGED fits the zeroed u32).
    let r = unsafe {
        sys::cuPointerGetAttributes(
            attrs.len() as u32,
            attrs.as_mut_ptr(),
            data.as_mut_ptr(),
            addr as sys::CUdeviceptr,
        )
    };
    check("cuPointerGetAttributes", r.result())?;
    let kind = match mem_type {
        _ if managed != 0 => MemKind::Managed,
        t if t == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 => MemKind::Device,
        t if t == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32 => MemKind::RegisteredHost,
        _ => MemKind::Host,
    };
    Ok(Classified {
        kind,
        ctx: ctx as usize,
        buffer_id: id,
        base: start as usize,
        len: size,
    })
}
