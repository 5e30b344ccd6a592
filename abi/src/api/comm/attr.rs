//! Communicator attributes: keyvals with C copy and delete callbacks
//! (`MPI_Comm_create_keyval`, and MPI-1's `MPI_Keyval_create`), values
//! (`MPI_Comm_set_attr` / `get_attr` / `delete_attr`, and MPI-1's
//! `MPI_Attr_*`), and the predefined attributes (`MPI_TAG_UB`,
//! `MPI_HOST`, `MPI_IO`, `MPI_WTIME_IS_GLOBAL`, `MPI_UNIVERSE_SIZE`,
//! `MPI_LASTUSEDCODE`, `MPI_APPNUM`), whose values are pointers to ints
//! as in MPICH.
//!
//! The runtime keeps the keyval table and runs the callbacks (without any
//! lock held); this module wraps the C functions, with their
//! `extra_state`, into its closures. A callback gets the communicator's C
//! handle: looked up by the runtime communicator's id while the handle is
//! live (delete callbacks of `MPI_Comm_free` run before the handle goes).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

use oxmpi::{AttrValue, Comm, CommId, CopyPolicy, Keyval};

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, KeyvalRef, MPI_Comm, ANY_SOURCE, COMM_NULL, COMM_SELF, COMM_WORLD, KEYVAL_INVALID,
    PROC_NULL, SELF_SLOT, WORLD_SLOT,
};
use crate::raise::guard;
use crate::state;

