//! Handle translation for the MPICH ABI: the one module that knows how C
//! handles are encoded, which values are special, and how an `MPI_Status`
//! is laid out. Everything else asks this module to decode a handle (with
//! validation: null and garbage handles become MPI errors, never a lookup
//! out of bounds) or to encode a new one. A second front end (the MPI-5
//! standard ABI, handles as pointers) would replace this module.
//!
//! # Handle bits (32-bit int)
//!
//! ```text
//!  31 30 | 29 .. 26 | 25 .. 0
//!  kind  | object   | payload
//! ```
//!
//! - kind: 0 invalid (the `*_NULL` handles), 1 builtin, 2 direct (an index
//!   into one of this library's tables), 3 indirect (not used by OxMPI);
//! - object: 1 comm, 2 group, 3 datatype, 4 file, 5 errhandler, 6 op,
//!   7 info, 8 win, 9 keyval, 0xb request (and message), 0xe session;
//! - builtin datatypes carry their size: `0x4c00SSII`, SS = bytes, II = index;
//! - the value-index pair types (`MPI_DOUBLE_INT`, ...) are the direct
//!   datatype handles 0..=4 (`0x8c000000..=0x8c000004`).
#![allow(non_camel_case_types)]

use std::ffi::{c_int, c_void};

use oxmpi::datatype::BasicType;
use oxmpi::Status;

use crate::errors::{AbiError, Class};

/// `MPI_Comm`.
pub type MPI_Comm = c_int;
/// `MPI_Datatype`.
pub type MPI_Datatype = c_int;
/// `MPI_Request`.
pub type MPI_Request = c_int;
/// `MPI_Message`.
pub type MPI_Message = c_int;
/// `MPI_Errhandler`.
pub type MPI_Errhandler = c_int;
/// `MPI_Op`.
pub type MPI_Op = c_int;
/// `MPI_Count` (and `MPI_Aint`, `MPI_Offset`): `long` on x86_64.
pub type MPI_Count = std::ffi::c_long;
/// `MPI_Aint`.
pub type MPI_Aint = std::ffi::c_long;

/// `MPI_Status`: 20 bytes, MPICH's field order. The count is in bytes:
/// `count_lo` holds bits 0..32, bits 31..1 of `count_hi_and_cancelled` hold
/// bits 32..63, bit 0 is the cancelled flag.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(non_snake_case)]
pub struct MPI_Status {
    /// Low 32 bits of the byte count.
    pub count_lo: c_int,
    /// High bits of the byte count, shifted left by one; bit 0: cancelled.
    pub count_hi_and_cancelled: c_int,
    /// Sender's rank.
    pub MPI_SOURCE: c_int,
    /// Message tag.
    pub MPI_TAG: c_int,
    /// Error code (set by multiple-completion calls only).
    pub MPI_ERROR: c_int,
}

/// `MPI_COMM_NULL`.
pub const COMM_NULL: MPI_Comm = 0x0400_0000;
/// `MPI_COMM_WORLD`.
pub const COMM_WORLD: MPI_Comm = 0x4400_0000;
/// `MPI_COMM_SELF`.
pub const COMM_SELF: MPI_Comm = 0x4400_0001;
/// `MPI_DATATYPE_NULL`.
pub const DATATYPE_NULL: MPI_Datatype = 0x0c00_0000;
/// `MPI_REQUEST_NULL` (also `MPI_MESSAGE_NULL`).
pub const REQUEST_NULL: MPI_Request = 0x2c00_0000;
/// `MPI_MESSAGE_NULL`.
pub const MESSAGE_NULL: MPI_Message = REQUEST_NULL;
/// `MPI_MESSAGE_NO_PROC`: the message of a matched probe of `MPI_PROC_NULL`.
pub const MESSAGE_NO_PROC: MPI_Message = 0x6c00_0000;
/// `MPI_ERRHANDLER_NULL`.
pub const ERRHANDLER_NULL: MPI_Errhandler = 0x1400_0000;
/// `MPI_ERRORS_ARE_FATAL`.
pub const ERRORS_ARE_FATAL: MPI_Errhandler = 0x5400_0000;
/// `MPI_ERRORS_RETURN`.
pub const ERRORS_RETURN: MPI_Errhandler = 0x5400_0001;
/// MPICH's `MPIR_ERRORS_THROW_EXCEPTIONS` (C++ bindings): returns, like `MPI_ERRORS_RETURN`.
pub const ERRORS_THROW_EXCEPTIONS: MPI_Errhandler = 0x5400_0002;
/// `MPI_ERRORS_ABORT`.
pub const ERRORS_ABORT: MPI_Errhandler = 0x5400_0003;
/// `MPI_OP_NULL`.
pub const OP_NULL: MPI_Op = 0x1800_0000;

