//! Initialisation, devices, contexts, streams, events and error strings.
//! Tests that need a fresh process (before `cuInit`, other device counts)
//! re-run this binary.

mod common;

use std::ffi::{c_char, c_int, c_void, CStr};

use common::{fails, ok, setup};
use oxmpi_cuda_double as cu;
use oxmpi_cuda_double::abi::Handle;

const INVALID_VALUE: u32 = 1;
const NOT_INITIALIZED: u32 = 3;
const NO_DEVICE: u32 = 100;
const INVALID_DEVICE: u32 = 101;
const INVALID_CONTEXT: u32 = 201;
const INVALID_HANDLE: u32 = 400;
const NOT_FOUND: u32 = 500;

fn text(f: unsafe extern "C" fn(u32, *mut *const c_char) -> u32, code: u32) -> Result<String, u32> {
    let mut s: *const c_char = std::ptr::null();
    match unsafe { f(code, &mut s) } {
        0 => Ok(unsafe { CStr::from_ptr(s) }.to_str().unwrap().to_string()),
        err => Err(err),
    }
}

#[test]
fn fresh_processes() {
    for (scenario, devices) in [
        ("before_init", "1"),
        ("three_devices", "3"),
        ("no_devices", "0"),
    ] {
        let out = common::rerun(
            "fresh_process",
            scenario,
            &[("CUDA_DOUBLE_DEVICES", devices)],
        );
        common::assert_passed(&out);
    }
}

#[test]
fn fresh_process() {
    match common::role().as_deref() {
        None => {}
        Some("before_init") => before_init(),
        Some("three_devices") => three_devices(),
        Some("no_devices") => unsafe {
            fails(cu::cuInit(0), NO_DEVICE);
            fails(cu::cuDeviceGetCount(&mut 0), NOT_INITIALIZED);
        },
        Some(other) => panic!("unknown role {other}"),
    }
}

fn before_init() {
    unsafe {
        fails(cu::cuDeviceGetCount(&mut 0), NOT_INITIALIZED);
        fails(cu::cuMemAlloc_v2(&mut 0, 8), NOT_INITIALIZED);
        fails(
            cu::cuCtxGetCurrent(&mut std::ptr::null_mut()),
            NOT_INITIALIZED,
        );
        fails(
            cu::cuPointerGetAttribute(std::ptr::null_mut(), 2, 0),
            NOT_INITIALIZED,
        );
        let mut version = 0;
        ok(cu::cuDriverGetVersion(&mut version));
        assert_eq!(version, 12080);
        let mut pfn: *mut c_void = std::ptr::null_mut();
        ok(cu::cuGetProcAddress(c"cuInit".as_ptr(), &mut pfn, 12080, 0));
        assert_eq!(pfn as usize, cu::cuInit as *const () as usize);
        fails(cu::cuInit(1), INVALID_VALUE);
        ok(cu::cuInit(0));
        ok(cu::cuInit(0));
        let mut count = 0;
        ok(cu::cuDeviceGetCount(&mut count));
        assert_eq!(count, 1);
    }
    assert_eq!(
        text(cu::cuGetErrorName, 1).unwrap(),
        "CUDA_ERROR_INVALID_VALUE"
    );
    assert_eq!(
        text(cu::cuGetErrorName, 700).unwrap(),
        "CUDA_ERROR_ILLEGAL_ADDRESS"
    );
    assert_eq!(text(cu::cuGetErrorString, 2).unwrap(), "out of memory");
    assert_eq!(text(cu::cuGetErrorName, 12345), Err(INVALID_VALUE));
}

fn attribute(attr: c_int, device: c_int) -> c_int {
    let mut v = -1;
    ok(unsafe { cu::cuDeviceGetAttribute(&mut v, attr, device) });
    v
}

