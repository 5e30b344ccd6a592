//! Datatype handles: the builtin types (with the size in their bits), the
//! value-index pairs, and the direct handles of derived types.

use oxmpi::datatype::BasicType;

use super::encoding::{
    bits, direct, direct_index, invalid, kind, object, MPI_Datatype, Object, KIND_DIRECT,
};
use crate::errors::{AbiError, Class};

/// `MPI_DATATYPE_NULL`.
pub const DATATYPE_NULL: MPI_Datatype = 0x0c00_0000;

/// What the point-to-point layer needs to know about a datatype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeInfo {
    /// Bytes one element occupies in a contiguous buffer.
    pub extent: usize,
    /// Basic elements per element (2 for the value-index pairs).
    pub elements: usize,
}

/// Every builtin datatype handle of the MPICH ABI with its C name.
pub const BUILTIN_DATATYPES: &[(MPI_Datatype, &str)] = &[
    (0x4c00_0101, "MPI_CHAR"),
    (0x4c00_0118, "MPI_SIGNED_CHAR"),
    (0x4c00_0102, "MPI_UNSIGNED_CHAR"),
    (0x4c00_010d, "MPI_BYTE"),
    (0x4c00_040e, "MPI_WCHAR"),
    (0x4c00_0203, "MPI_SHORT"),
    (0x4c00_0204, "MPI_UNSIGNED_SHORT"),
    (0x4c00_0405, "MPI_INT"),
    (0x4c00_0406, "MPI_UNSIGNED"),
    (0x4c00_0807, "MPI_LONG"),
    (0x4c00_0808, "MPI_UNSIGNED_LONG"),
    (0x4c00_0809, "MPI_LONG_LONG_INT"),
    (0x4c00_0819, "MPI_UNSIGNED_LONG_LONG"),
    (0x4c00_040a, "MPI_FLOAT"),
    (0x4c00_080b, "MPI_DOUBLE"),
    (0x4c00_100c, "MPI_LONG_DOUBLE"),
    (0x4c00_010f, "MPI_PACKED"),
    (0x4c00_0816, "MPI_2INT"),
    (0x4c00_0137, "MPI_INT8_T"),
    (0x4c00_0238, "MPI_INT16_T"),
    (0x4c00_0439, "MPI_INT32_T"),
    (0x4c00_083a, "MPI_INT64_T"),
    (0x4c00_013b, "MPI_UINT8_T"),
    (0x4c00_023c, "MPI_UINT16_T"),
    (0x4c00_043d, "MPI_UINT32_T"),
    (0x4c00_083e, "MPI_UINT64_T"),
    (0x4c00_013f, "MPI_C_BOOL"),
    (0x4c00_0840, "MPI_C_FLOAT_COMPLEX"),
    (0x4c00_1041, "MPI_C_DOUBLE_COMPLEX"),
    (0x4c00_2042, "MPI_C_LONG_DOUBLE_COMPLEX"),
    (0x4c00_0246, "MPIX_C_FLOAT16"),
    (0x4c00_0247, "MPIX_BFLOAT16"), // OxMPI's own: MPICH 4.0.2 has none
    (0x4c00_0843, "MPI_AINT"),
    (0x4c00_0844, "MPI_OFFSET"),
    (0x4c00_0845, "MPI_COUNT"),
    (0x4c00_0133, "MPI_CXX_BOOL"),
    (0x4c00_0834, "MPI_CXX_FLOAT_COMPLEX"),
    (0x4c00_1035, "MPI_CXX_DOUBLE_COMPLEX"),
    (0x4c00_2036, "MPI_CXX_LONG_DOUBLE_COMPLEX"),
    (0x4c00_011a, "MPI_CHARACTER"),
    (0x4c00_041d, "MPI_LOGICAL"),
    (0x4c00_041b, "MPI_INTEGER"),
    (0x4c00_041c, "MPI_REAL"),
    (0x4c00_081f, "MPI_DOUBLE_PRECISION"),
    (0x4c00_081e, "MPI_COMPLEX"),
    (0x4c00_1022, "MPI_DOUBLE_COMPLEX"),
    (0x4c00_0820, "MPI_2INTEGER"),
    (0x4c00_0821, "MPI_2REAL"),
    (0x4c00_1023, "MPI_2DOUBLE_PRECISION"),
    (0x4c00_012d, "MPI_INTEGER1"),
    (0x4c00_022f, "MPI_INTEGER2"),
    (0x4c00_0430, "MPI_INTEGER4"),
    (0x4c00_0831, "MPI_INTEGER8"),
    (0x4c00_0427, "MPI_REAL4"),
    (0x4c00_0829, "MPI_REAL8"),
    (0x4c00_102b, "MPI_REAL16"),
    (0x4c00_0828, "MPI_COMPLEX8"),
    (0x4c00_102a, "MPI_COMPLEX16"),
    (0x4c00_202c, "MPI_COMPLEX32"),
];

