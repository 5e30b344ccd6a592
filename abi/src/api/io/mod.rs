//! MPI-IO (MPI 4.0 chapter 14) over the runtime's files (`oxmpi::io`):
//! opening, closing and managing files ([`manage`]), views ([`views`]),
//! and the data accesses in every form ([`access`]). `MPI_File` handles
//! are tagged slots of the state's file table (see
//! [`crate::handles::file_slot`]). Errors go to the file's own handler,
//! `MPI_ERRORS_RETURN` unless the program sets another; errors of
//! `MPI_File_open` and `MPI_File_delete` go to `MPI_FILE_NULL`'s.

pub mod access;
pub mod datarep;
pub mod manage;
pub mod views;

use std::ffi::{c_int, c_void};

use oxmpi::io::data::Buf;
use oxmpi::io::File;

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Count, MPI_Datatype, MPI_Errhandler, MPI_File, FILE_NULL};
use crate::raise::{self, guard};
use crate::state::{self, CommErrhandlerFn, UserErrhandler};

/// `MPI_Offset`.
#[allow(non_camel_case_types)]
pub type MPI_Offset = i64;

/// The runtime file a handle names (cloned: no lock is held while it is used).
pub(crate) fn file(h: MPI_File) -> Result<File, AbiError> {
    let slot = handles::file_slot(h)?;
    let st = state::lock();
    st.check_active()?;
    st.files
        .get(slot)
        .map(|e| e.file.clone())
        .ok_or_else(|| freed(h))
}

fn freed(h: MPI_File) -> AbiError {
    AbiError::new(
        Class(27),
        format!("file {h:#x} is not open (closed, or never opened)"),
    )
}

/// Agrees on a collective call's local checks over `comm`: when they
/// failed on any rank, they fail on every rank (the others get the class
/// of the worst), so no rank waits in the call for one that left it.
pub(crate) fn agree<T>(comm: &oxmpi::Comm, mine: Result<T, AbiError>) -> Result<T, AbiError> {
    let code = mine.as_ref().map_or_else(|e| e.class.0, |_| 0);
    let mut worst = [0];
    comm.allreduce(&[code], &mut worst, &oxmpi::ops::Op::MAX)?;
    match (mine, worst[0]) {
        (Err(e), _) => Err(e),
        (Ok(v), 0) => Ok(v),
        (Ok(_), c) => Err(AbiError::new(
            Class(c),
            format!("the arguments were wrong on another rank (error class {c})"),
        )),
    }
}

/// A non-negative offset argument.
pub(crate) fn offset_arg(v: MPI_Offset, arg: &'static str) -> Result<u64, AbiError> {
    u64::try_from(v).map_err(|_| {
        AbiError::new(
            Class::ARG,
            format!("invalid `{arg}` {v}: offsets cannot be negative"),
        )
    })
}

/// A committed datatype argument.
pub(crate) fn type_arg(h: MPI_Datatype, arg: &str) -> Result<oxmpi::datatype::Datatype, AbiError> {
    let dt = crate::api::datatype::lookup(h).map_err(|mut e| {
        e.message = format!("`{arg}`: {}", e.message);
        e
    })?;
    if !dt.is_committed() {
        return Err(AbiError::new(
            Class::TYPE,
            format!("`{arg}` {h:#010x} is not committed"),
        ));
    }
    Ok(dt)
}

/// The program's buffer of an access.
pub(crate) fn buf_arg(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Result<Buf, AbiError> {
    let count = usize::try_from(count).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("invalid `count` {count}: counts cannot be negative"),
        )
    })?;
    let dt = type_arg(datatype, "datatype")?;
    if buf.is_null() && count > 0 && dt.size() > 0 && dt.true_lb() == 0 {
        return Err(AbiError::new(
            Class::BUFFER,
            format!("`buf` is NULL but {count} elements are to be accessed"),
        ));
    }
    Ok(Buf {
        addr: buf as usize,
        count,
        dt,
    })
}

/// `MPI_File_c2f`: the file's table slot plus one (0 for `MPI_FILE_NULL`).
#[no_mangle]
pub extern "C" fn oxabi_File_c2f(fh: MPI_File) -> c_int {
    handles::file_slot(fh).map_or(0, |s| s as c_int + 1)
}

/// `MPI_File_f2c`.
#[no_mangle]
pub extern "C" fn oxabi_File_f2c(fh: c_int) -> MPI_File {
    match usize::try_from(fh) {
        Ok(n) if n > 0 => handles::file_handle(n - 1),
        _ => FILE_NULL,
    }
}

/// `MPI_File_create_errhandler`.
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_create_errhandler(
    file_errhandler_fn: Option<state::FileErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_File_create_errhandler", ErrObj::Return, || {
        let out = out_ptr(errhandler, "errhandler")?;
        let f = file_errhandler_fn
            .ok_or_else(|| AbiError::new(Class::ARG, "`file_errhandler_fn` is NULL"))?;
        // SAFETY: kept as a communicator handler's type and called as a
        // file's (see raise::raise_code): both take a handle by pointer.
        let func: CommErrhandlerFn = unsafe { std::mem::transmute(f) };
        let slot = state::lock().errhandlers.insert(UserErrhandler { func });
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(handles::Errhandler::User(slot)) };
        Ok(())
    })
}

/// `MPI_File_set_errhandler` (on `MPI_FILE_NULL`: the handler files get
/// when opened, and that `MPI_File_open` errors go to).
#[no_mangle]
pub extern "C" fn oxabi_File_set_errhandler(file: MPI_File, errhandler: MPI_Errhandler) -> c_int {
    guard("MPI_File_set_errhandler", ErrObj::File(file), || {
        let e = handles::errhandler(errhandler)?;
        let mut st = state::lock();
        if let handles::Errhandler::User(s) = e {
            if st.errhandlers.get(s).is_none() {
                return Err(AbiError::new(
                    Class::ARG,
                    format!("error handler {errhandler:#010x} does not exist"),
                ));
            }
        }
        if file == FILE_NULL {
            st.file_null_errhandler = e;
            return Ok(());
        }
        let slot = handles::file_slot(file)?;
        st.files
            .get_mut(slot)
            .ok_or_else(|| freed(file))?
            .errhandler = e;
        Ok(())
    })
}

/// `MPI_File_get_errhandler`.
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_errhandler(
    file: MPI_File,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_File_get_errhandler", ErrObj::File(file), || {
        let out = out_ptr(errhandler, "errhandler")?;
        let st = state::lock();
        let e = if file == FILE_NULL {
            st.file_null_errhandler
        } else {
            let slot = handles::file_slot(file)?;
            st.files.get(slot).ok_or_else(|| freed(file))?.errhandler
        };
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(e) };
        Ok(())
    })
}

/// `MPI_File_call_errhandler`: raises `errorcode` on the file's handler.
#[no_mangle]
pub extern "C" fn oxabi_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
    guard("MPI_File_call_errhandler", ErrObj::File(fh), || {
        if fh != FILE_NULL {
            file(fh)?;
        }
        let class = crate::errors::class_of(errorcode).unwrap_or(Class::UNKNOWN.0);
        let message = crate::errors::string_of(errorcode)
            .unwrap_or_else(|| format!("error code {errorcode} raised by the program"));
        let err = AbiError::new(Class(class), message);
        // The handler's own outcome is not this call's error.
        let _ = raise::raise_code("MPI_File_call_errhandler", ErrObj::File(fh), err, errorcode);
        Ok(())
    })
}
