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
//!   into one of this library's tables), 3 indirect (only requests that
//!   carry their runtime request: [`ticket_handle`]);
//! - object: 1 comm, 2 group, 3 datatype, 4 file, 5 errhandler, 6 op,
//!   7 info, 8 win, 9 keyval, 0xb request (and message), 0xe session;
//! - builtin datatypes carry their size: `0x4c00SSII`, SS = bytes, II = index;
//! - the value-index pair types (`MPI_DOUBLE_INT`, ...) are the direct
//!   datatype handles 0..=4 (`0x8c000000..=0x8c000004`).
//!
//! The fields of the bits and the C handle types are in `encoding.rs`,
//! datatype handles in `datatypes.rs`, the status layout in `status.rs`;
//! all of it is used through this module.
#![allow(non_camel_case_types)]

use std::ffi::{c_int, c_void};

use oxmpi::request::Ticket;
use oxmpi::Status;

use crate::errors::{AbiError, Class};

mod datatypes;
mod encoding;
mod status;

pub use datatypes::{
    bad_datatype, datatype, datatype_name, derived_type_handle, derived_type_slot, predefined_type,
    Predefined, TypeInfo, BUILTIN_DATATYPES, DATATYPE_NULL, FIRST_DERIVED_TYPE_INDEX, MPI_LB,
    MPI_UB, PAIR_DATATYPES,
};
pub use encoding::{
    bits, direct, MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Errhandler, MPI_Message, MPI_Op,
    MPI_Request, Object, MAX_INDEX,
};
use encoding::{direct_index, invalid, kind, object, payload, KIND_INDIRECT};
pub use status::{
    c_status, set_status_bytes, status_bytes, status_cancelled, status_ignored, write_status,
    MPI_Status, STATUS_IGNORE,
};

/// `MPI_COMM_NULL`.
pub const COMM_NULL: MPI_Comm = 0x0400_0000;
/// `MPI_COMM_WORLD`.
pub const COMM_WORLD: MPI_Comm = 0x4400_0000;
/// `MPI_COMM_SELF`.
pub const COMM_SELF: MPI_Comm = 0x4400_0001;
/// `MPI_REQUEST_NULL` (also `MPI_MESSAGE_NULL`).
pub const REQUEST_NULL: MPI_Request = 0x2c00_0000;
/// `MPI_MESSAGE_NULL`.
pub const MESSAGE_NULL: MPI_Message = REQUEST_NULL;
/// `MPI_MESSAGE_NO_PROC`: the message of a matched probe of `MPI_PROC_NULL`.
pub const MESSAGE_NO_PROC: MPI_Message = 0x6c00_0000;
/// The request of every send that completed as it started (an eager
/// `MPI_Isend`): one builtin handle, as MPICH's lightweight requests, so
/// such a send touches no table and no lock. Completing it gives
/// `Status::empty()` and `MPI_REQUEST_NULL`; freeing or cancelling it does
/// nothing else.
pub const REQUEST_COMPLETE: MPI_Request = 0x6c00_0001;
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
/// `MPI_IN_PLACE`: `(void *)-1`.
pub const IN_PLACE: usize = usize::MAX;
/// `MPI_BOTTOM`: `(void *)0`.
pub const BOTTOM: usize = 0;

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

// -------------------------------------------------------------- windows

/// `MPI_Win`.
pub type MPI_Win = c_int;
/// `MPI_WIN_NULL`.
pub const WIN_NULL: MPI_Win = 0x2000_0000;

/// The window table slot of a window handle (`MPI_ERR_WIN` for
/// `MPI_WIN_NULL` and anything that is not a window handle).
pub fn win_slot(h: MPI_Win) -> Result<usize, AbiError> {
    if h == WIN_NULL {
        return Err(AbiError::new(Class(45), "the window is MPI_WIN_NULL"));
    }
    direct_index(h, Object::Win).ok_or_else(|| invalid(Class(45), "window", h))
}