/// `MPI_PROC_NULL`.
pub const PROC_NULL: c_int = -1;
/// `MPI_ANY_SOURCE`.
pub const ANY_SOURCE: c_int = -2;
/// `MPI_ANY_TAG`.
pub const ANY_TAG: c_int = -1;
/// `MPI_UNDEFINED`.
pub const UNDEFINED: c_int = -32766;
/// `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE`: `(MPI_Status *)1`.
pub const STATUS_IGNORE: usize = 1;
/// `MPI_IN_PLACE`: `(void *)-1`.
pub const IN_PLACE: usize = usize::MAX;
/// `MPI_BOTTOM`: `(void *)0`.
pub const BOTTOM: usize = 0;

/// The object field (bits 29..26) of a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Object {
    /// Communicator.
    Comm = 1,
    /// Group.
    Group = 2,
    /// Datatype.
    Datatype = 3,
    /// File.
    File = 4,
    /// Error handler.
    Errhandler = 5,
    /// Reduction operation.
    Op = 6,
    /// Info object.
    Info = 7,
    /// RMA window.
    Win = 8,
    /// Attribute key.
    Keyval = 9,
    /// Request (and matched-probe message).
    Request = 0xb,
    /// Session.
    Session = 0xe,
}

const KIND_DIRECT: u32 = 2;
/// Largest index a direct handle can carry (26 bits).
pub const MAX_INDEX: usize = (1 << 26) - 1;

/// A handle written as its unsigned bit pattern (e.g. `0x8c000001`).
pub const fn bits(x: u32) -> c_int {
    x as c_int
}

fn kind(h: c_int) -> u32 {
    (h as u32) >> 30
}

fn object(h: c_int) -> u32 {
    ((h as u32) >> 26) & 0xf
}

fn payload(h: c_int) -> usize {
    (h as u32 & 0x03ff_ffff) as usize
}

/// The direct handle of table slot `index` for an `obj` object.
pub fn direct(obj: Object, index: usize) -> c_int {
    assert!(
        index <= MAX_INDEX,
        "handle table index {index} exceeds 26 bits"
    );
    ((KIND_DIRECT << 30) | ((obj as u32) << 26) | index as u32) as c_int
}

/// If `h` is a direct handle of `obj`, its table index.
fn direct_index(h: c_int, obj: Object) -> Option<usize> {
    (kind(h) == KIND_DIRECT && object(h) == obj as u32).then(|| payload(h))
}

// ---------------------------------------------------------------- comms

/// Table slot of `MPI_COMM_WORLD`; user communicators start after `MPI_COMM_SELF`.
pub const WORLD_SLOT: usize = 0;
/// Table slot of `MPI_COMM_SELF`.
pub const SELF_SLOT: usize = 1;

/// The communicator table slot a handle names (not yet checked to be live).
pub fn comm_slot(h: MPI_Comm) -> Result<usize, AbiError> {
    match h {
        COMM_WORLD => Ok(WORLD_SLOT),
        COMM_SELF => Ok(SELF_SLOT),
        COMM_NULL => Err(AbiError::new(
            Class::COMM,
            "the communicator is MPI_COMM_NULL",
        )),
        _ => match direct_index(h, Object::Comm) {
            Some(i) if i > SELF_SLOT => Ok(i),
            _ => Err(invalid(Class::COMM, "communicator", h)),
        },
    }
}

/// The handle of communicator table slot `slot`.
pub fn comm_handle(slot: usize) -> MPI_Comm {
    match slot {
        WORLD_SLOT => COMM_WORLD,
        SELF_SLOT => COMM_SELF,
        _ => direct(Object::Comm, slot),
    }
}

fn invalid(class: Class, what: &str, h: c_int) -> AbiError {
    AbiError::new(
        class,
        format!("invalid {what} handle {h:#010x} (not a {what} of this library)"),
    )
}

// ------------------------------------------------------------ datatypes

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

// ---------------------------------------------------------------- info