fn three_devices() {
    unsafe {
        ok(cu::cuInit(0));
        let mut count = 0;
        ok(cu::cuDeviceGetCount(&mut count));
        assert_eq!(count, 3);
        let mut dev = -1;
        ok(cu::cuDeviceGet(&mut dev, 2));
        assert_eq!(dev, 2);
        fails(cu::cuDeviceGet(&mut dev, 3), INVALID_DEVICE);
        fails(cu::cuDeviceGetAttribute(&mut 0, 10, 3), INVALID_DEVICE);
        fails(
            cu::cuDevicePrimaryCtxRetain(&mut std::ptr::null_mut(), -1),
            INVALID_DEVICE,
        );
        let mut name = [0 as c_char; 64];
        ok(cu::cuDeviceGetName(name.as_mut_ptr(), 64, 1));
        assert_eq!(
            CStr::from_ptr(name.as_ptr()).to_str().unwrap(),
            cu::DEVICE_NAME
        );
    }
    // Compute capability, warp, unified addressing, SMs, pools, unknown.
    let attrs = [
        (75, 9),
        (76, 0),
        (10, 32),
        (41, 1),
        (1, 1024),
        (16, 132),
        (115, 0),
        (143, 0),
    ];
    for (attr, want) in attrs {
        assert_eq!(attribute(attr, 2), want, "attribute {attr}");
    }
    // Outside CUDA 12.8's enum.
    fails(
        unsafe { cu::cuDeviceGetAttribute(&mut 0, 9999, 0) },
        INVALID_VALUE,
    );

    // Device 2's primary context: allocations there report ordinal 2.
    let mut ctx: Handle = std::ptr::null_mut();
    let (mut flags, mut active) = (0u32, 0);
    unsafe {
        fails(cu::cuDevicePrimaryCtxRelease_v2(2), INVALID_CONTEXT);
        ok(cu::cuDevicePrimaryCtxRetain(&mut ctx, 2));
        ok(cu::cuDevicePrimaryCtxGetState(2, &mut flags, &mut active));
        assert_eq!(active, 1);
        ok(cu::cuCtxPushCurrent_v2(ctx));
        let mut d = 0;
        ok(cu::cuMemAlloc_v2(&mut d, 64));
        let mut ordinal = -1;
        ok(cu::cuPointerGetAttribute(
            (&mut ordinal as *mut c_int).cast(),
            9,
            d,
        ));
        assert_eq!(ordinal, 2);
        let mut dev = -1;
        ok(cu::cuCtxGetDevice(&mut dev));
        assert_eq!(dev, 2);

        // A created context stacks on top, and goes away when destroyed.
        let mut own: Handle = std::ptr::null_mut();
        ok(cu::cuCtxCreate_v2(&mut own, 0, 1));
        ok(cu::cuCtxGetDevice(&mut dev));
        assert_eq!(dev, 1);
        ok(cu::cuCtxDestroy_v2(own));
        fails(cu::cuCtxDestroy_v2(own), INVALID_CONTEXT);
        fails(cu::cuCtxDestroy_v2(ctx), INVALID_CONTEXT); // primary
        fails(cu::cuCtxSetCurrent(own), INVALID_CONTEXT);
        let mut popped: Handle = std::ptr::null_mut();
        ok(cu::cuCtxPopCurrent_v2(&mut popped));
        assert_eq!(popped, ctx);
        ok(cu::cuCtxSetCurrent(ctx));
        ok(cu::cuMemFree_v2(d));
        ok(cu::cuDevicePrimaryCtxRelease_v2(2));
        ok(cu::cuDevicePrimaryCtxGetState(2, &mut flags, &mut active));
        assert_eq!(active, 0);
    }
}

#[test]
fn streams_and_events() {
    setup();
    let (mut stream, mut start, mut end, mut untimed): (Handle, Handle, Handle, Handle) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    unsafe {
        ok(cu::cuStreamCreateWithPriority(&mut stream, 1, -1));
        ok(cu::cuEventCreate(&mut start, 0));
        ok(cu::cuEventCreate(&mut end, 0));
        ok(cu::cuEventCreate(&mut untimed, 2)); // CU_EVENT_DISABLE_TIMING
        let mut ms = -1f32;
        fails(cu::cuEventElapsedTime(&mut ms, start, end), INVALID_HANDLE); // not recorded
        ok(cu::cuEventRecord(start, stream));
        ok(cu::cuEventRecord(end, std::ptr::null_mut()));
        ok(cu::cuEventRecord(untimed, stream));
        ok(cu::cuEventSynchronize(end));
        ok(cu::cuEventQuery(end));
        ok(cu::cuEventElapsedTime(&mut ms, start, end));
        assert!(ms >= 0.0);
        fails(
            cu::cuEventElapsedTime(&mut ms, start, untimed),
            INVALID_HANDLE,
        );
        ok(cu::cuStreamWaitEvent(stream, end, 0));
        ok(cu::cuStreamQuery(2 as Handle)); // CU_STREAM_PER_THREAD
        fails(cu::cuStreamQuery(0x1234 as Handle), INVALID_HANDLE);
        fails(
            cu::cuStreamWaitEvent(stream, 0x1234 as Handle, 0),
            INVALID_HANDLE,
        );
        ok(cu::cuCtxSynchronize());
        for e in [start, end, untimed] {
            ok(cu::cuEventDestroy_v2(e));
        }
        fails(cu::cuEventDestroy_v2(start), INVALID_HANDLE);
        ok(cu::cuStreamDestroy_v2(stream));
        fails(cu::cuStreamDestroy_v2(stream), INVALID_HANDLE);
    }
}

#[test]
fn get_proc_address_prefers_current_versions() {
    let lookup = |name: &CStr, version: c_int| {
        let mut pfn: *mut c_void = std::ptr::null_mut();
        let mut status = -1;
        let code =
            unsafe { cu::cuGetProcAddress_v2(name.as_ptr(), &mut pfn, version, 0, &mut status) };
        (code, pfn as usize, status)
    };
    let addr = |f: *const ()| f as usize;
    assert_eq!(
        lookup(c"cuMemAlloc", 12080),
        (0, addr(cu::cuMemAlloc_v2 as *const ()), 0)
    );
    assert_eq!(
        lookup(c"cuIpcOpenMemHandle", 12080).1,
        addr(cu::cuIpcOpenMemHandle_v2 as *const ())
    );
    assert_eq!(
        lookup(c"cuLaunchKernel", 12080).1,
        addr(cu::cuLaunchKernel as *const ())
    );
    assert_eq!(
        lookup(c"cuGetProcAddress", 11080).1,
        addr(cu::cuGetProcAddress as *const ())
    );
    assert_eq!(lookup(c"cuGraphLaunch", 12080), (NOT_FOUND, 0, 1));
}
