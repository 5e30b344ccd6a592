//! The predefined (basic) datatypes of the MPICH ABI: size, alignment,
//! extent and the element kind the reduction kernels dispatch on.
//!
//! Sizes and alignments are those of the C types on the LP64 Linux targets
//! OxMPI supports (x86_64, aarch64): `long` is 8 bytes, `wchar_t` 4,
//! `long double` 16 (x87 80-bit padded on x86_64, treated as opaque bytes).

use std::mem::{align_of, size_of};
use std::os::raw::c_long;

use oxmpi_kernels::ElemType;

const LONG: usize = size_of::<c_long>();
const LONG_ALIGN: usize = align_of::<c_long>();
const LONG_KIND: ElementKind = if LONG == 8 {
    ElementKind::I64
} else {
    ElementKind::I32
};
const ULONG_KIND: ElementKind = if LONG == 8 {
    ElementKind::U64
} else {
    ElementKind::U32
};
/// `sizeof(long double)` and its alignment.
const LDBL: usize = 16;

/// What one basic element is, for the reduction kernels.
///
/// ```
/// use oxmpi::datatype::{BasicType, ElementKind, PairKind};
/// assert_eq!(BasicType::Double.kind(), ElementKind::F64);
/// assert_eq!(BasicType::Byte.kind(), ElementKind::Opaque);
/// assert_eq!(BasicType::DoubleInt.kind(), ElementKind::Pair(PairKind::F64I32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// C `long double` (16 bytes); opaque to the kernels.
    LongDouble,
    /// Complex of two `f32`.
    ComplexF32,
    /// Complex of two `f64`.
    ComplexF64,
    /// Complex of two `long double`; opaque to the kernels.
    ComplexLongDouble,
    /// C / C++ `bool` (1 byte, 0 or 1).
    Bool,
    /// Fortran `LOGICAL` (4 bytes, non-zero is true).
    Logical,
    /// A value-and-index pair for `MPI_MINLOC` / `MPI_MAXLOC`.
    Pair(PairKind),
    /// Bytes with no arithmetic meaning (`MPI_BYTE`, `MPI_PACKED`, ...).
    Opaque,
}

/// Layout of a pair type: the value's kind, then the index's.
///
/// ```
/// use oxmpi::datatype::{BasicType, ElementKind, PairKind};
/// assert_eq!(BasicType::TwoInt.kind(), ElementKind::Pair(PairKind::I32I32));
/// assert_eq!(BasicType::ShortInt.kind(), ElementKind::Pair(PairKind::I16I32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PairKind {
    /// `{float; int}`
    F32I32,
    /// `{double; int}`
    F64I32,
    /// `{long; int}`
    LongI32,
    /// `{int; int}`
    I32I32,
    /// `{short; int}`
    I16I32,
    /// `{long double; int}`
    LongDoubleI32,
    /// Fortran `{REAL; REAL}`
    F32F32,
    /// Fortran `{DOUBLE PRECISION; DOUBLE PRECISION}`
    F64F64,
}

