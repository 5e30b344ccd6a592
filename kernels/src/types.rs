//! Element types the built-in reduction operations apply to.
//!
//! Layouts are the C ones of the platform (see [`crate::elem`] for the pair
//! structs and their const-asserted offsets). `long double` and
//! `MPI_LONG_DOUBLE_INT` are not supported: Rust has no `long double`, and
//! its x87 80-bit format would need a soft-float implementation.

/// The MPI groups of basic types that the standard's op table is written in
/// (MPI 4.1 section 6.9.2), plus the reduced-precision float extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// C integers (`MPI_INT`, `MPI_UINT64_T`, `MPI_SIGNED_CHAR`, ...).
    Integer,
    /// Floating point, including the f16 / bf16 extensions.
    Float,
    /// `MPI_C_FLOAT_COMPLEX`, `MPI_C_DOUBLE_COMPLEX`.
    Complex,
    /// `MPI_C_BOOL`.
    Logical,
    /// `MPI_BYTE`.
    Byte,
    /// The value-index pairs of `MPI_MINLOC` / `MPI_MAXLOC`.
    Pair,
}

/// One basic element type.
///
/// ```
/// use oxmpi_kernels::{ElemType, Group};
/// assert_eq!(ElemType::DoubleInt.size(), 16); // struct { double; int; } with 4 bytes of tail padding
/// assert_eq!(ElemType::ShortInt.size(), 8);
/// assert_eq!(ElemType::Bf16.group(), Group::Float);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// `int8_t` / `signed char`.
    I8,
    /// `uint8_t` / `unsigned char`.
    U8,
    /// `int16_t` / `short`.
    I16,
    /// `uint16_t` / `unsigned short`.
    U16,
    /// `int32_t` / `int`.
    I32,
    /// `uint32_t` / `unsigned`.
    U32,
    /// `int64_t` / `long` (LP64) / `long long`.
    I64,
    /// `uint64_t` / `unsigned long` (LP64).
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// IEEE 754 binary16 (extension; computed in f32, rounded to nearest even).
    F16,
    /// bfloat16 (extension; computed in f32, rounded to nearest even).
    Bf16,
    /// C `_Bool`, one byte; results are 0 or 1.
    Bool,
    /// `MPI_BYTE`: opaque bytes, bitwise operations only.
    Byte,
    /// `float _Complex`: (re, im) pair of f32.
    ComplexF32,
    /// `double _Complex`: (re, im) pair of f64.
    ComplexF64,
    /// `struct { float; int; }`, 8 bytes.
    FloatInt,
    /// `struct { double; int; }`, 16 bytes on LP64 (int at offset 8, 4 bytes padding).
    DoubleInt,
    /// `struct { long; int; }`, 16 bytes on LP64 (int at offset 8, 4 bytes padding).
    LongInt,
    /// `struct { int; int; }`, 8 bytes.
    TwoInt,
    /// `struct { short; int; }`, 8 bytes (2 bytes padding, int at offset 4).
    ShortInt,
}

impl ElemType {
    /// Every element type, in declaration order.
    pub const ALL: [ElemType; 21] = [
        ElemType::I8,
        ElemType::U8,
        ElemType::I16,
        ElemType::U16,
        ElemType::I32,
        ElemType::U32,
        ElemType::I64,
        ElemType::U64,
        ElemType::F32,
        ElemType::F64,
        ElemType::F16,
        ElemType::Bf16,
        ElemType::Bool,
        ElemType::Byte,
        ElemType::ComplexF32,
        ElemType::ComplexF64,
        ElemType::FloatInt,
        ElemType::DoubleInt,
        ElemType::LongInt,
        ElemType::TwoInt,
        ElemType::ShortInt,
    ];

    /// Size of one element in bytes, padding included (the C `sizeof`).
    pub const fn size(self) -> usize {
        use crate::elem::*;
        use std::mem::size_of;
        match self {
            ElemType::I8 | ElemType::U8 | ElemType::Bool | ElemType::Byte => 1,
            ElemType::I16 | ElemType::U16 | ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::I32 | ElemType::U32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::U64 | ElemType::F64 => 8,
            ElemType::ComplexF32 => size_of::<ComplexF32>(),
            ElemType::ComplexF64 => size_of::<ComplexF64>(),
            ElemType::FloatInt => size_of::<FloatInt>(),
            ElemType::DoubleInt => size_of::<DoubleInt>(),
            ElemType::LongInt => size_of::<LongInt>(),
            ElemType::TwoInt => size_of::<TwoInt>(),
            ElemType::ShortInt => size_of::<ShortInt>(),
        }
    }

    /// The MPI group the standard's op table uses for this type.
    pub const fn group(self) -> Group {
        match self {
            ElemType::I8
            | ElemType::U8
            | ElemType::I16
            | ElemType::U16
            | ElemType::I32
            | ElemType::U32
            | ElemType::I64
            | ElemType::U64 => Group::Integer,
            ElemType::F32 | ElemType::F64 | ElemType::F16 | ElemType::Bf16 => Group::Float,
            ElemType::Bool => Group::Logical,
            ElemType::Byte => Group::Byte,
            ElemType::ComplexF32 | ElemType::ComplexF64 => Group::Complex,
            ElemType::FloatInt
            | ElemType::DoubleInt
            | ElemType::LongInt
            | ElemType::TwoInt
            | ElemType::ShortInt => Group::Pair,
        }
    }

    /// The canonical MPI name, used in error messages (`MPI_FLOAT`, `MPI_INT32_T`, ...).
    /// The extensions use MPICH's names (`MPIX_C_FLOAT16`, `MPIX_BFLOAT16`).
    pub const fn mpi_name(self) -> &'static str {
        match self {
            ElemType::I8 => "MPI_INT8_T",
            ElemType::U8 => "MPI_UINT8_T",
            ElemType::I16 => "MPI_INT16_T",
            ElemType::U16 => "MPI_UINT16_T",
            ElemType::I32 => "MPI_INT32_T",
            ElemType::U32 => "MPI_UINT32_T",
            ElemType::I64 => "MPI_INT64_T",
            ElemType::U64 => "MPI_UINT64_T",
            ElemType::F32 => "MPI_FLOAT",
            ElemType::F64 => "MPI_DOUBLE",
            ElemType::F16 => "MPIX_C_FLOAT16",
            ElemType::Bf16 => "MPIX_BFLOAT16",
            ElemType::Bool => "MPI_C_BOOL",
            ElemType::Byte => "MPI_BYTE",
            ElemType::ComplexF32 => "MPI_C_FLOAT_COMPLEX",
            ElemType::ComplexF64 => "MPI_C_DOUBLE_COMPLEX",
            ElemType::FloatInt => "MPI_FLOAT_INT",
            ElemType::DoubleInt => "MPI_DOUBLE_INT",
            ElemType::LongInt => "MPI_LONG_INT",
            ElemType::TwoInt => "MPI_2INT",
            ElemType::ShortInt => "MPI_SHORT_INT",
        }
    }
}