/// `MPI_Info`.
pub type MPI_Info = c_int;
/// `MPI_INFO_NULL`.
pub const INFO_NULL: MPI_Info = 0x1c00_0000;
/// `MPI_INFO_ENV`.
pub const INFO_ENV: MPI_Info = 0x5c00_0001;

/// A decoded info handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoRef {
    /// `MPI_INFO_ENV` (read-only).
    Env,
    /// A user info object's table slot (not checked to be live).
    Slot(usize),
}

/// Decodes an info handle; `MPI_INFO_NULL` and garbage are errors.
pub fn info(h: MPI_Info) -> Result<InfoRef, AbiError> {
    match h {
        INFO_ENV => Ok(InfoRef::Env),
        INFO_NULL => Err(AbiError::new(Class(28), "the info is MPI_INFO_NULL")),
        _ => direct_index(h, Object::Info)
            .map(InfoRef::Slot)
            .ok_or_else(|| invalid(Class(28), "info", h)),
    }
}

/// The handle of info table slot `slot`.
pub fn info_handle(slot: usize) -> MPI_Info {
    direct(Object::Info, slot)
}

// ------------------------------------------------------------------ ops

/// The predefined reduction operations, in handle order (`0x58000001..`).
pub const BUILTIN_OPS: &[&str] = &[
    "MPI_MAX",
    "MPI_MIN",
    "MPI_SUM",
    "MPI_PROD",
    "MPI_LAND",
    "MPI_BAND",
    "MPI_LOR",
    "MPI_BOR",
    "MPI_LXOR",
    "MPI_BXOR",
    "MPI_MINLOC",
    "MPI_MAXLOC",
    "MPI_REPLACE",
    "MPI_NO_OP",
];

/// Decodes a predefined op handle: its index in [`BUILTIN_OPS`].
pub fn builtin_op(h: MPI_Op) -> Result<usize, AbiError> {
    let index = (h as u32).wrapping_sub(0x5800_0001) as usize;
    if index < BUILTIN_OPS.len() {
        Ok(index)
    } else if h == OP_NULL {
        Err(AbiError::new(Class::OP, "the operation is MPI_OP_NULL"))
    } else {
        Err(invalid(Class::OP, "operation", h))
    }
}

/// A decoded operation handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpRef {
    /// A predefined operation: its index in [`BUILTIN_OPS`].
    Builtin(usize),
    /// An operation made with `MPI_Op_create`: its table slot.
    User(usize),
}

/// Decodes an operation handle (user operations are not checked to be live).
pub fn op(h: MPI_Op) -> Result<OpRef, AbiError> {
    if let Some(slot) = direct_index(h, Object::Op) {
        return Ok(OpRef::User(slot));
    }
    builtin_op(h).map(OpRef::Builtin)
}

/// The handle of user operation table slot `slot`.
pub fn op_handle(slot: usize) -> MPI_Op {
    direct(Object::Op, slot)
}

// --------------------------------------------------------------- groups

/// `MPI_GROUP_NULL`.
pub const GROUP_NULL: MPI_Group = 0x0800_0000;
/// `MPI_GROUP_EMPTY`.
pub const GROUP_EMPTY: MPI_Group = 0x4800_0000;

/// `MPI_Group`.
pub type MPI_Group = c_int;

/// A decoded group handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupRef {
    /// `MPI_GROUP_EMPTY`.
    Empty,
    /// A group in the group table.
    Slot(usize),
}

/// Decodes a group handle (table slots are not checked to be live).
pub fn group(h: MPI_Group) -> Result<GroupRef, AbiError> {
    match h {
        GROUP_EMPTY => Ok(GroupRef::Empty),
        GROUP_NULL => Err(AbiError::new(Class::GROUP, "the group is MPI_GROUP_NULL")),
        _ => direct_index(h, Object::Group)
            .map(GroupRef::Slot)
            .ok_or_else(|| invalid(Class::GROUP, "group", h)),
    }
}

/// The handle of group table slot `slot`.
pub fn group_handle(slot: usize) -> MPI_Group {
    direct(Object::Group, slot)
}

// ------------------------------------------------------------- keyvals

/// `MPI_KEYVAL_INVALID`.
pub const KEYVAL_INVALID: c_int = 0x2400_0000;

