//! Errors as values: classes, `AbiError` (class and message), error codes
//! and their strings. The bottom layer of the crate (it imports nothing of
//! it); raising an error through a handler is [`crate::raise`].
//!
//! Error codes: the class is bits 0..7; bits 7.. number a slot of a ring
//! that keeps the message of the error (so `MPI_Error_string` says what
//! was wrong and with which value, and `MPI_Error_class` gives the class).
//! Bare classes are valid codes too.
//!
//! Classes and codes the program adds (`MPI_Add_error_class`,
//! `MPI_Add_error_code`) are numbered upwards from `MPI_ERR_LASTCODE + 1`,
//! one sequence for both, and keep the string `MPI_Add_error_string`
//! gives them (empty until then, as in MPICH); `MPI_LASTUSEDCODE` is the
//! largest class (MPI 4.0 section 9.5; codes do not move it, as in MPICH).

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// An MPI error class (`MPI_ERR_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class(pub c_int);

#[allow(missing_docs)]
impl Class {
    pub const BUFFER: Class = Class(1);
    pub const COUNT: Class = Class(2);
    pub const TYPE: Class = Class(3);
    pub const TAG: Class = Class(4);
    pub const COMM: Class = Class(5);
    pub const RANK: Class = Class(6);
    pub const ROOT: Class = Class(7);
    pub const GROUP: Class = Class(8);
    pub const OP: Class = Class(9);
    pub const TOPOLOGY: Class = Class(10);
    pub const DIMS: Class = Class(11);
    pub const ARG: Class = Class(12);
    pub const TRUNCATE: Class = Class(14);
    pub const OTHER: Class = Class(15);
    pub const INTERN: Class = Class(16);
    pub const IN_STATUS: Class = Class(17);
    pub const PENDING: Class = Class(18);
    pub const REQUEST: Class = Class(19);
    pub const UNKNOWN: Class = Class(13);
    pub const UNSUPPORTED_OPERATION: Class = Class(44);
    pub const SPAWN: Class = Class(42);
    pub const KEYVAL: Class = Class(48);
    pub const NO_MEM: Class = Class(34);
    pub const WIN: Class = Class(45);
    pub const BASE: Class = Class(46);
    pub const LOCKTYPE: Class = Class(47);
    pub const RMA_SYNC: Class = Class(50);
    pub const SIZE: Class = Class(51);
    pub const DISP: Class = Class(52);
    pub const RMA_FLAVOR: Class = Class(58);
}

