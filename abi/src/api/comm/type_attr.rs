//! Datatype attributes: `MPI_Type_create_keyval` / `free_keyval`,
//! `MPI_Type_set_attr` / `get_attr` / `delete_attr`, with C copy and
//! delete callbacks.
//!
//! The runtime's attribute machinery belongs to communicators, so types
//! have their own small table here: keyvals (callbacks and `extra_state`)
//! and values by (datatype handle, keyval). Callbacks run without any lock
//! held (they may call MPI). `MPI_Type_dup` copies values through the copy
//! callbacks ([`on_dup`]); `MPI_Type_free` deletes them through the delete
//! callbacks ([`on_free`]). Predefined datatypes take attributes too.
//!
//! Type keyval handles are keyval handles (as MPICH's) numbered from
//! [`FIRST_INDEX`], far from the communicator keyvals the runtime numbers
//! from 1, so one kind is never taken for the other.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::api::datatype::lookup;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, KeyvalRef, MPI_Datatype, KEYVAL_INVALID};
use crate::objects::table::Table;
use crate::raise::guard;

/// `MPI_Type_copy_attr_function`.
pub type TypeCopyFn = unsafe extern "C" fn(
    MPI_Datatype,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;

/// `MPI_Type_delete_attr_function`.
pub type TypeDeleteFn =
    unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void) -> c_int;

/// Keyval handle index of type keyval slot 0.
pub const FIRST_INDEX: usize = 1 << 24;

/// A type keyval.
#[derive(Clone, Copy)]
struct TypeKeyval {
    copy: Option<TypeCopyFn>,
    delete: Option<TypeDeleteFn>,
    extra: usize,
    /// `MPI_Type_free_keyval` was called (values keep their callbacks).
    freed: bool,
}

struct Attrs {
    keyvals: Table<TypeKeyval>,
    /// Value by (datatype handle, keyval slot).
    values: BTreeMap<(MPI_Datatype, usize), usize>,
}

static ATTRS: Mutex<Attrs> = Mutex::new(Attrs {
    keyvals: Table::new(),
    values: BTreeMap::new(),
});

fn attrs() -> MutexGuard<'static, Attrs> {
    ATTRS.lock().unwrap_or_else(|e| e.into_inner())
}

fn handle(slot: usize) -> c_int {
    handles::keyval_handle((FIRST_INDEX + slot) as i32)
}

/// The slot of a type keyval handle that is live (not freed) with
/// `usable`, or still known otherwise.
fn slot(h: c_int, usable: bool) -> Result<(usize, TypeKeyval), AbiError> {
    let bad = || {
        AbiError::new(
            Class::KEYVAL,
            format!("keyval {h:#010x} is not a datatype keyval (MPI_Type_create_keyval)"),
        )
    };
    let raw = match handles::keyval(h)? {
        KeyvalRef::User(raw) => raw as usize,
        KeyvalRef::Predefined(name) => {
            return Err(AbiError::new(
                Class::KEYVAL,
                format!("{name} is a communicator attribute, not a datatype one"),
            ))
        }
    };
    let s = raw.checked_sub(FIRST_INDEX).ok_or_else(bad)?;
    let k = *attrs().keyvals.get(s).ok_or_else(bad)?;
    if usable && k.freed {
        return Err(AbiError::new(
            Class::KEYVAL,
            format!("keyval {h:#010x} was freed"),
        ));
    }
    Ok((s, k))
}

/// A callback's error: its own code, which the call that ran it returns.
fn callback_failed(what: &str, h: c_int, rc: c_int) -> AbiError {
    AbiError::from_code(
        rc,
        &format!("the datatype attribute {what} callback of keyval {h:#010x}"),
    )
}

/// Runs `k`'s delete callback for `value` on `datatype`.
fn run_delete(
    datatype: MPI_Datatype,
    s: usize,
    k: TypeKeyval,
    value: usize,
) -> Result<(), AbiError> {
    if let Some(f) = k.delete {
        // SAFETY: the callback the program registered, called as MPI specifies.
        let rc = unsafe {
            f(
                datatype,
                handle(s),
                value as *mut c_void,
                k.extra as *mut c_void,
            )
        };
        if rc != 0 {
            return Err(callback_failed("delete", handle(s), rc));
        }
    }
    Ok(())
}

/// `datatype` was freed: deletes its attributes (delete callbacks run).
pub fn on_free(datatype: MPI_Datatype) -> Result<(), AbiError> {
    let gone: Vec<(usize, TypeKeyval, usize)> = {
        let mut a = attrs();
        let keys: Vec<_> = a
            .values
            .range((datatype, 0)..=(datatype, usize::MAX))
            .map(|(&k, &v)| (k.1, v))
            .collect();
        keys.into_iter()
            .filter_map(|(s, v)| {
                a.values.remove(&(datatype, s));
                a.keyvals.get(s).map(|&k| (s, k, v))
            })
            .collect()
    };
    gone.into_iter()
        .try_for_each(|(s, k, v)| run_delete(datatype, s, k, v))
}

