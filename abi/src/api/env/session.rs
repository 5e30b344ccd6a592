//! Sessions (MPI 4.0 chapter 11.3): `MPI_Session_init` / `finalize`
//! (before, without or alongside `MPI_Init`: the runtime starts once and
//! runs while the World Model is active or a session is open), the process
//! sets `mpi://WORLD` and `mpi://SELF` (`MPI_Session_get_num_psets`,
//! `get_nth_pset`, `get_pset_info`, `MPI_Group_from_session_pset`),
//! `MPI_Comm_create_from_group`, `MPI_Session_get_info` and the session
//! error handlers.
//!
//! Limit: once the runtime has been finalized (the last session finalized
//! outside the World Model, or `MPI_Finalize` with no session open) it
//! cannot start again: a later `MPI_Session_init` or `MPI_Init` fails with
//! `MPI_ERR_OTHER` saying so.

use std::ffi::{c_char, c_int};

use crate::api::comm::group::{group_of, insert_group};
use crate::api::comm::inter::{put_with_errhandler, string_arg};
use crate::api::env::info::{read, store};
use crate::api::env::{release_runtime, start_runtime};
use crate::errors::{self, out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, Errhandler, MPI_Comm, MPI_Errhandler, MPI_Group, MPI_Info, MPI_Session, COMM_NULL,
    ERRHANDLER_NULL, ERRORS_RETURN, INFO_NULL, SESSION_NULL,
};
use crate::objects::info::InfoEntry;
use crate::raise::{self, guard};
use crate::state::{self, CommErrhandlerFn, SessionEntry, UserErrhandler};

/// The process sets every session knows.
const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

/// The process set `name` names (MPI's names are case-insensitive).
fn pset(name: &str) -> Result<usize, AbiError> {
    PSETS
        .iter()
        .position(|p| p.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            AbiError::new(
                Class::ARG,
                format!("no process set is named {name:?} (OxMPI has mpi://WORLD and mpi://SELF)"),
            )
        })
}

/// Checks that `h` is an open session.
fn live(h: MPI_Session) -> Result<usize, AbiError> {
    let slot = handles::session(h)?;
    match state::lock().sessions.get(slot) {
        Some(_) => Ok(slot),
        None => Err(AbiError::new(
            Class(75),
            format!("session {h:#010x} does not exist (finalized, or never initialized)"),
        )),
    }
}

/// The (members, this process's rank) of process set `index`.
fn members(index: usize) -> Result<oxmpi::Group, AbiError> {
    let st = state::lock();
    let u = st.check_active()?;
    Ok(if index == 0 {
        u.world().group()
    } else {
        u.self_comm().group()
    })
}

/// `MPI_Session_init`: starts the runtime if nothing runs it yet.
///
/// # Safety
/// `session` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_init(
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    session: *mut MPI_Session,
) -> c_int {
    let body = || {
        let out = out_ptr(session, "session")?;
        let errhandler = match errhandler {
            ERRHANDLER_NULL => Errhandler::Fatal,
            h => handles::errhandler(h)?,
        };
        let pairs = if info == INFO_NULL {
            Vec::new()
        } else {
            read(info)?.pairs
        };
        start_runtime(3)?;
        let slot = state::lock().sessions.insert(SessionEntry {
            errhandler,
            info: pairs,
        });
        // SAFETY: checked non-null.
        unsafe { *out = handles::session_handle(slot) };
        Ok(())
    };
    // Errors of this call go to the handler it was given (no session yet).
    match guard("MPI_Session_init", ErrObj::Return, body) {
        0 => 0,
        code if errhandler == ERRORS_RETURN => code,
        code => {
            let err = AbiError::new(
                Class(errors::class_of(code).unwrap_or(Class::OTHER.0)),
                errors::string_of(code).unwrap_or_default(),
            );
            raise::raise_code("MPI_Session_init", ErrObj::None, err, code)
        }
    }
}

/// `MPI_Session_finalize`: the last open session outside the World Model
/// finalizes the runtime (a barrier over every process).
///
/// # Safety
/// `session` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_finalize(session: *mut MPI_Session) -> c_int {
    // SAFETY: the caller's contract (checked non-null first).
    let h = if session.is_null() {
        SESSION_NULL
    } else {
        unsafe { *session }
    };
    guard("MPI_Session_finalize", ErrObj::Session(h), || {
        let out = out_ptr(session, "session")?;
        let slot = live(h)?;
        state::lock().sessions.remove(slot);
        // SAFETY: checked non-null.
        unsafe { *out = SESSION_NULL };
        release_runtime()
    })
}

