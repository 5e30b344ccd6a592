//! A scalar reference model, written independently of the kernels: every
//! element is decoded to a wide value (`i128`, `f64`), the operation is
//! computed there, and the result is rounded to the type. For floats the
//! f64 result rounded once is the correctly rounded result (f64 has enough
//! bits for sums and products of two f32 / f16 / bf16 values), which is
//! what the kernels must produce.

use crate::{ElemType, Op};

/// One decoded element.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Val {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
    PairF(f64, i32),
    PairI(i128, i32),
}

/// Width and signedness of integer-like types (bool and byte included).
fn int_info(ty: ElemType) -> Option<(u32, bool)> {
    use ElemType::*;
    Some(match ty {
        I8 => (8, true),
        U8 | Bool | Byte => (8, false),
        I16 => (16, true),
        U16 => (16, false),
        I32 => (32, true),
        U32 => (32, false),
        I64 => (64, true),
        U64 => (64, false),
        _ => return None,
    })
}

fn int_at(bytes: &[u8], width: usize, signed: bool) -> i128 {
    let mut raw = [0u8; 16];
    raw[..width].copy_from_slice(&bytes[..width]);
    let u = u128::from_le_bytes(if cfg!(target_endian = "little") {
        raw
    } else {
        let mut r = [0u8; 16];
        for i in 0..width {
            r[i] = bytes[width - 1 - i];
        }
        r
    });
    wrap(u as i128, width as u32 * 8, signed)
}

fn wrap(v: i128, bits: u32, signed: bool) -> i128 {
    let m = v & ((1i128 << bits) - 1);
    if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// f16 bits to f64 (by formula).
pub(crate) fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    match (e, m) {
        (0, _) => sign * m * 2f64.powi(-24),
        (31, 0.0) => sign * f64::INFINITY,
        (31, _) => f64::NAN,
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// bf16 bits to f64 (by formula).
pub(crate) fn bf16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 7) & 0xff) as i32;
    let m = (h & 0x7f) as f64;
    match (e, m) {
        (0, _) => sign * m * 2f64.powi(-133),
        (255, 0.0) => sign * f64::INFINITY,
        (255, _) => f64::NAN,
        _ => sign * (1.0 + m / 128.0) * 2f64.powi(e - 127),
    }
}

/// Rounds `x` to a binary format with `p` significand bits and exponent
/// range [emin, emax], to nearest even, overflowing to infinity.
fn round_format(x: f64, p: i32, emin: i32, emax: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let e = (((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin);
    let q = 2f64.powi(e - (p - 1));
    let r = (x / q).round_ties_even() * q;
    if r.abs() >= 2f64.powi(emax + 1) {
        f64::INFINITY.copysign(x)
    } else if r == 0.0 {
        0.0f64.copysign(x)
    } else {
        r
    }
}

fn u16_at(b: &[u8]) -> u16 {
    u16::from_ne_bytes([b[0], b[1]])
}
fn f32_at(b: &[u8], at: usize) -> f64 {
    f32::from_ne_bytes(b[at..at + 4].try_into().unwrap()) as f64
}
fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_ne_bytes(b[at..at + 8].try_into().unwrap())
}
fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
}

/// Decodes one element (`b.len() == ty.size()`), by the C layouts.
pub(crate) fn decode(ty: ElemType, b: &[u8]) -> Val {
    use ElemType::*;
    if let Some((bits, signed)) = int_info(ty) {
        return Val::Int(int_at(b, bits as usize / 8, signed));
    }
    let long = std::mem::size_of::<std::os::raw::c_long>();
    match ty {
        F32 => Val::Float(f32_at(b, 0)),
        F64 => Val::Float(f64_at(b, 0)),
        F16 => Val::Float(f16_value(u16_at(b))),
        Bf16 => Val::Float(bf16_value(u16_at(b))),
        ComplexF32 => Val::Complex(f32_at(b, 0), f32_at(b, 4)),
        ComplexF64 => Val::Complex(f64_at(b, 0), f64_at(b, 8)),
        FloatInt => Val::PairF(f32_at(b, 0), i32_at(b, 4)),
        DoubleInt => Val::PairF(f64_at(b, 0), i32_at(b, 8)),
        LongInt => Val::PairI(int_at(b, long, true), i32_at(b, long)),
        TwoInt => Val::PairI(i32_at(b, 0) as i128, i32_at(b, 4)),
        ShortInt => Val::PairI(int_at(b, 2, true), i32_at(b, 4)),
        _ => unreachable!("integers handled above"),
    }
}