/// The handle of window table slot `slot`.
pub fn win_handle(slot: usize) -> MPI_Win {
    direct(Object::Win, slot)
}

// ---------------------------------------------------------------- files

/// `MPI_File` (a pointer in MPICH's ABI: `struct ADIOI_FileD *`).
pub type MPI_File = usize;
/// `MPI_FILE_NULL`.
pub const FILE_NULL: MPI_File = 0;
/// The bits that mark a file handle (table slot in the low 32 bits): never
/// a valid address of a program's object, so a stray pointer is refused.
const FILE_TAG: usize = 0x0F11_E000_0000_0000;

/// The file table slot of a file handle (`MPI_ERR_FILE` for
/// `MPI_FILE_NULL` and anything that is not a file handle).
pub fn file_slot(h: MPI_File) -> Result<usize, AbiError> {
    if h == FILE_NULL {
        return Err(AbiError::new(Class(27), "the file is MPI_FILE_NULL"));
    }
    if h & !0xffff_ffff != FILE_TAG {
        return Err(AbiError::new(
            Class(27),
            format!("invalid file handle {h:#x}"),
        ));
    }
    Ok(h & 0xffff_ffff)
}

/// The handle of file table slot `slot`.
pub fn file_handle(slot: usize) -> MPI_File {
    FILE_TAG | slot
}

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

/// The handle of a running request of `MPI_COMM_WORLD` or `MPI_COMM_SELF`
/// that carries the runtime's [`Ticket`] for it (`None` for another
/// communicator): such a request has no table entry until a call other
/// than a wait or test needs one (`requests::slot_of`), so a non-blocking
/// receive takes no lock of the front end. Bits: kind 3, object request,
/// bit 25 the communicator (0 world, 1 self), the ticket below.
pub fn ticket_handle(t: Ticket, comm: MPI_Comm) -> Option<MPI_Request> {
    let which = match comm {
        COMM_WORLD => 0,
        COMM_SELF => 1,
        _ => return None,
    };
    let bits = (KIND_INDIRECT << 30) | ((Object::Request as u32) << 26) | (which << Ticket::BITS);
    Some((bits | t.to_bits()) as MPI_Request)
}

/// The ticket and communicator a [`ticket_handle`] carries.
#[inline]
pub fn request_ticket(h: MPI_Request) -> Option<(Ticket, MPI_Comm)> {
    if kind(h) != KIND_INDIRECT || object(h) != Object::Request as u32 {
        return None;
    }
    let comm = match payload(h) >> Ticket::BITS {
        0 => COMM_WORLD,
        _ => COMM_SELF,
    };
    Some((Ticket::from_bits(payload(h) as u32), comm))
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

// ------------------------------------------------------------- sessions

/// `MPI_Session`.
pub type MPI_Session = c_int;

/// `MPI_SESSION_NULL`.
pub const SESSION_NULL: MPI_Session = 0x3800_0000;

/// The session table slot a handle names.
pub fn session(h: c_int) -> Result<usize, AbiError> {
    if h == SESSION_NULL {
        return Err(AbiError::new(Class(75), "the session is MPI_SESSION_NULL"));
    }
    direct_index(h, Object::Session).ok_or_else(|| invalid(Class(75), "session", h))
}

/// The handle of session table slot `slot`.
pub fn session_handle(slot: usize) -> c_int {
    direct(Object::Session, slot)
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
        let t = Ticket::from_bits((1 << Ticket::BITS) - 1);
        for comm in [COMM_WORLD, COMM_SELF] {
            let h = ticket_handle(t, comm).unwrap();
            assert_eq!(request_ticket(h), Some((t, comm)));
            assert!(request_slot(h).is_err() && h != REQUEST_NULL && h != REQUEST_COMPLETE);
        }
        assert_eq!(ticket_handle(t, comm_handle(2)), None);
        assert_eq!(request_ticket(request_handle(9)), None);
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
