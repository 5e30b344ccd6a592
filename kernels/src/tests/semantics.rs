//! Targeted cases for the semantics the standard leaves open, documented on
//! `Op` and in each op family's file.

use super::bytes_of;
use crate::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use crate::{reduce, reduce3, ElemType, KernelError, Op};

fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}
fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn min_max_propagate_nan_and_order_signed_zeros() {
    let a = bytes_of![f64::NAN, 1.0f64, -0.0f64, 0.0f64, 2.0f64];
    let b = bytes_of![1.0f64, f64::NAN, 0.0f64, -0.0f64, 3.0f64];
    let mut lo = b.clone();
    reduce(Op::Min, ElemType::F64, &mut lo, &a).unwrap();
    let lo = f64s(&lo);
    assert!(lo[0].is_nan() && lo[1].is_nan());
    assert!(lo[2] == 0.0 && lo[2].is_sign_negative());
    assert!(lo[3] == 0.0 && lo[3].is_sign_negative());
    assert_eq!(lo[4], 2.0);
    let mut hi = b.clone();
    reduce(Op::Max, ElemType::F64, &mut hi, &a).unwrap();
    let hi = f64s(&hi);
    assert!(hi[0].is_nan() && hi[1].is_nan());
    assert!(hi[2] == 0.0 && hi[2].is_sign_positive());
    assert!(hi[3] == 0.0 && hi[3].is_sign_positive());
    assert_eq!(hi[4], 3.0);

    // The same through f16: NaN in, NaN out.
    let mut h = bytes_of![0x3c00u16];
    reduce(Op::Max, ElemType::F16, &mut h, &bytes_of![0x7e00u16]).unwrap();
    assert!(f16_to_f32(u16::from_ne_bytes([h[0], h[1]])).is_nan());
}

#[test]
fn integers_wrap() {
    let mut x = bytes_of![i32::MAX, i32::MIN, 3i32];
    reduce(
        Op::Sum,
        ElemType::I32,
        &mut x,
        &bytes_of![1i32, -1i32, -5i32],
    )
    .unwrap();
    assert_eq!(x, bytes_of![i32::MIN, i32::MAX, -2i32]);
    let mut y = vec![200u8, 16];
    reduce(Op::Prod, ElemType::U8, &mut y, &[2, 16]).unwrap();
    assert_eq!(y, [144, 0]);
    let mut z = bytes_of![i64::MIN];
    reduce(Op::Prod, ElemType::I64, &mut z, &bytes_of![-1i64]).unwrap();
    assert_eq!(z, bytes_of![i64::MIN]);
}

#[test]
fn logical_results_are_zero_or_one() {
    let mut b = vec![2u8, 0, 255, 0];
    reduce(Op::Land, ElemType::Bool, &mut b, &[4, 9, 1, 0]).unwrap();
    assert_eq!(b, [1, 0, 1, 0]);
    let mut b = vec![2u8, 0, 255, 0];
    reduce(Op::Lxor, ElemType::Bool, &mut b, &[4, 9, 0, 0]).unwrap();
    assert_eq!(b, [0, 1, 1, 0]);
    let mut w = bytes_of![-7i64, 0i64];
    reduce(Op::Lor, ElemType::I64, &mut w, &bytes_of![0i64, 0i64]).unwrap();
    assert_eq!(w, bytes_of![1i64, 0i64]);
}

#[test]
fn minloc_maxloc_ties_keep_the_lower_index() {
    // MPI_2INT pairs (value, index).
    let a = bytes_of![5i32, 3i32, 1i32, 9i32, 4i32, 2i32];
    let b = bytes_of![5i32, 1i32, 2i32, 0i32, 4i32, 7i32];
    let mut lo = b.clone();
    reduce(Op::Minloc, ElemType::TwoInt, &mut lo, &a).unwrap();
    assert_eq!(lo, bytes_of![5i32, 1i32, 1i32, 9i32, 4i32, 2i32]);
    let mut hi = b.clone();
    reduce(Op::Maxloc, ElemType::TwoInt, &mut hi, &a).unwrap();
    assert_eq!(hi, bytes_of![5i32, 1i32, 2i32, 0i32, 4i32, 2i32]);
}

