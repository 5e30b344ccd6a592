//! Initialisation, version and device queries. Every device is the same
//! simulated Hopper-class GPU (compute capability 9.0, unified addressing,
//! no memory pools, no virtual memory management).

use std::ffi::{c_char, c_int, c_uint};

use crate::abi::{code, CUdevice, CUresult};
use crate::guard::{driver_api, put};
use crate::memory::TOTAL_MEM;
use crate::state::{self, Primary, MAX_DEVICES};

/// The CUDA version the double reports (`cuDriverGetVersion`): 12.8.
pub const DRIVER_VERSION: c_int = 12080;
/// The device name every device reports.
pub const DEVICE_NAME: &str = "OxMPI CUDA double";

/// `CU_DEVICE_ATTRIBUTE_MAX` in CUDA 12.8's `cuda.h`.
const DEVICE_ATTRIBUTE_MAX: c_int = 144;

/// Device count from `CUDA_DOUBLE_DEVICES` (default 1; unreadable values
/// count as 1; capped at [`MAX_DEVICES`]).
fn device_count_from_env() -> i32 {
    std::env::var("CUDA_DOUBLE_DEVICES")
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .filter(|n| *n >= 0)
        .unwrap_or(1)
        .min(MAX_DEVICES)
}

/// `CUdevice_attribute` -> value; attributes not listed are 0.
fn attribute(attr: c_int, device: CUdevice) -> c_int {
    match attr {
        1 => 1024,           // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,       // MAX_BLOCK_DIM_X / Y
        4 => 64,             // MAX_BLOCK_DIM_Z
        5 => i32::MAX,       // MAX_GRID_DIM_X
        6 | 7 => 65535,      // MAX_GRID_DIM_Y / Z
        8 => 48 << 10,       // MAX_SHARED_MEMORY_PER_BLOCK
        9 => 64 << 10,       // TOTAL_CONSTANT_MEMORY
        10 => 32,            // WARP_SIZE
        11 => i32::MAX,      // MAX_PITCH
        12 => 65536,         // MAX_REGISTERS_PER_BLOCK
        13 => 1_980_000,     // CLOCK_RATE (kHz)
        14 => 512,           // TEXTURE_ALIGNMENT
        15 => 1,             // GPU_OVERLAP
        16 => 132,           // MULTIPROCESSOR_COUNT
        19 => 1,             // CAN_MAP_HOST_MEMORY
        31 => 1,             // CONCURRENT_KERNELS
        33 => 0x10 + device, // PCI_BUS_ID
        36 => 2_619_000,     // MEMORY_CLOCK_RATE (kHz)
        37 => 5120,          // GLOBAL_MEMORY_BUS_WIDTH
        38 => 50 << 20,      // L2_CACHE_SIZE
        39 => 2048,          // MAX_THREADS_PER_MULTIPROCESSOR
        40 => 2,             // ASYNC_ENGINE_COUNT
        41 => 1,             // UNIFIED_ADDRESSING
        75 => 9,             // COMPUTE_CAPABILITY_MAJOR
        76 => 0,             // COMPUTE_CAPABILITY_MINOR
        78 => 1,             // STREAM_PRIORITIES_SUPPORTED
        81 => 228 << 10,     // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
        82 => 65536,         // MAX_REGISTERS_PER_MULTIPROCESSOR
        83 => 1,             // MANAGED_MEMORY
        89 => 1,             // CONCURRENT_MANAGED_ACCESS
        91 => 1,             // CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
        97 => 227 << 10,     // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        99 => 1,             // HOST_REGISTER_SUPPORTED
        106 => 32,           // MAX_BLOCKS_PER_MULTIPROCESSOR
        _ => 0,              // incl. MEMORY_POOLS_SUPPORTED (115), VIRTUAL_MEMORY_MANAGEMENT (102)
    }
}

