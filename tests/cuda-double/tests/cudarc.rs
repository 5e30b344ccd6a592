//! The cdylib as `libcuda.so.1` under cudarc (dynamic loading): a child
//! process started with `LD_LIBRARY_PATH` at a directory made by
//! `install_dir` creates a context, copies, loads PTX and launches
//! `oxmpi_sum_f32` through the launch builder. cudarc resolves symbols
//! lazily and panics on a missing one, so this also checks the exports.

mod common;

use std::path::PathBuf;

use cudarc::driver::{sys, CudaContext, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

/// A driver directory for this test process.
fn driver_dir() -> PathBuf {
    let lib = oxmpi_cuda_double::find_artifact()
        .expect("liboxmpi_cuda_double.so next to the test binary (or set CUDA_DOUBLE_LIB)");
    let dir = std::env::temp_dir().join(format!("cuda-double-lib-{}", std::process::id()));
    oxmpi_cuda_double::install_dir(&lib, &dir).unwrap();
    dir
}

#[test]
fn cudarc_runs_on_the_double() {
    let dir = driver_dir();
    let path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(rest) if !rest.is_empty() => format!("{}:{rest}", dir.display()),
        _ => dir.display().to_string(),
    };
    let log = dir.join("launches.log");
    let child = common::rerun(
        "cudarc_child",
        "cudarc",
        &[
            ("LD_LIBRARY_PATH", &path),
            ("CUDA_DOUBLE_LOG", log.to_str().unwrap()),
        ],
    );
    common::assert_passed(&child);
    // The launch went through the library the loader found.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("launch oxmpi_sum_f32 n=4 pid="), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cudarc_child() {
    if common::role().is_none() {
        return;
    }
    let ctx = CudaContext::new(0).unwrap();
    assert_eq!(ctx.name().unwrap(), oxmpi_cuda_double::DEVICE_NAME);
    assert_eq!(ctx.compute_capability().unwrap(), (9, 0));
    let stream = ctx.default_stream();
    let a = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let mut b = stream.clone_htod(&[10.0f32, 20.0, 30.0, 40.0]).unwrap();

    let ptx = Ptx::from_src(common::ptx(&["oxmpi_sum_f32", "oxmpi_max_f32"]));
    let module = ctx.load_module(ptx).unwrap();
    let sum = module.load_function("oxmpi_sum_f32").unwrap();
    assert!(module.load_function("oxmpi_sum_f64").is_err());
    let n = 4u64;
    let mut launch = stream.launch_builder(&sum);
    launch.arg(&mut b).arg(&a).arg(&n);
    unsafe { launch.launch(LaunchConfig::for_num_elems(4)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&b).unwrap(), [11.0, 22.0, 33.0, 44.0]);

    // A second stream: zeros, device-to-device, into a host slice.
    let other = ctx.new_stream().unwrap();
    let mut z = other.alloc_zeros::<f32>(4).unwrap();
    assert_eq!(other.clone_dtoh(&z).unwrap(), [0.0; 4]);
    other.memcpy_dtod(&b, &mut z).unwrap();
    let mut host = [0f32; 4];
    other.memcpy_dtoh(&z, &mut host).unwrap();
    assert_eq!(host, [11.0, 22.0, 33.0, 44.0]);
    other.synchronize().unwrap();

    // The addresses cudarc holds are the double's device addresses.
    let (ptr, _sync) = z.device_ptr(&other);
    let mut ty = 0u32;
    let code = unsafe {
        sys::cuPointerGetAttribute(
            (&mut ty as *mut u32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr,
        )
    };
    assert_eq!((code, ty), (sys::CUresult::CUDA_SUCCESS, 2));
    drop(_sync);
    ctx.synchronize().unwrap();
}
