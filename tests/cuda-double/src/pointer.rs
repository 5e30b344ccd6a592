//! Pointer queries, as the real driver answers them: device and managed
//! memory report `CU_MEMORYTYPE_DEVICE` (managed adds `IS_MANAGED`),
//! page-locked host memory `CU_MEMORYTYPE_HOST`; interior pointers are
//! recognised. An address the driver does not know is `INVALID_VALUE` for
//! `cuPointerGetAttribute`; `cuPointerGetAttributes` succeeds and reports
//! it as pageable host memory, as NVIDIA's driver does (checked on an H100,
//! driver 580): memory type, context and buffer id 0, device ordinal -2,
//! host pointer the address itself.

use std::ffi::{c_uint, c_void};

use crate::abi::{code, memory_type, pointer_attr as attr, CUdeviceptr, CUresult};
use crate::guard::{driver_api, put};
use crate::memory::{Kind, Memory};
use crate::state;

/// What an address belongs to.
struct Found {
    start: usize,
    len: usize,
    ctx: usize,
    device: i32,
    buffer_id: u64,
    /// `None` for page-locked host memory.
    kind: Option<Kind>,
}

fn find(mem: &Memory, addr: usize) -> Option<Found> {
    if let Some((start, a)) = mem.find_device(addr) {
        return Some(Found {
            start,
            len: a.len,
            ctx: a.ctx,
            device: a.device,
            buffer_id: a.buffer_id,
            kind: Some(a.kind),
        });
    }
    mem.find_host(addr).map(|(start, h)| Found {
        start,
        len: h.len,
        ctx: h.ctx,
        device: h.device,
        buffer_id: h.buffer_id,
        kind: None,
    })
}

/// An attribute's value: 4-byte (`int`, `unsigned int`) or 8-byte
/// (pointers, `CUdeviceptr`, `size_t`, `unsigned long long`).
#[derive(Clone, Copy)]
enum Value {
    Word(u32),
    Wide(u64),
}

/// The C size of `attribute`'s value, or `INVALID_VALUE` if unsupported.
fn zero(attribute: c_uint) -> Result<Value, CUresult> {
    match attribute {
        attr::MEMORY_TYPE
        | attr::SYNC_MEMOPS
        | attr::IS_MANAGED
        | attr::DEVICE_ORDINAL
        | attr::IS_LEGACY_CUDA_IPC_CAPABLE
        | attr::MAPPED
        | 15 => Ok(Value::Word(0)), // 15: IS_GPU_DIRECT_RDMA_CAPABLE
        attr::CONTEXT
        | attr::DEVICE_POINTER
        | attr::HOST_POINTER
        | attr::BUFFER_ID
        | attr::RANGE_START_ADDR
        | attr::RANGE_SIZE => Ok(Value::Wide(0)),
        _ => Err(code::INVALID_VALUE),
    }
}

/// What `cuPointerGetAttributes` reports for memory the driver does not know.
fn unknown(addr: usize, attribute: c_uint) -> Result<Value, CUresult> {
    match attribute {
        attr::DEVICE_ORDINAL => Ok(Value::Word(-2i32 as u32)),
        attr::HOST_POINTER => Ok(Value::Wide(addr as u64)),
        other => zero(other),
    }
}

/// `attribute` of the memory at `addr`; `INVALID_VALUE` where the real
/// driver has none (the host address of device-only memory).
fn value(f: &Found, addr: usize, attribute: c_uint) -> Result<Value, CUresult> {
    let managed = f.kind == Some(Kind::Managed);
    let word = |b: bool| Value::Word(u32::from(b));
    Ok(match attribute {
        attr::CONTEXT => Value::Wide(f.ctx as u64),
        attr::MEMORY_TYPE => Value::Word(match f.kind {
            Some(_) => memory_type::DEVICE,
            None => memory_type::HOST,
        }),
        attr::DEVICE_POINTER => Value::Wide(addr as u64),
        attr::HOST_POINTER if f.kind.is_none() || managed => Value::Wide(addr as u64),
        attr::HOST_POINTER => return Err(code::INVALID_VALUE),
        attr::BUFFER_ID => Value::Wide(f.buffer_id),
        attr::IS_MANAGED => word(managed),
        attr::DEVICE_ORDINAL => Value::Word(f.device as u32),
        attr::IS_LEGACY_CUDA_IPC_CAPABLE => word(f.kind == Some(Kind::Device)),
        attr::RANGE_START_ADDR => Value::Wide(f.start as u64),
        attr::RANGE_SIZE => Value::Wide(f.len as u64),
        attr::MAPPED => word(true),
        other => zero(other)?,
    })
}

/// Writes `value` at `data` with its C size.
///
/// # Safety
/// `data` must be null or valid for the value's size.
unsafe fn write(data: *mut c_void, value: Value) -> Result<(), CUresult> {
    match value {
        Value::Word(v) => put(data.cast::<u32>(), v),
        Value::Wide(v) => put(data.cast::<u64>(), v),
    }
}

driver_api! {
    /// `cuPointerGetAttribute`: `INVALID_VALUE` for unknown memory.
    fn cuPointerGetAttribute(data: *mut c_void, attribute: c_uint, ptr: CUdeviceptr) {
        let st = state::lock()?;
        let found = find(&st.mem, ptr as usize).ok_or(code::INVALID_VALUE)?;
        write(data, value(&found, ptr as usize, attribute)?)
    }

    /// `cuPointerGetAttributes`: success also for unknown memory.
    fn cuPointerGetAttributes(
        count: c_uint,
        attributes: *const c_uint,
        data: *mut *mut c_void,
        ptr: CUdeviceptr,
    ) {
        let st = state::lock()?;
        if count > 0 && (attributes.is_null() || data.is_null()) {
            return Err(code::INVALID_VALUE);
        }
        let found = find(&st.mem, ptr as usize);
        for i in 0..count as usize {
            let attribute = *attributes.add(i);
            let v = match &found {
                Some(f) => value(f, ptr as usize, attribute).or_else(|_| zero(attribute))?,
                None => unknown(ptr as usize, attribute)?,
            };
            let out = *data.add(i);
            // A null slot means "not interested", as in the real driver.
            if !out.is_null() {
                write(out, v)?;
            }
        }
        Ok(())
    }

    /// `cuMemGetAddressRange_v2`: the allocation around `ptr` (either
    /// out-pointer may be null); `NOT_FOUND` for unknown memory.
    fn cuMemGetAddressRange_v2[cuMemGetAddressRange](
        base: *mut CUdeviceptr,
        size: *mut usize,
        ptr: CUdeviceptr,
    ) {
        let st = state::lock()?;
        let found = find(&st.mem, ptr as usize).ok_or(code::NOT_FOUND)?;
        if !base.is_null() {
            put(base, found.start as CUdeviceptr)?;
        }
        if !size.is_null() {
            put(size, found.len)?;
        }
        Ok(())
    }
}