/// Copies `text` into a C buffer of `len` bytes, truncating, NUL-terminated.
///
/// # Safety
/// `buf` must be null or valid for `len` bytes.
unsafe fn put_str(buf: *mut c_char, len: c_int, text: &str) -> Result<(), CUresult> {
    let len = usize::try_from(len).map_err(|_| code::INVALID_VALUE)?;
    if buf.is_null() || len == 0 {
        return Err(code::INVALID_VALUE);
    }
    let n = text.len().min(len - 1);
    std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), buf, n);
    *buf.add(n) = 0;
    Ok(())
}

driver_api! {
    /// `cuInit`: reads `CUDA_DOUBLE_DEVICES`; `CUDA_ERROR_NO_DEVICE` when it
    /// is 0, as on a machine without a GPU.
    fn cuInit(flags: c_uint) {
        if flags != 0 {
            return Err(code::INVALID_VALUE);
        }
        let mut st = state::lock_any();
        if st.devices.is_some() {
            return Ok(());
        }
        let count = device_count_from_env();
        if count == 0 {
            return Err(code::NO_DEVICE);
        }
        for device in 0..count {
            let handle = st.new_handle();
            st.contexts.insert(handle, state::Context { device });
            st.primary.push(Primary { handle, refs: 0, flags: 0 });
        }
        st.devices = Some(count);
        Ok(())
    }

    /// `cuDriverGetVersion`: 12080 (CUDA 12.8); works before `cuInit`.
    fn cuDriverGetVersion(version: *mut c_int) {
        put(version, DRIVER_VERSION)
    }

    /// `cuDeviceGetCount`.
    fn cuDeviceGetCount(count: *mut c_int) {
        let n = state::lock()?.devices.unwrap_or(0);
        put(count, n)
    }

    /// `cuDeviceGet`: the device handle is the ordinal.
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) {
        state::lock()?.check_device(ordinal)?;
        put(device, ordinal)
    }

    /// `cuDeviceGetName`: [`DEVICE_NAME`].
    fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice) {
        state::lock()?.check_device(device)?;
        put_str(name, len, DEVICE_NAME)
    }

    /// `cuDeviceGetAttribute`: Hopper-like values; attributes of CUDA 12.8
    /// that the double does not model are 0, values outside that enum are
    /// `INVALID_VALUE` (as NVIDIA's driver answers).
    fn cuDeviceGetAttribute(value: *mut c_int, attrib: c_int, device: CUdevice) {
        state::lock()?.check_device(device)?;
        if !(1..DEVICE_ATTRIBUTE_MAX).contains(&attrib) {
            return Err(code::INVALID_VALUE);
        }
        put(value, attribute(attrib, device))
    }

    /// `cuDeviceTotalMem_v2`: 16 GiB.
    fn cuDeviceTotalMem_v2[cuDeviceTotalMem](bytes: *mut usize, device: CUdevice) {
        state::lock()?.check_device(device)?;
        put(bytes, TOTAL_MEM)
    }

    /// `cuDeviceGetUuid`: "oxmpi-double" and the ordinal.
    fn cuDeviceGetUuid[cuDeviceGetUuid_v2](uuid: *mut [u8; 16], device: CUdevice) {
        state::lock()?.check_device(device)?;
        let mut bytes = *b"oxmpi-double\0\0\0\0";
        bytes[12..].copy_from_slice(&device.to_be_bytes());
        put(uuid, bytes)
    }

    /// `cuDeviceGetPCIBusId`: `0000:<bus>:00.0`, bus as in attribute 33.
    fn cuDeviceGetPCIBusId(bus_id: *mut c_char, len: c_int, device: CUdevice) {
        state::lock()?.check_device(device)?;
        put_str(bus_id, len, &format!("0000:{:02x}:00.0", attribute(33, device)))
    }

    /// `cuDeviceComputeCapability` (deprecated): 9.0.
    fn cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, device: CUdevice) {
        state::lock()?.check_device(device)?;
        put(major, 9)?;
        put(minor, 0)
    }

    /// `cuDeviceCanAccessPeer`: any two distinct devices can (one host
    /// address space backs them all).
    fn cuDeviceCanAccessPeer(can: *mut c_int, device: CUdevice, peer: CUdevice) {
        let st = state::lock()?;
        st.check_device(device)?;
        st.check_device(peer)?;
        put(can, c_int::from(device != peer))
    }
}