#[test]
fn double_int_layout_and_nan() {
    // struct { double; int; }: 16 bytes, index at offset 8, padding untouched-or-copied.
    let pair = |v: f64, i: i32| {
        let mut e = [0u8; 16];
        e[..8].copy_from_slice(&v.to_ne_bytes());
        e[8..12].copy_from_slice(&i.to_ne_bytes());
        e
    };
    let a: Vec<u8> = [pair(1.0, 4), pair(f64::NAN, 6)].concat();
    let b: Vec<u8> = [pair(2.0, 0), pair(-1.0, 1)].concat();
    let mut out = vec![0u8; 32];
    reduce3(Op::Minloc, ElemType::DoubleInt, &mut out, &a, &b).unwrap();
    assert_eq!(&out[..12], &pair(1.0, 4)[..12]);
    assert!(f64::from_ne_bytes(out[16..24].try_into().unwrap()).is_nan());
    assert_eq!(i32::from_ne_bytes(out[24..28].try_into().unwrap()), 6);
}

#[test]
fn half_precision_sums_round_once_to_nearest_even() {
    let h = |x: f32| f32_to_f16(x);
    // 2048 + 1 is a tie between 2048 and 2050: even (2048) wins; 2048 + 3 -> 2052.
    let mut acc = bytes_of![h(2048.0), h(2048.0)];
    reduce(Op::Sum, ElemType::F16, &mut acc, &bytes_of![h(1.0), h(3.0)]).unwrap();
    let got: Vec<f32> = acc
        .chunks(2)
        .map(|c| f16_to_f32(u16::from_ne_bytes([c[0], c[1]])))
        .collect();
    assert_eq!(got, [2048.0, 2052.0]);
    // Overflow to infinity.
    let mut big = bytes_of![h(65504.0)];
    reduce(Op::Sum, ElemType::F16, &mut big, &bytes_of![h(16.0)]).unwrap();
    assert_eq!(big, bytes_of![0x7c00u16]);
    // bf16: 256 + 1 is a tie (8 significand bits): stays 256; 257 + 2 -> 258 + 1 -> 260.
    let b = |x: f32| f32_to_bf16(x);
    let mut acc = bytes_of![b(256.0), b(258.0)];
    reduce(
        Op::Sum,
        ElemType::Bf16,
        &mut acc,
        &bytes_of![b(1.0), b(1.0)],
    )
    .unwrap();
    let got: Vec<f32> = acc
        .chunks(2)
        .map(|c| bf16_to_f32(u16::from_ne_bytes([c[0], c[1]])))
        .collect();
    assert_eq!(got, [256.0, 260.0]);
}

#[test]
fn complex_products() {
    // (1 + 2i)(3 + 4i) = -5 + 10i
    let mut x = bytes_of![3.0f32, 4.0f32];
    reduce(
        Op::Prod,
        ElemType::ComplexF32,
        &mut x,
        &bytes_of![1.0f32, 2.0f32],
    )
    .unwrap();
    assert_eq!(f32s(&x), [-5.0, 10.0]);
    let mut y = bytes_of![3.0f64, 4.0f64];
    reduce(
        Op::Sum,
        ElemType::ComplexF64,
        &mut y,
        &bytes_of![1.0f64, 2.0f64],
    )
    .unwrap();
    assert_eq!(f64s(&y), [4.0, 6.0]);
}

#[test]
fn replace_and_no_op() {
    let (a, b) = (bytes_of![1.5f64], bytes_of![2.5f64]);
    let mut out = vec![0u8; 8];
    reduce3(Op::Replace, ElemType::F64, &mut out, &a, &b).unwrap();
    assert_eq!(out, a);
    reduce3(Op::NoOp, ElemType::F64, &mut out, &a, &b).unwrap();
    assert_eq!(out, b);
    let mut io = b.clone();
    reduce(Op::NoOp, ElemType::F64, &mut io, &a).unwrap();
    assert_eq!(io, b);
    reduce(Op::Replace, ElemType::F64, &mut io, &a).unwrap();
    assert_eq!(io, a);
}

#[test]
fn length_errors_leave_outputs_untouched() {
    let mut x = vec![9u8; 12];
    let err = reduce(Op::Sum, ElemType::F64, &mut x, &[0u8; 12]).unwrap_err();
    assert_eq!(
        err,
        KernelError::Length {
            ty: ElemType::F64,
            len: 12
        }
    );
    assert_eq!(
        err.to_string(),
        "a buffer of 12 bytes is not a whole number of MPI_DOUBLE elements (8 bytes each)"
    );
    let err = reduce(Op::Sum, ElemType::I32, &mut x, &[0u8; 8]).unwrap_err();
    assert_eq!(err, KernelError::Mismatch { out: 12, input: 8 });
    let err = reduce3(Op::Sum, ElemType::I32, &mut x, &[0u8; 12], &[0u8; 16]).unwrap_err();
    assert_eq!(err, KernelError::Mismatch { out: 12, input: 16 });
    assert!(x.iter().all(|&b| b == 9));
    // Empty buffers are fine.
    reduce(Op::Sum, ElemType::F64, &mut [], &[]).unwrap();
}