/// Every error class: (value, name, what it means).
pub const CLASSES: &[(c_int, &str, &str)] = &[
    (0, "MPI_SUCCESS", "no error"),
    (1, "MPI_ERR_BUFFER", "invalid buffer pointer"),
    (2, "MPI_ERR_COUNT", "invalid count argument"),
    (3, "MPI_ERR_TYPE", "invalid datatype"),
    (4, "MPI_ERR_TAG", "invalid tag"),
    (5, "MPI_ERR_COMM", "invalid communicator"),
    (6, "MPI_ERR_RANK", "invalid rank"),
    (7, "MPI_ERR_ROOT", "invalid root"),
    (8, "MPI_ERR_GROUP", "invalid group"),
    (9, "MPI_ERR_OP", "invalid reduction operation"),
    (10, "MPI_ERR_TOPOLOGY", "invalid topology"),
    (11, "MPI_ERR_DIMS", "invalid dimension argument"),
    (12, "MPI_ERR_ARG", "invalid argument"),
    (13, "MPI_ERR_UNKNOWN", "unknown error"),
    (14, "MPI_ERR_TRUNCATE", "message truncated"),
    (15, "MPI_ERR_OTHER", "other error"),
    (16, "MPI_ERR_INTERN", "internal error"),
    (17, "MPI_ERR_IN_STATUS", "error code is in the status"),
    (18, "MPI_ERR_PENDING", "operation pending"),
    (19, "MPI_ERR_REQUEST", "invalid request"),
    (20, "MPI_ERR_ACCESS", "permission denied"),
    (21, "MPI_ERR_AMODE", "invalid file access mode"),
    (22, "MPI_ERR_BAD_FILE", "invalid file name"),
    (23, "MPI_ERR_CONVERSION", "data conversion failed"),
    (
        24,
        "MPI_ERR_DUP_DATAREP",
        "data representation already defined",
    ),
    (25, "MPI_ERR_FILE_EXISTS", "file exists"),
    (26, "MPI_ERR_FILE_IN_USE", "file in use"),
    (27, "MPI_ERR_FILE", "invalid file handle"),
    (28, "MPI_ERR_INFO", "invalid info object"),
    (29, "MPI_ERR_INFO_KEY", "invalid info key"),
    (30, "MPI_ERR_INFO_VALUE", "invalid info value"),
    (31, "MPI_ERR_INFO_NOKEY", "info key not defined"),
    (32, "MPI_ERR_IO", "I/O error"),
    (33, "MPI_ERR_NAME", "invalid service name"),
    (34, "MPI_ERR_NO_MEM", "out of memory"),
    (35, "MPI_ERR_NOT_SAME", "arguments differ between processes"),
    (36, "MPI_ERR_NO_SPACE", "no space left"),
    (37, "MPI_ERR_NO_SUCH_FILE", "no such file"),
    (38, "MPI_ERR_PORT", "invalid port name"),
    (39, "MPI_ERR_QUOTA", "quota exceeded"),
    (40, "MPI_ERR_READ_ONLY", "read-only file or file system"),
    (41, "MPI_ERR_SERVICE", "invalid service"),
    (42, "MPI_ERR_SPAWN", "spawn failed"),
    (
        43,
        "MPI_ERR_UNSUPPORTED_DATAREP",
        "unsupported data representation",
    ),
    (44, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"),
    (45, "MPI_ERR_WIN", "invalid window"),
    (46, "MPI_ERR_BASE", "invalid base address"),
    (47, "MPI_ERR_LOCKTYPE", "invalid lock type"),
    (48, "MPI_ERR_KEYVAL", "invalid attribute key"),
    (49, "MPI_ERR_RMA_CONFLICT", "conflicting RMA accesses"),
    (50, "MPI_ERR_RMA_SYNC", "wrong RMA synchronization"),
    (51, "MPI_ERR_SIZE", "invalid size"),
    (52, "MPI_ERR_DISP", "invalid displacement"),
    (53, "MPI_ERR_ASSERT", "invalid assertion"),
    (55, "MPI_ERR_RMA_RANGE", "RMA target out of the window"),
    (56, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"),
    (57, "MPI_ERR_RMA_SHARED", "memory cannot be shared"),
    (58, "MPI_ERR_RMA_FLAVOR", "wrong window flavor"),
    (59, "MPI_T_ERR_MEMORY", "out of memory (tool interface)"),
    (
        60,
        "MPI_T_ERR_NOT_INITIALIZED",
        "tool interface not initialized",
    ),
    (
        61,
        "MPI_T_ERR_CANNOT_INIT",
        "tool interface cannot be initialized",
    ),
    (62, "MPI_T_ERR_INVALID_INDEX", "invalid index"),
    (63, "MPI_T_ERR_INVALID_ITEM", "invalid item"),
    (64, "MPI_T_ERR_INVALID_HANDLE", "invalid handle"),
    (65, "MPI_T_ERR_OUT_OF_HANDLES", "out of handles"),
    (66, "MPI_T_ERR_OUT_OF_SESSIONS", "out of sessions"),
    (67, "MPI_T_ERR_INVALID_SESSION", "invalid session"),
    (
        68,
        "MPI_T_ERR_CVAR_SET_NOT_NOW",
        "variable cannot be set now",
    ),
    (69, "MPI_T_ERR_CVAR_SET_NEVER", "variable can never be set"),
    (
        70,
        "MPI_T_ERR_PVAR_NO_STARTSTOP",
        "variable cannot be started or stopped",
    ),
    (71, "MPI_T_ERR_PVAR_NO_WRITE", "variable cannot be written"),
    (
        72,
        "MPI_T_ERR_PVAR_NO_ATOMIC",
        "variable cannot be accessed atomically",
    ),
    (73, "MPI_T_ERR_INVALID_NAME", "invalid name"),
    (74, "MPI_T_ERR_INVALID", "invalid use of the tool interface"),
    (75, "MPI_ERR_SESSION", "invalid session"),
    (76, "MPI_ERR_PROC_ABORTED", "peer process aborted"),
    (77, "MPI_ERR_VALUE_TOO_LARGE", "value too large"),
    (
        78,
        "MPI_T_ERR_NOT_SUPPORTED",
        "not supported (tool interface)",
    ),
    (101, "MPIX_ERR_PROC_FAILED", "process failed"),
    (
        102,
        "MPIX_ERR_PROC_FAILED_PENDING",
        "process failed, operation pending",
    ),
    (103, "MPIX_ERR_REVOKED", "communicator revoked"),
    (
        104,
        "MPIX_ERR_EAGAIN",
        "operation could not be issued, try again",
    ),
    (105, "MPIX_ERR_NOREQ", "cannot allocate a request"),
];

/// (name, description) of a class.
pub fn class_info(class: c_int) -> Option<(&'static str, &'static str)> {
    CLASSES
        .iter()
        .find(|c| c.0 == class)
        .map(|&(_, n, d)| (n, d))
}

// ------------------------------------------- classes and codes of the program

/// `MPI_ERR_LASTCODE`: no predefined code is larger.
pub const ERR_LASTCODE: c_int = 0x3fff_ffff;

/// A class or code added by the program.
struct UserCode {
    /// The class (the value itself for a class).
    class: c_int,
    /// From `MPI_Add_error_string` (empty until then).
    text: String,
    /// Removed by `MPIX_Delete_error_class` / `_code`: no longer a value.
    deleted: bool,
}

/// Added classes and codes: entry `i` is value `ERR_LASTCODE + 1 + i`.
static USER_CODES: Mutex<Vec<UserCode>> = Mutex::new(Vec::new());

/// The value of the `MPI_LASTUSEDCODE` attribute (read through its
/// address): the largest class.
pub static LAST_USED_CODE: AtomicI32 = AtomicI32::new(ERR_LASTCODE);

fn user_codes() -> std::sync::MutexGuard<'static, Vec<UserCode>> {
    USER_CODES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The entry of an added class or code.
fn user_index(code: c_int) -> Option<usize> {
    code.checked_sub(ERR_LASTCODE + 1)
        .and_then(|i| usize::try_from(i).ok())
}

/// Adds a value: a new class (`class` `None`) or a code of `class`.
fn add_user_code(class: Option<c_int>) -> Result<c_int, AbiError> {
    let mut codes = user_codes();
    let value = c_int::try_from(codes.len())
        .ok()
        .and_then(|n| n.checked_add(ERR_LASTCODE + 1))
        .ok_or_else(|| AbiError::new(Class::INTERN, "no error codes are left to add"))?;
    codes.push(UserCode {
        class: class.unwrap_or(value),
        text: String::new(),
        deleted: false,
    });
    if class.is_none() {
        LAST_USED_CODE.store(value, Ordering::Relaxed);
    }
    Ok(value)
}

/// `MPI_Add_error_class`: a new class, after every value used so far.
pub fn add_error_class() -> Result<c_int, AbiError> {
    add_user_code(None)
}

/// `MPI_Add_error_code`: a new code of `class` (predefined or added).
pub fn add_error_code(class: c_int) -> Result<c_int, AbiError> {
    let known = class_info(class).is_some()
        || user_index(class)
            .and_then(|i| user_codes().get(i).map(|u| u.class == class && !u.deleted))
            .unwrap_or(false);
    if !known || class == 0 {
        return Err(AbiError::new(
            Class::ARG,
            format!("`errorclass` {class} is not an error class (predefined or added)"),
        ));
    }
    add_user_code(Some(class))
}

/// `MPIX_Delete_error_class` (`class` true) / `MPIX_Delete_error_code`:
/// removes an added class (once it has no codes left) or code.
pub fn delete_user_code(code: c_int, class: bool) -> Result<(), AbiError> {
    let what = if class { "class" } else { "code" };
    let mut codes = user_codes();
    let bad = |why: &str| AbiError::new(Class::ARG, format!("`error{what}` {code} {why}"));
    let i = user_index(code)
        .filter(|&i| codes.get(i).is_some_and(|u| !u.deleted))
        .ok_or_else(|| bad("was not added by MPI_Add_error_class/code (or was deleted)"))?;
    let is_class = codes[i].class == code;
    if is_class != class {
        return Err(bad(if class {
            "is a code, not a class"
        } else {
            "is a class, not a code"
        }));
    }
    if class
        && codes
            .iter()
            .any(|u| !u.deleted && u.class == code && !std::ptr::eq(u, &codes[i]))
    {
        return Err(bad("still has codes: delete them first"));
    }
    codes[i].deleted = true;
    codes[i].text.clear();
    Ok(())
}

/// `MPIX_Delete_error_string`: forgets an added class's or code's text.
pub fn delete_error_string(code: c_int) -> Result<(), AbiError> {
    let mut codes = user_codes();
    let u = user_index(code)
        .and_then(|i| codes.get_mut(i))
        .filter(|u| !u.deleted)
        .ok_or_else(|| {
            AbiError::new(
                Class::ARG,
                format!("`errorcode` {code} was not added by MPI_Add_error_class/code"),
            )
        })?;
    u.text.clear();
    Ok(())
}

/// `MPI_Add_error_string`: the text of an added class or code.
pub fn add_error_string(code: c_int, text: &str) -> Result<(), AbiError> {
    if code <= ERR_LASTCODE {
        return Err(AbiError::new(
            Class::ARG,
            format!(
                "`errorcode` {code} is predefined (at most MPI_ERR_LASTCODE): only added \
                 classes and codes take strings"
            ),
        ));
    }
    let mut codes = user_codes();
    let entry = user_index(code)
        .and_then(|i| codes.get_mut(i))
        .ok_or_else(|| {
            AbiError::new(
                Class::ARG,
                format!("`errorcode` {code} was not added by MPI_Add_error_class/code"),
            )
        })?;
    entry.text = text.to_owned();
    Ok(())
}

/// What went wrong in a call: class and a message that names the argument and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiError {
    /// The MPI error class.
    pub class: Class,
    /// What was wrong, with which value.
    pub message: String,
    /// The object whose error handler is called, when not the call's own.
    pub raise_on: Option<ErrObj>,
    /// The exact code to report, when it is not made from `class` and
    /// `message` (an error code a program's callback returned).
    pub code: Option<c_int>,
}

impl AbiError {
    /// An error of `class`.
    pub fn new(class: Class, message: impl Into<String>) -> AbiError {
        AbiError {
            class,
            message: message.into(),
            raise_on: None,
            code: None,
        }
    }

    /// The error code `code` that a program's callback returned, reported
    /// as it is (MPI passes callback errors back unchanged). A value that
    /// is no error code becomes `MPI_ERR_OTHER` saying so, with `what`
    /// naming the callback.
    pub fn from_code(code: c_int, what: &str) -> AbiError {
        match class_of(code) {
            Some(class) if code != 0 => AbiError {
                class: Class(class),
                message: format!(
                    "{what} returned error code {code} ({})",
                    string_of(code).unwrap_or_default()
                ),
                raise_on: None,
                code: Some(code),
            },
            _ => AbiError::new(
                Class::OTHER,
                format!("{what} returned {code}, which is not an MPI error code"),
            ),
        }
    }

    /// Raises this error on `obj`'s error handler instead of the call's.
    pub fn on(mut self, obj: ErrObj) -> AbiError {
        self.raise_on = Some(obj);
        self
    }
}

impl From<oxmpi::Error> for AbiError {
    fn from(e: oxmpi::Error) -> AbiError {
        match e {
            oxmpi::Error::Callback { what, code } => AbiError::from_code(code, &what),
            e => AbiError::new(Class(e.class() as c_int), e.to_string()),
        }
    }
}

/// The object an error is raised on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrObj {
    /// No object: `MPI_COMM_WORLD`'s handler (the MPICH behaviour).
    None,
    /// A communicator (its `MPI_Comm` handle).
    Comm(c_int),
    /// A window (its handler; an invalid window handle: `MPI_COMM_WORLD`'s).
    Win(c_int),
    /// A file (its `MPI_File` handle; `MPI_FILE_NULL`'s handler for
    /// `MPI_FILE_NULL` or an invalid handle).
    File(usize),
    /// No object, and errors are returned (`MPI_ERRORS_RETURN`).
    Return,
    /// A session (its handler; `MPI_COMM_WORLD`'s for an invalid handle).
    Session(c_int),
}

