//! Device memory: invisible to the CPU, reachable through copies and
//! memsets, with the real driver's bounds and error behaviour.

mod common;

use std::ffi::c_void;

use common::{alloc, dtoh, fails, free, htod, ok, setup};
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};
use oxmpi_cuda_double as cu;

const INVALID_VALUE: u32 = 1;
const INVALID_CONTEXT: u32 = 201;

/// Reads one byte at `addr` in a forked child; how the child ended.
fn read_in_child(addr: u64) -> WaitStatus {
    // SAFETY: the child only disables core dumps, reads and exits (no
    // locks, no allocation).
    match unsafe { fork() }.unwrap() {
        ForkResult::Child => unsafe {
            let no_core = nix::libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            nix::libc::setrlimit(nix::libc::RLIMIT_CORE, &no_core);
            std::ptr::read_volatile(addr as *const u8);
            nix::libc::_exit(0)
        },
        ForkResult::Parent { child } => waitpid(child, None).unwrap(),
    }
}

#[test]
fn cpu_dereference_of_device_memory_segfaults() {
    setup();
    let d = alloc(4096);
    htod(d, &[7u8; 4096]);
    assert!(matches!(
        read_in_child(d + 100),
        WaitStatus::Signaled(_, Signal::SIGSEGV, _)
    ));
    // Managed memory is CPU-accessible at its device address.
    let mut m = 0;
    ok(unsafe { cu::cuMemAllocManaged(&mut m, 64, 1) });
    assert!(matches!(read_in_child(m), WaitStatus::Exited(_, 0)));
    free(d);
    free(m);
}

#[test]
fn copies_and_memsets_round_trip() {
    setup();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    let a = alloc(1000);
    let b = alloc(1000);
    htod(a, &data);
    ok(unsafe { cu::cuMemcpyDtoD_v2(b, a, 1000) });
    assert_eq!(dtoh(b, 1000), data);
    // Interior pointers and the unified cuMemcpy, both directions.
    let mut part = [0u8; 10];
    ok(unsafe { cu::cuMemcpy(part.as_mut_ptr() as u64, b + 500, 10) });
    assert_eq!(part, data[500..510]);
    ok(unsafe { cu::cuMemcpy(a + 1, [9u8, 9].as_ptr() as u64, 2) });
    assert_eq!(dtoh(a, 4), [data[0], 9, 9, data[3]]);

    ok(unsafe { cu::cuMemsetD8_v2(b, 0xab, 1000) });
    assert!(dtoh(b, 1000).iter().all(|&x| x == 0xab));
    ok(unsafe { cu::cuMemsetD32_v2(b + 8, 0x0102_0304, 3) });
    let words = dtoh(b + 8, 12);
    assert_eq!(&words[..4], 0x0102_0304u32.to_ne_bytes());
    ok(unsafe { cu::cuMemsetD16_v2(b, 0xbeef, 2) });
    assert_eq!(dtoh(b, 4), [0xef, 0xbe, 0xef, 0xbe]);

    // The async forms on a created stream.
    let mut stream = std::ptr::null_mut();
    ok(unsafe { cu::cuStreamCreate(&mut stream, 1) });
    let mut back = vec![0u8; 1000];
    unsafe {
        ok(cu::cuMemsetD8Async(a, 1, 1000, stream));
        ok(cu::cuMemcpyHtoDAsync_v2(
            a,
            data.as_ptr().cast(),
            500,
            stream,
        ));
        ok(cu::cuMemcpyDtoDAsync_v2(b, a, 1000, stream));
        ok(cu::cuMemcpyDtoHAsync_v2(
            back.as_mut_ptr().cast(),
            b,
            1000,
            stream,
        ));
        ok(cu::cuStreamSynchronize(stream));
        ok(cu::cuStreamQuery(stream));
        ok(cu::cuStreamDestroy_v2(stream));
    }
    assert_eq!(back[..500], data[..500]);
    assert!(back[500..].iter().all(|&x| x == 1));
    free(a);
    free(b);
}

#[test]
fn bad_copies_allocs_and_frees_are_invalid_value() {
    setup();
    let d = alloc(100);
    let mut buf = [0u8; 200];
    unsafe {
        // Past the end of the allocation (requested size, not the page).
        fails(
            cu::cuMemcpyDtoH_v2(buf.as_mut_ptr().cast(), d, 101),
            INVALID_VALUE,
        );
        fails(
            cu::cuMemcpyHtoD_v2(d + 50, buf.as_ptr().cast(), 51),
            INVALID_VALUE,
        );
        fails(cu::cuMemsetD8_v2(d + 99, 0, 2), INVALID_VALUE);
        fails(cu::cuMemsetD32_v2(d + 2, 0, 1), INVALID_VALUE); // misaligned
                                                               // Host memory where device memory is required.
        fails(
            cu::cuMemcpyDtoD_v2(d, buf.as_ptr() as u64, 4),
            INVALID_VALUE,
        );
        fails(cu::cuMemAlloc_v2(&mut 0, 0), INVALID_VALUE);
        fails(cu::cuMemFree_v2(d + 4), INVALID_VALUE);
        fails(cu::cuMemFree_v2(buf.as_ptr() as u64), INVALID_VALUE);
        ok(cu::cuMemFree_v2(0)); // as cudaFree(NULL)
    }
    free(d);
}