/// The predefined communicator attributes, as (keyval handle, name).
pub const PREDEFINED_KEYVALS: &[(c_int, &str)] = &[
    (0x6440_0001, "MPI_TAG_UB"),
    (0x6440_0003, "MPI_HOST"),
    (0x6440_0005, "MPI_IO"),
    (0x6440_0007, "MPI_WTIME_IS_GLOBAL"),
    (0x6440_0009, "MPI_UNIVERSE_SIZE"),
    (0x6440_000b, "MPI_LASTUSEDCODE"),
    (0x6440_000d, "MPI_APPNUM"),
];

/// A decoded keyval handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyvalRef {
    /// A predefined attribute: its name (from [`PREDEFINED_KEYVALS`]).
    Predefined(&'static str),
    /// A keyval made with `MPI_Comm_create_keyval`: the runtime's keyval number.
    User(i32),
}

/// Decodes a keyval handle (user keyvals are not checked to be live).
pub fn keyval(h: c_int) -> Result<KeyvalRef, AbiError> {
    if let Some(&(_, name)) = PREDEFINED_KEYVALS.iter().find(|k| k.0 == h) {
        return Ok(KeyvalRef::Predefined(name));
    }
    match direct_index(h, Object::Keyval) {
        Some(i) if i > 0 => Ok(KeyvalRef::User(i as i32)),
        _ if h == KEYVAL_INVALID => Err(AbiError::new(
            Class::KEYVAL,
            "the keyval is MPI_KEYVAL_INVALID",
        )),
        _ => Err(invalid(Class::KEYVAL, "keyval", h)),
    }
}

/// The handle of the runtime's keyval number `raw`.
pub fn keyval_handle(raw: i32) -> c_int {
    direct(Object::Keyval, raw as usize)
}

// ---------------------------------------------------------- errhandlers

/// A decoded error handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errhandler {
    /// `MPI_ERRORS_ARE_FATAL`: report and end the job.
    Fatal,
    /// `MPI_ERRORS_RETURN` (and MPICH's throw-exceptions handler): return the code.
    Return,
    /// `MPI_ERRORS_ABORT`: report and abort (the communicator's processes).
    Abort,
    /// A handler made with `MPI_Comm_create_errhandler`: its table slot.
    User(usize),
}

/// Decodes an error handler handle (user handlers are not checked to be live).
pub fn errhandler(h: MPI_Errhandler) -> Result<Errhandler, AbiError> {
    match h {
        ERRORS_ARE_FATAL => Ok(Errhandler::Fatal),
        ERRORS_RETURN | ERRORS_THROW_EXCEPTIONS => Ok(Errhandler::Return),
        ERRORS_ABORT => Ok(Errhandler::Abort),
        ERRHANDLER_NULL => Err(AbiError::new(
            Class::ARG,
            "the error handler is MPI_ERRHANDLER_NULL",
        )),
        _ => direct_index(h, Object::Errhandler)
            .map(Errhandler::User)
            .ok_or_else(|| invalid(Class::ARG, "error handler", h)),
    }
}

/// The handle of a decoded error handler.
pub fn errhandler_handle(e: Errhandler) -> MPI_Errhandler {
    match e {
        Errhandler::Fatal => ERRORS_ARE_FATAL,
        Errhandler::Return => ERRORS_RETURN,
        Errhandler::Abort => ERRORS_ABORT,
        Errhandler::User(i) => direct(Object::Errhandler, i),
    }
}

// ------------------------------------------------- requests and messages

/// The request table slot of a live-looking request handle; `None` for
/// `MPI_REQUEST_NULL`.
pub fn request_slot(h: MPI_Request) -> Result<Option<usize>, AbiError> {
    if h == REQUEST_NULL {
        return Ok(None);
    }
    direct_index(h, Object::Request)
        .map(Some)
        .ok_or_else(|| invalid(Class::REQUEST, "request", h))
}

/// The handle of request table slot `slot`.
pub fn request_handle(slot: usize) -> MPI_Request {
    direct(Object::Request, slot)
}

/// A decoded message handle (matched probes keep messages in the request table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageRef {
    /// `MPI_MESSAGE_NO_PROC`: receiving it completes at once with an empty status.
    NoProc,
    /// A message held in request table slot.
    Slot(usize),
}

