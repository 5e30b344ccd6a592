//! The cdylib exports the driver API's names, and `cuGetProcAddress`
//! through it resolves to those same functions.

use std::ffi::{c_char, c_int, c_void};

use libloading::Library;

/// Entry points programs and OxMPI's runtime look up by name.
const REQUIRED: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxGetState",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuCtxGetDevice",
    "cuCtxPushCurrent_v2",
    "cuCtxPopCurrent_v2",
    "cuCtxSynchronize",
    "cuCtxCreate_v2",
    "cuCtxDestroy_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemGetInfo_v2",
    "cuMemAllocHost_v2",
    "cuMemFreeHost",
    "cuMemHostAlloc",
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuMemAllocManaged",
    "cuMemcpy",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoD_v2",
    "cuMemcpyAsync",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8_v2",
    "cuMemsetD32_v2",
    "cuMemsetD8Async",
    "cuMemsetD32Async",
    "cuPointerGetAttribute",
    "cuPointerGetAttributes",
    "cuMemGetAddressRange_v2",
    "cuStreamCreate",
    "cuStreamCreateWithPriority",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamQuery",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventQuery",
    "cuEventElapsedTime",
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuIpcGetMemHandle",
    "cuIpcOpenMemHandle_v2",
    "cuIpcOpenMemHandle",
    "cuIpcCloseMemHandle",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuGetProcAddress",
    "cuGetProcAddress_v2",
    // Unversioned aliases.
    "cuMemAlloc",
    "cuMemFree",
    "cuMemcpyHtoD",
    "cuMemcpyDtoH",
    "cuStreamDestroy",
    "cuEventDestroy",
    "cuCtxCreate",
    "cuCtxDestroy",
    "cuMemGetAddressRange",
];

type GetProc = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> u32;

fn library() -> Library {
    let path = oxmpi_cuda_double::find_artifact().expect("built cdylib");
    // SAFETY: the double's initialisers have no preconditions.
    unsafe { Library::new(path) }.unwrap()
}

/// The address of `name` in `lib`, if exported.
fn symbol(lib: &Library, name: &str) -> Option<usize> {
    // SAFETY: only the address is taken.
    unsafe { lib.get::<*mut c_void>(name.as_bytes()) }
        .ok()
        .map(|s| *s as usize)
}

#[test]
fn every_listed_entry_point_is_exported() {
    let lib = library();
    let table = oxmpi_cuda_double::proc::export_table();
    for name in REQUIRED {
        assert!(
            table.contains_key(name),
            "{name} missing from the export table"
        );
    }
    for name in table.keys() {
        assert!(
            symbol(&lib, name).is_some(),
            "{name} not exported by the cdylib"
        );
    }
    // The host-compiled kernels stay internal.
    assert!(symbol(&lib, "oxmpi_sum_f32").is_none());
}

#[test]
fn get_proc_address_resolves_to_the_exports() {
    let lib = library();
    // SAFETY: cuGetProcAddress's C signature (CUDA 11.3).
    let get: GetProc = unsafe { *lib.get::<GetProc>(b"cuGetProcAddress").unwrap() };
    let resolve = |name: &std::ffi::CStr| {
        let mut pfn: *mut c_void = std::ptr::null_mut();
        // SAFETY: NUL-terminated name, valid out-pointer.
        let code = unsafe { get(name.as_ptr(), &mut pfn, 12080, 0) };
        (code, pfn as usize)
    };
    assert_eq!(
        resolve(c"cuMemAlloc"),
        (0, symbol(&lib, "cuMemAlloc_v2").unwrap())
    );
    assert_eq!(resolve(c"cuInit"), (0, symbol(&lib, "cuInit").unwrap()));
    assert_eq!(resolve(c"cuNoSuchFunction"), (500, 0));
}
