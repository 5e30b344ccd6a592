//! IPC between processes of one host. A memory handle names the owner's
//! memfd: `cuIpcOpenMemHandle` in another process opens
//! `/proc/<pid>/fd/<fd>` (allowed for the same user, also under Yama
//! `ptrace_scope` 1), checks it is still the same file (device and inode
//! stored in the handle), and maps it at a new device address plus a shadow.
//! Event handles carry nothing: all work is complete at submission.

use std::ffi::{c_char, c_uint};
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::abi::{code, CUdeviceptr, CUipcMemHandle, CUresult, Handle};
use crate::guard::{driver_api, put};
use crate::memory::{self, Kind};
use crate::state::{self, Event, Import};

/// First 8 bytes of every handle the double makes.
const MAGIC: &[u8; 8] = b"OXDBLIPC";
/// `CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS`: the one valid open flag.
const LAZY_ENABLE_PEER_ACCESS: c_uint = 0x1;
/// `CU_EVENT_INTERPROCESS`.
const EVENT_INTERPROCESS: c_uint = 0x4;

/// What a memory handle holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MemHandle {
    pid: u32,
    fd: i32,
    len: u64,
    buffer_id: u64,
    file_id: memory::FileId,
}

impl MemHandle {
    fn encode(&self) -> CUipcMemHandle {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.len.to_le_bytes());
        b[24..32].copy_from_slice(&self.buffer_id.to_le_bytes());
        b[32..40].copy_from_slice(&self.file_id.0.to_le_bytes());
        b[40..48].copy_from_slice(&self.file_id.1.to_le_bytes());
        CUipcMemHandle {
            reserved: b.map(|x| x as c_char),
        }
    }

    /// `INVALID_VALUE` for bytes the double did not make.
    fn decode(handle: &CUipcMemHandle) -> Result<MemHandle, CUresult> {
        let b = handle.reserved.map(|x| x as u8);
        if &b[..8] != MAGIC {
            return Err(code::INVALID_VALUE);
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Ok(MemHandle {
            pid: u32_at(8),
            fd: u32_at(12) as i32,
            len: u64_at(16),
            buffer_id: u64_at(24),
            file_id: (u64_at(32), u64_at(40)),
        })
    }

    /// Opens the owner's memfd; `INVALID_HANDLE` if it is gone or is no
    /// longer the same file (the owner freed the allocation).
    fn open(&self) -> Result<OwnedFd, CUresult> {
        let path = format!("/proc/{}/fd/{}", self.pid, self.fd);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|_| code::INVALID_HANDLE)?;
        let fd = OwnedFd::from(file);
        if memory::file_id(&fd)? != self.file_id {
            return Err(code::INVALID_HANDLE);
        }
        let size = nix::sys::stat::fstat(fd.as_raw_fd())
            .map_err(|_| code::INVALID_HANDLE)?
            .st_size;
        if u64::try_from(size).unwrap_or(0) < self.len {
            return Err(code::INVALID_HANDLE);
        }
        Ok(fd)
    }
}

/// Opens a memory handle in the current context.
///
/// # Safety
/// `dptr` must be null or valid for a write.
unsafe fn open(
    dptr: *mut CUdeviceptr,
    handle: &CUipcMemHandle,
    flags: c_uint,
) -> Result<(), CUresult> {
    let mut st = state::lock()?;
    let (ctx, context) = st.current()?;
    if dptr.is_null() || flags & !LAZY_ENABLE_PEER_ACCESS != 0 {
        return Err(code::INVALID_VALUE);
    }
    let h = MemHandle::decode(handle)?;
    if h.pid == std::process::id() {
        return Err(code::INVALID_CONTEXT);
    }
    let key = (h.pid, h.file_id);
    if let Some((&addr, import)) = st.imports.iter_mut().find(|(_, i)| i.key == key) {
        import.refs += 1;
        return put(dptr, addr as CUdeviceptr);
    }
    let fd = h.open()?;
    let len = usize::try_from(h.len).map_err(|_| code::INVALID_HANDLE)?;
    let addr = st.mem.place(fd, len, context.device, ctx, Kind::Imported)?;
    st.imports.insert(addr, Import { key, refs: 1 });
    crate::launch::log_line(&format!(
        "ipc_open owner={} buffer={} pid={}\n",
        h.pid,
        h.buffer_id,
        std::process::id()
    ));
    put(dptr, addr as CUdeviceptr)
}

driver_api! {
    /// `cuIpcGetMemHandle`: for the allocation containing `dptr`, which must
    /// come from `cuMemAlloc`.
    fn cuIpcGetMemHandle(handle: *mut CUipcMemHandle, dptr: CUdeviceptr) {
        let st = state::lock()?;
        st.current()?;
        let (_, alloc) = st.mem.find_device(dptr as usize).ok_or(code::INVALID_VALUE)?;
        if alloc.kind != Kind::Device {
            return Err(code::INVALID_VALUE);
        }
        let h = MemHandle {
            pid: std::process::id(),
            fd: alloc.memfd.as_raw_fd(),
            len: alloc.len as u64,
            buffer_id: alloc.buffer_id,
            file_id: alloc.file_id,
        };
        put(handle, h.encode())
    }

    /// `cuIpcOpenMemHandle_v2`: the base of the owner's allocation, mapped
    /// here; `INVALID_CONTEXT` in the process that made the handle. Opening
    /// a handle again returns the same address (reference counted).
    fn cuIpcOpenMemHandle_v2[cuIpcOpenMemHandle](
        dptr: *mut CUdeviceptr,
        handle: CUipcMemHandle,
        flags: c_uint,
    ) {
        open(dptr, &handle, flags)
    }

    /// `cuIpcCloseMemHandle`: unmaps after the last close.
    fn cuIpcCloseMemHandle(dptr: CUdeviceptr) {
        let mut st = state::lock()?;
        st.current()?;
        let addr = dptr as usize;
        let import = st.imports.get_mut(&addr).ok_or(code::INVALID_VALUE)?;
        import.refs -= 1;
        if import.refs == 0 {
            st.imports.remove(&addr);
            st.mem.release(addr, &[Kind::Imported])?;
        }
        Ok(())
    }

    /// `cuIpcGetEventHandle`: the event must be interprocess with timing disabled.
    fn cuIpcGetEventHandle(handle: *mut CUipcMemHandle, event: Handle) {
        let st = state::lock()?;
        let ev = st.events.get(&(event as usize)).ok_or(code::INVALID_HANDLE)?;
        if ev.flags & EVENT_INTERPROCESS == 0 {
            return Err(code::INVALID_VALUE);
        }
        let mut b = [0 as c_char; 64];
        for (dst, src) in b.iter_mut().zip(MAGIC) {
            *dst = *src as c_char;
        }
        put(handle, CUipcMemHandle { reserved: b })
    }

    /// `cuIpcOpenEventHandle`: a new local event, already complete.
    fn cuIpcOpenEventHandle(event: *mut Handle, handle: CUipcMemHandle) {
        let mut st = state::lock()?;
        st.current()?;
        if handle.reserved[..8].iter().zip(MAGIC).any(|(a, b)| *a as u8 != *b) {
            return Err(code::INVALID_VALUE);
        }
        if event.is_null() {
            return Err(code::INVALID_VALUE);
        }
        let h = st.new_handle();
        let flags = EVENT_INTERPROCESS | crate::abi::EVENT_DISABLE_TIMING;
        st.events.insert(h, Event { flags, recorded: None });
        put(event, h as Handle)
    }
}