/// Decodes a message handle; `MPI_MESSAGE_NULL` is an error.
pub fn message(h: MPI_Message) -> Result<MessageRef, AbiError> {
    match h {
        MESSAGE_NO_PROC => Ok(MessageRef::NoProc),
        MESSAGE_NULL => Err(AbiError::new(
            Class::REQUEST,
            "the message is MPI_MESSAGE_NULL",
        )),
        _ => direct_index(h, Object::Request)
            .map(MessageRef::Slot)
            .ok_or_else(|| invalid(Class::REQUEST, "message", h)),
    }
}

// --------------------------------------------------------------- status

/// Whether a status pointer is `MPI_STATUS_IGNORE` / `MPI_STATUSES_IGNORE`.
#[inline]
pub fn status_ignored(p: *const MPI_Status) -> bool {
    p as usize == STATUS_IGNORE
}

/// The C status of a runtime status (`MPI_ERROR` is left as `error`).
#[inline]
pub fn c_status(s: &Status, error: c_int) -> MPI_Status {
    let count = s.count as u64;
    MPI_Status {
        count_lo: count as u32 as c_int,
        count_hi_and_cancelled: (((count >> 32) << 1) as u32 | u32::from(s.cancelled)) as c_int,
        MPI_SOURCE: s.source,
        MPI_TAG: s.tag,
        MPI_ERROR: error,
    }
}

/// The byte count stored in a C status.
pub fn status_bytes(s: &MPI_Status) -> u64 {
    u64::from(s.count_lo as u32) + (u64::from(s.count_hi_and_cancelled as u32 >> 1) << 32)
}

/// Stores a byte count in a C status, keeping its cancelled bit.
pub fn set_status_bytes(s: &mut MPI_Status, bytes: u64) {
    s.count_lo = bytes as u32 as c_int;
    s.count_hi_and_cancelled =
        ((((bytes >> 32) as u32) << 1) | (s.count_hi_and_cancelled as u32 & 1)) as c_int;
}

/// Whether a C status says cancelled.
pub fn status_cancelled(s: &MPI_Status) -> bool {
    s.count_hi_and_cancelled & 1 == 1
}

/// Writes a single-completion status (source, tag, count, cancelled; the
/// `MPI_ERROR` field is left alone, as MPI specifies) unless ignored.
///
/// # Safety
/// `p` is `MPI_STATUS_IGNORE`, or valid for writes of one `MPI_Status`.
#[inline]
pub unsafe fn write_status(p: *mut MPI_Status, s: &Status) {
    if status_ignored(p) || p.is_null() {
        return;
    }
    // SAFETY: the caller's contract; MPI_ERROR is read before being kept.
    unsafe {
        let error = (*p).MPI_ERROR;
        *p = c_status(s, error);
    }
}

// -------------------------------------------------------------- buffers

/// The status of a null or inactive request.
pub fn empty_status() -> Status {
    Status {
        source: ANY_SOURCE,
        tag: ANY_TAG,
        ..Status::empty()
    }
}

#[cold]
fn in_place_p2p(arg: &'static str) -> AbiError {
    AbiError::new(
        Class::BUFFER,
        format!("`{arg}` is MPI_IN_PLACE, which point-to-point operations do not accept"),
    )
}

/// Checks a count argument and computes the bytes of `count` elements.
pub fn bytes(count: MPI_Count, ty: TypeInfo) -> Result<usize, AbiError> {
    let n = usize::try_from(count).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("invalid count {count}: counts cannot be negative"),
        )
    })?;
    n.checked_mul(ty.extent).ok_or_else(|| {
        AbiError::new(
            Class::COUNT,
            format!(
                "count {count} of {}-byte elements overflows the address space",
                ty.extent
            ),
        )
    })
}

