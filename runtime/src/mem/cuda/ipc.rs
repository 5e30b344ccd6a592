//! CUDA IPC between processes of one host: a sender describes its device
//! buffer with the driver's IPC handle of the allocation, the receiver maps
//! that allocation once and copies straight out of it (one copy, device to
//! device, or device to host for a host receive).
//!
//! Both sides cache by the allocation's buffer id, which the driver never
//! reuses in a process: memory freed and allocated again at the same
//! address gets a new id, so a stale handle or mapping is never used for
//! it. The receiver's cache is keyed by (sender pid, buffer id) and holds
//! at most [`MAX_OPEN`] mappings, closing the oldest beyond that.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use cudarc::driver::{result, sys};

use super::classify::classify;
use super::ctx::{check, device_error, Entered};
use crate::error::Error;

/// Bytes of an encoded [`IpcDesc`].
pub const DESC_LEN: usize = 64 + 8 + 8;

/// A device buffer as another process of the host can open it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpcDesc {
    /// The driver's handle of the allocation.
    pub handle: [u8; 64],
    /// Where the buffer starts in the allocation.
    pub offset: u64,
    /// The allocation's buffer id in the sender.
    pub buffer_id: u64,
}

impl IpcDesc {
    /// The wire form (little endian).
    pub fn encode(&self) -> [u8; DESC_LEN] {
        let mut out = [0u8; DESC_LEN];
        out[..64].copy_from_slice(&self.handle);
        out[64..72].copy_from_slice(&self.offset.to_le_bytes());
        out[72..80].copy_from_slice(&self.buffer_id.to_le_bytes());
        out
    }

    /// Reads the wire form; `None` when `bytes` is too short.
    ///
    /// ```
    /// use oxmpi::mem::cuda::IpcDesc;
    /// let d = IpcDesc { handle: [7; 64], offset: 256, buffer_id: 9 };
    /// assert_eq!(IpcDesc::decode(&d.encode()), Some(d));
    /// assert_eq!(IpcDesc::decode(&[0; 10]), None);
    /// ```
    pub fn decode(bytes: &[u8]) -> Option<IpcDesc> {
        let b: &[u8; DESC_LEN] = bytes.get(..DESC_LEN)?.try_into().ok()?;
        let mut handle = [0u8; 64];
        handle.copy_from_slice(&b[..64]);
        Some(IpcDesc {
            handle,
            offset: u64::from_le_bytes(b[64..72].try_into().ok()?),
            buffer_id: u64::from_le_bytes(b[72..80].try_into().ok()?),
        })
    }
}

/// Handles made so far, by buffer id (an allocation's handle never changes).
static EXPORTED: Mutex<Option<HashMap<u64, [u8; 64]>>> = Mutex::new(None);

/// The IPC description of the device buffer at `ptr` (`len` bytes).
pub fn export(ptr: *const u8, len: usize) -> Result<IpcDesc, Error> {
    let c = classify(ptr)?;
    let addr = ptr as usize;
    if !c.kind.is_device() || addr + len > c.base + c.len {
        return Err(Error::Device {
            what: "cuIpcGetMemHandle",
            reason: format!("{len} bytes at {addr:#x} are not inside one device allocation"),
        });
    }
    let mut cache = EXPORTED.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    let handle = match cache.get(&c.buffer_id) {
        Some(h) => *h,
        None => {
            let _in = Entered::enter(c.ctx as sys::CUcontext)?;
            let mut h = sys::CUipcMemHandle_st { reserved: [0; 64] };
            // SAFETY: `base` is a live allocation of the current context.
            check("cuIpcGetMemHandle", unsafe {
                sys::cuIpcGetMemHandle(&mut h, c.base as sys::CUdeviceptr).result()
            })?;
            let bytes = h.reserved.map(|b| b as u8);
            cache.insert(c.buffer_id, bytes);
            bytes
        }
    };
    Ok(IpcDesc {
        handle,
        offset: (addr - c.base) as u64,
        buffer_id: c.buffer_id,
    })
}

