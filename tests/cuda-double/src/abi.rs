//! The driver API's C types and the numeric values used here, as in CUDA's
//! `cuda.h` (64-bit Linux).

use std::ffi::c_char;

/// `CUresult`: 0 on success, else a `CUDA_ERROR_*` code.
pub type CUresult = u32;
/// `CUdevice`: a device ordinal.
pub type CUdevice = i32;
/// `CUdeviceptr`: a device address (64 bits on 64-bit hosts).
pub type CUdeviceptr = u64;
/// Opaque handles (`CUcontext`, `CUstream`, `CUevent`, `CUmodule`,
/// `CUfunction`): pointer-sized values the double never dereferences.
pub type Handle = *mut std::ffi::c_void;

/// `CUipcMemHandle`: 64 opaque bytes, passed by value to `cuIpcOpenMemHandle`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CUipcMemHandle {
    /// The bytes; see `ipc.rs` for what the double stores in them.
    pub reserved: [c_char; 64],
}

/// The `CUDA_ERROR_*` codes the double returns.
pub mod code {
    use super::CUresult;
    /// `CUDA_SUCCESS`.
    pub const SUCCESS: CUresult = 0;
    /// `CUDA_ERROR_INVALID_VALUE`.
    pub const INVALID_VALUE: CUresult = 1;
    /// `CUDA_ERROR_OUT_OF_MEMORY`.
    pub const OUT_OF_MEMORY: CUresult = 2;
    /// `CUDA_ERROR_NOT_INITIALIZED`.
    pub const NOT_INITIALIZED: CUresult = 3;
    /// `CUDA_ERROR_NO_DEVICE`.
    pub const NO_DEVICE: CUresult = 100;
    /// `CUDA_ERROR_INVALID_DEVICE`.
    pub const INVALID_DEVICE: CUresult = 101;
    /// `CUDA_ERROR_INVALID_IMAGE`.
    pub const INVALID_IMAGE: CUresult = 200;
    /// `CUDA_ERROR_INVALID_CONTEXT`.
    pub const INVALID_CONTEXT: CUresult = 201;
    /// `CUDA_ERROR_MAP_FAILED`.
    pub const MAP_FAILED: CUresult = 205;
    /// `CUDA_ERROR_FILE_NOT_FOUND`.
    pub const FILE_NOT_FOUND: CUresult = 301;
    /// `CUDA_ERROR_OPERATING_SYSTEM`.
    pub const OPERATING_SYSTEM: CUresult = 304;
    /// `CUDA_ERROR_INVALID_HANDLE`.
    pub const INVALID_HANDLE: CUresult = 400;
    /// `CUDA_ERROR_NOT_FOUND`.
    pub const NOT_FOUND: CUresult = 500;
    /// `CUDA_ERROR_NOT_READY`.
    pub const NOT_READY: CUresult = 600;
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub const ILLEGAL_ADDRESS: CUresult = 700;
    /// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
    pub const HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
    /// `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`.
    pub const HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
    /// `CUDA_ERROR_LAUNCH_FAILED`.
    pub const LAUNCH_FAILED: CUresult = 719;
    /// `CUDA_ERROR_NOT_SUPPORTED`.
    pub const NOT_SUPPORTED: CUresult = 801;
    /// `CUDA_ERROR_UNKNOWN`.
    pub const UNKNOWN: CUresult = 999;
}