macro_rules! basic_types {
    ($($var:ident = $name:literal, $size:expr, $align:expr, $kind:expr;)*) => {
        /// A predefined MPI datatype (`MPI_INT`, `MPI_DOUBLE_INT`, ...).
        ///
        /// ```
        /// use oxmpi::datatype::{BasicType, ElementKind};
        /// let t = BasicType::ShortInt;
        /// assert_eq!(t.name(), "MPI_SHORT_INT");
        /// assert_eq!((t.size(), t.true_extent(), t.extent(), t.align()), (6, 8, 8, 4));
        /// assert_eq!(BasicType::Float.kind(), ElementKind::F32);
        /// assert!(BasicType::ALL.contains(&BasicType::Int));
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum BasicType {
            $(#[doc = concat!("`", $name, "`")] $var,)*
        }

        impl BasicType {
            /// Every basic type.
            ///
            /// See the example on [`BasicType`].
            pub const ALL: &'static [BasicType] = &[$(BasicType::$var),*];

            /// The MPI name, e.g. `"MPI_DOUBLE_INT"`.
            ///
            /// See the example on [`BasicType`].
            pub const fn name(self) -> &'static str {
                match self { $(BasicType::$var => $name,)* }
            }

            /// Bytes of data in one element (`MPI_Type_size`): 12 for
            /// `MPI_DOUBLE_INT`, whose extent is 16.
            ///
            /// See the example on [`BasicType`].
            pub const fn size(self) -> usize {
                match self { $(BasicType::$var => $size,)* }
            }

            /// The C alignment of the type (of the struct, for pairs).
            ///
            /// See the example on [`BasicType`].
            pub const fn align(self) -> usize {
                match self { $(BasicType::$var => $align,)* }
            }

            /// What the reduction kernels see.
            ///
            /// See the example on [`BasicType`].
            pub const fn kind(self) -> ElementKind {
                match self { $(BasicType::$var => $kind,)* }
            }
        }
    };
}

use ElementKind as K;
basic_types! {
    Char = "MPI_CHAR", 1, 1, K::I8;
    SignedChar = "MPI_SIGNED_CHAR", 1, 1, K::I8;
    UnsignedChar = "MPI_UNSIGNED_CHAR", 1, 1, K::U8;
    Byte = "MPI_BYTE", 1, 1, K::Opaque;
    Packed = "MPI_PACKED", 1, 1, K::Opaque;
    WChar = "MPI_WCHAR", 4, 4, K::I32;
    Short = "MPI_SHORT", 2, 2, K::I16;
    UnsignedShort = "MPI_UNSIGNED_SHORT", 2, 2, K::U16;
    Int = "MPI_INT", 4, 4, K::I32;
    Unsigned = "MPI_UNSIGNED", 4, 4, K::U32;
    Long = "MPI_LONG", LONG, LONG_ALIGN, LONG_KIND;
    UnsignedLong = "MPI_UNSIGNED_LONG", LONG, LONG_ALIGN, ULONG_KIND;
    LongLong = "MPI_LONG_LONG", 8, 8, K::I64;
    UnsignedLongLong = "MPI_UNSIGNED_LONG_LONG", 8, 8, K::U64;
    Float = "MPI_FLOAT", 4, 4, K::F32;
    Double = "MPI_DOUBLE", 8, 8, K::F64;
    LongDouble = "MPI_LONG_DOUBLE", LDBL, LDBL, K::LongDouble;
    CBool = "MPI_C_BOOL", 1, 1, K::Bool;
    Int8 = "MPI_INT8_T", 1, 1, K::I8;
    Int16 = "MPI_INT16_T", 2, 2, K::I16;
    Int32 = "MPI_INT32_T", 4, 4, K::I32;
    Int64 = "MPI_INT64_T", 8, 8, K::I64;
    Uint8 = "MPI_UINT8_T", 1, 1, K::U8;
    Uint16 = "MPI_UINT16_T", 2, 2, K::U16;
    Uint32 = "MPI_UINT32_T", 4, 4, K::U32;
    Uint64 = "MPI_UINT64_T", 8, 8, K::U64;
    Aint = "MPI_AINT", 8, 8, K::I64;
    Offset = "MPI_OFFSET", 8, 8, K::I64;
    Count = "MPI_COUNT", 8, 8, K::I64;
    CFloatComplex = "MPI_C_FLOAT_COMPLEX", 8, 4, K::ComplexF32;
    CDoubleComplex = "MPI_C_DOUBLE_COMPLEX", 16, 8, K::ComplexF64;
    CLongDoubleComplex = "MPI_C_LONG_DOUBLE_COMPLEX", 2 * LDBL, LDBL, K::ComplexLongDouble;
    CxxBool = "MPI_CXX_BOOL", 1, 1, K::Bool;
    CxxFloatComplex = "MPI_CXX_FLOAT_COMPLEX", 8, 4, K::ComplexF32;
    CxxDoubleComplex = "MPI_CXX_DOUBLE_COMPLEX", 16, 8, K::ComplexF64;
    CxxLongDoubleComplex = "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * LDBL, LDBL, K::ComplexLongDouble;
    FloatInt = "MPI_FLOAT_INT", 8, 4, K::Pair(PairKind::F32I32);
    DoubleInt = "MPI_DOUBLE_INT", 12, 8, K::Pair(PairKind::F64I32);
    LongInt = "MPI_LONG_INT", LONG + 4, LONG_ALIGN, K::Pair(PairKind::LongI32);
    TwoInt = "MPI_2INT", 8, 4, K::Pair(PairKind::I32I32);
    ShortInt = "MPI_SHORT_INT", 6, 4, K::Pair(PairKind::I16I32);
    LongDoubleInt = "MPI_LONG_DOUBLE_INT", LDBL + 4, LDBL, K::Pair(PairKind::LongDoubleI32);
    Float16 = "MPIX_C_FLOAT16", 2, 2, K::F16;
    BFloat16 = "MPIX_BFLOAT16", 2, 2, K::BF16;
    Character = "MPI_CHARACTER", 1, 1, K::Opaque;
    Logical = "MPI_LOGICAL", 4, 4, K::Logical;
    Integer = "MPI_INTEGER", 4, 4, K::I32;
    Real = "MPI_REAL", 4, 4, K::F32;
    DoublePrecision = "MPI_DOUBLE_PRECISION", 8, 8, K::F64;
    Complex = "MPI_COMPLEX", 8, 4, K::ComplexF32;
    DoubleComplex = "MPI_DOUBLE_COMPLEX", 16, 8, K::ComplexF64;
    Integer1 = "MPI_INTEGER1", 1, 1, K::I8;
    Integer2 = "MPI_INTEGER2", 2, 2, K::I16;
    Integer4 = "MPI_INTEGER4", 4, 4, K::I32;
    Integer8 = "MPI_INTEGER8", 8, 8, K::I64;
    Real4 = "MPI_REAL4", 4, 4, K::F32;
    Real8 = "MPI_REAL8", 8, 8, K::F64;
    Complex8 = "MPI_COMPLEX8", 8, 4, K::ComplexF32;
    Complex16 = "MPI_COMPLEX16", 16, 8, K::ComplexF64;
    TwoReal = "MPI_2REAL", 8, 4, K::Pair(PairKind::F32F32);
    TwoDoublePrecision = "MPI_2DOUBLE_PRECISION", 16, 8, K::Pair(PairKind::F64F64);
    TwoInteger = "MPI_2INTEGER", 8, 4, K::Pair(PairKind::I32I32);
}