/// `MPI_Comm_copy_attr_function` (and MPI-1's `MPI_Copy_function`).
pub type CopyAttrFn = unsafe extern "C" fn(
    MPI_Comm,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;

/// `MPI_Comm_delete_attr_function` (and MPI-1's `MPI_Delete_function`).
pub type DeleteAttrFn = unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int;

// ------------------------------------------------ predefined attributes

static TAG_UB: c_int = oxmpi::TAG_UB;
static HOST: c_int = PROC_NULL;
static IO: c_int = ANY_SOURCE;
static WTIME_IS_GLOBAL: c_int = 0;
static UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(1);
static APPNUM: c_int = 0;

/// The value (a pointer to an int) of a predefined attribute.
fn predefined(name: &str, c: &Comm) -> *const c_int {
    match name {
        "MPI_TAG_UB" => &TAG_UB,
        "MPI_HOST" => &HOST,
        "MPI_IO" => &IO,
        "MPI_WTIME_IS_GLOBAL" => &WTIME_IS_GLOBAL,
        "MPI_UNIVERSE_SIZE" => {
            let world = state::lock()
                .comms
                .get(WORLD_SLOT)
                .map_or(c.size(), |e| e.comm.size());
            UNIVERSE_SIZE.store(world, Ordering::Relaxed);
            UNIVERSE_SIZE.as_ptr()
        }
        // MPI_ERR_LASTCODE until the program adds classes or codes.
        "MPI_LASTUSEDCODE" => crate::errors::LAST_USED_CODE.as_ptr(),
        _ => &APPNUM,
    }
}

// --------------------------------------------------------- C callbacks

/// The runtime ids of `MPI_COMM_WORLD` and `MPI_COMM_SELF` (for callbacks
/// that run at `MPI_Finalize`, after the handle table is gone).
static PREDEFINED_IDS: OnceLock<[(CommId, MPI_Comm); 2]> = OnceLock::new();

/// The C handle of the communicator with runtime id `id`.
fn handle_of(id: CommId) -> MPI_Comm {
    let st = state::lock();
    if let Some((slot, _)) = st.comms.iter().find(|(_, e)| e.comm.id() == id) {
        return handles::comm_handle(slot);
    }
    PREDEFINED_IDS
        .get()
        .and_then(|ids| ids.iter().find(|(i, _)| *i == id))
        .map_or(COMM_NULL, |&(_, h)| h)
}

/// A callback's error: its own code, which the call that ran it returns.
fn callback_failed(what: &str, k: Keyval, rc: c_int) -> oxmpi::Error {
    oxmpi::Error::Callback {
        what: format!(
            "the attribute {what} callback of keyval {:#010x}",
            handles::keyval_handle(k.raw())
        ),
        code: rc,
    }
}

fn word(v: &AttrValue) -> *mut c_void {
    v.word().unwrap_or(0) as *mut c_void
}

/// Creates a keyval with C callbacks; returns its handle.
fn create_keyval(
    copy_fn: Option<CopyAttrFn>,
    delete_fn: Option<DeleteAttrFn>,
    extra_state: *mut c_void,
) -> Result<c_int, AbiError> {
    {
        let st = state::lock();
        st.check_active()?;
        if let (Some(w), Some(s)) = (st.comms.get(WORLD_SLOT), st.comms.get(SELF_SLOT)) {
            let _ = PREDEFINED_IDS.set([(w.comm.id(), COMM_WORLD), (s.comm.id(), COMM_SELF)]);
        }
    }
    let extra = extra_state as usize;
    let copy = match copy_fn {
        None => CopyPolicy::Never,
        Some(f) => CopyPolicy::Call(Box::new(move |old: &Comm, k: Keyval, v: &AttrValue| {
            let mut out: *mut c_void = std::ptr::null_mut();
            let mut flag: c_int = 0;
            // SAFETY: the callback the program registered, called as MPI
            // specifies (attribute_val_out points to a void *).
            let rc = unsafe {
                f(
                    handle_of(old.id()),
                    handles::keyval_handle(k.raw()),
                    extra as *mut c_void,
                    word(v),
                    (&mut out as *mut *mut c_void).cast(),
                    &mut flag,
                )
            };
            if rc != 0 {
                return Err(callback_failed("copy", k, rc));
            }
            Ok((flag != 0).then_some(AttrValue::Word(out as usize)))
        })),
    };
    let delete = delete_fn.map(|f| {
        Box::new(move |id: CommId, k: Keyval, v: &AttrValue| {
            // SAFETY: the callback the program registered, called as MPI specifies.
            let rc = unsafe {
                f(
                    handle_of(id),
                    handles::keyval_handle(k.raw()),
                    word(v),
                    extra as *mut c_void,
                )
            };
            if rc != 0 {
                return Err(callback_failed("delete", k, rc));
            }
            Ok(())
        }) as Box<oxmpi::comm::DeleteFn>
    });
    Ok(handles::keyval_handle(Keyval::create(copy, delete).raw()))
}

/// A keyval argument that must be one the program created.
fn user_keyval(h: c_int, what: &str) -> Result<Keyval, AbiError> {
    match handles::keyval(h)? {
        KeyvalRef::User(raw) => Ok(Keyval::from_raw(raw)),
        KeyvalRef::Predefined(name) => Err(AbiError::new(
            Class::KEYVAL,
            format!("{name} is a predefined attribute: it cannot be {what}"),
        )),
    }
}

fn free_keyval(keyval: *mut c_int) -> Result<(), AbiError> {
    let p = out_ptr(keyval, "keyval")?;
    // SAFETY: checked non-null.
    let h = unsafe { *p };
    state::lock().check_active()?;
    user_keyval(h, "freed")?.free()?;
    // SAFETY: checked non-null.
    unsafe { *p = KEYVAL_INVALID };
    Ok(())
}

fn set_attr(comm: MPI_Comm, keyval: c_int, value: *mut c_void) -> Result<(), AbiError> {
    let c = state::comm(comm)?;
    let k = user_keyval(keyval, "set")?;
    c.set_attr(k, AttrValue::Word(value as usize))?;
    Ok(())
}

/// # Safety
/// `attribute_val` points to a `void *`; `flag` is writable.
unsafe fn get_attr(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> Result<(), AbiError> {
    let f = out_ptr(flag, "flag")?;
    let c = state::comm(comm)?;
    let value = match handles::keyval(keyval)? {
        KeyvalRef::Predefined(name) => Some(predefined(name, &c) as *mut c_void),
        KeyvalRef::User(raw) => c
            .get_attr(Keyval::from_raw(raw))?
            .map(|v| v.word().unwrap_or(0) as *mut c_void),
    };
    if let Some(v) = value {
        let out = out_ptr(attribute_val.cast::<*mut c_void>(), "attribute_val")?;
        // SAFETY: checked non-null; points to a void *: the caller's contract.
        unsafe { *out = v };
    }
    // SAFETY: checked non-null.
    unsafe { *f = c_int::from(value.is_some()) };
    Ok(())
}

fn delete_attr(comm: MPI_Comm, keyval: c_int) -> Result<(), AbiError> {
    let c = state::comm(comm)?;
    let k = user_keyval(keyval, "deleted")?;
    c.delete_attr(k)?;
    Ok(())
}

// ------------------------------------------------------------ the calls

/// `MPI_Comm_create_keyval`: `MPI_COMM_NULL_COPY_FN` / `MPI_COMM_NULL_DELETE_FN`
/// are null pointers; `MPI_COMM_DUP_FN` is `MPIR_Dup_fn`, called as any
/// copy callback.
///
/// # Safety
/// `comm_keyval` is writable; the callbacks have the C types MPI specifies.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_create_keyval(
    comm_copy_attr_fn: Option<CopyAttrFn>,
    comm_delete_attr_fn: Option<DeleteAttrFn>,
    comm_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Comm_create_keyval", ErrObj::None, || {
        let out = out_ptr(comm_keyval, "comm_keyval")?;
        let k = create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, extra_state)?;
        // SAFETY: checked non-null.
        unsafe { *out = k };
        Ok(())
    })
}

