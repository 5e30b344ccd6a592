//! Runs the CUDA source's arithmetic on the host: `cuda/reduce.cu` is
//! compiled as plain C++ (`$CXX`, default `c++`) behind `cuda/host_shim.h`,
//! which defines the CUDA qualifiers, a one-thread grid and the bit-cast /
//! rounding intrinsics, and every kernel is compared byte for byte with the CPU
//! kernels (any NaN matches any NaN) on inputs full of NaNs, signed zeros, infinities, subnormals and
//! overflowing integers. No GPU or CUDA install needed.

use std::path::PathBuf;
use std::process::Command;

use oxmpi_kernels::gpu::{self, Form};
use oxmpi_kernels::{reduce, reduce3, ElemType};

/// The host shim shared with the CUDA test double (tests/cuda-double).
const SHIM: &str = include_str!("../cuda/host_shim.h");

/// Builds the host library once per test process.
fn build() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxmpi-kernels-cuda-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("reduce_host.cpp");
    std::fs::write(&src, format!("{SHIM}\n{}", gpu::SOURCE)).unwrap();
    let lib = dir.join("libreduce_host.so");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = Command::new(&cxx)
        .args([
            "-std=c++11",
            "-O2",
            "-ffp-contract=off",
            "-shared",
            "-fPIC",
            "-Wall",
            "-Werror",
            "-o",
        ])
        .arg(&lib)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
    assert!(
        out.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// Deterministic inputs: specials of the element's width, small integers, random bits.
fn inputs(ty: ElemType, n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let specials: &[u64] = match ty.size() {
        // f16 / bf16 NaN, inf, -0, 1, max finite, smallest subnormal
        2 => &[
            0x7e00, 0x7c01, 0xfc00, 0x8000, 0x3c00, 0x7bff, 0x0001, 0x7fc0, 0x7f80, 0x3f80, 0x7f7f,
        ],
        4 => &[
            0x7fc0_0000,
            0x7f80_0001,
            0xff80_0000,
            0x8000_0000,
            0x7fff_ffff,
            0x8000_0001,
            1,
            0x3f80_0000,
        ],
        _ => &[
            0x7ff8_0000_0000_0000,
            0x7ff0_0000_0000_0001,
            0xfff0_0000_0000_0000,
            0x8000_0000_0000_0000,
            0x7fff_ffff_ffff_ffff,
            1,
        ],
    };
    let mut bytes = Vec::with_capacity(n * ty.size());
    for _ in 0..n {
        let r = next();
        let v = match r % 4 {
            0 => specials[(r >> 8) as usize % specials.len()],
            1 => match ty {
                // small integer values (as the type's own encoding)
                ElemType::F32 => (((r >> 8) % 9) as f32 - 4.0).to_bits() as u64,
                ElemType::F64 => (((r >> 8) % 9) as f64 - 4.0).to_bits(),
                _ => (r >> 8) % 5,
            },
            _ => next(),
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..ty.size()]);
    }
    bytes
}

type InPlace = unsafe extern "C" fn(*mut u8, *const u8, u64);
type Out = unsafe extern "C" fn(*mut u8, *const u8, *const u8, u64);

#[test]
fn device_source_matches_cpu_kernels_bit_for_bit() {
    let lib_path = build();
    // SAFETY: the library is the CUDA source compiled for the host; its
    // kernels have the signatures documented in `gpu` and touch only n
    // elements of the buffers passed.
    let lib = unsafe { libloading::Library::new(&lib_path) }.unwrap();
    let n = 4096;
    let mut checked = 0;
    for (k, op) in gpu::OPS.into_iter().enumerate() {
        for (j, ty) in gpu::TYPES.into_iter().enumerate() {
            let a = inputs(ty, n, 1 + (k * 16 + j) as u64);
            let b = inputs(ty, n, 1000 + (k * 16 + j) as u64);

            let mut want = b.clone();
            reduce(op, ty, &mut want, &a).unwrap();
            let name = gpu::kernel_name(op, ty, Form::InPlace).unwrap();
            let f: libloading::Symbol<InPlace> = unsafe { lib.get(name.as_bytes()) }.unwrap();
            let mut got = b.clone();
            unsafe { f(got.as_mut_ptr(), a.as_ptr(), n as u64) };
            assert_eq!(first_diff(ty, &got, &want), None, "{name}");

            let mut want3 = vec![0u8; a.len()];
            reduce3(op, ty, &mut want3, &a, &b).unwrap();
            let name = gpu::kernel_name(op, ty, Form::Out).unwrap();
            let f: libloading::Symbol<Out> = unsafe { lib.get(name.as_bytes()) }.unwrap();
            let mut got3 = vec![0u8; a.len()];
            unsafe { f(got3.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n as u64) };
            assert_eq!(first_diff(ty, &got3, &want3), None, "{name}");
            checked += 2;
        }
    }
    assert_eq!(checked, gpu::kernel_names().len());
    let _ = std::fs::remove_dir_all(lib_path.parent().unwrap());
}

/// Whether an element of a float type is a NaN (any payload).
fn is_nan(ty: ElemType, e: &[u8]) -> bool {
    let mut raw = [0u8; 8];
    raw[..e.len()].copy_from_slice(e);
    let v = u64::from_le_bytes(raw);
    match ty {
        ElemType::F16 => v & 0x7c00 == 0x7c00 && v & 0x3ff != 0,
        ElemType::Bf16 => v & 0x7f80 == 0x7f80 && v & 0x7f != 0,
        ElemType::F32 => f32::from_bits(v as u32).is_nan(),
        ElemType::F64 => f64::from_bits(v).is_nan(),
        _ => false,
    }
}

/// The first differing element as (index, got bytes, want bytes). NaN
/// payloads are not compared: which operand's payload an IEEE addition
/// returns depends on the compiler's operand order (GPUs return a canonical
/// NaN), so only NaN-ness is part of the contract.
fn first_diff(ty: ElemType, got: &[u8], want: &[u8]) -> Option<(usize, Vec<u8>, Vec<u8>)> {
    let s = ty.size();
    got.chunks(s)
        .zip(want.chunks(s))
        .position(|(g, w)| g != w && !(is_nan(ty, g) && is_nan(ty, w)))
        .map(|i| {
            (
                i,
                got[i * s..(i + 1) * s].to_vec(),
                want[i * s..(i + 1) * s].to_vec(),
            )
        })
}