// ---------------------------------------------------------- error codes

/// Slots of the message ring (codes carry slot numbers 1..RING).
const RING: usize = 256;

struct Messages {
    next: usize,
    slots: Vec<Option<(c_int, String)>>,
}

static MESSAGES: Mutex<Messages> = Mutex::new(Messages {
    next: 0,
    slots: Vec::new(),
});

/// An error code for `err`: its class plus a slot holding its message.
pub fn code_for(err: &AbiError) -> c_int {
    if let Some(code) = err.code {
        return code;
    }
    let mut m = MESSAGES.lock().unwrap_or_else(|e| e.into_inner());
    if m.slots.is_empty() {
        m.slots.resize(RING, None);
    }
    let slot = m.next % (RING - 1) + 1;
    m.next = m.next.wrapping_add(1);
    m.slots[slot] = Some((err.class.0, err.message.clone()));
    (slot as c_int) << 7 | err.class.0
}

/// The class of an error code; `None` if it is not one of ours.
pub fn class_of(code: c_int) -> Option<c_int> {
    if code < 0 {
        return None;
    }
    if code > ERR_LASTCODE {
        return user_index(code)
            .and_then(|i| user_codes().get(i).filter(|u| !u.deleted).map(|u| u.class));
    }
    let class = code & 0x7f;
    (class_info(class).is_some() && (code >> 7) < RING as c_int).then_some(class)
}