#[test]
fn freed_addresses_are_invalid_value() {
    // Alone in a process: a test on another thread could otherwise be given
    // the freed range (addresses are reused, as by the real driver).
    common::assert_passed(&common::rerun(
        "freed_addresses_are_invalid_value_alone",
        "alone",
        &[],
    ));
}

#[test]
fn freed_addresses_are_invalid_value_alone() {
    if common::role().is_none() {
        return;
    }
    setup();
    let d = alloc(100);
    let mut buf = [0u8; 8];
    free(d);
    unsafe {
        fails(cu::cuMemFree_v2(d), INVALID_VALUE); // double free
                                                   // A freed device address is not host memory either.
        fails(cu::cuMemcpy(buf.as_mut_ptr() as u64, d, 4), INVALID_VALUE);
        fails(
            cu::cuMemcpyDtoH_v2(buf.as_mut_ptr().cast(), d, 4),
            INVALID_VALUE,
        );
    }
}

#[test]
fn no_current_context_is_invalid_context() {
    setup();
    // A fresh thread has no current context.
    std::thread::spawn(|| unsafe {
        fails(cu::cuMemAlloc_v2(&mut 0, 16), INVALID_CONTEXT);
        let mut ctx = std::ptr::null_mut();
        ok(cu::cuCtxGetCurrent(&mut ctx));
        assert!(ctx.is_null());
        fails(cu::cuCtxGetDevice(&mut 0), INVALID_CONTEXT);
        fails(cu::cuCtxPopCurrent_v2(&mut ctx), INVALID_CONTEXT);
    })
    .join()
    .unwrap();
}

#[test]
fn page_locked_host_memory() {
    setup();
    let mut p: *mut c_void = std::ptr::null_mut();
    ok(unsafe { cu::cuMemAllocHost_v2(&mut p, 256) });
    // Ordinary CPU memory.
    unsafe { std::ptr::write_bytes(p.cast::<u8>(), 5, 256) };
    let d = alloc(256);
    ok(unsafe { cu::cuMemcpyHtoD_v2(d, p, 256) });
    assert_eq!(dtoh(d, 256), vec![5u8; 256]);
    let mut dp = 0;
    ok(unsafe { cu::cuMemHostGetDevicePointer_v2(&mut dp, p, 0) });
    assert_eq!(dp, p as u64);
    unsafe {
        fails(cu::cuMemHostUnregister(p), INVALID_VALUE); // allocated, not registered
        ok(cu::cuMemFreeHost(p));
        fails(cu::cuMemFreeHost(p), INVALID_VALUE);
    }

    let mut user = vec![0u8; 8192];
    let up = user.as_mut_ptr().cast::<c_void>();
    unsafe {
        ok(cu::cuMemHostRegister_v2(up, user.len(), 0));
        fails(cu::cuMemHostRegister_v2(up.add(10), 10, 0), 712); // overlaps
        ok(cu::cuMemsetD8_v2(up as u64 + 1, 3, 2)); // device-addressable
        ok(cu::cuMemHostUnregister(up));
        fails(cu::cuMemHostUnregister(up), 713);
    }
    assert_eq!(user[..4], [0, 3, 3, 0]);
    free(d);
}

#[test]
fn mem_get_info_counts_allocations() {
    setup();
    let (mut free0, mut total) = (0, 0);
    ok(unsafe { cu::cuMemGetInfo_v2(&mut free0, &mut total) });
    assert_eq!(total, 16 << 30);
    let mut dev_total = 0;
    ok(unsafe { cu::cuDeviceTotalMem_v2(&mut dev_total, 0) });
    assert_eq!(dev_total, total);
    let d = alloc(1 << 20);
    let mut free1 = 0;
    ok(unsafe { cu::cuMemGetInfo_v2(&mut free1, &mut total) });
    // Other tests allocate concurrently: only a bound is certain.
    assert!(free1 <= total);
    free(d);
    fails(
        unsafe { cu::cuMemAlloc_v2(&mut 0, (16 << 30) + 1) },
        2, // CUDA_ERROR_OUT_OF_MEMORY
    );
}

#[test]
fn freeing_closes_the_memfd() {
    // Alone in a process, so that no other test opens or closes files.
    common::assert_passed(&common::rerun(
        "freeing_closes_the_memfd_alone",
        "alone",
        &[],
    ));
}

#[test]
fn freeing_closes_the_memfd_alone() {
    if common::role().is_none() {
        return;
    }
    setup();
    let open_fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    free(alloc(64)); // the first allocation reserves the address space
    let before = open_fds();
    let all: Vec<u64> = (0..50).map(|_| alloc(10_000)).collect();
    assert_eq!(open_fds(), before + 50);
    for d in all {
        free(d);
    }
    assert_eq!(open_fds(), before);
}