/// `new` was duplicated from `old`: copies the attributes whose copy
/// callback says so.
pub fn on_dup(old: MPI_Datatype, new: MPI_Datatype) -> Result<(), AbiError> {
    let from: Vec<(usize, TypeKeyval, usize)> = {
        let a = attrs();
        a.values
            .range((old, 0)..=(old, usize::MAX))
            .filter_map(|(&(_, s), &v)| a.keyvals.get(s).map(|&k| (s, k, v)))
            .collect()
    };
    for (s, k, v) in from {
        let Some(f) = k.copy else { continue };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: the callback the program registered, called as MPI
        // specifies (attribute_val_out points to a void *).
        let rc = unsafe {
            f(
                old,
                handle(s),
                k.extra as *mut c_void,
                v as *mut c_void,
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        };
        if rc != 0 {
            return Err(callback_failed("copy", handle(s), rc));
        }
        if flag != 0 {
            attrs().values.insert((new, s), out as usize);
        }
    }
    Ok(())
}

/// `MPI_Type_create_keyval`: `MPI_TYPE_NULL_COPY_FN` / `NULL_DELETE_FN`
/// are null pointers; `MPI_TYPE_DUP_FN` is `MPIR_Dup_fn`, called as any copy
/// callback.
///
/// # Safety
/// `type_keyval` is writable; the callbacks have the C types MPI specifies.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_create_keyval(
    type_copy_attr_fn: Option<TypeCopyFn>,
    type_delete_attr_fn: Option<TypeDeleteFn>,
    type_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Type_create_keyval", ErrObj::None, || {
        let out = out_ptr(type_keyval, "type_keyval")?;
        let s = attrs().keyvals.insert(TypeKeyval {
            copy: type_copy_attr_fn,
            delete: type_delete_attr_fn,
            extra: extra_state as usize,
            freed: false,
        });
        // SAFETY: checked non-null.
        unsafe { *out = handle(s) };
        Ok(())
    })
}

/// `MPI_Type_free_keyval`: sets `*type_keyval` to `MPI_KEYVAL_INVALID`;
/// values still attached keep their callbacks until deleted.
///
/// # Safety
/// `type_keyval` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
    guard("MPI_Type_free_keyval", ErrObj::None, || {
        let p = out_ptr(type_keyval, "type_keyval")?;
        // SAFETY: checked non-null.
        let (s, _) = slot(unsafe { *p }, true)?;
        if let Some(k) = attrs().keyvals.get_mut(s) {
            k.freed = true;
        }
        // SAFETY: checked non-null.
        unsafe { *p = KEYVAL_INVALID };
        Ok(())
    })
}

/// `MPI_Type_set_attr`: replacing a value runs the old value's delete callback.
#[no_mangle]
pub extern "C" fn oxabi_Type_set_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    guard("MPI_Type_set_attr", ErrObj::None, || {
        lookup(datatype)?;
        let (s, k) = slot(type_keyval, true)?;
        let old = attrs().values.insert((datatype, s), attribute_val as usize);
        match old {
            Some(v) => run_delete(datatype, s, k, v),
            None => Ok(()),
        }
    })
}

/// `MPI_Type_get_attr`: `*(void **)attribute_val` receives the value.
///
/// # Safety
/// `attribute_val` points to a `void *`; `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Type_get_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_attr", ErrObj::None, || {
        let f = out_ptr(flag, "flag")?;
        lookup(datatype)?;
        let (s, _) = slot(type_keyval, false)?;
        let value = attrs().values.get(&(datatype, s)).copied();
        if let Some(v) = value {
            let out = out_ptr(attribute_val.cast::<*mut c_void>(), "attribute_val")?;
            // SAFETY: checked non-null; points to a void *: the caller's contract.
            unsafe { *out = v as *mut c_void };
        }
        // SAFETY: checked non-null.
        unsafe { *f = c_int::from(value.is_some()) };
        Ok(())
    })
}

/// `MPI_Type_delete_attr`: runs the value's delete callback.
#[no_mangle]
pub extern "C" fn oxabi_Type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> c_int {
    guard("MPI_Type_delete_attr", ErrObj::None, || {
        lookup(datatype)?;
        let (s, k) = slot(type_keyval, false)?;
        let v = attrs().values.remove(&(datatype, s)).ok_or_else(|| {
            AbiError::new(
                Class::KEYVAL,
                format!(
                    "datatype {datatype:#010x} has no attribute for keyval {type_keyval:#010x}"
                ),
            )
        })?;
        run_delete(datatype, s, k, v)
    })
}
