//! MPI_MIN and MPI_MAX on integers and floats.
//!
//! Float semantics (chosen so that every reduction order gives the same
//! result, which plain `<` comparisons as in MPICH do not):
//! - a NaN operand makes the result NaN (like IEEE 754-2019 `minimum` /
//!   `maximum`, unlike C `fmin`, which drops NaNs); the NaN's payload is
//!   unspecified (it may be a mix of the operands' bits);
//! - `min(-0, +0) = -0` and `max(-0, +0) = +0`.
//!
//! f16 / bf16 compare after widening to f32; the result is one of the inputs
//! (NaNs made quiet).

use super::dispatch;
use crate::driver::Args;
use crate::elem::{Bf16, Pod, F16};
use crate::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use crate::{ElemType, KernelError, Op};

/// Minimum and maximum of one element type.
pub(crate) trait MinMax: Pod {
    fn min(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
}

macro_rules! minmax_int {
    ($($t:ty),*) => {$(
        impl MinMax for $t {
            #[inline(always)]
            fn min(self, other: Self) -> Self { if other < self { other } else { self } }
            #[inline(always)]
            fn max(self, other: Self) -> Self { if other > self { other } else { self } }
        }
    )*};
}
minmax_int!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! minmax_float {
    ($($t:ty),*) => {$(
        impl MinMax for $t {
            /// `a < b ? a : b` OR'ed bitwise with `b < a ? b : a`: both are the
            /// minimum when the operands are ordered and differ; on equal
            /// operands (bits differ only for -0 / +0) OR keeps -0; when one
            /// is NaN, one of the two selects yields it and OR keeps an
            /// all-ones exponent with a nonzero mantissa, i.e. a NaN. On
            /// x86 this is two MINPD and an ORPD.
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                let (a, b) = (self, other);
                let r = if a < b { a } else { b };
                let s = if b < a { b } else { a };
                <$t>::from_bits(r.to_bits() | s.to_bits())
            }
            /// `max(a, b) = -min(-a, -b)`, written on the MAXPD results
            /// `r = a > b ? a : b` and `s = b > a ? b : a` (negation is a
            /// sign flip, so `-min(-a, -b)` is `((r ^ S) | (s ^ S)) ^ S` for
            /// the sign bit S): the sign is AND-ed (+0 beats -0), the other
            /// bits OR-ed (NaN kept).
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                let (a, b) = (self, other);
                let r = if a > b { a } else { b };
                let s = if b > a { b } else { a };
                let sign = (-0.0 as $t).to_bits();
                <$t>::from_bits(((r.to_bits() ^ sign) | (s.to_bits() ^ sign)) ^ sign)
            }
        }
    )*};
}
minmax_float!(f32, f64);

macro_rules! minmax_half {
    ($($t:ident, $widen:ident, $narrow:ident);*) => {$(
        impl MinMax for $t {
            #[inline(always)]
            fn min(self, other: Self) -> Self { $t($narrow(MinMax::min($widen(self.0), $widen(other.0)))) }
            #[inline(always)]
            fn max(self, other: Self) -> Self { $t($narrow(MinMax::max($widen(self.0), $widen(other.0)))) }
        }
    )*};
}
minmax_half!(F16, f16_to_f32, f32_to_f16; Bf16, bf16_to_f32, f32_to_bf16);

/// MPI_MIN.
pub(crate) fn min(ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    dispatch!(Op::Min, ty, args, MinMax::min;
        I8 => i8, U8 => u8, I16 => i16, U16 => u16,
        I32 => i32, U32 => u32, I64 => i64, U64 => u64,
        F32 => f32, F64 => f64, F16 => F16, Bf16 => Bf16,
    );
    Ok(())
}

/// MPI_MAX.
pub(crate) fn max(ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    dispatch!(Op::Max, ty, args, MinMax::max;
        I8 => i8, U8 => u8, I16 => i16, U16 => u16,
        I32 => i32, U32 => u32, I64 => i64, U64 => u64,
        F32 => f32, F64 => f64, F16 => F16, Bf16 => Bf16,
    );
    Ok(())
}