/// `MPI_Session_get_num_psets`: 2 (`mpi://WORLD`, `mpi://SELF`).
///
/// # Safety
/// `npset_names` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_get_num_psets(
    session: MPI_Session,
    _info: MPI_Info,
    npset_names: *mut c_int,
) -> c_int {
    guard(
        "MPI_Session_get_num_psets",
        ErrObj::Session(session),
        || {
            let out = out_ptr(npset_names, "npset_names")?;
            live(session)?;
            // SAFETY: checked non-null.
            unsafe { *out = PSETS.len() as c_int };
            Ok(())
        },
    )
}

/// `MPI_Session_get_nth_pset`: with `*pset_len` 0 only the length is
/// returned; else the name is copied (truncated to `*pset_len - 1` bytes
/// and terminated). `*pset_len` becomes the name's length + 1 either way.
///
/// # Safety
/// `pset_len` is readable and writable; `pset_name` holds `*pset_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_get_nth_pset(
    session: MPI_Session,
    _info: MPI_Info,
    n: c_int,
    pset_len: *mut c_int,
    pset_name: *mut c_char,
) -> c_int {
    guard("MPI_Session_get_nth_pset", ErrObj::Session(session), || {
        let len = out_ptr(pset_len, "pset_len")?;
        live(session)?;
        let name = usize::try_from(n)
            .ok()
            .and_then(|i| PSETS.get(i))
            .ok_or_else(|| {
                AbiError::new(
                    Class::ARG,
                    format!("`n` is {n}: there are {} process sets", PSETS.len()),
                )
            })?;
        // SAFETY: checked non-null; the caller's contract.
        let cap = unsafe { *len };
        if cap > 0 {
            if pset_name.is_null() {
                return Err(AbiError::new(Class::ARG, "`pset_name` is a null pointer"));
            }
            let copy = name.len().min(cap as usize - 1);
            // SAFETY: `pset_name` holds `cap` bytes (the caller's contract).
            unsafe {
                std::ptr::copy_nonoverlapping(name.as_ptr().cast(), pset_name, copy);
                *pset_name.add(copy) = 0;
            }
        }
        // SAFETY: as above.
        unsafe { *len = name.len() as c_int + 1 };
        Ok(())
    })
}

/// `MPI_Session_get_pset_info`: an info with `mpi_size`.
///
/// # Safety
/// `pset_name` is a C string; `info` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_get_pset_info(
    session: MPI_Session,
    pset_name: *const c_char,
    info: *mut MPI_Info,
) -> c_int {
    guard(
        "MPI_Session_get_pset_info",
        ErrObj::Session(session),
        || {
            let out = out_ptr(info, "info")?;
            live(session)?;
            let g = members(pset(string_arg(pset_name, "pset_name")?)?)?;
            let pairs = vec![("mpi_size".to_owned(), g.size().to_string())];
            // SAFETY: checked non-null.
            unsafe { *out = store(InfoEntry { pairs }) };
            Ok(())
        },
    )
}

/// `MPI_Session_get_info`: the hints the session was made with, and the
/// thread level (`thread_level`, always `MPI_THREAD_MULTIPLE`).
///
/// # Safety
/// `info_used` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_get_info(
    session: MPI_Session,
    info_used: *mut MPI_Info,
) -> c_int {
    guard("MPI_Session_get_info", ErrObj::Session(session), || {
        let out = out_ptr(info_used, "info_used")?;
        let slot = live(session)?;
        let mut pairs = state::lock()
            .sessions
            .get(slot)
            .map(|s| s.info.clone())
            .unwrap_or_default();
        pairs.retain(|(k, _)| k != "thread_level");
        pairs.push(("thread_level".into(), "MPI_THREAD_MULTIPLE".into()));
        // SAFETY: checked non-null.
        unsafe { *out = store(InfoEntry { pairs }) };
        Ok(())
    })
}

