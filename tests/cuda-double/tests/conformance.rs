//! The same driver calls, answered by the double or by a real driver:
//! by default the double's cdylib; with `CUDA_CONFORMANCE_LIB=libcuda.so.1`
//! on a machine with a GPU, NVIDIA's driver. Every check prints a line and
//! the test fails listing all mismatches, so one run on a GPU shows every
//! place where the double and the real driver differ. Checks marked
//! `note` only print (behaviour the double chooses on purpose).
//!
//! ```sh
//! CUDA_CONFORMANCE_LIB=libcuda.so.1 cargo test -p oxmpi-cuda-double --test conformance -- --nocapture
//! ```

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::fmt::Debug;

use libloading::Library;

type Ptr = *mut c_void;

/// Mismatches seen so far.
#[derive(Default)]
struct Report {
    mismatches: Vec<String>,
}

impl Report {
    fn eq<T: Debug + PartialEq>(&mut self, what: &str, got: T, want: T) {
        let ok = got == want;
        println!(
            "CHECK {what}: got {got:?} want {want:?} {}",
            if ok { "ok" } else { "MISMATCH" }
        );
        if !ok {
            self.mismatches
                .push(format!("{what}: got {got:?}, want {want:?}"));
        }
    }

    fn note<T: Debug>(&mut self, what: &str, got: T) {
        println!("NOTE {what}: {got:?}");
    }
}

