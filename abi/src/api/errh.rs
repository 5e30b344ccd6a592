//! Error handlers and error codes: `MPI_Comm_{set,get,create,call}_errhandler`,
//! `MPI_Errhandler_free`, `MPI_Error_class`, `MPI_Error_string`.

use std::ffi::{c_char, c_int};

use crate::api::env::put_string;
use crate::errors::{self, guard, out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, Errhandler, MPI_Comm, MPI_Errhandler, ERRHANDLER_NULL};
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

/// `MPI_Comm_set_errhandler`.
#[no_mangle]
pub extern "C" fn oxabi_Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
    guard("MPI_Comm_set_errhandler", ErrObj::Comm(comm), || {
        let e = handles::errhandler(errhandler)?;
        let mut st = state::lock();
        let e = live(&st, e, errhandler)?;
        st.comm_entry_mut(comm)?.errhandler = e;
        Ok(())
    })
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
        let out = out_ptr(errhandler, "errhandler")?;
        let e = state::lock().comm_entry(comm)?.errhandler;
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(e) };
        Ok(())
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
        let out = out_ptr(errhandler, "errhandler")?;
        let func = comm_errhandler_fn.ok_or_else(|| {
            AbiError::new(
                Class::ARG,
                "`comm_errhandler_fn` is a null function pointer",
            )
        })?;
        let slot = state::lock().errhandlers.insert(UserErrhandler { func });
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(Errhandler::User(slot)) };
        Ok(())
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
        let _ = errors::raise_code(
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
        let class = errors::class_of(errorcode).ok_or_else(|| {
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
        let text = errors::string_of(errorcode).ok_or_else(|| {
            AbiError::new(Class::ARG, format!("{errorcode} is not a valid error code"))
        })?;
        // SAFETY: the caller's contract.
        unsafe { put_string(&text, string, MAX_ERROR_STRING, resultlen) }
    })
}
