//! The encoding of handles (see [`super`]): the C types of handles and
//! the kind / object / payload fields of their bits.

use std::ffi::c_int;

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

pub(super) const KIND_DIRECT: u32 = 2;
/// MPICH's "indirect" kind: in OxMPI only requests that carry their
/// runtime request (see [`super::ticket_handle`]).
pub(super) const KIND_INDIRECT: u32 = 3;
/// Largest index a direct handle can carry (26 bits).
pub const MAX_INDEX: usize = (1 << 26) - 1;

/// A handle written as its unsigned bit pattern (e.g. `0x8c000001`).
pub const fn bits(x: u32) -> c_int {
    x as c_int
}

pub(super) fn kind(h: c_int) -> u32 {
    (h as u32) >> 30
}

pub(super) fn object(h: c_int) -> u32 {
    ((h as u32) >> 26) & 0xf
}

pub(super) fn payload(h: c_int) -> usize {
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
pub(super) fn direct_index(h: c_int, obj: Object) -> Option<usize> {
    (kind(h) == KIND_DIRECT && object(h) == obj as u32).then(|| payload(h))
}

pub(super) fn invalid(class: Class, what: &str, h: c_int) -> AbiError {
    AbiError::new(
        class,
        format!("invalid {what} handle {h:#010x} (not a {what} of this library)"),
    )
}