/// Looks `name` up as a function of type `F`.
fn sym<F: Copy>(lib: &Library, name: &str) -> F {
    // SAFETY: each caller names the entry point's C signature from cuda.h.
    unsafe {
        *lib.get::<F>(name.as_bytes())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}

macro_rules! driver {
    ($($field:ident = $name:literal: fn($($arg:ty),*);)*) => {
        /// The entry points the checks use.
        struct Cu { $($field: unsafe extern "C" fn($($arg),*) -> u32,)* }
        impl Cu {
            fn load(lib: &Library) -> Cu { Cu { $($field: sym(lib, $name),)* } }
        }
    };
}

driver! {
    init = "cuInit": fn(c_uint);
    count = "cuDeviceGetCount": fn(*mut c_int);
    version = "cuDriverGetVersion": fn(*mut c_int);
    attr = "cuDeviceGetAttribute": fn(*mut c_int, c_int, c_int);
    retain = "cuDevicePrimaryCtxRetain": fn(*mut Ptr, c_int);
    release = "cuDevicePrimaryCtxRelease_v2": fn(c_int);
    set_current = "cuCtxSetCurrent": fn(Ptr);
    get_current = "cuCtxGetCurrent": fn(*mut Ptr);
    get_device = "cuCtxGetDevice": fn(*mut c_int);
    pop = "cuCtxPopCurrent_v2": fn(*mut Ptr);
    alloc = "cuMemAlloc_v2": fn(*mut u64, usize);
    managed = "cuMemAllocManaged": fn(*mut u64, usize, c_uint);
    free = "cuMemFree_v2": fn(u64);
    alloc_host = "cuMemAllocHost_v2": fn(*mut Ptr, usize);
    free_host = "cuMemFreeHost": fn(Ptr);
    register = "cuMemHostRegister_v2": fn(Ptr, usize, c_uint);
    unregister = "cuMemHostUnregister": fn(Ptr);
    htod = "cuMemcpyHtoD_v2": fn(u64, *const c_void, usize);
    dtoh = "cuMemcpyDtoH_v2": fn(Ptr, u64, usize);
    memcpy = "cuMemcpy": fn(u64, u64, usize);
    memset32 = "cuMemsetD32_v2": fn(u64, u32, usize);
    attribute = "cuPointerGetAttribute": fn(Ptr, c_uint, u64);
    attributes = "cuPointerGetAttributes": fn(c_uint, *const c_uint, *mut Ptr, u64);
    range = "cuMemGetAddressRange_v2": fn(*mut u64, *mut usize, u64);
    ipc_get = "cuIpcGetMemHandle": fn(*mut [u8; 64], u64);
    ipc_open = "cuIpcOpenMemHandle_v2": fn(*mut u64, [u8; 64], c_uint);
    ipc_close = "cuIpcCloseMemHandle": fn(u64);
    load = "cuModuleLoadData": fn(*mut Ptr, *const c_void);
    function = "cuModuleGetFunction": fn(*mut Ptr, Ptr, *const c_char);
    event_create = "cuEventCreate": fn(*mut Ptr, c_uint);
    event_record = "cuEventRecord": fn(Ptr, Ptr);
    elapsed = "cuEventElapsedTime": fn(*mut f32, Ptr, Ptr);
    error_name = "cuGetErrorName": fn(u32, *mut *const c_char);
}

fn library() -> Library {
    let path = match std::env::var_os("CUDA_CONFORMANCE_LIB") {
        Some(p) => p.into(),
        None => oxmpi_cuda_double::find_artifact().expect("built cdylib"),
    };
    println!("driver library: {}", path.display());
    // SAFETY: a CUDA driver library; its initialisers have no preconditions.
    unsafe { Library::new(path) }.unwrap()
}

/// A pointer attribute as a 4- or 8-byte value, or the error code.
fn attribute(cu: &Cu, attr: c_uint, ptr: u64, wide: bool) -> Result<u64, u32> {
    let mut v = 0xdead_beef_u64;
    let code = unsafe { (cu.attribute)((&mut v as *mut u64).cast(), attr, ptr) };
    let v = if wide { v } else { v & 0xffff_ffff };
    if code == 0 {
        Ok(v)
    } else {
        Err(code)
    }
}

/// `MEMORY_TYPE, IS_MANAGED, DEVICE_ORDINAL, CONTEXT, BUFFER_ID, HOST_POINTER`
/// through `cuPointerGetAttributes`.
fn attributes(cu: &Cu, ptr: u64) -> (u32, [u64; 6]) {
    let attrs: [c_uint; 6] = [2, 8, 9, 1, 7, 4];
    let mut vals = [0x5a5a_5a5a_5a5a_5a5a_u64; 6];
    let mut data: Vec<Ptr> = vals.iter_mut().map(|v| (v as *mut u64).cast()).collect();
    let code = unsafe { (cu.attributes)(6, attrs.as_ptr(), data.as_mut_ptr(), ptr) };
    for v in vals.iter_mut().take(3) {
        *v &= 0xffff_ffff; // 4-byte attributes
    }
    (code, vals)
}

const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\n\
.visible .entry oxmpi_sum_f32(\n\t.param .u64 p0,\n\t.param .u64 p1,\n\t.param .u64 p2\n)\n{\n\tret;\n}\n\0";

#[test]
fn driver_answers_like_the_real_one() {
    let lib = library();
    let cu = Cu::load(&lib);
    // Calls that crash a real driver are made on the double only.
    let real = std::env::var_os("CUDA_CONFORMANCE_LIB").is_some();
    let mut r = Report::default();
    let null = std::ptr::null_mut();
    unsafe {
        r.eq("count before cuInit", (cu.count)(&mut 0), 3);
        let mut v = 0;
        r.eq("cuDriverGetVersion before cuInit", (cu.version)(&mut v), 0);
        r.note("driver version", v);
        r.eq("cuInit", (cu.init)(0), 0);
        let mut a = 0;
        r.eq("attribute 9999", (cu.attr)(&mut a, 9999, 0), 1);
        for (attr, name) in [
            (75, "cc major"),
            (41, "unified addressing"),
            (115, "memory pools"),
        ] {
            (cu.attr)(&mut a, attr, 0);
            r.note(name, a);
        }
        // No current context on a fresh thread.
        let no_ctx = std::thread::scope(|s| {
            s.spawn(|| {
                let mut c: Ptr = std::ptr::null_mut();
                let mut d = 0;
                let got = (
                    (cu.alloc)(&mut d, 16),
                    (cu.get_current)(&mut c),
                    c.is_null(),
                );
                (got, (cu.get_device)(&mut 0), (cu.pop)(&mut c))
            })
            .join()
            .unwrap()
        });
        r.eq(
            "no context: alloc, get current, null, get device, pop",
            no_ctx,
            ((201, 0, true), 201, 201),
        );

        let mut ctx: Ptr = null;
        r.eq("retain", (cu.retain)(&mut ctx, 0), 0);
        r.eq("set current", (cu.set_current)(ctx), 0);
        let mut d = 0u64;
        r.eq("alloc 0 bytes", (cu.alloc)(&mut d, 0), 1);
        r.eq("alloc 1000", (cu.alloc)(&mut d, 1000), 0);
        r.eq("alignment 256", d % 256, 0);
        let interior = d + 700;
        r.eq("memory type", attribute(&cu, 2, interior, false), Ok(2));
        r.eq(
            "device pointer",
            attribute(&cu, 3, interior, true),
            Ok(interior),
        );
        r.eq(
            "host pointer of device memory",
            attribute(&cu, 4, interior, true),
            Err(1),
        );
        r.eq("context", attribute(&cu, 1, interior, true), Ok(ctx as u64));
        r.eq("range start", attribute(&cu, 11, interior, true), Ok(d));
        r.eq("range size", attribute(&cu, 12, interior, true), Ok(1000));
        r.eq("is managed", attribute(&cu, 8, interior, false), Ok(0));
        r.eq("mapped", attribute(&cu, 13, interior, false), Ok(1));
        r.eq(
            "legacy ipc capable",
            attribute(&cu, 10, interior, false),
            Ok(1),
        );
        r.eq("device ordinal", attribute(&cu, 9, interior, false), Ok(0));
        r.note(
            "memory type one past the end",
            attribute(&cu, 2, d + 1000, false),
        );
        let (mut base, mut size) = (0u64, 0usize);
        r.eq(
            "address range",
            ((cu.range)(&mut base, &mut size, interior), base, size),
            (0, d, 1000),
        );
        let mut buf = [0u8; 2048];
        r.eq(
            "copy past the end",
            (cu.dtoh)(buf.as_mut_ptr().cast(), d, 1001),
            1,
        );
        r.eq(
            "copy into the end",
            (cu.htod)(d + 999, buf.as_ptr().cast(), 2),
            1,
        );
        r.eq("memset32 misaligned", (cu.memset32)(d + 2, 0, 1), 1);
        r.eq("free interior", (cu.free)(d + 4), 1);
        let id = attribute(&cu, 7, d, true);
        r.eq("free", (cu.free)(d), 0);
        r.eq("double free", (cu.free)(d), 1);
        r.eq(
            "memory type after free",
            attribute(&cu, 2, d, false),
            Err(1),
        );
        // The real driver takes an address it does not know as host memory
        // here and faults (seen on an H100, driver 580); the double says
        // INVALID_VALUE. Only the double is asked.
        if !real {
            r.eq(
                "cuMemcpy from freed device memory",
                (cu.memcpy)(buf.as_mut_ptr() as u64, d, 4),
                1,
            );
        }
        r.eq("cuMemFree(0)", (cu.free)(0), 0);
        let mut d2 = 0u64;
        (cu.alloc)(&mut d2, 1000);
        r.note("same address after free + alloc", d2 == d);
        r.eq(
            "new buffer id differs",
            attribute(&cu, 7, d2, true) != id,
            true,
        );

        // Unknown (malloc) memory.
        let host = buf.as_ptr() as u64;
        r.eq(
            "unknown: memory type",
            attribute(&cu, 2, host, false),
            Err(1),
        );
        r.eq(
            "unknown: address range",
            (cu.range)(&mut base, &mut size, host),
            500,
        );
        let pageable = [0, 0, 0xffff_fffe, 0, 0, host]; // ordinal -2, host pointer
        r.eq("unknown: attributes", attributes(&cu, host), (0, pageable));
        let (code, vals) = attributes(&cu, d2 + 3);
        r.eq(
            "device: attributes type/managed/ordinal/host",
            (code, vals[0], vals[1], vals[2], vals[5]),
            (0, 2, 0, 0, 0),
        );

        // Managed and page-locked host memory.
        let mut m = 0u64;
        r.eq("managed alloc", (cu.managed)(&mut m, 4096, 1), 0);
        r.eq("managed: memory type", attribute(&cu, 2, m, false), Ok(2));
        r.eq("managed: is managed", attribute(&cu, 8, m, false), Ok(1));
        r.eq("managed: host pointer", attribute(&cu, 4, m, true), Ok(m));
        r.note("managed: legacy ipc capable", attribute(&cu, 10, m, false));
        r.eq("managed free", (cu.free)(m), 0);
        let mut p: Ptr = null;
        r.eq("alloc host", (cu.alloc_host)(&mut p, 100), 0);
        let hp = p as u64;
        r.eq(
            "host: memory type",
            attribute(&cu, 2, hp + 10, false),
            Ok(1),
        );
        r.eq(
            "host: host pointer",
            attribute(&cu, 4, hp + 10, true),
            Ok(hp + 10),
        );
        r.eq(
            "host: device pointer",
            attribute(&cu, 3, hp + 10, true),
            Ok(hp + 10),
        );
        r.note("host: range size", attribute(&cu, 12, hp, true));
        r.eq("unregister allocated host memory", (cu.unregister)(p), 1);
        r.eq("free host", (cu.free_host)(p), 0);
        let mut user = vec![0u8; 3 * 4096];
        let up = user.as_mut_ptr().cast::<c_void>();
        r.eq("register", (cu.register)(up, 8192, 0), 0);
        r.eq(
            "register overlapping",
            (cu.register)(up.add(4096), 4096, 0),
            712,
        );
        r.eq(
            "registered: memory type",
            attribute(&cu, 2, up as u64 + 8, false),
            Ok(1),
        );
        r.eq("unregister", (cu.unregister)(up), 0);
        r.eq("unregister again", (cu.unregister)(up), 713);

        // IPC within one process.
        let mut h = [0u8; 64];
        r.eq("ipc get (interior)", (cu.ipc_get)(&mut h, d2 + 8), 0);
        let mut opened = 0u64;
        r.eq("ipc open own handle", (cu.ipc_open)(&mut opened, h, 1), 201);
        if !real {
            r.note("ipc open garbage", (cu.ipc_open)(&mut opened, [1; 64], 1));
        }
        r.eq("ipc close of non-imported", (cu.ipc_close)(d2), 1);
        (cu.free)(d2);

        // Modules.
        let mut module: Ptr = null;
        r.eq("load PTX", (cu.load)(&mut module, PTX.as_ptr().cast()), 0);
        let mut f: Ptr = null;
        r.eq(
            "get declared",
            (cu.function)(&mut f, module, c"oxmpi_sum_f32".as_ptr()),
            0,
        );
        r.eq(
            "get undeclared",
            (cu.function)(&mut f, module, c"oxmpi_sum_f64".as_ptr()),
            500,
        );
        r.eq(
            "load ELF fragment",
            (cu.load)(&mut module, c"\x7fELF\x02\x01\x01".as_ptr().cast()),
            200,
        );

        // Events.
        let (mut e0, mut e1, mut untimed): (Ptr, Ptr, Ptr) = (null, null, null);
        (cu.event_create)(&mut e0, 0);
        (cu.event_create)(&mut e1, 0);
        (cu.event_create)(&mut untimed, 2);
        let mut ms = 0f32;
        r.eq(
            "elapsed, never recorded",
            (cu.elapsed)(&mut ms, e0, e1),
            400,
        );
        (cu.event_record)(e0, null);
        (cu.event_record)(e1, null);
        (cu.event_record)(untimed, null);
        r.note("elapsed", ((cu.elapsed)(&mut ms, e0, e1), ms));
        r.eq(
            "elapsed, timing disabled",
            (cu.elapsed)(&mut ms, e0, untimed),
            400,
        );

        let mut name: *const c_char = std::ptr::null();
        r.eq(
            "error name of unknown code",
            ((cu.error_name)(12345, &mut name), name.is_null()),
            (1, true),
        );
        r.eq("release", (cu.release)(0), 0);
        r.note("release without retain", (cu.release)(0));
    }
    assert!(
        r.mismatches.is_empty(),
        "mismatches:\n{}",
        r.mismatches.join("\n")
    );
}