/// Checks a point-to-point buffer argument: `MPI_IN_PLACE` is not one.
#[inline]
pub fn p2p_buffer(buf: *const c_void, arg: &'static str) -> Result<*const u8, AbiError> {
    if buf as usize == IN_PLACE {
        return Err(in_place_p2p(arg));
    }
    Ok(buf.cast())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_bits() {
        assert_eq!(direct(Object::Comm, 5), bits(0x8400_0005));
        assert_eq!(direct(Object::Request, 0), bits(0xac00_0000));
        assert_eq!(comm_slot(COMM_WORLD).unwrap(), WORLD_SLOT);
        assert_eq!(comm_slot(comm_handle(7)).unwrap(), 7);
        assert_eq!(comm_slot(COMM_NULL).unwrap_err().class, Class::COMM);
        assert_eq!(comm_slot(12345).unwrap_err().class, Class::COMM);
        assert_eq!(
            comm_slot(direct(Object::Comm, 1)).unwrap_err().class,
            Class::COMM
        );
        assert_eq!(request_slot(REQUEST_NULL).unwrap(), None);
        assert_eq!(request_slot(request_handle(9)).unwrap(), Some(9));
        assert!(request_slot(COMM_WORLD).is_err());
        assert_eq!(message(MESSAGE_NO_PROC).unwrap(), MessageRef::NoProc);
        assert!(message(MESSAGE_NULL).is_err());
        assert_eq!(errhandler(ERRORS_RETURN).unwrap(), Errhandler::Return);
        let user = errhandler_handle(Errhandler::User(3));
        assert_eq!(errhandler(user).unwrap(), Errhandler::User(3));
        assert!(errhandler(ERRHANDLER_NULL).is_err());
        assert_eq!(builtin_op(0x5800_0003).unwrap(), 2);
        assert!(builtin_op(OP_NULL).is_err() && builtin_op(0x5800_000f).is_err());
        assert_eq!(op(0x5800_0003).unwrap(), OpRef::Builtin(2));
        assert_eq!(op(op_handle(4)).unwrap(), OpRef::User(4));
        assert_eq!(op(OP_NULL).unwrap_err().class, Class::OP);
        assert_eq!(group(GROUP_EMPTY).unwrap(), GroupRef::Empty);
        assert_eq!(group(group_handle(3)).unwrap(), GroupRef::Slot(3));
        assert_eq!(group(GROUP_NULL).unwrap_err().class, Class::GROUP);
        assert_eq!(group(COMM_WORLD).unwrap_err().class, Class::GROUP);
        assert_eq!(
            keyval(0x6440_0001).unwrap(),
            KeyvalRef::Predefined("MPI_TAG_UB")
        );
        assert_eq!(keyval(keyval_handle(7)).unwrap(), KeyvalRef::User(7));
        assert_eq!(keyval(KEYVAL_INVALID).unwrap_err().class, Class::KEYVAL);
    }

    #[test]
    fn builtin_datatype_sizes_match_c_types() {
        let size = |name: &str| {
            let h = BUILTIN_DATATYPES.iter().find(|d| d.1 == name).unwrap().0;
            datatype(h).unwrap().extent
        };
        assert_eq!(size("MPI_INT"), std::mem::size_of::<c_int>());
        assert_eq!(size("MPI_DOUBLE"), 8);
        assert_eq!(size("MPI_LONG"), std::mem::size_of::<std::ffi::c_long>());
        assert_eq!(size("MPI_C_LONG_DOUBLE_COMPLEX"), 32);
        assert_eq!(datatype(bits(0x8c00_0001)).unwrap().extent, 16);
        assert_eq!(datatype(DATATYPE_NULL).unwrap_err().class, Class::TYPE);
        assert_eq!(datatype(0x4c00_ffff).unwrap_err().class, Class::TYPE);
        assert_eq!(datatype(bits(0x8c00_0010)).unwrap_err().class, Class::TYPE);
        assert_eq!(datatype_name(0x4c00_0405), Some("MPI_INT"));
    }

    #[test]
    fn status_count_round_trip() {
        let s = Status {
            source: 3,
            tag: 9,
            count: (5usize << 32) + 7,
            cancelled: true,
            truncated_from: None,
        };
        let c = c_status(&s, 0);
        assert_eq!(std::mem::size_of::<MPI_Status>(), 20);
        assert_eq!(status_bytes(&c), (5u64 << 32) + 7);
        assert!(status_cancelled(&c));
        assert_eq!((c.MPI_SOURCE, c.MPI_TAG), (3, 9));
        let mut c2 = c;
        set_status_bytes(&mut c2, 12);
        assert_eq!(status_bytes(&c2), 12);
        assert!(status_cancelled(&c2));
    }

    #[test]
    fn counts_and_buffers() {
        let int = datatype(0x4c00_0405).unwrap();
        assert_eq!(bytes(3, int).unwrap(), 12);
        assert_eq!(bytes(-1, int).unwrap_err().class, Class::COUNT);
        assert_eq!(bytes(MPI_Count::MAX, int).unwrap_err().class, Class::COUNT);
        let in_place = usize::MAX as *const c_void;
        assert_eq!(
            p2p_buffer(in_place, "buf").unwrap_err().class,
            Class::BUFFER
        );
    }
}