/// Mappings of other processes' allocations: (pid, buffer id) -> (mapped
/// base, context it was opened in), oldest first in `order`.
struct Opened {
    map: HashMap<(u32, u64), (usize, usize)>,
    order: VecDeque<(u32, u64)>,
}

static OPENED: Mutex<Option<Opened>> = Mutex::new(None);
/// Most mappings kept open.
const MAX_OPEN: usize = 64;

/// The context to open mappings in: the current one, else device 0's
/// primary context.
fn opening_context() -> Result<sys::CUcontext, Error> {
    if let Some(ctx) = check("cuCtxGetCurrent", result::ctx::get_current())? {
        return Ok(ctx);
    }
    let dev = check("cuDeviceGet", result::device::get(0))?;
    // SAFETY: retains device 0's primary context (kept for the process).
    check("cuDevicePrimaryCtxRetain", unsafe {
        result::primary_ctx::retain(dev)
    })
}

/// The address, in this process, of the buffer `d` that process `pid`
/// described (its allocation mapped once and kept).
pub fn open(pid: u32, d: &IpcDesc) -> Result<*const u8, Error> {
    let key = (pid, d.buffer_id);
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    let opened = opened.get_or_insert_with(|| Opened {
        map: HashMap::new(),
        order: VecDeque::new(),
    });
    if let Some(&(base, _)) = opened.map.get(&key) {
        return Ok((base as *const u8).wrapping_add(d.offset as usize));
    }
    let ctx = opening_context()?;
    let _in = Entered::enter(ctx)?;
    let base = match map(d) {
        // The driver sub-allocates small buffers from larger blocks and maps
        // a block once per process: a mapping of another buffer of the same
        // block (maybe freed since) is in the way. Mappings are only used
        // inside a copy, so this process's mappings of `pid`'s memory can
        // all go, and the open is tried again.
        Err(sys::CUresult::CUDA_ERROR_ALREADY_MAPPED) => {
            let stale: Vec<(u32, u64)> = opened
                .order
                .iter()
                .copied()
                .filter(|k| k.0 == pid)
                .collect();
            for k in stale {
                if let Some((b, c)) = opened.map.remove(&k) {
                    close(b, c);
                }
            }
            opened.order.retain(|k| k.0 != pid);
            map(d)
        }
        other => other,
    }
    .map_err(|e| device_error("cuIpcOpenMemHandle", result::DriverError(e)))?;
    if opened.order.len() >= MAX_OPEN {
        if let Some(old) = opened.order.pop_front() {
            if let Some((b, c)) = opened.map.remove(&old) {
                close(b, c);
            }
        }
    }
    opened.map.insert(key, (base as usize, ctx as usize));
    opened.order.push_back(key);
    Ok((base as *const u8).wrapping_add(d.offset as usize))
}

/// Maps the allocation `d` describes in the current context.
fn map(d: &IpcDesc) -> Result<sys::CUdeviceptr, sys::CUresult> {
    let mut base: sys::CUdeviceptr = 0;
    let handle = sys::CUipcMemHandle_st {
        reserved: d.handle.map(|b| b as std::ffi::c_char),
    };
    // SAFETY: a handle another process of this host made; the context is current.
    match unsafe {
        sys::cuIpcOpenMemHandle_v2(
            &mut base,
            handle,
            sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
        )
    } {
        sys::CUresult::CUDA_SUCCESS => Ok(base),
        e => Err(e),
    }
}

/// Unmaps a mapping `open` made.
fn close(base: usize, ctx: usize) {
    if let Ok(_in) = Entered::enter(ctx as sys::CUcontext) {
        // SAFETY: opened by `open` in this context, closed once.
        let _ = unsafe { sys::cuIpcCloseMemHandle(base as sys::CUdeviceptr) };
    }
}
