//! Datatypes as the collectives use them: predefined ones as contiguous
//! elements of a kernel type, derived ones as their packed bytes.

use std::ffi::c_int;

use oxmpi::datatype::{BasicType, Datatype};
use oxmpi::ops::ElemType;

use crate::api::datatype::query::committed;
use crate::errors::{AbiError, Class};
use crate::handles::{self, MPI_Datatype};

/// A datatype as the collectives use it.
#[derive(Debug, Clone)]
pub struct Ty {
    /// The C handle (handed to user operations).
    pub handle: MPI_Datatype,
    /// Bytes from one element to the next in the program's buffer.
    pub extent: usize,
    /// Bytes per element in what the runtime moves: the extent of a
    /// predefined type, the packed size of a derived one.
    pub unit: usize,
    /// The kernel type built-in operations use (`None`: user operations
    /// only); for a derived type, the one predefined type it is made of.
    pub elem: Option<ElemType>,
    /// Basic elements per element (1 for predefined types, whose pairs
    /// reduce as a whole).
    pub per: usize,
    /// The datatype's C name (`"a derived datatype"` for derived ones).
    pub name: &'static str,
    /// For a derived type: how its data is reached.
    pub derived: Option<Derived>,
}

/// A derived datatype in a collective.
#[derive(Debug, Clone)]
pub struct Derived {
    /// The committed type.
    pub dt: Datatype,
    /// Whether `count` elements are one run of packed bytes (used in
    /// place, from `true_lb`).
    pub contiguous: bool,
    /// Offset of the first data byte from the buffer address.
    pub true_lb: isize,
}

/// The kernel element type of a predefined datatype, by its C name.
pub fn elem_type(name: &str) -> Option<ElemType> {
    use ElemType::*;
    Some(match name {
        "MPI_CHAR" | "MPI_SIGNED_CHAR" | "MPI_INT8_T" | "MPI_INTEGER1" => I8,
        "MPI_UNSIGNED_CHAR" | "MPI_UINT8_T" => U8,
        "MPI_BYTE" => Byte,
        "MPI_SHORT" | "MPI_INT16_T" | "MPI_INTEGER2" => I16,
        "MPI_UNSIGNED_SHORT" | "MPI_UINT16_T" => U16,
        "MPI_INT" | "MPI_INT32_T" | "MPI_INTEGER" | "MPI_INTEGER4" => I32,
        "MPI_UNSIGNED" | "MPI_UINT32_T" => U32,
        "MPI_LONG" | "MPI_LONG_LONG_INT" | "MPI_LONG_LONG" | "MPI_INT64_T" | "MPI_AINT"
        | "MPI_OFFSET" | "MPI_COUNT" | "MPI_INTEGER8" => I64,
        "MPI_UNSIGNED_LONG" | "MPI_UNSIGNED_LONG_LONG" | "MPI_UINT64_T" => U64,
        "MPI_FLOAT" | "MPI_REAL" | "MPI_REAL4" => F32,
        "MPI_DOUBLE" | "MPI_DOUBLE_PRECISION" | "MPI_REAL8" => F64,
        "MPIX_C_FLOAT16" => F16,
        "MPIX_BFLOAT16" => Bf16,
        "MPI_C_BOOL" | "MPI_CXX_BOOL" => Bool,
        "MPI_C_FLOAT_COMPLEX" | "MPI_CXX_FLOAT_COMPLEX" | "MPI_COMPLEX" | "MPI_COMPLEX8" => {
            ComplexF32
        }
        "MPI_C_DOUBLE_COMPLEX"
        | "MPI_CXX_DOUBLE_COMPLEX"
        | "MPI_DOUBLE_COMPLEX"
        | "MPI_COMPLEX16" => ComplexF64,
        "MPI_2INT" | "MPI_2INTEGER" => TwoInt,
        "MPI_FLOAT_INT" => FloatInt,
        "MPI_DOUBLE_INT" => DoubleInt,
        "MPI_LONG_INT" => LongInt,
        "MPI_SHORT_INT" => ShortInt,
        _ => return None,
    })
}

/// Prefixes an error's message with the argument it is about.
pub(super) fn about(arg: &str, mut e: AbiError) -> AbiError {
    e.message = format!("`{arg}`: {}", e.message);
    e
}

/// Decodes datatype argument `arg` (predefined, or derived and committed).
pub fn ty(h: MPI_Datatype, arg: &str) -> Result<Ty, AbiError> {
    if let Some(t) = builtin_ty(h) {
        return Ok(t.clone());
    }
    if let Some(name) = handles::datatype_name(h) {
        let info = handles::datatype(h).map_err(|e| about(arg, e))?;
        return Ok(Ty {
            handle: h,
            extent: info.extent,
            unit: info.extent,
            elem: elem_type(name),
            per: 1,
            name,
            derived: None,
        });
    }
    if handles::derived_type_slot(h).is_none() {
        return Err(about(
            arg,
            handles::datatype(h)
                .err()
                .unwrap_or_else(|| handles::bad_datatype(h)),
        ));
    }
    let dt = committed(h).map_err(|e| about(arg, e))?;
    let extent = usize::try_from(dt.extent()).map_err(|_| {
        AbiError::new(
            Class::TYPE,
            format!(
                "`{arg}` is datatype {h:#010x} with negative extent {}: not supported in \
                 collectives",
                dt.extent()
            ),
        )
    })?;
    Ok(Ty {
        handle: h,
        extent,
        unit: dt.size(),
        elem: dt.signature().uniform().and_then(BasicType::elem_type),
        per: dt.signature().len(),
        name: "a derived datatype",
        derived: Some(Derived {
            contiguous: dt.is_contiguous(),
            true_lb: dt.true_lb(),
            dt,
        }),
    })
}

/// The [`Ty`] of a builtin datatype handle, computed once per type (every
/// collective call asks): indexed by the handle's low byte, which is
/// unique among builtins.
pub(crate) fn builtin_ty(h: MPI_Datatype) -> Option<&'static Ty> {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<Option<Ty>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = vec![None; 256];
        for &(handle, name) in handles::BUILTIN_DATATYPES {
            if let Ok(info) = handles::datatype(handle) {
                t[(handle & 0xff) as usize] = Some(Ty {
                    handle,
                    extent: info.extent,
                    unit: info.extent,
                    elem: elem_type(name),
                    per: 1,
                    name,
                    derived: None,
                });
            }
        }
        t
    });
    table[(h & 0xff) as usize]
        .as_ref()
        .filter(|t| t.handle == h)
}

/// The integer types of count and displacement arguments: `int` in the
/// classic functions, `MPI_Count` / `MPI_Aint` in the `_c` (large count) ones.
pub trait Num: Copy + Into<i64> {}
impl Num for c_int {}
impl Num for i64 {}

/// Checks count argument `arg`.
pub(super) fn count(n: impl Num, arg: &str) -> Result<usize, AbiError> {
    let n: i64 = n.into();
    usize::try_from(n).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("`{arg}` is {n}: counts cannot be negative"),
        )
    })
}

/// Bytes the runtime moves for `n` elements of `t` (count argument `arg`).
pub(crate) fn bytes(n: impl Num, t: &Ty, arg: &str) -> Result<usize, AbiError> {
    let n: i64 = n.into();
    count(n, arg)?.checked_mul(t.unit).ok_or_else(|| {
        AbiError::new(
            Class::COUNT,
            format!("`{arg}` {n} of {} overflows the address space", t.name),
        )
    })
}