/// `MPI_Group_from_session_pset`.
///
/// # Safety
/// `pset_name` is a C string; `newgroup` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_from_session_pset(
    session: MPI_Session,
    pset_name: *const c_char,
    newgroup: *mut MPI_Group,
) -> c_int {
    guard(
        "MPI_Group_from_session_pset",
        ErrObj::Session(session),
        || {
            let out = out_ptr(newgroup, "newgroup")?;
            live(session)?;
            let g = members(pset(string_arg(pset_name, "pset_name")?)?)?;
            // SAFETY: checked non-null.
            unsafe { *out = insert_group(g) };
            Ok(())
        },
    )
}

/// `MPI_Comm_create_from_group`: collective over the group's members,
/// kept apart from other creations by `stringtag`; `MPI_GROUP_EMPTY`
/// gives `MPI_COMM_NULL`.
///
/// # Safety
/// `stringtag` is a C string; `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_create_from_group(
    group: MPI_Group,
    stringtag: *const c_char,
    _info: MPI_Info,
    errhandler: MPI_Errhandler,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Comm_create_from_group", ErrObj::None, || {
        let out = out_ptr(newcomm, "newcomm")?;
        let tag = string_arg(stringtag, "stringtag")?;
        let g = group_of(group)?;
        let any = state::lock().check_active()?.world();
        match any.create_from_group(&g, tag)? {
            // SAFETY: checked non-null.
            Some(c) => unsafe { put_with_errhandler(c, errhandler, out) },
            None => {
                // SAFETY: checked non-null.
                unsafe { *out = COMM_NULL };
                Ok(())
            }
        }
    })
}

/// `MPI_Session_create_errhandler`: handlers of all kinds share a table
/// (a session handler is called with the session handle).
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_create_errhandler(
    session_errhandler_fn: Option<CommErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Session_create_errhandler", ErrObj::None, || {
        let out = out_ptr(errhandler, "errhandler")?;
        let func = session_errhandler_fn.ok_or_else(|| {
            AbiError::new(
                Class::ARG,
                "`session_errhandler_fn` is a null function pointer",
            )
        })?;
        let slot = state::lock().errhandlers.insert(UserErrhandler { func });
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(Errhandler::User(slot)) };
        Ok(())
    })
}

/// `MPI_Session_set_errhandler`.
#[no_mangle]
pub extern "C" fn oxabi_Session_set_errhandler(
    session: MPI_Session,
    errhandler: MPI_Errhandler,
) -> c_int {
    guard(
        "MPI_Session_set_errhandler",
        ErrObj::Session(session),
        || {
            let slot = live(session)?;
            let e = handles::errhandler(errhandler)?;
            let mut st = state::lock();
            if let Errhandler::User(u) = e {
                if st.errhandlers.get(u).is_none() {
                    return Err(AbiError::new(
                        Class::ARG,
                        format!("error handler {errhandler:#010x} does not exist"),
                    ));
                }
            }
            if let Some(s) = st.sessions.get_mut(slot) {
                s.errhandler = e;
            }
            Ok(())
        },
    )
}

/// `MPI_Session_get_errhandler`.
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Session_get_errhandler(
    session: MPI_Session,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard(
        "MPI_Session_get_errhandler",
        ErrObj::Session(session),
        || {
            let out = out_ptr(errhandler, "errhandler")?;
            let slot = live(session)?;
            let e = state::lock().sessions.get(slot).map(|s| s.errhandler);
            // SAFETY: checked non-null.
            unsafe { *out = handles::errhandler_handle(e.unwrap_or(Errhandler::Fatal)) };
            Ok(())
        },
    )
}

/// `MPI_Session_call_errhandler`: raises `errorcode` on the session's
/// handler.
#[no_mangle]
pub extern "C" fn oxabi_Session_call_errhandler(session: MPI_Session, errorcode: c_int) -> c_int {
    guard(
        "MPI_Session_call_errhandler",
        ErrObj::Session(session),
        || {
            live(session)?;
            let class = errors::class_of(errorcode).unwrap_or(Class::UNKNOWN.0);
            let message = errors::string_of(errorcode)
                .unwrap_or_else(|| format!("error code {errorcode} raised by the program"));
            let err = AbiError::new(Class(class), message);
            // The handler's own outcome is not this call's error.
            let _ = raise::raise_code(
                "MPI_Session_call_errhandler",
                ErrObj::Session(session),
                err,
                errorcode,
            );
            Ok(())
        },
    )
}