/// Rounds an f64 result to `ty`'s float format.
fn round_to(ty: ElemType, x: f64) -> f64 {
    match ty {
        ElemType::F32 | ElemType::ComplexF32 | ElemType::FloatInt => x as f32 as f64,
        ElemType::F16 => round_format(x, 11, -14, 15),
        ElemType::Bf16 => round_format(x, 8, -126, 127),
        _ => x,
    }
}

fn ref_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() || b.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        a.min(b)
    }
}

fn ref_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() || b.is_sign_positive() {
            0.0
        } else {
            -0.0
        }
    } else {
        a.max(b)
    }
}

/// MINLOC / MAXLOC on (value, index): NaN beats numbers, ties go to the lower index.
fn ref_loc<V: PartialOrd + Copy>(min: bool, a: (V, i32), b: (V, i32)) -> (V, i32) {
    #[allow(clippy::eq_op)]
    let nan = |v: V| v != v;
    let a_first = match (nan(a.0), nan(b.0)) {
        (true, true) => a.1 < b.1,
        (true, false) => true,
        (false, true) => false,
        _ if a.0 == b.0 => a.1 < b.1,
        _ => (a.0 < b.0) == min,
    };
    if a_first {
        a
    } else {
        b
    }
}

/// `a (op) b` for one element, `a` the input and `b` the in-out operand.
pub(crate) fn apply(op: Op, ty: ElemType, a: Val, b: Val) -> Val {
    match (op, a, b) {
        (Op::Replace, a, _) => a,
        (Op::NoOp, _, b) => b,
        (_, Val::Int(x), Val::Int(y)) => {
            let (bits, signed) = int_info(ty).unwrap();
            let t = |v: bool| v as i128;
            Val::Int(wrap(
                match op {
                    Op::Sum => x.wrapping_add(y),
                    Op::Prod => x.wrapping_mul(y),
                    Op::Min => x.min(y),
                    Op::Max => x.max(y),
                    Op::Land => t(x != 0 && y != 0),
                    Op::Lor => t(x != 0 || y != 0),
                    Op::Lxor => t((x != 0) != (y != 0)),
                    Op::Band => x & y,
                    Op::Bor => x | y,
                    Op::Bxor => x ^ y,
                    _ => unreachable!("{op:?} on integers"),
                },
                bits,
                signed,
            ))
        }
        (_, Val::Float(x), Val::Float(y)) => Val::Float(round_to(
            ty,
            match op {
                Op::Sum => x + y,
                Op::Prod => x * y,
                Op::Min => ref_min(x, y),
                Op::Max => ref_max(x, y),
                _ => unreachable!("{op:?} on floats"),
            },
        )),
        (_, Val::Complex(ar, ai), Val::Complex(br, bi)) => match (op, ty) {
            (Op::Sum, _) => Val::Complex(round_to(ty, ar + br), round_to(ty, ai + bi)),
            // Products keep the textbook formula's roundings in the type's precision.
            (Op::Prod, ElemType::ComplexF32) => {
                let (ar, ai, br, bi) = (ar as f32, ai as f32, br as f32, bi as f32);
                Val::Complex((ar * br - ai * bi) as f64, (ar * bi + ai * br) as f64)
            }
            (Op::Prod, _) => Val::Complex(ar * br - ai * bi, ar * bi + ai * br),
            _ => unreachable!("{op:?} on complex"),
        },
        (_, Val::PairF(av, ai), Val::PairF(bv, bi)) => {
            let (v, i) = ref_loc(op == Op::Minloc, (av, ai), (bv, bi));
            Val::PairF(v, i)
        }
        (_, Val::PairI(av, ai), Val::PairI(bv, bi)) => {
            let (v, i) = ref_loc(op == Op::Minloc, (av, ai), (bv, bi));
            Val::PairI(v, i)
        }
        _ => unreachable!("{op:?} on {ty:?}"),
    }
}

/// Same value: NaN matches any NaN; zeros must agree in sign.
fn same_float(x: f64, y: f64) -> bool {
    (x.is_nan() && y.is_nan()) || (x == y && x.is_sign_negative() == y.is_sign_negative())
}

/// Whether a computed element equals the reference (padding ignored).
pub(crate) fn same(got: Val, want: Val) -> bool {
    match (got, want) {
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Float(x), Val::Float(y)) => same_float(x, y),
        (Val::Complex(a, b), Val::Complex(c, d)) => same_float(a, c) && same_float(b, d),
        (Val::PairF(v, i), Val::PairF(w, j)) => same_float(v, w) && i == j,
        (Val::PairI(v, i), Val::PairI(w, j)) => v == w && i == j,
        _ => false,
    }
}