/// `MPI_Keyval_create` (MPI-1 name of `MPI_Comm_create_keyval`).
///
/// # Safety
/// As for `MPI_Comm_create_keyval`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Keyval_create(
    copy_fn: Option<CopyAttrFn>,
    delete_fn: Option<DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Keyval_create", ErrObj::None, || {
        let out = out_ptr(keyval, "keyval")?;
        let k = create_keyval(copy_fn, delete_fn, extra_state)?;
        // SAFETY: checked non-null.
        unsafe { *out = k };
        Ok(())
    })
}

/// `MPI_Comm_free_keyval`: sets `*comm_keyval` to `MPI_KEYVAL_INVALID`;
/// values still attached keep their callbacks until deleted.
///
/// # Safety
/// `comm_keyval` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int {
    guard("MPI_Comm_free_keyval", ErrObj::None, || {
        free_keyval(comm_keyval)
    })
}

/// `MPI_Keyval_free` (MPI-1 name of `MPI_Comm_free_keyval`).
///
/// # Safety
/// `keyval` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Keyval_free(keyval: *mut c_int) -> c_int {
    guard("MPI_Keyval_free", ErrObj::None, || free_keyval(keyval))
}

/// `MPI_Comm_set_attr`: replacing a value runs the old value's delete callback.
#[no_mangle]
pub extern "C" fn oxabi_Comm_set_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    guard("MPI_Comm_set_attr", ErrObj::Comm(comm), || {
        set_attr(comm, comm_keyval, attribute_val)
    })
}

/// `MPI_Attr_put` (MPI-1 name of `MPI_Comm_set_attr`).
#[no_mangle]
pub extern "C" fn oxabi_Attr_put(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    guard("MPI_Attr_put", ErrObj::Comm(comm), || {
        set_attr(comm, keyval, attribute_val)
    })
}

/// `MPI_Comm_get_attr`: `*(void **)attribute_val` receives the value.
///
/// # Safety
/// `attribute_val` points to a `void *`; `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_get_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_attr", ErrObj::Comm(comm), || {
        // SAFETY: the caller's contract.
        unsafe { get_attr(comm, comm_keyval, attribute_val, flag) }
    })
}

/// `MPI_Attr_get` (MPI-1 name of `MPI_Comm_get_attr`).
///
/// # Safety
/// As for `MPI_Comm_get_attr`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Attr_get(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Attr_get", ErrObj::Comm(comm), || {
        // SAFETY: the caller's contract.
        unsafe { get_attr(comm, keyval, attribute_val, flag) }
    })
}

/// `MPI_Comm_delete_attr`: runs the value's delete callback.
#[no_mangle]
pub extern "C" fn oxabi_Comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> c_int {
    guard("MPI_Comm_delete_attr", ErrObj::Comm(comm), || {
        delete_attr(comm, comm_keyval)
    })
}

/// `MPI_Attr_delete` (MPI-1 name of `MPI_Comm_delete_attr`).
#[no_mangle]
pub extern "C" fn oxabi_Attr_delete(comm: MPI_Comm, keyval: c_int) -> c_int {
    guard("MPI_Attr_delete", ErrObj::Comm(comm), || {
        delete_attr(comm, keyval)
    })
}