/// The class of a code for `MPI_Error_class` / `MPI_Error_string`: as
/// [`class_of`], and a bare class number (below 128) that MPI 4.0 does not
/// define is its own class, as in MPICH, whose clients may be built with
/// later standards' classes (mpi4py's `ERR_ERRHANDLER` of MPI 4.1 is 80).
pub fn class_of_lenient(code: c_int) -> Option<c_int> {
    class_of(code).or_else(|| (0..=0x7f).contains(&code).then_some(code))
}

/// [`string_of`], and for a bare class number MPI 4.0 does not define,
/// a text saying so.
pub fn string_of_lenient(code: c_int) -> Option<String> {
    string_of(code).or_else(|| {
        (0..=0x7f)
            .contains(&code)
            .then(|| format!("error class {code}: not a class MPI 4.0 defines"))
    })
}

/// The text of an error code: class name and meaning, and the message it
/// was raised with while that is still remembered.
pub fn string_of(code: c_int) -> Option<String> {
    if code > ERR_LASTCODE {
        return user_index(code).and_then(|i| {
            user_codes()
                .get(i)
                .filter(|u| !u.deleted)
                .map(|u| u.text.clone())
        });
    }
    let class = class_of(code)?;
    let (name, what) = class_info(class)?;
    let slot = (code >> 7) as usize;
    let m = MESSAGES.lock().unwrap_or_else(|e| e.into_inner());
    match m.slots.get(slot).and_then(Option::as_ref) {
        Some((c, msg)) if slot > 0 && *c == class => Some(format!("{name}: {msg}")),
        _ => Some(format!("{name}: {what}")),
    }
}