/// `(code, cuGetErrorName, cuGetErrorString)` for the codes the double
/// knows; NUL-terminated because they are handed out as C strings.
pub const ERRORS: &[(CUresult, &str, &str)] = &[
    (0, "CUDA_SUCCESS\0", "no error\0"),
    (1, "CUDA_ERROR_INVALID_VALUE\0", "invalid argument\0"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY\0", "out of memory\0"),
    (3, "CUDA_ERROR_NOT_INITIALIZED\0", "initialization error\0"),
    (4, "CUDA_ERROR_DEINITIALIZED\0", "driver shutting down\0"),
    (
        100,
        "CUDA_ERROR_NO_DEVICE\0",
        "no CUDA-capable device is detected\0",
    ),
    (
        101,
        "CUDA_ERROR_INVALID_DEVICE\0",
        "invalid device ordinal\0",
    ),
    (
        200,
        "CUDA_ERROR_INVALID_IMAGE\0",
        "device kernel image is invalid\0",
    ),
    (
        201,
        "CUDA_ERROR_INVALID_CONTEXT\0",
        "invalid device context\0",
    ),
    (
        205,
        "CUDA_ERROR_MAP_FAILED\0",
        "mapping of buffer object failed\0",
    ),
    (
        218,
        "CUDA_ERROR_INVALID_PTX\0",
        "a PTX JIT compilation failed\0",
    ),
    (301, "CUDA_ERROR_FILE_NOT_FOUND\0", "file not found\0"),
    (
        304,
        "CUDA_ERROR_OPERATING_SYSTEM\0",
        "OS call failed or operation not supported on this OS\0",
    ),
    (
        400,
        "CUDA_ERROR_INVALID_HANDLE\0",
        "invalid resource handle\0",
    ),
    (500, "CUDA_ERROR_NOT_FOUND\0", "named symbol not found\0"),
    (600, "CUDA_ERROR_NOT_READY\0", "device not ready\0"),
    (
        700,
        "CUDA_ERROR_ILLEGAL_ADDRESS\0",
        "an illegal memory access was encountered\0",
    ),
    (
        712,
        "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0",
        "part or all of the requested memory range is already mapped\0",
    ),
    (
        713,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0",
        "pointer does not correspond to a registered memory region\0",
    ),
    (
        719,
        "CUDA_ERROR_LAUNCH_FAILED\0",
        "unspecified launch failure\0",
    ),
    (
        801,
        "CUDA_ERROR_NOT_SUPPORTED\0",
        "operation not supported\0",
    ),
    (999, "CUDA_ERROR_UNKNOWN\0", "unknown error\0"),
];

/// `CUpointer_attribute` values.
pub mod pointer_attr {
    /// `CU_POINTER_ATTRIBUTE_CONTEXT` (`CUcontext`).
    pub const CONTEXT: u32 = 1;
    /// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE` (`unsigned int`).
    pub const MEMORY_TYPE: u32 = 2;
    /// `CU_POINTER_ATTRIBUTE_DEVICE_POINTER` (`CUdeviceptr`).
    pub const DEVICE_POINTER: u32 = 3;
    /// `CU_POINTER_ATTRIBUTE_HOST_POINTER` (`void *`).
    pub const HOST_POINTER: u32 = 4;
    /// `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` (`int`).
    pub const SYNC_MEMOPS: u32 = 6;
    /// `CU_POINTER_ATTRIBUTE_BUFFER_ID` (`unsigned long long`).
    pub const BUFFER_ID: u32 = 7;
    /// `CU_POINTER_ATTRIBUTE_IS_MANAGED` (`int`).
    pub const IS_MANAGED: u32 = 8;
    /// `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL` (`int`).
    pub const DEVICE_ORDINAL: u32 = 9;
    /// `CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE` (`int`).
    pub const IS_LEGACY_CUDA_IPC_CAPABLE: u32 = 10;
    /// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR` (`CUdeviceptr`).
    pub const RANGE_START_ADDR: u32 = 11;
    /// `CU_POINTER_ATTRIBUTE_RANGE_SIZE` (`size_t`).
    pub const RANGE_SIZE: u32 = 12;
    /// `CU_POINTER_ATTRIBUTE_MAPPED` (`int`).
    pub const MAPPED: u32 = 13;
}

/// `CUmemorytype` values.
pub mod memory_type {
    /// `CU_MEMORYTYPE_HOST`.
    pub const HOST: u32 = 1;
    /// `CU_MEMORYTYPE_DEVICE` (also what the driver reports for managed memory).
    pub const DEVICE: u32 = 2;
}

/// `CU_STREAM_LEGACY`: the legacy default stream, a valid stream handle.
pub const STREAM_LEGACY: usize = 0x1;
/// `CU_STREAM_PER_THREAD`: the per-thread default stream.
pub const STREAM_PER_THREAD: usize = 0x2;
/// `CU_EVENT_DISABLE_TIMING`.
pub const EVENT_DISABLE_TIMING: u32 = 0x2;
