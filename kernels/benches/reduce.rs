//! Reduction throughput: `reduce` (and `reduce3`) against a plain indexed
//! loop over typed slices and against `memcpy` of the same bytes.
//!
//! Run: `cargo bench -p oxmpi-kernels --bench reduce`
//! (`-- --quick` for a short run). GB/s is buffer bytes (one operand) per
//! second; an in-place reduce moves 3x that through memory (read two, write
//! one), memcpy 2x.

use std::hint::black_box;
use std::time::{Duration, Instant};

use oxmpi_kernels::{reduce, reduce3, ElemType, Op};

/// Best time per call over a few repetitions of a timed batch.
fn best(bytes: usize, budget: Duration, mut f: impl FnMut()) -> Duration {
    let iters = (256 << 20) / bytes.max(1);
    let iters = iters.clamp(1, 100_000);
    f(); // warm up: page in, caches
    let mut best = Duration::MAX;
    let start = Instant::now();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        best = best.min(t.elapsed() / iters as u32);
        if start.elapsed() > budget {
            break;
        }
    }
    best
}

fn gbps(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

/// A buffer of `bytes` bytes, 64-aligned, filled with small values of `ty`.
fn buffer(ty: ElemType, bytes: usize, seed: u64) -> Vec<u64> {
    let mut v = vec![0u64; bytes / 8];
    for (i, w) in v.iter_mut().enumerate() {
        let k = (i as u64).wrapping_mul(2654435761).wrapping_add(seed) % 7;
        *w = match ty {
            ElemType::F32 => {
                let x = (k as f32 - 3.0).to_bits() as u64;
                x | (x << 32)
            }
            ElemType::F64 => (k as f64 - 3.0).to_bits(),
            _ => k | (k << 32),
        };
    }
    v
}

fn as_bytes(v: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding; the byte view covers the same memory.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len() * 8) }
}
fn as_bytes_mut(v: &mut [u64]) -> &mut [u8] {
    // SAFETY: as above, uniquely borrowed.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), v.len() * 8) }
}

/// The baseline: a plain indexed loop over typed slices, as one would write by hand.
fn plain(op: Op, ty: ElemType, a: &mut [u64], b: &[u64]) {
    macro_rules! typed {
        ($t:ty, $f:expr) => {{
            let n = a.len() * 8 / std::mem::size_of::<$t>();
            // SAFETY: u64 storage is aligned for every listed type.
            let x = unsafe { std::slice::from_raw_parts_mut(a.as_mut_ptr().cast::<$t>(), n) };
            let y = unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<$t>(), n) };
            let f = $f;
            #[allow(clippy::needless_range_loop)]
            for i in 0..n {
                x[i] = f(y[i], x[i]);
            }
        }};
    }
    match (op, ty) {
        (Op::Sum, ElemType::F32) => typed!(f32, |p: f32, q: f32| p + q),
        (Op::Sum, ElemType::F64) => typed!(f64, |p: f64, q: f64| p + q),
        (Op::Sum, ElemType::I32) => typed!(i32, |p: i32, q: i32| p.wrapping_add(q)),
        // MPICH's MPL_MAX: a plain comparison (NaN handling order-dependent).
        (Op::Max, ElemType::F64) => typed!(f64, |p: f64, q: f64| if p > q { p } else { q }),
        _ => unreachable!(),
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let budget = Duration::from_millis(if quick { 100 } else { 1000 });
    let cases = [
        (Op::Sum, ElemType::F32),
        (Op::Sum, ElemType::F64),
        (Op::Sum, ElemType::I32),
        (Op::Max, ElemType::F64),
    ];
    let sizes = [4 << 10, 256 << 10, 16 << 20];
    println!(
        "{:<14} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "op/type", "size", "reduce", "reduce3", "unaligned", "plain", "memcpy"
    );
    for (op, ty) in cases {
        for bytes in sizes {
            let src = buffer(ty, bytes, 1);
            let mut acc = buffer(ty, bytes, 2);
            let mut out = vec![0u64; bytes / 8 + 1];
            let name = format!(
                "{}/{}",
                &op.mpi_name()[4..],
                ty.mpi_name().trim_start_matches("MPI_")
            );
            let t_reduce = best(bytes, budget, || {
                reduce(
                    op,
                    ty,
                    black_box(as_bytes_mut(&mut acc)),
                    black_box(as_bytes(&src)),
                )
                .unwrap()
            });
            let t_reduce3 = best(bytes, budget, || {
                let o = &mut as_bytes_mut(&mut out)[..bytes];
                reduce3(
                    op,
                    ty,
                    black_box(o),
                    black_box(as_bytes(&src)),
                    black_box(as_bytes(&acc)),
                )
                .unwrap()
            });
            // In-out operand one byte off alignment: the blocked copy path.
            let mut shifted = vec![0u64; bytes / 8 + 1];
            let t_unaligned = best(bytes, budget, || {
                let io = &mut as_bytes_mut(&mut shifted)[1..bytes + 1];
                reduce(op, ty, black_box(io), black_box(as_bytes(&src))).unwrap()
            });
            let t_plain = best(bytes, budget, || {
                plain(op, ty, black_box(&mut acc), black_box(&src))
            });
            let t_copy = best(bytes, budget, || {
                black_box(as_bytes_mut(&mut acc)).copy_from_slice(black_box(as_bytes(&src)))
            });
            println!(
                "{name:<14} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                human(bytes),
                gbps(bytes, t_reduce),
                gbps(bytes, t_reduce3),
                gbps(bytes, t_unaligned),
                gbps(bytes, t_plain),
                gbps(bytes, t_copy),
            );
        }
    }
}

fn human(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}
