//! Raising errors: an `Err` of an `oxabi_*` body goes to the error handler
//! of the object the call is about (a communicator's or a session's, or
//! `MPI_COMM_WORLD`'s when the call has none or its handle is invalid;
//! files default to `MPI_ERRORS_RETURN`), and a panic never crosses into C: it
//! becomes `MPI_ERR_INTERN` with the panic's message. Every `oxabi_*`
//! function runs its body through [`guard`].
//!
//! Above [`crate::state`] (handlers live in its tables); the error values
//! and codes themselves are [`crate::errors`], below everything.

use std::ffi::{c_char, c_int, c_long, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::errors::{class_info, code_for, AbiError, Class, ErrObj, ERR_LASTCODE};
use crate::handles::{self, Errhandler, MPI_Comm, COMM_WORLD};
use crate::state;

/// Which handler an error on `obj` goes to, and the communicator (or
/// window) handle a user handler is called with.
fn handler_for(obj: ErrObj) -> (Errhandler, MPI_Comm) {
    let st = state::lock();
    let comm = match obj {
        ErrObj::Return => return (Errhandler::Return, COMM_WORLD),
        ErrObj::File(h) => {
            let e = crate::handles::file_slot(h)
                .ok()
                .and_then(|s| st.files.get(s))
                .map_or(st.file_null_errhandler, |f| f.errhandler);
            return (e, COMM_WORLD);
        }
        ErrObj::Comm(h) => h,
        ErrObj::Session(h) => {
            let open = handles::session(h).ok().and_then(|s| st.sessions.get(s));
            if let Some(s) = open {
                // A user handler gets the session's handle.
                return (s.errhandler, h);
            }
            COMM_WORLD
        }
        ErrObj::Win(h) => {
            // A live window's own handler; an invalid handle goes to MPI_COMM_WORLD's.
            if let Ok(e) = st.win_entry(h) {
                return (e.errhandler, h);
            }
            COMM_WORLD
        }
        ErrObj::None => COMM_WORLD,
    };
    match st.comm_entry(comm) {
        Ok(e) => (e.errhandler, comm),
        Err(_) => match st.comm_entry(COMM_WORLD) {
            Ok(e) => (e.errhandler, COMM_WORLD),
            Err(_) => (Errhandler::Fatal, COMM_WORLD),
        },
    }
}

/// Raises `err` from function `func` on `obj`'s error handler; returns
/// the code to give back to C (unless the handler ends the job).
pub fn raise(func: &str, obj: ErrObj, err: AbiError) -> c_int {
    let code = code_for(&err);
    raise_code(func, obj, err, code)
}

/// [`raise`] with the error code already chosen.
pub fn raise_code(func: &str, obj: ErrObj, err: AbiError, code: c_int) -> c_int {
    let obj = err.raise_on.unwrap_or(obj);
    let (handler, comm) = handler_for(obj);
    match handler {
        Errhandler::Return => code,
        Errhandler::Fatal | Errhandler::Abort => fatal(func, &err),
        Errhandler::User(slot) => {
            let f = state::lock().errhandlers.get(slot).map(|h| h.func);
            match (f, obj) {
                (Some(f), ErrObj::File(mut file)) => {
                    let mut c = code;
                    // SAFETY: a file handler (MPI_File_create_errhandler)
                    // takes `MPI_File *` (a pointer-sized handle) where a
                    // communicator's takes `MPI_Comm *`; both pass by pointer.
                    unsafe {
                        let f: state::FileErrhandlerFn = std::mem::transmute(f);
                        f(&mut file, &mut c)
                    };
                    code
                }
                (Some(f), _) => {
                    let (mut comm, mut c) = (comm, code);
                    // SAFETY: a function the program registered with
                    // MPI_Comm_create_errhandler, called as MPI specifies.
                    unsafe { f(&mut comm, &mut c) };
                    code
                }
                (None, _) => fatal(func, &err),
            }
        }
    }
}

/// Reports an error on stderr and ends the job (MPI_ERRORS_ARE_FATAL).
fn fatal(func: &str, err: &AbiError) -> ! {
    let name = match class_info(err.class.0) {
        Some((name, _)) => name.to_owned(),
        None if err.class.0 > ERR_LASTCODE => format!("error class {}", err.class.0),
        None => "MPI_ERR_UNKNOWN".to_owned(),
    };
    let mut st = state::lock();
    let rank = st
        .universe
        .as_ref()
        .map(|u| format!(" on rank {}", u.world().rank()))
        .unwrap_or_default();
    let text = format!(
        "OxMPI: fatal error in {func}{rank}: {name}: {}",
        err.message
    );
    eprintln!("{text}");
    // Exit statuses are 8 bits: added classes (above MPI_ERR_LASTCODE) keep
    // their low byte, as under MPICH's launcher.
    let exit = match err.class.0 & 0xff {
        0 => 1,
        low => low,
    };
    // The message is printed once, above: the launcher's line about the
    // abort names only the function, not the message again.
    match st.universe.take() {
        Some(u) => u.abort(exit, &format!("fatal error in {func}")),
        None => std::process::exit(exit),
    }
}

/// Runs the body of MPI function `func` (errors raised on `obj`): the
/// generic wrapper of every `oxabi_*` function. A panic becomes
/// `MPI_ERR_INTERN`; nothing unwinds into C.
#[inline]
pub fn guard(
    func: &'static str,
    obj: ErrObj,
    body: impl FnOnce() -> Result<(), AbiError>,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(internal(p.as_ref())));
    match result {
        Ok(()) => 0,
        Err(e) => raise_caught(func, obj, e),
    }
}