/// The value-index pair types: (handle, name, extent in bytes of the C
/// struct { value; int }).
pub const PAIR_DATATYPES: &[(MPI_Datatype, &str, usize)] = &[
    (bits(0x8c00_0000), "MPI_FLOAT_INT", 8),
    (bits(0x8c00_0001), "MPI_DOUBLE_INT", 16),
    (bits(0x8c00_0002), "MPI_LONG_INT", 16),
    (bits(0x8c00_0003), "MPI_SHORT_INT", 8),
    (bits(0x8c00_0004), "MPI_LONG_DOUBLE_INT", 32),
];

/// The entry of [`BUILTIN_DATATYPES`] for `h`, found by the handle's low
/// byte (unique among builtins) and one comparison: datatypes are decoded
/// on every data-moving call.
fn builtin_datatype(h: MPI_Datatype) -> Option<&'static (MPI_Datatype, &'static str)> {
    use std::sync::OnceLock;
    static BY_INDEX: OnceLock<Vec<Option<usize>>> = OnceLock::new();
    if kind(h) != 1 || object(h) != Object::Datatype as u32 {
        return None;
    }
    let by_index = BY_INDEX.get_or_init(|| {
        let mut v = vec![None; 256];
        for (i, &(b, _)) in BUILTIN_DATATYPES.iter().enumerate() {
            v[(b & 0xff) as usize] = Some(i);
        }
        v
    });
    by_index[(h & 0xff) as usize]
        .map(|i| &BUILTIN_DATATYPES[i])
        .filter(|b| b.0 == h)
}

/// The C name of a predefined datatype handle.
pub fn datatype_name(h: MPI_Datatype) -> Option<&'static str> {
    builtin_datatype(h)
        .map(|(_, n)| *n)
        .or_else(|| PAIR_DATATYPES.iter().find(|p| p.0 == h).map(|p| p.1))
}

/// Decodes a datatype handle (predefined types only, for now).
pub fn datatype(h: MPI_Datatype) -> Result<TypeInfo, AbiError> {
    if builtin_datatype(h).is_some() {
        return Ok(TypeInfo {
            extent: (h as u32 >> 8 & 0xff) as usize,
            elements: 1,
        });
    }
    if let Some(&(_, _, extent)) = PAIR_DATATYPES.iter().find(|p| p.0 == h) {
        return Ok(TypeInfo {
            extent,
            elements: 2,
        });
    }
    Err(match h {
        DATATYPE_NULL => AbiError::new(Class::TYPE, "the datatype is MPI_DATATYPE_NULL"),
        0x4c00_0010 | 0x4c00_0011 => AbiError::new(
            Class::TYPE,
            "MPI_LB and MPI_UB were removed in MPI-3 and cannot be used",
        ),
        _ if object(h) == Object::Datatype as u32 && kind(h) == KIND_DIRECT => AbiError::new(
            Class::TYPE,
            format!(
                "datatype {h:#010x} is a derived datatype; the C interface supports only \
                 predefined datatypes so far"
            ),
        ),
        _ => invalid(Class::TYPE, "datatype", h),
    })
}

