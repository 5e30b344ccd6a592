//! Status queries: `MPI_Get_count`, `MPI_Get_elements` (and their
//! `MPI_Count` forms), `MPI_Status_set_*`.

use std::ffi::c_int;

use oxmpi::datatype::Datatype;

use crate::api::datatype::lookup;
use crate::api::{large_count, CountOut};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Count, MPI_Datatype, MPI_Status, UNDEFINED};
use crate::raise::guard;

/// A status input argument (`MPI_STATUS_IGNORE` is not one).
///
/// # Safety
/// `p` is null, `MPI_STATUS_IGNORE`, or a readable status that outlives `'a`.
pub unsafe fn status_in<'a>(p: *const MPI_Status) -> Result<&'a MPI_Status, AbiError> {
    if p.is_null() || handles::status_ignored(p) {
        return Err(AbiError::new(
            Class::ARG,
            "`status` is null or MPI_STATUS_IGNORE; a status is needed here",
        ));
    }
    // SAFETY: non-null and not the ignore marker: the caller's status.
    Ok(unsafe { &*p })
}

/// Whole elements (or, with `basic`, basic elements of the type's
/// signature) in a status's byte count, which counts packed bytes; `None`
/// (`MPI_UNDEFINED`) when it does not divide.
fn query(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    basic: bool,
) -> Result<Option<u64>, AbiError> {
    // SAFETY: the callers pass the program's status argument.
    let s = unsafe { status_in(status) }?;
    let t = lookup(datatype)?;
    let bytes = usize::try_from(handles::status_bytes(s)).unwrap_or(usize::MAX);
    let n = if basic {
        t.get_elements(bytes)
    } else {
        t.get_count(bytes)
    };
    Ok(n.map(|n| n as u64))
}

/// Packed bytes of the first `n` basic elements of repeated `t`.
fn bytes_of_elements(t: &Datatype, n: usize) -> Result<usize, AbiError> {
    let sig = t.signature();
    let overflow = || AbiError::new(Class::COUNT, format!("{n} elements overflow a byte count"));
    if sig.is_empty() {
        return if n == 0 {
            Ok(0)
        } else {
            Err(AbiError::new(
                Class::COUNT,
                format!("{n} elements of a type with no data"),
            ))
        };
    }
    let whole = (n / sig.len()).checked_mul(t.size()).ok_or_else(overflow)?;
    let mut left = n % sig.len();
    let mut part = 0;
    for (b, k) in sig.runs() {
        let take = left.min(k);
        part += take * b.size();
        left -= take;
        if left == 0 {
            break;
        }
    }
    whole.checked_add(part).ok_or_else(overflow)
}

/// Stores a count in the caller's form (`MPI_UNDEFINED` when unknown or
/// too large).
///
/// # Safety
/// `out` is writable (checked non-null).
unsafe fn put_count<C: CountOut>(out: *mut C, n: Option<u64>) -> Result<(), AbiError> {
    let out = out_ptr(out, "count")?;
    let v = n
        .and_then(|n| MPI_Count::try_from(n).ok())
        .map_or(C::from_count(UNDEFINED.into()), C::from_count);
    // SAFETY: checked non-null.
    unsafe { *out = v };
    Ok(())
}

large_count! {
    /// # Safety
    /// `status` is readable; `count` is writable.
    Get_count(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut Count) -> c_int {
        guard(NAME, ErrObj::None, || {
            // SAFETY: the caller's contract.
            unsafe { put_count(count, query(status, datatype, false)?) }
        })
    }
}

large_count! { with_x
    /// # Safety
    /// `status` is readable; `count` is writable.
    Get_elements(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut Count) -> c_int {
        guard(NAME, ErrObj::None, || {
            // SAFETY: the caller's contract.
            unsafe { put_count(count, query(status, datatype, true)?) }
        })
    }
}

fn set_elements(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> Result<(), AbiError> {
    let s = out_ptr(status, "status")?;
    let t = lookup(datatype)?;
    let n = usize::try_from(count).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("invalid count {count}: counts cannot be negative"),
        )
    })?;
    let bytes = bytes_of_elements(&t, n)?;
    // SAFETY: checked non-null: the caller's status.
    unsafe { handles::set_status_bytes(&mut *s, bytes as u64) };
    Ok(())
}

/// `MPI_Status_set_elements`.
///
/// # Safety
/// `status` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Status_set_elements(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: c_int,
) -> c_int {
    guard("MPI_Status_set_elements", ErrObj::None, || {
        set_elements(status, datatype, count.into())
    })
}

/// `MPI_Status_set_elements_x`.
///
/// # Safety
/// `status` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Status_set_elements_x(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    guard("MPI_Status_set_elements_x", ErrObj::None, || {
        set_elements(status, datatype, count)
    })
}

/// `MPI_Status_set_cancelled`.
///
/// # Safety
/// `status` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
    guard("MPI_Status_set_cancelled", ErrObj::None, || {
        let s = out_ptr(status, "status")?;
        // SAFETY: checked non-null: the caller's status.
        unsafe {
            let s = &mut *s;
            s.count_hi_and_cancelled = (s.count_hi_and_cancelled & !1) | c_int::from(flag != 0);
        }
        Ok(())
    })
}

/// Copies a status between its C and Fortran forms: the same five ints
/// (`MPI_F_STATUS_SIZE` is 5), as in MPICH.
///
/// # Safety
/// `from` and `to` are null, `MPI_STATUS_IGNORE`, or valid statuses.
unsafe fn copy_status(
    from: *const MPI_Status,
    to: *mut MPI_Status,
    from_arg: &str,
    to_arg: &str,
) -> Result<(), AbiError> {
    for (p, arg) in [(from, from_arg), (to.cast_const(), to_arg)] {
        if p.is_null() || handles::status_ignored(p) {
            return Err(AbiError::new(
                Class::ARG,
                format!("`{arg}` is null or MPI_STATUS_IGNORE (MPI_F_STATUS_IGNORE)"),
            ));
        }
    }
    // SAFETY: both checked; the caller's contract. `read_unaligned` since a
    // Fortran status is an int array.
    unsafe { to.write_unaligned(from.read_unaligned()) };
    Ok(())
}

/// `MPI_Status_c2f`.
///
/// # Safety
/// `c_status` is a status; `f_status` has room for `MPI_F_STATUS_SIZE` ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Status_c2f(
    c_status: *const MPI_Status,
    f_status: *mut c_int,
) -> c_int {
    guard("MPI_Status_c2f", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe { copy_status(c_status, f_status.cast(), "c_status", "f_status") }
    })
}

/// `MPI_Status_f2c`.
///
/// # Safety
/// `f_status` has `MPI_F_STATUS_SIZE` ints; `c_status` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Status_f2c(
    f_status: *const c_int,
    c_status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Status_f2c", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe { copy_status(f_status.cast(), c_status, "f_status", "c_status") }
    })
}