/// [`guard`] for a body that is one runtime call: the body's arguments are
/// moved in, and its error converts only when there is one. The blocking
/// point-to-point calls' common case runs under it (one frame less than
/// [`guard`] with a closure inside, on the latency path).
#[inline(always)]
pub fn guard_runtime<E: Into<AbiError>>(
    func: &'static str,
    obj: ErrObj,
    body: impl FnOnce() -> Result<(), E>,
) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => raise_caught(func, obj, e.into()),
        Err(p) => raise_caught(func, obj, internal(p.as_ref())),
    }
}

/// The error a caught panic becomes.
#[cold]
fn internal(payload: &(dyn std::any::Any + Send)) -> AbiError {
    AbiError::new(
        Class::INTERN,
        format!(
            "internal error (a bug in OxMPI): {}",
            oxmpi::error::panic_message(payload)
        ),
    )
}

/// Reports `e` (see [`raise`]); a panic there becomes `MPI_ERR_INTERN`.
#[cold]
#[inline(never)]
fn raise_caught(func: &'static str, obj: ErrObj, e: AbiError) -> c_int {
    catch_unwind(AssertUnwindSafe(|| raise(func, obj, e))).unwrap_or(Class::INTERN.0)
}

/// The reporter behind every function of the table not implemented yet:
/// raises `MPI_ERR_UNSUPPORTED_OPERATION` naming the function. `kind` says
/// what `handle` is (0 none, 1 comm, 2 win, 3 file, 4 session).
///
/// # Safety
/// `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_unsupported(
    name: *const c_char,
    kind: c_int,
    handle: c_long,
) -> c_int {
    // SAFETY: the generated shims pass string literals.
    let func = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    let obj = match kind {
        1 => ErrObj::Comm(handle as MPI_Comm),
        2 => ErrObj::Win(handle as c_int),
        3 => ErrObj::File(handle as usize),
        4 => ErrObj::Session(handle as c_int),
        _ => ErrObj::None,
    };
    let err = AbiError::new(
        Class::UNSUPPORTED_OPERATION,
        format!("{func} is not implemented by OxMPI yet"),
    );
    catch_unwind(AssertUnwindSafe(|| raise(&func, obj, err))).unwrap_or(Class::INTERN.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::{class_of, string_of};

    #[test]
    fn panics_become_internal_errors() {
        // Before MPI_Init the fallback handler is fatal; use a file error,
        // which returns.
        let code = guard("MPI_Test_panic", ErrObj::Return, || panic!("boom"));
        assert_eq!(class_of(code), Some(Class::INTERN.0));
        assert!(string_of(code).unwrap().contains("boom"));
    }
}
