//! Compiles `cuda/reduce.cu` to PTX with NVRTC (no GPU needed) and checks
//! that every listed kernel is an entry point. Ignored by default: it needs
//! libnvrtc, e.g. from the `nvidia-cuda-nvrtc-cu12` wheel:
//!
//! ```sh
//! pip download --no-deps nvidia-cuda-nvrtc-cu12 -d /tmp/w && (cd /tmp/w && python3 -m zipfile -e *.whl .)
//! LD_LIBRARY_PATH=/tmp/w/nvidia/cuda_nvrtc/lib cargo test -p oxmpi-kernels --test nvrtc -- --ignored
//! ```
//! `OXMPI_NVRTC_LIB` may name the library file instead.

use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr;

use oxmpi_kernels::gpu;

type Program = *mut c_void;
type CreateProgram = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type Compile = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int;
type GetSize = unsafe extern "C" fn(Program, *mut usize) -> c_int;
type GetText = unsafe extern "C" fn(Program, *mut c_char) -> c_int;
type Destroy = unsafe extern "C" fn(*mut Program) -> c_int;

/// Reads a text NVRTC returns through a size getter and a copy function.
unsafe fn text(prog: Program, size: GetSize, get: GetText) -> String {
    let mut n = 0usize;
    assert_eq!(size(prog, &mut n), 0);
    let mut buf = vec![0u8; n];
    assert_eq!(get(prog, buf.as_mut_ptr().cast()), 0);
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .to_string()
}

/// Compiles the source for one virtual architecture; returns (PTX, log).
fn compile(arch: &str) -> (String, String) {
    let path = std::env::var("OXMPI_NVRTC_LIB").unwrap_or_else(|_| "libnvrtc.so.12".into());
    // SAFETY: loading NVRTC runs no initialisers with preconditions; the
    // symbols are used with their documented C signatures (nvrtc.h).
    unsafe {
        let lib =
            libloading::Library::new(&path).unwrap_or_else(|e| panic!("cannot load {path}: {e}"));
        let create: libloading::Symbol<CreateProgram> = lib.get(b"nvrtcCreateProgram\0").unwrap();
        let compile: libloading::Symbol<Compile> = lib.get(b"nvrtcCompileProgram\0").unwrap();
        let log_size: libloading::Symbol<GetSize> = lib.get(b"nvrtcGetProgramLogSize\0").unwrap();
        let log: libloading::Symbol<GetText> = lib.get(b"nvrtcGetProgramLog\0").unwrap();
        let ptx_size: libloading::Symbol<GetSize> = lib.get(b"nvrtcGetPTXSize\0").unwrap();
        let ptx: libloading::Symbol<GetText> = lib.get(b"nvrtcGetPTX\0").unwrap();
        let destroy: libloading::Symbol<Destroy> = lib.get(b"nvrtcDestroyProgram\0").unwrap();

        let src = CString::new(gpu::SOURCE).unwrap();
        let name = CString::new(gpu::SOURCE_NAME).unwrap();
        let mut prog: Program = ptr::null_mut();
        assert_eq!(
            create(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                ptr::null(),
                ptr::null()
            ),
            0
        );
        let opts = [CString::new(format!("--gpu-architecture={arch}")).unwrap()];
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let rc = compile(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr());
        let log_text = text(prog, *log_size, *log);
        assert_eq!(rc, 0, "NVRTC failed for {arch}:\n{log_text}");
        let ptx_text = text(prog, *ptx_size, *ptx);
        destroy(&mut prog);
        (ptx_text, log_text)
    }
}

#[test]
#[ignore = "needs libnvrtc (see the file's docs)"]
fn source_compiles_to_ptx_with_every_kernel() {
    // Turing (the oldest NVRTC 12.9 does not call deprecated) through Hopper.
    for arch in ["compute_75", "compute_80", "compute_90"] {
        let (ptx, log) = compile(arch);
        assert!(!log.contains("warning"), "{arch}: {log}");
        for name in gpu::kernel_names() {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "{arch}: no entry {name}"
            );
        }
        let entries = ptx.matches(".entry ").count();
        assert_eq!(
            entries,
            gpu::kernel_names().len(),
            "{arch}: unexpected entries"
        );
    }
}