/// Checks that an output pointer argument is not null.
#[inline]
pub fn out_ptr<T>(p: *mut T, arg: &'static str) -> Result<*mut T, AbiError> {
    if p.is_null() {
        Err(null_pointer(arg))
    } else {
        Ok(p)
    }
}

#[cold]
fn null_pointer(arg: &'static str) -> AbiError {
    AbiError::new(Class::ARG, format!("`{arg}` is a null pointer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_carry_class_and_message() {
        let e = AbiError::new(Class::RANK, "invalid rank 9 for argument `dest`");
        let code = code_for(&e);
        assert_ne!(code, Class::RANK.0);
        assert_eq!(class_of(code), Some(Class::RANK.0));
        assert_eq!(
            string_of(code).unwrap(),
            "MPI_ERR_RANK: invalid rank 9 for argument `dest`"
        );
        assert_eq!(
            string_of(14).unwrap(),
            "MPI_ERR_TRUNCATE: message truncated"
        );
        assert_eq!(class_of(0), Some(0));
        assert_eq!(class_of(54), None);
        assert_eq!(class_of_lenient(80), Some(80));
        assert!(string_of_lenient(80).unwrap().contains("80"));
        assert_eq!(class_of_lenient(-1), None);
        assert_eq!(class_of(-3), None);
    }

    #[test]
    fn callback_codes_pass_unchanged() {
        let code = add_error_code(Class::OTHER.0).unwrap();
        let e = AbiError::from_code(code, "query_fn");
        assert_eq!((e.class, code_for(&e)), (Class::OTHER, code));
        assert!(e.message.starts_with("query_fn returned error code"));
        let e = AbiError::from_code(Class::RANK.0, "free_fn");
        assert_eq!((e.class, code_for(&e)), (Class::RANK, Class::RANK.0));
        // Not an error code: MPI_ERR_OTHER saying so.
        for bad in [0, -7, i32::MAX] {
            let e = AbiError::from_code(bad, "cancel_fn");
            assert_eq!(e.class, Class::OTHER);
            assert_eq!(class_of(code_for(&e)), Some(Class::OTHER.0));
            assert!(e.message.contains("not an MPI error code"), "{}", e.message);
        }
    }

    #[test]
    fn added_classes_and_codes() {
        let class = add_error_class().unwrap();
        assert!(class > ERR_LASTCODE);
        assert!(LAST_USED_CODE.load(Ordering::Relaxed) >= class);
        let code = add_error_code(class).unwrap();
        assert!(code > class);
        assert_eq!(class_of(code), Some(class));
        assert_eq!(class_of(class), Some(class));
        assert_eq!(string_of(code).unwrap(), "");
        add_error_string(code, "mine").unwrap();
        assert_eq!(string_of(code).unwrap(), "mine");
        let arg = add_error_code(Class::ARG.0).unwrap();
        assert_eq!(class_of(arg), Some(Class::ARG.0));
        // Codes are not classes; predefined codes take no strings.
        assert_eq!(add_error_code(code).unwrap_err().class, Class::ARG);
        assert_eq!(add_error_code(0).unwrap_err().class, Class::ARG);
        assert_eq!(
            add_error_string(Class::RANK.0, "x").unwrap_err().class,
            Class::ARG
        );
        assert_eq!(
            add_error_string(i32::MAX, "x").unwrap_err().class,
            Class::ARG
        );
        assert_eq!(class_of(i32::MAX), None);
    }

    #[test]
    fn runtime_errors_keep_their_class() {
        let e: AbiError = oxmpi::Error::InvalidTag {
            arg: "tag",
            value: -5,
            allows_any: false,
        }
        .into();
        assert_eq!(e.class, Class::TAG);
        assert!(e.message.contains("-5"));
    }
}
