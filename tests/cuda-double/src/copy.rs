//! Copies and memsets. Device-side operands must lie inside one allocation
//! the double knows (`INVALID_VALUE` otherwise, also past its end); host-side
//! operands may be any memory, and with unified addressing a device address
//! given as a host operand is still resolved. Everything runs at submission,
//! so the `Async` forms are the synchronous ones plus a stream check.

use std::ffi::c_void;
use std::sync::MutexGuard;

use crate::abi::{code, CUdeviceptr, CUresult, Handle};
use crate::guard::driver_api;
use crate::state::{self, State};

/// One operand of a copy.
#[derive(Clone, Copy)]
enum Operand {
    /// Must be memory a device can address.
    Device(CUdeviceptr),
    /// Any memory (unified addressing).
    Any(usize),
}

impl Operand {
    fn resolve(self, st: &State, len: usize) -> Result<*mut u8, CUresult> {
        match self {
            Operand::Device(addr) => st.mem.device_span(addr as usize, len, code::INVALID_VALUE),
            Operand::Any(addr) => st.mem.any_span(addr, len),
        }
    }
}

/// The driver state, with a current context and `stream` (when given) valid.
fn lock_for(stream: Option<Handle>) -> Result<MutexGuard<'static, State>, CUresult> {
    let st = state::lock()?;
    st.current()?;
    if let Some(stream) = stream {
        st.check_stream(stream as usize)?;
    }
    Ok(st)
}

/// Copies `len` bytes; `stream` is checked when given.
///
/// # Safety
/// Host operands must be valid for `len` bytes.
unsafe fn copy(
    dst: Operand,
    src: Operand,
    len: usize,
    stream: Option<Handle>,
) -> Result<(), CUresult> {
    let st = lock_for(stream)?;
    if len == 0 {
        return Ok(());
    }
    let to = dst.resolve(&st, len)?;
    let from = src.resolve(&st, len)?;
    std::ptr::copy(from, to, len);
    Ok(())
}

/// Fills `count` elements of `pattern` (1, 2 or 4 bytes) at device memory
/// `dst`, which must be aligned to the element size.
fn memset(
    dst: CUdeviceptr,
    pattern: &[u8],
    count: usize,
    stream: Option<Handle>,
) -> Result<(), CUresult> {
    let st = lock_for(stream)?;
    let size = pattern.len();
    if dst as usize % size != 0 {
        return Err(code::INVALID_VALUE);
    }
    let len = count.checked_mul(size).ok_or(code::INVALID_VALUE)?;
    if len == 0 {
        return Ok(());
    }
    let to = st.mem.device_span(dst as usize, len, code::INVALID_VALUE)?;
    // SAFETY: device_span checked that `len` bytes at `to` belong to one
    // live allocation's shadow (or a page-locked host range).
    let bytes = unsafe { std::slice::from_raw_parts_mut(to, len) };
    for chunk in bytes.chunks_exact_mut(size) {
        chunk.copy_from_slice(pattern);
    }
    Ok(())
}

driver_api! {
    /// `cuMemcpy`: between any kinds of memory.
    fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) {
        copy(Operand::Any(dst as usize), Operand::Any(src as usize), bytes, None)
    }

    /// `cuMemcpyAsync`.
    fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: Handle) {
        copy(Operand::Any(dst as usize), Operand::Any(src as usize), bytes, Some(stream))
    }

    /// `cuMemcpyHtoD_v2`.
    fn cuMemcpyHtoD_v2[cuMemcpyHtoD](dst: CUdeviceptr, src: *const c_void, bytes: usize) {
        copy(Operand::Device(dst), Operand::Any(src as usize), bytes, None)
    }

    /// `cuMemcpyDtoH_v2`.
    fn cuMemcpyDtoH_v2[cuMemcpyDtoH](dst: *mut c_void, src: CUdeviceptr, bytes: usize) {
        copy(Operand::Any(dst as usize), Operand::Device(src), bytes, None)
    }

    /// `cuMemcpyDtoD_v2`.
    fn cuMemcpyDtoD_v2[cuMemcpyDtoD](dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) {
        copy(Operand::Device(dst), Operand::Device(src), bytes, None)
    }

    /// `cuMemcpyHtoDAsync_v2`.
    fn cuMemcpyHtoDAsync_v2[cuMemcpyHtoDAsync](
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
        stream: Handle,
    ) {
        copy(Operand::Device(dst), Operand::Any(src as usize), bytes, Some(stream))
    }

    /// `cuMemcpyDtoHAsync_v2`.
    fn cuMemcpyDtoHAsync_v2[cuMemcpyDtoHAsync](
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
        stream: Handle,
    ) {
        copy(Operand::Any(dst as usize), Operand::Device(src), bytes, Some(stream))
    }

    /// `cuMemcpyDtoDAsync_v2`.
    fn cuMemcpyDtoDAsync_v2[cuMemcpyDtoDAsync](
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
        stream: Handle,
    ) {
        copy(Operand::Device(dst), Operand::Device(src), bytes, Some(stream))
    }

    /// `cuMemcpyPeer`: contexts are checked, addresses are global.
    fn cuMemcpyPeer(
        dst: CUdeviceptr,
        dst_ctx: Handle,
        src: CUdeviceptr,
        src_ctx: Handle,
        bytes: usize,
    ) {
        check_contexts(&[dst_ctx, src_ctx])?;
        copy(Operand::Device(dst), Operand::Device(src), bytes, None)
    }

    /// `cuMemcpyPeerAsync`.
    fn cuMemcpyPeerAsync(
        dst: CUdeviceptr,
        dst_ctx: Handle,
        src: CUdeviceptr,
        src_ctx: Handle,
        bytes: usize,
        stream: Handle,
    ) {
        check_contexts(&[dst_ctx, src_ctx])?;
        copy(Operand::Device(dst), Operand::Device(src), bytes, Some(stream))
    }

    /// `cuMemsetD8_v2`.
    fn cuMemsetD8_v2[cuMemsetD8](dst: CUdeviceptr, value: u8, count: usize) {
        memset(dst, &[value], count, None)
    }

    /// `cuMemsetD16_v2`.
    fn cuMemsetD16_v2[cuMemsetD16](dst: CUdeviceptr, value: u16, count: usize) {
        memset(dst, &value.to_ne_bytes(), count, None)
    }

    /// `cuMemsetD32_v2`.
    fn cuMemsetD32_v2[cuMemsetD32](dst: CUdeviceptr, value: u32, count: usize) {
        memset(dst, &value.to_ne_bytes(), count, None)
    }

    /// `cuMemsetD8Async`.
    fn cuMemsetD8Async(dst: CUdeviceptr, value: u8, count: usize, stream: Handle) {
        memset(dst, &[value], count, Some(stream))
    }

    /// `cuMemsetD16Async`.
    fn cuMemsetD16Async(dst: CUdeviceptr, value: u16, count: usize, stream: Handle) {
        memset(dst, &value.to_ne_bytes(), count, Some(stream))
    }

    /// `cuMemsetD32Async`.
    fn cuMemsetD32Async(dst: CUdeviceptr, value: u32, count: usize, stream: Handle) {
        memset(dst, &value.to_ne_bytes(), count, Some(stream))
    }
}

/// `INVALID_CONTEXT` unless every handle is a live context.
fn check_contexts(contexts: &[Handle]) -> Result<(), CUresult> {
    let st = state::lock()?;
    match contexts
        .iter()
        .all(|c| st.contexts.contains_key(&(*c as usize)))
    {
        true => Ok(()),
        false => Err(code::INVALID_CONTEXT),
    }
}
