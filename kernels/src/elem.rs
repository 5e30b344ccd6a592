//! In-memory element representations the kernels compute on.
//!
//! Every type here is [`Pod`]: all bit patterns are valid and there are no
//! implicit padding bytes, so a byte buffer can be viewed as a slice of it.
//! Padding that C has is an explicit field, sized from the platform's
//! alignment, and asserted below against the C layouts (LP64: `long` is 8
//! bytes and `double` 8-aligned).

use std::mem::{align_of, offset_of, size_of};
use std::os::raw::c_long;

/// Plain old data: any bit pattern is a valid value and there is no implicit
/// padding, so `&[u8]` of the right length and alignment may be viewed as
/// `&[Self]` and written back byte for byte.
///
/// # Safety
/// Implementors must have no padding and no invalid bit patterns.
pub(crate) unsafe trait Pod: Copy + 'static {
    /// An all-zero value (used to initialise scratch buffers).
    const ZERO: Self;
}

macro_rules! pod_prim {
    ($($t:ty),*) => { $(unsafe impl Pod for $t { const ZERO: Self = 0 as $t; })* };
}
pod_prim!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// IEEE binary16, stored as its bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct F16(pub u16);

/// bfloat16, stored as its bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Bf16(pub u16);

/// C `float _Complex`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct ComplexF32 {
    pub re: f32,
    pub im: f32,
}

/// C `double _Complex`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct ComplexF64 {
    pub re: f64,
    pub im: f64,
}

/// `struct { float v; int i; }` (`MPI_FLOAT_INT`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct FloatInt {
    pub v: f32,
    pub i: i32,
}

/// `struct { double v; int i; }` (`MPI_DOUBLE_INT`): tail padding up to `double`'s alignment.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct DoubleInt {
    pub v: f64,
    pub i: i32,
    pub pad: [u8; align_of::<f64>() - 4],
}

/// `struct { long v; int i; }` (`MPI_LONG_INT`): tail padding up to `long`'s alignment.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct LongInt {
    pub v: c_long,
    pub i: i32,
    pub pad: [u8; align_of::<c_long>() - 4],
}

/// `struct { int v; int i; }` (`MPI_2INT`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct TwoInt {
    pub v: i32,
    pub i: i32,
}

/// `struct { short v; int i; }` (`MPI_SHORT_INT`): 2 bytes of padding before `i`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct ShortInt {
    pub v: i16,
    pub pad: [u8; 2],
    pub i: i32,
}

unsafe impl Pod for F16 {
    const ZERO: Self = F16(0);
}
unsafe impl Pod for Bf16 {
    const ZERO: Self = Bf16(0);
}
unsafe impl Pod for ComplexF32 {
    const ZERO: Self = ComplexF32 { re: 0.0, im: 0.0 };
}
unsafe impl Pod for ComplexF64 {
    const ZERO: Self = ComplexF64 { re: 0.0, im: 0.0 };
}
unsafe impl Pod for FloatInt {
    const ZERO: Self = FloatInt { v: 0.0, i: 0 };
}
unsafe impl Pod for DoubleInt {
    const ZERO: Self = DoubleInt {
        v: 0.0,
        i: 0,
        pad: [0; align_of::<f64>() - 4],
    };
}
unsafe impl Pod for LongInt {
    const ZERO: Self = LongInt {
        v: 0,
        i: 0,
        pad: [0; align_of::<c_long>() - 4],
    };
}
unsafe impl Pod for TwoInt {
    const ZERO: Self = TwoInt { v: 0, i: 0 };
}
unsafe impl Pod for ShortInt {
    const ZERO: Self = ShortInt {
        v: 0,
        pad: [0; 2],
        i: 0,
    };
}

// No implicit padding anywhere (the Pod contract), and the C layouts.
const _: () = {
    assert!(size_of::<ComplexF32>() == 8 && size_of::<ComplexF64>() == 16);
    assert!(size_of::<FloatInt>() == 8 && offset_of!(FloatInt, i) == 4);
    assert!(size_of::<DoubleInt>() == 8 + 4 + size_of::<[u8; align_of::<f64>() - 4]>());
    assert!(offset_of!(DoubleInt, i) == 8);
    assert!(size_of::<LongInt>() == size_of::<c_long>() + 4 + (align_of::<c_long>() - 4));
    assert!(offset_of!(LongInt, i) == size_of::<c_long>());
    assert!(size_of::<TwoInt>() == 8 && offset_of!(TwoInt, i) == 4);
    assert!(size_of::<ShortInt>() == 8 && offset_of!(ShortInt, i) == 4);
};

#[cfg(all(target_pointer_width = "64", not(windows)))]
const _: () = {
    // LP64 (Linux, macOS): the sizes the ElemType docs promise.
    assert!(size_of::<DoubleInt>() == 16 && size_of::<LongInt>() == 16);
    assert!(offset_of!(LongInt, i) == 8);
};
