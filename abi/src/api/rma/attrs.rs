//! A window's attributes (the predefined `MPI_WIN_BASE`, `_SIZE`,
//! `_DISP_UNIT`, `_CREATE_FLAVOR`, `_MODEL`), group, name, error handler
//! and info.

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::api::comm::group::insert_group;
use crate::api::env::put_string;
use crate::errors::{self, out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Errhandler, MPI_Info, MPI_Win};
use crate::raise::{self, guard};
use crate::state::{self, CommErrhandlerFn, UserErrhandler};

/// `MPI_WIN_BASE`.
const WIN_BASE: c_int = 0x6600_0001;
/// `MPI_WIN_SIZE`.
const WIN_SIZE: c_int = 0x6600_0003;
/// `MPI_WIN_DISP_UNIT`.
const WIN_DISP_UNIT: c_int = 0x6600_0005;
/// `MPI_WIN_CREATE_FLAVOR`.
const WIN_CREATE_FLAVOR: c_int = 0x6600_0007;
/// `MPI_WIN_MODEL`.
const WIN_MODEL: c_int = 0x6600_0009;
/// `MPI_MAX_OBJECT_NAME`.
const MAX_OBJECT_NAME: usize = 128;

/// `MPI_Win_get_attr`: the predefined attributes (`MPI_WIN_BASE` is the
/// base address itself; the others point to the value, as MPI specifies)
/// and those of `MPI_Win_create_keyval`'s keyvals.
///
/// # Safety
/// `attribute_val` is a writable `void *`, `flag` writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_get_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Win_get_attr", ErrObj::Win(win), || {
        let val = out_ptr(attribute_val.cast::<*mut c_void>(), "attribute_val")?;
        let flag = out_ptr(flag, "flag")?;
        let st = state::lock();
        let a = &st.win_entry(win)?.attrs;
        let v: *mut c_void = match win_keyval {
            WIN_BASE => a.base as *mut c_void,
            WIN_SIZE => std::ptr::addr_of!(a.size).cast_mut().cast(),
            WIN_DISP_UNIT => std::ptr::addr_of!(a.disp_unit).cast_mut().cast(),
            WIN_CREATE_FLAVOR => std::ptr::addr_of!(a.flavor).cast_mut().cast(),
            WIN_MODEL => std::ptr::addr_of!(a.model).cast_mut().cast(),
            k => {
                drop(st);
                let value = super::keyvals::get(win, k)?;
                // SAFETY: checked non-null.
                unsafe {
                    if let Some(v) = value {
                        *val = v as *mut c_void;
                    }
                    *flag = c_int::from(value.is_some());
                }
                return Ok(());
            }
        };
        // SAFETY: checked non-null; the values live as long as the window.
        unsafe {
            *val = v;
            *flag = 1;
        }
        Ok(())
    })
}

/// `MPI_Win_get_group`: a new group of the window's ranks.
///
/// # Safety
/// `group` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_get_group(win: MPI_Win, group: *mut c_int) -> c_int {
    guard("MPI_Win_get_group", ErrObj::Win(win), || {
        let out = out_ptr(group, "group")?;
        let g = super::win(win)?.comm().group();
        // SAFETY: checked non-null.
        unsafe { *out = insert_group(g) };
        Ok(())
    })
}

/// `MPI_Win_set_name`.
///
/// # Safety
/// `win_name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_set_name(win: MPI_Win, win_name: *const c_char) -> c_int {
    guard("MPI_Win_set_name", ErrObj::Win(win), || {
        if win_name.is_null() {
            return Err(AbiError::new(Class::ARG, "`win_name` is a null pointer"));
        }
        // SAFETY: non-null, NUL-terminated: the caller's contract.
        let bytes = unsafe { CStr::from_ptr(win_name) }.to_bytes();
        let bytes = &bytes[..bytes.len().min(MAX_OBJECT_NAME - 1)];
        state::lock().win_entry_mut(win)?.name = String::from_utf8_lossy(bytes).into_owned();
        Ok(())
    })
}

/// `MPI_Win_get_name` (empty until set).
///
/// # Safety
/// `win_name` holds `MPI_MAX_OBJECT_NAME` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_get_name(
    win: MPI_Win,
    win_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Win_get_name", ErrObj::Win(win), || {
        let name = state::lock().win_entry(win)?.name.clone();
        // SAFETY: the caller's contract.
        unsafe { put_string(&name, win_name, MAX_OBJECT_NAME, resultlen) }
    })
}

