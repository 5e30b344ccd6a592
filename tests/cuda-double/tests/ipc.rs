//! IPC memory handles between a parent and a child process.

mod common;

use common::{alloc, dtoh, fails, free, htod, ok, setup};
use oxmpi_cuda_double as cu;
use oxmpi_cuda_double::abi::{pointer_attr as attr, CUipcMemHandle};

const INVALID_VALUE: u32 = 1;
const INVALID_CONTEXT: u32 = 201;
const INVALID_HANDLE: u32 = 400;
const HANDLE_VAR: &str = "CUDA_DOUBLE_IPC_HANDLE";
const LEN: usize = 10_000;

fn pattern() -> Vec<u8> {
    (0..LEN).map(|i| (i * 13 % 251) as u8).collect()
}

fn to_hex(h: &CUipcMemHandle) -> String {
    h.reserved
        .iter()
        .map(|b| format!("{:02x}", *b as u8))
        .collect()
}

fn from_hex(text: &str) -> CUipcMemHandle {
    let mut h = CUipcMemHandle { reserved: [0; 64] };
    for (i, b) in h.reserved.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap() as _;
    }
    h
}

fn open(h: CUipcMemHandle) -> Result<u64, u32> {
    let mut d = 0;
    match unsafe { cu::cuIpcOpenMemHandle_v2(&mut d, h, 1) } {
        0 => Ok(d),
        err => Err(err),
    }
}

#[test]
fn memory_handles_work_across_processes() {
    setup();
    let d = alloc(LEN);
    htod(d, &pattern());
    let mut h = CUipcMemHandle { reserved: [0; 64] };
    // An interior pointer names the whole allocation.
    ok(unsafe { cu::cuIpcGetMemHandle(&mut h, d + 100) });
    fails(open(h).unwrap_err(), INVALID_CONTEXT);
    let hex = to_hex(&h);

    common::assert_passed(&common::rerun("ipc_child", "open", &[(HANDLE_VAR, &hex)]));
    // The child's write landed in this process's allocation.
    assert_eq!(dtoh(d, 4), [0x5a; 4]);

    // Once freed (and its fd number reused), the handle is stale.
    free(d);
    let reused = alloc(LEN);
    common::assert_passed(&common::rerun("ipc_child", "stale", &[(HANDLE_VAR, &hex)]));
    free(reused);

    let garbage = CUipcMemHandle { reserved: [1; 64] };
    fails(open(garbage).unwrap_err(), INVALID_VALUE);
    let mut m = 0;
    ok(unsafe { cu::cuMemAllocManaged(&mut m, 64, 1) });
    fails(unsafe { cu::cuIpcGetMemHandle(&mut h, m) }, INVALID_VALUE);
    free(m);
}

#[test]
fn ipc_child() {
    let Some(role) = common::role() else {
        return;
    };
    setup();
    let h = from_hex(&std::env::var(HANDLE_VAR).unwrap());
    if role == "stale" {
        fails(open(h).unwrap_err(), INVALID_HANDLE);
        return;
    }
    let d = open(h).unwrap();
    assert_eq!(dtoh(d, LEN), pattern());
    // A device pointer here too: memory type, its own buffer id, the range.
    let mut ty = 0u32;
    ok(unsafe {
        cu::cuPointerGetAttribute((&mut ty as *mut u32).cast(), attr::MEMORY_TYPE, d + 5)
    });
    assert_eq!(ty, 2);
    let (mut base, mut size) = (0, 0);
    ok(unsafe { cu::cuMemGetAddressRange_v2(&mut base, &mut size, d + 5) });
    assert_eq!((base, size), (d, LEN));
    // Opening again maps nothing new; each open needs a close.
    assert_eq!(open(h), Ok(d));
    fails(unsafe { cu::cuMemFree_v2(d) }, INVALID_VALUE);
    htod(d, &[0x5a; 4]);
    ok(unsafe { cu::cuIpcCloseMemHandle(d) });
    assert_eq!(dtoh(d, 4), [0x5a; 4]);
    ok(unsafe { cu::cuIpcCloseMemHandle(d) });
    fails(unsafe { cu::cuIpcCloseMemHandle(d) }, INVALID_VALUE);
}