/// A predefined datatype handle, decoded for the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predefined {
    /// One of the runtime's basic types.
    Basic(BasicType),
    /// A type the runtime has no basic type for (`MPI_REAL16`,
    /// `MPI_COMPLEX32`): that many opaque bytes.
    Bytes(usize),
}

/// Decodes a predefined datatype handle (builtins and the value-index
/// pairs); `None` for anything else.
#[inline]
pub fn predefined_type(h: MPI_Datatype) -> Option<Predefined> {
    use std::sync::OnceLock;
    // Builtin handles are unique in their low byte; pairs use slots 0..=4.
    // By low byte: (handle, type), so that a lookup is one comparison (it
    // runs on every point-to-point call).
    type ByIndex = Vec<Option<(MPI_Datatype, Predefined)>>;
    static TABLE: OnceLock<(ByIndex, Vec<Predefined>)> = OnceLock::new();
    let (by_index, pairs) = TABLE.get_or_init(|| {
        let find = |name: &str| {
            let name = if name == "MPI_LONG_LONG_INT" {
                "MPI_LONG_LONG"
            } else {
                name
            };
            BasicType::ALL.iter().copied().find(|b| b.name() == name)
        };
        let mut by_index = vec![None; 256];
        for &(h, name) in BUILTIN_DATATYPES {
            let size = (h as u32 >> 8 & 0xff) as usize;
            by_index[(h & 0xff) as usize] = Some((
                h,
                find(name).map_or(Predefined::Bytes(size), Predefined::Basic),
            ));
        }
        let pairs = PAIR_DATATYPES
            .iter()
            .map(|&(_, name, _)| Predefined::Basic(find(name).expect("pair types are basic")))
            .collect();
        (by_index, pairs)
    });
    if kind(h) == 1 && object(h) == Object::Datatype as u32 {
        return by_index[(h & 0xff) as usize]
            .filter(|&(v, _)| v == h)
            .map(|(_, p)| p);
    }
    PAIR_DATATYPES
        .iter()
        .position(|p| p.0 == h)
        .map(|i| pairs[i])
}

/// Direct datatype slots below this are the value-index pairs (and spare);
/// derived types start here.
pub const FIRST_DERIVED_TYPE_INDEX: usize = 8;

/// The type table slot of a derived datatype handle (not checked to be live).
pub fn derived_type_slot(h: MPI_Datatype) -> Option<usize> {
    direct_index(h, Object::Datatype)
        .filter(|&i| i >= FIRST_DERIVED_TYPE_INDEX)
        .map(|i| i - FIRST_DERIVED_TYPE_INDEX)
}

/// The handle of derived-type table slot `slot`.
pub fn derived_type_handle(slot: usize) -> MPI_Datatype {
    direct(Object::Datatype, slot + FIRST_DERIVED_TYPE_INDEX)
}

/// The error for a datatype handle that is neither predefined nor derived.
pub fn bad_datatype(h: MPI_Datatype) -> AbiError {
    match h {
        DATATYPE_NULL => AbiError::new(Class::TYPE, "the datatype is MPI_DATATYPE_NULL"),
        MPI_LB | MPI_UB => AbiError::new(
            Class::TYPE,
            "MPI_LB and MPI_UB were removed in MPI-3 and cannot be used",
        ),
        _ => invalid(Class::TYPE, "datatype", h),
    }
}

/// `MPI_LB` (MPI-1 marker, removed in MPI-3; accepted by `MPI_Type_struct`).
pub const MPI_LB: MPI_Datatype = 0x4c00_0010;
/// `MPI_UB`.
pub const MPI_UB: MPI_Datatype = 0x4c00_0011;
