//! Window attributes with user keyvals: `MPI_Win_create_keyval` /
//! `_free_keyval`, `MPI_Win_set_attr` / `_delete_attr`, and the user
//! half of `MPI_Win_get_attr`, with C delete callbacks (run on
//! replacement, deletion and `MPI_Win_free`; windows are never
//! duplicated, so copy callbacks are kept but never called).
//!
//! Keyvals are in a small table here; values live in each window's entry
//! (`WinEntry::user_attrs`, by keyval slot), so they go with the window.
//! Window keyval handles are keyval handles numbered from
//! [`FIRST_INDEX`], apart from communicator and datatype keyvals.
//! Callbacks run without any lock held (they may call MPI).

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, KeyvalRef, MPI_Win, KEYVAL_INVALID};
use crate::objects::table::Table;
use crate::raise::guard;
use crate::state;

/// `MPI_Win_copy_attr_function`.
pub type WinCopyFn = unsafe extern "C" fn(
    MPI_Win,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;

/// `MPI_Win_delete_attr_function`.
pub type WinDeleteFn = unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void) -> c_int;

/// Keyval handle index of window keyval slot 0.
pub const FIRST_INDEX: usize = 1 << 25;

/// A window keyval.
#[derive(Clone, Copy)]
struct WinKeyval {
    _copy: Option<WinCopyFn>,
    delete: Option<WinDeleteFn>,
    extra: usize,
    /// `MPI_Win_free_keyval` was called (values keep their callbacks).
    freed: bool,
}

static KEYVALS: Mutex<Table<WinKeyval>> = Mutex::new(Table::new());

fn keyvals() -> MutexGuard<'static, Table<WinKeyval>> {
    KEYVALS.lock().unwrap_or_else(|e| e.into_inner())
}

fn handle(slot: usize) -> c_int {
    handles::keyval_handle((FIRST_INDEX + slot) as i32)
}

/// The slot of window keyval handle `h` (live unless `!usable`).
fn slot(h: c_int, usable: bool) -> Result<(usize, WinKeyval), AbiError> {
    let bad = || {
        AbiError::new(
            Class::KEYVAL,
            format!("keyval {h:#010x} is not a window keyval (MPI_Win_create_keyval)"),
        )
    };
    let raw = match handles::keyval(h)? {
        KeyvalRef::User(raw) => raw as usize,
        KeyvalRef::Predefined(name) => {
            return Err(AbiError::new(
                Class::KEYVAL,
                format!("{name} is a communicator attribute, not a window one"),
            ))
        }
    };
    let s = raw.checked_sub(FIRST_INDEX).ok_or_else(bad)?;
    let k = *keyvals().get(s).ok_or_else(bad)?;
    if usable && k.freed {
        return Err(AbiError::new(
            Class::KEYVAL,
            format!("keyval {h:#010x} was freed"),
        ));
    }
    Ok((s, k))
}

/// Runs keyval slot `s`'s delete callback for `value` on `win`.
fn run_delete(win: MPI_Win, s: usize, value: usize) -> Result<(), AbiError> {
    let Some(k) = keyvals().get(s).copied() else {
        return Ok(());
    };
    if let Some(f) = k.delete {
        // SAFETY: the callback the program registered, called as MPI specifies.
        let rc = unsafe { f(win, handle(s), value as *mut c_void, k.extra as *mut c_void) };
        if rc != 0 {
            return Err(AbiError::from_code(
                rc,
                &format!(
                    "the window attribute delete callback of keyval {:#010x}",
                    handle(s)
                ),
            ));
        }
    }
    Ok(())
}

/// `win` is being freed: deletes its attributes (delete callbacks run).
pub fn on_free(win: MPI_Win) -> Result<(), AbiError> {
    let values = std::mem::take(&mut state::lock().win_entry_mut(win)?.user_attrs);
    values
        .into_iter()
        .try_for_each(|(s, v)| run_delete(win, s as usize, v))
}

/// The user half of `MPI_Win_get_attr`: the value, if set.
pub fn get(win: MPI_Win, keyval: c_int) -> Result<Option<usize>, AbiError> {
    let (s, _) = slot(keyval, false)?;
    Ok(state::lock()
        .win_entry(win)?
        .user_attrs
        .get(&(s as i32))
        .copied())
}

/// `MPI_Win_create_keyval`.
///
/// # Safety
/// `win_keyval` is writable; the callbacks have the C types MPI specifies.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_create_keyval(
    win_copy_attr_fn: Option<WinCopyFn>,
    win_delete_attr_fn: Option<WinDeleteFn>,
    win_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Win_create_keyval", ErrObj::None, || {
        let out = out_ptr(win_keyval, "win_keyval")?;
        let s = keyvals().insert(WinKeyval {
            _copy: win_copy_attr_fn,
            delete: win_delete_attr_fn,
            extra: extra_state as usize,
            freed: false,
        });
        // SAFETY: checked non-null.
        unsafe { *out = handle(s) };
        Ok(())
    })
}

/// `MPI_Win_free_keyval`: sets `*win_keyval` to `MPI_KEYVAL_INVALID`.
///
/// # Safety
/// `win_keyval` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
    guard("MPI_Win_free_keyval", ErrObj::None, || {
        let p = out_ptr(win_keyval, "win_keyval")?;
        // SAFETY: checked non-null.
        let (s, _) = slot(unsafe { *p }, true)?;
        if let Some(k) = keyvals().get_mut(s) {
            k.freed = true;
        }
        // SAFETY: checked non-null.
        unsafe { *p = KEYVAL_INVALID };
        Ok(())
    })
}

/// `MPI_Win_set_attr`: replacing a value runs the old value's delete callback.
#[no_mangle]
pub extern "C" fn oxabi_Win_set_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    guard("MPI_Win_set_attr", ErrObj::Win(win), || {
        let (s, _) = slot(win_keyval, true)?;
        let old = state::lock()
            .win_entry_mut(win)?
            .user_attrs
            .insert(s as i32, attribute_val as usize);
        match old {
            Some(v) => run_delete(win, s, v),
            None => Ok(()),
        }
    })
}

/// `MPI_Win_delete_attr`: runs the value's delete callback.
#[no_mangle]
pub extern "C" fn oxabi_Win_delete_attr(win: MPI_Win, win_keyval: c_int) -> c_int {
    guard("MPI_Win_delete_attr", ErrObj::Win(win), || {
        let (s, _) = slot(win_keyval, false)?;
        let v = state::lock()
            .win_entry_mut(win)?
            .user_attrs
            .remove(&(s as i32))
            .ok_or_else(|| {
                AbiError::new(
                    Class::KEYVAL,
                    format!("window {win:#010x} has no attribute for keyval {win_keyval:#010x}"),
                )
            })?;
        run_delete(win, s, v)
    })
}
