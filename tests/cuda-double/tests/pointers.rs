//! Pointer attributes as the real driver reports them.

mod common;

use std::ffi::c_void;

use common::{alloc, fails, free, ok, setup};
use oxmpi_cuda_double as cu;
use oxmpi_cuda_double::abi::{pointer_attr as attr, Handle};

const INVALID_VALUE: u32 = 1;
const NOT_FOUND: u32 = 500;

fn word(ptr: u64, attribute: u32) -> Result<u32, u32> {
    let mut v = 0xdead_beefu32;
    match unsafe { cu::cuPointerGetAttribute((&mut v as *mut u32).cast(), attribute, ptr) } {
        0 => Ok(v),
        err => Err(err),
    }
}

fn wide(ptr: u64, attribute: u32) -> Result<u64, u32> {
    let mut v = 0xdead_beefu64;
    match unsafe { cu::cuPointerGetAttribute((&mut v as *mut u64).cast(), attribute, ptr) } {
        0 => Ok(v),
        err => Err(err),
    }
}

#[test]
fn device_and_interior_pointers() {
    let ctx = setup();
    let d = alloc(1000);
    for p in [d, d + 1, d + 999] {
        assert_eq!(word(p, attr::MEMORY_TYPE), Ok(2)); // CU_MEMORYTYPE_DEVICE
        assert_eq!(wide(p, attr::DEVICE_POINTER), Ok(p));
        assert_eq!(wide(p, attr::HOST_POINTER), Err(INVALID_VALUE));
        assert_eq!(wide(p, attr::CONTEXT), Ok(ctx as u64));
        assert_eq!(wide(p, attr::RANGE_START_ADDR), Ok(d));
        assert_eq!(wide(p, attr::RANGE_SIZE), Ok(1000));
        assert_eq!(word(p, attr::IS_MANAGED), Ok(0));
        assert_eq!(word(p, attr::DEVICE_ORDINAL), Ok(0));
        assert_eq!(word(p, attr::MAPPED), Ok(1));
        assert_eq!(word(p, attr::IS_LEGACY_CUDA_IPC_CAPABLE), Ok(1));
    }
    assert!(d % 256 == 0);
    // One past the end is not part of it.
    assert_eq!(word(d + 1000, attr::MEMORY_TYPE), Err(INVALID_VALUE));
    let (mut base, mut size) = (0, 0);
    ok(unsafe { cu::cuMemGetAddressRange_v2(&mut base, &mut size, d + 700) });
    assert_eq!((base, size), (d, 1000));
    free(d);
}

#[test]
fn buffer_ids_are_never_reused() {
    // Alone in a process, so that no other test takes the freed range.
    common::assert_passed(&common::rerun(
        "buffer_ids_are_never_reused_alone",
        "alone",
        &[],
    ));
}

#[test]
fn buffer_ids_are_never_reused_alone() {
    if common::role().is_none() {
        return;
    }
    setup();
    let mut seen = Vec::new();
    let mut addresses = Vec::new();
    for _ in 0..4 {
        let d = alloc(4096 * 3);
        seen.push(wide(d, attr::BUFFER_ID).unwrap());
        assert_eq!(wide(d + 5000, attr::BUFFER_ID), Ok(*seen.last().unwrap()));
        addresses.push(d);
        free(d);
    }
    // Freed ranges are reused, as the real driver reuses addresses ...
    assert!(addresses.windows(2).all(|w| w[0] == w[1]), "{addresses:x?}");
    // ... but buffer ids are not.
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "{seen:?}");
}

#[test]
fn page_locked_and_managed_memory() {
    let ctx = setup();
    let mut p: *mut c_void = std::ptr::null_mut();
    ok(unsafe { cu::cuMemAllocHost_v2(&mut p, 100) });
    let hp = p as u64;
    assert_eq!(word(hp + 10, attr::MEMORY_TYPE), Ok(1)); // CU_MEMORYTYPE_HOST
    assert_eq!(wide(hp + 10, attr::HOST_POINTER), Ok(hp + 10));
    assert_eq!(wide(hp + 10, attr::DEVICE_POINTER), Ok(hp + 10));
    assert_eq!(wide(hp, attr::CONTEXT), Ok(ctx as u64));
    assert_eq!(wide(hp, attr::RANGE_SIZE), Ok(100));
    assert!(wide(hp, attr::BUFFER_ID).unwrap() > 0);
    ok(unsafe { cu::cuMemFreeHost(p) });

    let mut user = vec![0u64; 16];
    let up = user.as_mut_ptr().cast::<c_void>();
    ok(unsafe { cu::cuMemHostRegister_v2(up, 128, 0) });
    assert_eq!(word(up as u64 + 8, attr::MEMORY_TYPE), Ok(1));
    ok(unsafe { cu::cuMemHostUnregister(up) });
    assert_eq!(word(up as u64, attr::MEMORY_TYPE), Err(INVALID_VALUE));

    let mut m = 0;
    ok(unsafe { cu::cuMemAllocManaged(&mut m, 64, 1) });
    assert_eq!(word(m, attr::MEMORY_TYPE), Ok(2));
    assert_eq!(word(m, attr::IS_MANAGED), Ok(1));
    assert_eq!(wide(m, attr::HOST_POINTER), Ok(m));
    assert_eq!(word(m, attr::IS_LEGACY_CUDA_IPC_CAPABLE), Ok(0));
    free(m);
}

#[test]
fn unknown_pointers() {
    setup();
    let plain = [0u8; 64];
    let p = plain.as_ptr() as u64;
    assert_eq!(word(p, attr::MEMORY_TYPE), Err(INVALID_VALUE));
    fails(
        unsafe { cu::cuMemGetAddressRange_v2(&mut 0, &mut 0, p) },
        NOT_FOUND,
    );

    // cuPointerGetAttributes: success, and pageable host memory for memory
    // it does not know (device ordinal -2, the host pointer itself).
    let d = alloc(64);
    let attributes = [
        attr::MEMORY_TYPE,
        attr::IS_MANAGED,
        attr::DEVICE_ORDINAL,
        attr::CONTEXT,
        attr::BUFFER_ID,
        attr::HOST_POINTER,
    ];
    let query = |ptr: u64| {
        let (mut ty, mut managed, mut ordinal) = (7u32, 7u32, 7i32);
        let (mut ctx, mut id, mut host): (Handle, u64, u64) = (1 as Handle, 7, 7);
        let mut data: [*mut c_void; 6] = [
            (&mut ty as *mut u32).cast(),
            (&mut managed as *mut u32).cast(),
            (&mut ordinal as *mut i32).cast(),
            (&mut ctx as *mut Handle).cast(),
            (&mut id as *mut u64).cast(),
            (&mut host as *mut u64).cast(),
        ];
        ok(unsafe { cu::cuPointerGetAttributes(6, attributes.as_ptr(), data.as_mut_ptr(), ptr) });
        (ty, managed, ordinal, ctx as u64, id, host)
    };
    assert_eq!(query(p), (0, 0, -2, 0, 0, p));
    let (ty, managed, ordinal, ctx, id, host) = query(d + 3);
    assert_eq!((ty, managed, ordinal, host), (2, 0, 0, 0));
    assert!(ctx != 0 && id != 0);
    free(d);
    // Freed: unknown again.
    assert_eq!(query(d).0, 0);
    assert_eq!(word(d, attr::MEMORY_TYPE), Err(INVALID_VALUE));
}