impl BasicType {
    /// For a pair type: the value's type, the index's byte offset and the
    /// index's type (`MPI_SHORT_INT` is `(Short, 4, Int)`); `None` otherwise.
    ///
    /// ```
    /// use oxmpi::datatype::BasicType;
    /// assert_eq!(BasicType::DoubleInt.pair(), Some((BasicType::Double, 8, BasicType::Int)));
    /// assert_eq!(BasicType::Double.pair(), None);
    /// ```
    pub const fn pair(self) -> Option<(BasicType, usize, BasicType)> {
        use BasicType as B;
        Some(match self {
            B::FloatInt => (B::Float, 4, B::Int),
            B::DoubleInt => (B::Double, 8, B::Int),
            B::LongInt => (B::Long, LONG, B::Int),
            B::TwoInt => (B::Int, 4, B::Int),
            B::ShortInt => (B::Short, 4, B::Int),
            B::LongDoubleInt => (B::LongDouble, LDBL, B::Int),
            B::TwoReal => (B::Real, 4, B::Real),
            B::TwoDoublePrecision => (B::DoublePrecision, 8, B::DoublePrecision),
            B::TwoInteger => (B::Integer, 4, B::Integer),
            _ => return None,
        })
    }

    /// The kernel element type built-in reductions use for one element of
    /// this type as it packs: every integer, float, complex and bool type,
    /// and `MPI_BYTE`; `None` for the pairs (which pack without their
    /// padding, see [`BasicType::pair`]), `long double` types, Fortran
    /// `LOGICAL`, and opaque bytes other than `MPI_BYTE`.
    ///
    /// ```
    /// use oxmpi::datatype::BasicType;
    /// use oxmpi::ops::ElemType;
    /// assert_eq!(BasicType::Double.elem_type(), Some(ElemType::F64));
    /// assert_eq!(BasicType::Long.elem_type(), Some(ElemType::I64)); // LP64
    /// assert_eq!(BasicType::Byte.elem_type(), Some(ElemType::Byte));
    /// assert_eq!(BasicType::Packed.elem_type(), None);
    /// assert_eq!(BasicType::DoubleInt.elem_type(), None);
    /// ```
    pub const fn elem_type(self) -> Option<ElemType> {
        use ElementKind as K;
        Some(match self.kind() {
            K::I8 => ElemType::I8,
            K::I16 => ElemType::I16,
            K::I32 => ElemType::I32,
            K::I64 => ElemType::I64,
            K::U8 => ElemType::U8,
            K::U16 => ElemType::U16,
            K::U32 => ElemType::U32,
            K::U64 => ElemType::U64,
            K::F16 => ElemType::F16,
            K::BF16 => ElemType::Bf16,
            K::F32 => ElemType::F32,
            K::F64 => ElemType::F64,
            K::ComplexF32 => ElemType::ComplexF32,
            K::ComplexF64 => ElemType::ComplexF64,
            K::Bool => ElemType::Bool,
            K::Opaque if matches!(self, BasicType::Byte) => ElemType::Byte,
            _ => return None,
        })
    }

