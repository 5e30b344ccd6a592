//! Error handlers and error codes: `MPI_Comm_{set,get,create,call}_errhandler`
//! (and their MPI-1 names `MPI_Errhandler_{set,get,create}`),
//! `MPI_Errhandler_free`, `MPI_Error_class`, `MPI_Error_string`, and the
//! classes, codes and strings a program adds (`MPI_Add_error_*`).

use std::ffi::{c_char, c_int, CStr};

use crate::api::env::put_string;
use crate::errors::{self, out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, Errhandler, MPI_Comm, MPI_Errhandler, ERRHANDLER_NULL};
use crate::raise::{self, guard};
use crate::state::{self, CommErrhandlerFn, UserErrhandler};

/// `MPI_MAX_ERROR_STRING`.
const MAX_ERROR_STRING: usize = 512;

/// Checks that a decoded handler exists.
fn live(st: &state::State, e: Errhandler, h: MPI_Errhandler) -> Result<Errhandler, AbiError> {
    match e {
        Errhandler::User(slot) if st.errhandlers.get(slot).is_none() => Err(AbiError::new(
            Class::ARG,
            format!("error handler {h:#010x} does not exist"),
        )),
        _ => Ok(e),
    }
}

fn set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> Result<(), AbiError> {
    let e = handles::errhandler(errhandler)?;
    let mut st = state::lock();
    let e = live(&st, e, errhandler)?;
    st.comm_entry_mut(comm)?.errhandler = e;
    Ok(())
}

/// `MPI_Comm_set_errhandler`.
#[no_mangle]
pub extern "C" fn oxabi_Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
    guard("MPI_Comm_set_errhandler", ErrObj::Comm(comm), || {
        set_errhandler(comm, errhandler)
    })
}

/// `MPI_Errhandler_set` (MPI-1 name of `MPI_Comm_set_errhandler`).
#[no_mangle]
pub extern "C" fn oxabi_Errhandler_set(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
    guard("MPI_Errhandler_set", ErrObj::Comm(comm), || {
        set_errhandler(comm, errhandler)
    })
}

fn get_errhandler(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> Result<(), AbiError> {
    let out = out_ptr(errhandler, "errhandler")?;
    let e = state::lock().comm_entry(comm)?.errhandler;
    // SAFETY: checked non-null; writable by the callers' contract.
    unsafe { *out = handles::errhandler_handle(e) };
    Ok(())
}

/// `MPI_Comm_get_errhandler`.
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_get_errhandler(
    comm: MPI_Comm,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Comm_get_errhandler", ErrObj::Comm(comm), || {
        get_errhandler(comm, errhandler)
    })
}

/// `MPI_Errhandler_get` (MPI-1 name of `MPI_Comm_get_errhandler`).
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Errhandler_get(
    comm: MPI_Comm,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Errhandler_get", ErrObj::Comm(comm), || {
        get_errhandler(comm, errhandler)
    })
}

/// `MPI_Comm_create_errhandler`.
///
/// # Safety
/// `comm_errhandler_fn` is a function of the C type
/// `MPI_Comm_errhandler_function` (or null, which is an error);
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_create_errhandler(
    comm_errhandler_fn: Option<CommErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Comm_create_errhandler", ErrObj::None, || {
        create_errhandler(comm_errhandler_fn, errhandler)
    })
}

fn create_errhandler(
    func: Option<CommErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> Result<(), AbiError> {
    let out = out_ptr(errhandler, "errhandler")?;
    let func = func.ok_or_else(|| {
        AbiError::new(
            Class::ARG,
            "`comm_errhandler_fn` is a null function pointer",
        )
    })?;
    let slot = state::lock().errhandlers.insert(UserErrhandler { func });
    // SAFETY: checked non-null; writable by the callers' contract.
    unsafe { *out = handles::errhandler_handle(Errhandler::User(slot)) };
    Ok(())
}

/// `MPI_Errhandler_create` (MPI-1 name of `MPI_Comm_create_errhandler`).
///
/// # Safety
/// As for `MPI_Comm_create_errhandler`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Errhandler_create(
    comm_errhandler_fn: Option<CommErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Errhandler_create", ErrObj::None, || {
        create_errhandler(comm_errhandler_fn, errhandler)
    })
}