/// `MPI_Win_set_errhandler`.
#[no_mangle]
pub extern "C" fn oxabi_Win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> c_int {
    guard("MPI_Win_set_errhandler", ErrObj::Win(win), || {
        let e = handles::errhandler(errhandler)?;
        state::lock().win_entry_mut(win)?.errhandler = e;
        Ok(())
    })
}

/// `MPI_Win_get_errhandler`.
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_get_errhandler(
    win: MPI_Win,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Win_get_errhandler", ErrObj::Win(win), || {
        let out = out_ptr(errhandler, "errhandler")?;
        let e = state::lock().win_entry(win)?.errhandler;
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(e) };
        Ok(())
    })
}

/// `MPI_Win_create_errhandler`: the function is called as
/// `f(&win, &code)`.
///
/// # Safety
/// `errhandler` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_create_errhandler(
    win_errhandler_fn: Option<CommErrhandlerFn>,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    guard("MPI_Win_create_errhandler", ErrObj::None, || {
        let out = out_ptr(errhandler, "errhandler")?;
        let func = win_errhandler_fn.ok_or_else(|| {
            AbiError::new(Class::ARG, "`win_errhandler_fn` is a null function pointer")
        })?;
        let slot = state::lock().errhandlers.insert(UserErrhandler { func });
        // SAFETY: checked non-null.
        unsafe { *out = handles::errhandler_handle(handles::Errhandler::User(slot)) };
        Ok(())
    })
}

/// `MPI_Win_call_errhandler`: raises `errorcode` on the window's handler.
#[no_mangle]
pub extern "C" fn oxabi_Win_call_errhandler(win: MPI_Win, errorcode: c_int) -> c_int {
    guard("MPI_Win_call_errhandler", ErrObj::Win(win), || {
        state::lock().win_entry(win)?;
        let class = errors::class_of(errorcode).unwrap_or(Class::UNKNOWN.0);
        let message = errors::string_of(errorcode)
            .unwrap_or_else(|| format!("error code {errorcode} raised by the program"));
        let err = AbiError::new(Class(class), message);
        let _ = raise::raise_code("MPI_Win_call_errhandler", ErrObj::Win(win), err, errorcode);
        Ok(())
    })
}

/// `MPI_Win_set_info`: hints are kept (for `MPI_Win_get_info`).
#[no_mangle]
pub extern "C" fn oxabi_Win_set_info(win: MPI_Win, info: MPI_Info) -> c_int {
    guard("MPI_Win_set_info", ErrObj::Win(win), || {
        state::lock().win_entry(win)?;
        if info == handles::INFO_NULL {
            return Ok(());
        }
        let hints = crate::api::env::info::read(info)?;
        let mut st = state::lock();
        let kept = &mut st.win_entry_mut(win)?.info;
        for (k, v) in hints.pairs {
            match kept.iter_mut().find(|(key, _)| *key == k) {
                Some(pair) => pair.1 = v,
                None => kept.push((k, v)),
            }
        }
        Ok(())
    })
}

/// The hints a window reports when the program did not set them (MPI
/// 4.0 section 12.2.1 and MPICH's names): OxMPI acts on none of them, and
/// holds to their defaults' promises.
const DEFAULT_HINTS: [(&str, &str); 6] = [
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
    ("alloc_shared_noncontig", "false"),
];

/// `MPI_Win_get_info`: a new info object with the hints in use (those
/// set, and the defaults of the others).
///
/// # Safety
/// `info_used` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_get_info(win: MPI_Win, info_used: *mut MPI_Info) -> c_int {
    guard("MPI_Win_get_info", ErrObj::Win(win), || {
        let out = out_ptr(info_used, "info_used")?;
        let mut pairs = state::lock().win_entry(win)?.info.clone();
        for (k, v) in DEFAULT_HINTS {
            if !pairs.iter().any(|(key, _)| key == k) {
                pairs.push((k.to_owned(), v.to_owned()));
            }
        }
        let h = crate::api::env::info::store(crate::objects::info::InfoEntry { pairs });
        // SAFETY: checked non-null.
        unsafe { *out = h };
        Ok(())
    })
}