    /// Byte just past the last data byte (the true upper bound): 12 for
    /// `MPI_DOUBLE_INT`, 8 for `MPI_SHORT_INT` (whose size is 6).
    ///
    /// See the example on [`BasicType`].
    pub const fn true_extent(self) -> usize {
        match self.pair() {
            Some((_, off, second)) => off + second.size(),
            None => self.size(),
        }
    }

    /// Distance between consecutive elements: the C `sizeof`, padding
    /// included (16 for `MPI_DOUBLE_INT`).
    ///
    /// See the example on [`BasicType`].
    pub const fn extent(self) -> usize {
        let end = self.true_extent();
        end.div_ceil(self.align()) * self.align()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_layouts_match_the_c_structs() {
        #[repr(C)]
        struct Pair<A, B>(A, B);
        let check = |t: BasicType, size: usize, align: usize| {
            assert_eq!((t.extent(), t.align()), (size, align), "{}", t.name());
        };
        check(BasicType::FloatInt, size_of::<Pair<f32, i32>>(), 4);
        check(BasicType::DoubleInt, size_of::<Pair<f64, i32>>(), 8);
        check(BasicType::LongInt, size_of::<Pair<c_long, i32>>(), 8);
        check(BasicType::ShortInt, size_of::<Pair<i16, i32>>(), 4);
        check(BasicType::TwoInt, 8, 4);
        check(BasicType::LongDoubleInt, 32, 16);
        assert_eq!(BasicType::DoubleInt.size(), 12);
        assert_eq!(BasicType::ShortInt.true_extent(), 8);
        for (i, &t) in BasicType::ALL.iter().enumerate() {
            assert_eq!(t as usize, i, "ALL is in declaration order");
            assert!(t.extent() >= t.size() && t.size() > 0, "{}", t.name());
            if let Some((a, off, b)) = t.pair() {
                assert_eq!(a.size() + b.size(), t.size(), "{}", t.name());
                assert!(off >= a.size());
            }
        }
    }
}