/// `MPI_Errhandler_free`: sets the handle to `MPI_ERRHANDLER_NULL`. A user
/// handler stays usable by the communicators it is attached to (so it is
/// never reclaimed; handlers are few).
///
/// # Safety
/// `errhandler` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Errhandler_free(errhandler: *mut MPI_Errhandler) -> c_int {
    guard("MPI_Errhandler_free", ErrObj::None, || {
        let h = out_ptr(errhandler, "errhandler")?;
        // SAFETY: checked non-null.
        let e = handles::errhandler(unsafe { *h })?;
        // SAFETY: as above.
        live(&state::lock(), e, unsafe { *h })?;
        // SAFETY: as above.
        unsafe { *h = ERRHANDLER_NULL };
        Ok(())
    })
}

/// `MPI_Comm_call_errhandler`: runs the communicator's handler with `errorcode`.
#[no_mangle]
pub extern "C" fn oxabi_Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> c_int {
    guard("MPI_Comm_call_errhandler", ErrObj::Comm(comm), || {
        // Validate the communicator first (an invalid one is an error of
        // this call, raised as usual).
        state::lock().comm_entry(comm)?;
        let class = errors::class_of(errorcode).unwrap_or(Class::UNKNOWN.0);
        let message = errors::string_of(errorcode)
            .unwrap_or_else(|| format!("error code {errorcode} raised by the program"));
        let err = AbiError::new(Class(class), message);
        // The handler's own outcome is not this call's error.
        let _ = raise::raise_code(
            "MPI_Comm_call_errhandler",
            ErrObj::Comm(comm),
            err,
            errorcode,
        );
        Ok(())
    })
}

/// `MPI_Error_class`.
///
/// # Safety
/// `errorclass` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    guard("MPI_Error_class", ErrObj::None, || {
        let out = out_ptr(errorclass, "errorclass")?;
        let class = errors::class_of_lenient(errorcode).ok_or_else(|| {
            AbiError::new(Class::ARG, format!("{errorcode} is not a valid error code"))
        })?;
        // SAFETY: checked non-null.
        unsafe { *out = class };
        Ok(())
    })
}

/// `MPI_Error_string`.
///
/// # Safety
/// `string` has `MPI_MAX_ERROR_STRING` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Error_string", ErrObj::None, || {
        let text = errors::string_of_lenient(errorcode).ok_or_else(|| {
            AbiError::new(Class::ARG, format!("{errorcode} is not a valid error code"))
        })?;
        // SAFETY: the caller's contract.
        unsafe { put_string(&text, string, MAX_ERROR_STRING, resultlen) }
    })
}

/// `MPI_Add_error_class`: a new class, larger than `MPI_ERR_LASTCODE` and
/// every value added before (`MPI_LASTUSEDCODE` follows).
///
/// # Safety
/// `errorclass` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Add_error_class(errorclass: *mut c_int) -> c_int {
    guard("MPI_Add_error_class", ErrObj::None, || {
        let out = out_ptr(errorclass, "errorclass")?;
        let class = errors::add_error_class()?;
        // SAFETY: checked non-null.
        unsafe { *out = class };
        Ok(())
    })
}

/// `MPI_Add_error_code`: a new code of a predefined or added class.
///
/// # Safety
/// `errorcode` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    guard("MPI_Add_error_code", ErrObj::None, || {
        let out = out_ptr(errorcode, "errorcode")?;
        let code = errors::add_error_code(errorclass)?;
        // SAFETY: checked non-null.
        unsafe { *out = code };
        Ok(())
    })
}

/// `MPI_Add_error_string`: the text `MPI_Error_string` gives for an added
/// class or code (at most `MPI_MAX_ERROR_STRING - 1` bytes are kept).
///
/// # Safety
/// `string` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    guard("MPI_Add_error_string", ErrObj::None, || {
        if string.is_null() {
            return Err(AbiError::new(Class::ARG, "`string` is a null pointer"));
        }
        // SAFETY: non-null; NUL-terminated by the caller's contract.
        let bytes = unsafe { CStr::from_ptr(string) }.to_bytes();
        let bytes = &bytes[..bytes.len().min(MAX_ERROR_STRING - 1)];
        errors::add_error_string(errorcode, &String::from_utf8_lossy(bytes))
    })
}
