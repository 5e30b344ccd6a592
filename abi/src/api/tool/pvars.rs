//! Performance variables: OxMPI exposes none yet, so no handle can be
//! allocated; sessions exist and are checked, and the calls that accept
//! `MPI_T_PVAR_ALL_HANDLES` act on the (empty) set of a session's handles.

use std::ffi::{c_char, c_int, c_void};

use super::{
    call, name_arg, Tool, ERR_INVALID, ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME,
    ERR_INVALID_SESSION, SUCCESS,
};
use crate::handles::MPI_Datatype;

extern "C" {
    /// `MPI_T_PVAR_ALL_HANDLES` (abi/src/c/objects.c).
    static MPI_T_PVAR_ALL_HANDLES: *mut c_void;
}

/// Checks `session`, then `handle`: with no variables, the only handle a
/// session can name is `MPI_T_PVAR_ALL_HANDLES`, where `all_allowed`.
fn check(tool: &Tool, session: *mut c_void, handle: *mut c_void, all_allowed: bool) -> c_int {
    if tool.sessions.get(session as usize).is_none() {
        return ERR_INVALID_SESSION;
    }
    // SAFETY: a constant address defined in C.
    let all = unsafe { MPI_T_PVAR_ALL_HANDLES };
    if all_allowed && handle == all {
        SUCCESS
    } else {
        ERR_INVALID_HANDLE
    }
}

/// `MPI_T_pvar_get_num`: 0.
///
/// # Safety
/// `num_pvar` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
    call(|_| {
        if num_pvar.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        unsafe { *num_pvar = 0 };
        SUCCESS
    })
}

/// `MPI_T_pvar_get_info`: there is no index to ask about.
///
/// # Safety
/// None (nothing is written).
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_get_info(
    _pvar_index: c_int,
    _name: *mut c_char,
    _name_len: *mut c_int,
    _verbosity: *mut c_int,
    _var_class: *mut c_int,
    _datatype: *mut MPI_Datatype,
    _enumtype: *mut *mut c_void,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    _bind: *mut c_int,
    _readonly: *mut c_int,
    _continuous: *mut c_int,
    _atomic: *mut c_int,
) -> c_int {
    call(|_| ERR_INVALID_INDEX)
}

/// `MPI_T_pvar_get_index`: no name is known.
///
/// # Safety
/// `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_get_index(
    name: *const c_char,
    _var_class: c_int,
    pvar_index: *mut c_int,
) -> c_int {
    call(|_| {
        // SAFETY: per the caller.
        match (unsafe { name_arg(name) }, pvar_index.is_null()) {
            (Some(_), false) => ERR_INVALID_NAME,
            _ => ERR_INVALID,
        }
    })
}

/// `MPI_T_pvar_session_create`.
///
/// # Safety
/// `session` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_session_create(session: *mut *mut c_void) -> c_int {
    call(|tool| {
        if session.is_null() {
            return ERR_INVALID;
        }
        let h = tool.sessions.insert(());
        // SAFETY: checked non-null.
        unsafe { *session = h as *mut c_void };
        SUCCESS
    })
}

/// `MPI_T_pvar_session_free`: the handle becomes `MPI_T_PVAR_SESSION_NULL`.
///
/// # Safety
/// `session` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_session_free(session: *mut *mut c_void) -> c_int {
    call(|tool| {
        if session.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        if tool.sessions.remove(unsafe { *session } as usize).is_none() {
            return ERR_INVALID_SESSION;
        }
        // SAFETY: checked non-null.
        unsafe { *session = std::ptr::null_mut() };
        SUCCESS
    })
}

/// `MPI_T_pvar_handle_alloc`: no index is valid.
///
/// # Safety
/// None (nothing is written).
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_handle_alloc(
    session: *mut c_void,
    _pvar_index: c_int,
    _obj_handle: *mut c_void,
    _handle: *mut *mut c_void,
    _count: *mut c_int,
) -> c_int {
    call(|tool| match tool.sessions.get(session as usize) {
        Some(_) => ERR_INVALID_INDEX,
        None => ERR_INVALID_SESSION,
    })
}

/// `MPI_T_pvar_handle_free`: no handle exists.
///
/// # Safety
/// `handle` is null or readable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_pvar_handle_free(
    session: *mut c_void,
    handle: *mut *mut c_void,
) -> c_int {
    call(|tool| {
        if handle.is_null() {
            return ERR_INVALID;
        }
        // SAFETY: checked non-null.
        check(tool, session, unsafe { *handle }, false)
    })
}

/// `MPI_T_pvar_start`: with `MPI_T_PVAR_ALL_HANDLES`, starts the session's
/// (no) variables.
#[no_mangle]
pub extern "C" fn oxabi_T_pvar_start(session: *mut c_void, handle: *mut c_void) -> c_int {
    call(|tool| check(tool, session, handle, true))
}

/// `MPI_T_pvar_stop`: as [`oxabi_T_pvar_start`].
#[no_mangle]
pub extern "C" fn oxabi_T_pvar_stop(session: *mut c_void, handle: *mut c_void) -> c_int {
    call(|tool| check(tool, session, handle, true))
}

/// `MPI_T_pvar_reset`: as [`oxabi_T_pvar_start`].
#[no_mangle]
pub extern "C" fn oxabi_T_pvar_reset(session: *mut c_void, handle: *mut c_void) -> c_int {
    call(|tool| check(tool, session, handle, true))
}

/// `MPI_T_pvar_read`: needs one variable's handle, which cannot exist.
#[no_mangle]
pub extern "C" fn oxabi_T_pvar_read(
    session: *mut c_void,
    handle: *mut c_void,
    _buf: *mut c_void,
) -> c_int {
    call(|tool| check(tool, session, handle, false))
}

/// `MPI_T_pvar_readreset`: as [`oxabi_T_pvar_read`].
#[no_mangle]
pub extern "C" fn oxabi_T_pvar_readreset(
    session: *mut c_void,
    handle: *mut c_void,
    _buf: *mut c_void,
) -> c_int {
    call(|tool| check(tool, session, handle, false))
}

/// `MPI_T_pvar_write`: as [`oxabi_T_pvar_read`].
#[no_mangle]
pub extern "C" fn oxabi_T_pvar_write(
    session: *mut c_void,
    handle: *mut c_void,
    _buf: *const c_void,
) -> c_int {
    call(|tool| check(tool, session, handle, false))
}
