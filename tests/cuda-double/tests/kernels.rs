//! Modules and launches: PTX names select the carried kernels, which run
//! on device memory through the shadows and agree with the CPU kernels.

mod common;

use common::{alloc, dtoh, fails, free, function, htod, launch, ok, setup};
use oxmpi_cuda_double as cu;
use oxmpi_kernels::gpu::{self, Form};
use oxmpi_kernels::half::{f32_to_bf16, f32_to_f16};
use oxmpi_kernels::{reduce, reduce3, ElemType};

const INVALID_HANDLE: u32 = 400;
const NOT_FOUND: u32 = 500;
const ILLEGAL_ADDRESS: u32 = 700;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// `n` elements of `ty`: small values, negatives, no NaN.
fn elements(ty: ElemType, n: usize, seed: i64) -> Vec<u8> {
    let value = |i: usize| ((i as i64 * 7 + seed) % 11 - 5) as f32 * 0.75;
    (0..n)
        .flat_map(|i| match ty {
            ElemType::F32 => value(i).to_ne_bytes().to_vec(),
            ElemType::F64 => f64::from(value(i)).to_ne_bytes().to_vec(),
            ElemType::I32 => ((i as i32).wrapping_mul(0x0123_4567) ^ seed as i32)
                .to_ne_bytes()
                .to_vec(),
            ElemType::I64 => ((i as i64).wrapping_mul(0x1234_5678_9abc) ^ seed)
                .to_ne_bytes()
                .to_vec(),
            ElemType::F16 => f32_to_f16(value(i)).to_ne_bytes().to_vec(),
            ElemType::Bf16 => f32_to_bf16(value(i)).to_ne_bytes().to_vec(),
            _ => unreachable!("no device kernel for {ty:?}"),
        })
        .collect()
}

#[test]
fn sum_f32_runs_on_device_memory() {
    setup();
    let f = function(&["oxmpi_sum_f32"], "oxmpi_sum_f32").unwrap();
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 - i as f32 * 2.0).collect();
    let (da, db) = (alloc(n * 4), alloc(n * 4));
    htod(da, &f32_bytes(&a));
    htod(db, &f32_bytes(&b));
    ok(launch(f, &[db, da], n as u64));
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(dtoh(db, n * 4), f32_bytes(&want));
    // Pointers inside an allocation work; n must fit after them.
    ok(launch(f, &[db + 400, da + 400], (n - 100) as u64));
    fails(launch(f, &[db + 400, da], n as u64), ILLEGAL_ADDRESS);
    // Host memory is not device memory.
    let host = vec![0f32; n];
    fails(launch(f, &[db, host.as_ptr() as u64], 4), ILLEGAL_ADDRESS);
    free(da);
    free(db);
}

#[test]
fn sum_f16_matches_the_cpu_kernel() {
    setup();
    let f = function(&["oxmpi_sum_f16"], "oxmpi_sum_f16").unwrap();
    let n = 513;
    let a = elements(ElemType::F16, n, 3);
    let b = elements(ElemType::F16, n, 8);
    let (da, db) = (alloc(n * 2), alloc(n * 2));
    htod(da, &a);
    htod(db, &b);
    ok(launch(f, &[db, da], n as u64));
    let mut want = b.clone();
    reduce(oxmpi_kernels::Op::Sum, ElemType::F16, &mut want, &a).unwrap();
    assert_eq!(dtoh(db, n * 2), want);
    free(da);
    free(db);
}

#[test]
fn every_carried_kernel_matches_the_cpu_kernels() {
    setup();
    let names = gpu::kernel_names();
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let n = 300;
    for op in gpu::OPS {
        for ty in gpu::TYPES {
            let bytes = n * ty.size();
            let (a, b) = (elements(ty, n, 1), elements(ty, n, 4));
            let (da, db, dout) = (alloc(bytes), alloc(bytes), alloc(bytes));
            htod(da, &a);
            htod(db, &b);

            let name = gpu::kernel_name(op, ty, Form::Out).unwrap();
            ok(launch(
                function(&all, &name).unwrap(),
                &[dout, da, db],
                n as u64,
            ));
            let mut want = vec![0u8; bytes];
            reduce3(op, ty, &mut want, &a, &b).unwrap();
            assert_eq!(dtoh(dout, bytes), want, "{name}");

            let name = gpu::kernel_name(op, ty, Form::InPlace).unwrap();
            ok(launch(function(&all, &name).unwrap(), &[db, da], n as u64));
            let mut want = b.clone();
            reduce(op, ty, &mut want, &a).unwrap();
            assert_eq!(dtoh(db, bytes), want, "{name}");
            for d in [da, db, dout] {
                free(d);
            }
        }
    }
}

#[test]
fn names_must_be_declared_and_carried() {
    setup();
    // Declared but not a kernel the double carries.
    fails(
        function(&["my_kernel"], "my_kernel").unwrap_err(),
        NOT_FOUND,
    );
    // Carried but not declared by this module's PTX.
    fails(
        function(&["oxmpi_sum_f32"], "oxmpi_sum_f64").unwrap_err(),
        NOT_FOUND,
    );
    // Binary images cannot run here.
    let mut module = std::ptr::null_mut();
    let elf = b"\x7fELF\x02\x01\x01\0";
    fails(
        unsafe { cu::cuModuleLoadData(&mut module, elf.as_ptr().cast()) },
        200, // CUDA_ERROR_INVALID_IMAGE
    );
    // Unloading a module retires its functions.
    let text = std::ffi::CString::new(common::ptx(&["oxmpi_max_i32"])).unwrap();
    let mut f = std::ptr::null_mut();
    unsafe {
        ok(cu::cuModuleLoadDataEx(
            &mut module,
            text.as_ptr().cast(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        ));
        ok(cu::cuModuleGetFunction(
            &mut f,
            module,
            c"oxmpi_max_i32".as_ptr(),
        ));
        let mut threads = 0;
        ok(cu::cuFuncGetAttribute(&mut threads, 0, f));
        assert_eq!(threads, 1024);
        ok(cu::cuModuleUnload(module));
        fails(cu::cuModuleUnload(module), INVALID_HANDLE);
    }
    fails(launch(f, &[0, 0], 0), INVALID_HANDLE);
}

#[test]
fn launches_are_logged() {
    let log = std::env::temp_dir().join(format!("cuda-double-log-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let out = common::rerun(
        "launches_are_logged_child",
        "child",
        &[("CUDA_DOUBLE_LOG", log.to_str().unwrap())],
    );
    common::assert_passed(&out);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("launch oxmpi_sum_f32 n=3 pid="),
        "{text}"
    );
    assert!(
        lines[1].starts_with("launch oxmpi_min3_bf16 n=0 pid="),
        "{text}"
    );
    let pid: &str = lines[0].rsplit('=').next().unwrap();
    assert!(pid != std::process::id().to_string() && pid.parse::<u32>().is_ok());
}

#[test]
fn launches_are_logged_child() {
    if common::role().is_none() {
        return;
    }
    setup();
    let d = alloc(12);
    ok(launch(
        function(&["oxmpi_sum_f32"], "oxmpi_sum_f32").unwrap(),
        &[d, d],
        3,
    ));
    let f = function(&["oxmpi_min3_bf16"], "oxmpi_min3_bf16").unwrap();
    ok(launch(f, &[0, 0, 0], 0));
}
