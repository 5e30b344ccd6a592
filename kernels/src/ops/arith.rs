//! MPI_SUM and MPI_PROD: integers wrap (two's complement, as C unsigned
//! arithmetic), floats follow IEEE, f16 / bf16 compute in f32 and round once,
//! complex numbers multiply as (ac - bd) + (ad + bc)i.

use super::dispatch;
use crate::driver::Args;
use crate::elem::{Bf16, ComplexF32, ComplexF64, Pod, F16};
use crate::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use crate::{ElemType, KernelError, Op};

/// Addition and multiplication of one element type.
pub(crate) trait Arith: Pod {
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)]
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
        }
    )*};
}
arith_int!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, other: Self) -> Self { self + other }
            #[inline(always)]
            fn mul(self, other: Self) -> Self { self * other }
        }
    )*};
}
arith_float!(f32, f64);

macro_rules! arith_half {
    ($($t:ident, $widen:ident, $narrow:ident);*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, other: Self) -> Self { $t($narrow($widen(self.0) + $widen(other.0))) }
            #[inline(always)]
            fn mul(self, other: Self) -> Self { $t($narrow($widen(self.0) * $widen(other.0))) }
        }
    )*};
}
arith_half!(F16, f16_to_f32, f32_to_f16; Bf16, bf16_to_f32, f32_to_bf16);

macro_rules! arith_complex {
    ($($t:ident),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { $t { re: self.re + o.re, im: self.im + o.im } }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                $t { re: self.re * o.re - self.im * o.im, im: self.re * o.im + self.im * o.re }
            }
        }
    )*};
}
arith_complex!(ComplexF32, ComplexF64);

/// MPI_SUM. Complex sums run as float sums over the (re, im) components.
pub(crate) fn sum(ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    dispatch!(Op::Sum, ty, args, Arith::add;
        I8 => i8, U8 => u8, I16 => i16, U16 => u16,
        I32 => i32, U32 => u32, I64 => i64, U64 => u64,
        F32 => f32, F64 => f64, F16 => F16, Bf16 => Bf16,
        ComplexF32 => f32, ComplexF64 => f64,
    );
    Ok(())
}

/// MPI_PROD.
pub(crate) fn prod(ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    dispatch!(Op::Prod, ty, args, Arith::mul;
        I8 => i8, U8 => u8, I16 => i16, U16 => u16,
        I32 => i32, U32 => u32, I64 => i64, U64 => u64,
        F32 => f32, F64 => f64, F16 => F16, Bf16 => Bf16,
        ComplexF32 => ComplexF32, ComplexF64 => ComplexF64,
    );
    Ok(())
}
