//! Helpers shared by the integration tests: they call the double through
//! its rlib (the same code as the cdylib) and re-run the test binary for
//! anything that needs a fresh process (before `cuInit`, environment
//! variables, IPC peers, loading the cdylib as `libcuda.so.1`).
#![allow(dead_code)]

use std::ffi::{c_char, c_void, CStr};
use std::process::{Command, Output};

use oxmpi_cuda_double as cu;
use oxmpi_cuda_double::abi::{CUdeviceptr, CUresult, Handle};

/// Environment variable naming the role a re-run test binary plays.
pub const ROLE: &str = "CUDA_DOUBLE_TEST_ROLE";

/// The role this process was started for, if any.
pub fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

/// `CUDA_ERROR_*` name of a code.
pub fn name(code: CUresult) -> String {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointer; the string is static.
    unsafe {
        cu::cuGetErrorName(code, &mut text);
        if text.is_null() {
            return format!("code {code}");
        }
        CStr::from_ptr(text).to_string_lossy().into_owned()
    }
}

/// Panics with the error name unless `code` is `CUDA_SUCCESS`.
#[track_caller]
pub fn ok(code: CUresult) {
    assert_eq!(code, 0, "CUDA call failed: {}", name(code));
}

/// Asserts `code` is `want`, naming both.
#[track_caller]
pub fn fails(code: CUresult, want: CUresult) {
    assert_eq!(code, want, "got {}, want {}", name(code), name(want));
}

/// Initialises the driver and makes device 0's primary context current on
/// this thread (each test runs on its own thread).
pub fn setup() -> Handle {
    let mut ctx: Handle = std::ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        ok(cu::cuInit(0));
        ok(cu::cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(cu::cuCtxSetCurrent(ctx));
    }
    ctx
}

/// `cuMemAlloc`.
pub fn alloc(len: usize) -> CUdeviceptr {
    let mut d = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { cu::cuMemAlloc_v2(&mut d, len) });
    d
}

/// `cuMemFree`.
pub fn free(d: CUdeviceptr) {
    // SAFETY: plain value argument.
    ok(unsafe { cu::cuMemFree_v2(d) });
}

/// Copies `bytes` to device address `d`.
pub fn htod(d: CUdeviceptr, bytes: &[u8]) {
    // SAFETY: `bytes` is valid for its length.
    ok(unsafe { cu::cuMemcpyHtoD_v2(d, bytes.as_ptr().cast(), bytes.len()) });
}

/// Copies `len` bytes from device address `d`.
pub fn dtoh(d: CUdeviceptr, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is valid for `len` bytes.
    ok(unsafe { cu::cuMemcpyDtoH_v2(out.as_mut_ptr().cast::<c_void>(), d, len) });
    out
}

/// PTX text declaring `names` as entries (bodies are irrelevant to the double).
pub fn ptx(names: &[&str]) -> String {
    let mut text = String::from(
        "//\n// Fixture PTX for the CUDA double\n.version 8.5\n.target sm_90\n.address_size 64\n\n",
    );
    for name in names {
        text.push_str(&format!(
            ".visible .entry {name}(\n\t.param .u64 {name}_param_0,\n\t.param .u64 {name}_param_1,\n\t.param .u64 {name}_param_2\n)\n{{\n\tret;\n}}\n\n"
        ));
    }
    text
}

/// Loads `names` as a module and returns the function `wanted`.
pub fn function(names: &[&str], wanted: &str) -> Result<Handle, CUresult> {
    let text = std::ffi::CString::new(ptx(names)).unwrap();
    let mut module: Handle = std::ptr::null_mut();
    let mut f: Handle = std::ptr::null_mut();
    let name = std::ffi::CString::new(wanted).unwrap();
    // SAFETY: NUL-terminated image and name, valid out-pointers.
    unsafe {
        ok(cu::cuModuleLoadData(&mut module, text.as_ptr().cast()));
        match cu::cuModuleGetFunction(&mut f, module, name.as_ptr()) {
            0 => Ok(f),
            err => Err(err),
        }
    }
}

/// Launches `f` on the default stream with device pointers `ptrs` and `n`.
pub fn launch(f: Handle, ptrs: &[CUdeviceptr], n: u64) -> CUresult {
    let mut values: Vec<u64> = ptrs.to_vec();
    values.push(n);
    let mut params: Vec<*mut c_void> = values
        .iter_mut()
        .map(|v| (v as *mut u64).cast::<c_void>())
        .collect();
    // SAFETY: one parameter pointer per kernel parameter, alive for the call.
    unsafe {
        cu::cuLaunchKernel(
            f,
            4,
            1,
            1,
            256,
            1,
            1,
            0,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
}

/// Re-runs this test binary for test `test` alone, as `role`, with `envs`.
pub fn rerun(test: &str, role: &str, envs: &[(&str, &str)]) -> Output {
    let exe = std::env::current_exe().unwrap();
    Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

/// Asserts a re-run succeeded, showing its output otherwise.
#[track_caller]
pub fn assert_passed(out: &Output) {
    assert!(
        out.status.success(),
        "child failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
