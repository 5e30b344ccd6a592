//! Groups (`MPI_Group_*`): local operations on the runtime's [`Group`],
//! kept in the state's group table. `MPI_GROUP_EMPTY` is predefined; an
//! operation whose result is empty returns it (nothing to free).

use std::ffi::c_int;

use oxmpi::Group;

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, GroupRef, MPI_Group, GROUP_EMPTY, GROUP_NULL, UNDEFINED};
use crate::raise::guard;
use crate::state;

/// The group a handle names (cloned).
pub fn group_of(h: MPI_Group) -> Result<Group, AbiError> {
    match handles::group(h)? {
        GroupRef::Empty => Ok(Group::empty()),
        GroupRef::Slot(slot) => {
            let st = state::lock();
            st.check_active()?;
            st.groups.get(slot).cloned().ok_or_else(|| {
                AbiError::new(
                    Class::GROUP,
                    format!("group {h:#010x} does not exist (freed, or never created)"),
                )
            })
        }
    }
}

/// Stores a group and returns its handle (`MPI_GROUP_EMPTY` when empty).
pub fn insert_group(g: Group) -> MPI_Group {
    if g.size() == 0 {
        return GROUP_EMPTY;
    }
    handles::group_handle(state::lock().groups.insert(g))
}

/// A group argument named `arg`.
fn arg_group(h: MPI_Group, arg: &str) -> Result<Group, AbiError> {
    group_of(h).map_err(|mut e| {
        e.message = format!("`{arg}`: {}", e.message);
        e
    })
}

/// Runtime errors about ranks in a group are `MPI_ERR_RANK` (as MPICH).
fn rank_error(e: oxmpi::Error) -> AbiError {
    let ranks = matches!(
        e,
        oxmpi::Error::InvalidArgument {
            arg: "ranks" | "ranks1",
            ..
        }
    );
    let mut a = AbiError::from(e);
    if ranks {
        a.class = Class::RANK;
    }
    a
}

/// `n` entries of a C array argument `arg`.
///
/// # Safety
/// A non-null `p` holds `n` entries.
unsafe fn array<'a, T>(p: *const T, n: c_int, arg: &str) -> Result<&'a [T], AbiError> {
    let n = usize::try_from(n)
        .map_err(|_| AbiError::new(Class::ARG, format!("`n` is {n}: it cannot be negative")))?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Writes a new group's handle.
///
/// # Safety
/// `out` is writable (checked non-null).
unsafe fn put(out: *mut MPI_Group, g: Group) {
    // SAFETY: the caller's contract.
    unsafe { *out = insert_group(g) };
}

/// `MPI_Group_size`.
///
/// # Safety
/// `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_size(group: MPI_Group, size: *mut c_int) -> c_int {
    guard("MPI_Group_size", ErrObj::None, || {
        let out = out_ptr(size, "size")?;
        let n = group_of(group)?.size();
        // SAFETY: checked non-null.
        unsafe { *out = n };
        Ok(())
    })
}

/// `MPI_Group_rank`: `MPI_UNDEFINED` when this process is not a member.
///
/// # Safety
/// `rank` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_rank(group: MPI_Group, rank: *mut c_int) -> c_int {
    guard("MPI_Group_rank", ErrObj::None, || {
        let out = out_ptr(rank, "rank")?;
        let r = group_of(group)?.rank().unwrap_or(UNDEFINED);
        // SAFETY: checked non-null.
        unsafe { *out = r };
        Ok(())
    })
}

/// `MPI_Group_incl`.
///
/// # Safety
/// `ranks` holds `n` entries; `newgroup` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_incl(
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> c_int {
    guard("MPI_Group_incl", ErrObj::None, || {
        let out = out_ptr(newgroup, "newgroup")?;
        let g = group_of(group)?;
        // SAFETY: the caller's contract.
        let r = unsafe { array(ranks, n, "ranks") }?;
        let new = g.incl(r).map_err(rank_error)?;
        // SAFETY: checked non-null.
        unsafe { put(out, new) };
        Ok(())
    })
}

/// `MPI_Group_excl`.
///
/// # Safety
/// `ranks` holds `n` entries; `newgroup` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_excl(
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> c_int {
    guard("MPI_Group_excl", ErrObj::None, || {
        let out = out_ptr(newgroup, "newgroup")?;
        let g = group_of(group)?;
        // SAFETY: the caller's contract.
        let r = unsafe { array(ranks, n, "ranks") }?;
        let new = g.excl(r).map_err(rank_error)?;
        // SAFETY: checked non-null.
        unsafe { put(out, new) };
        Ok(())
    })
}

/// The ranges argument as (first, last, stride) triples.
///
/// # Safety
/// `ranges` holds `n` triples.
unsafe fn ranges(ranges: *const [c_int; 3], n: c_int) -> Result<Vec<(i32, i32, i32)>, AbiError> {
    // SAFETY: the caller's contract.
    let r = unsafe { array(ranges, n, "ranges") }?;
    Ok(r.iter().map(|t| (t[0], t[1], t[2])).collect())
}

/// `MPI_Group_range_incl`.
///
/// # Safety
/// `ranges` holds `n` triples; `newgroup` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_range_incl(
    group: MPI_Group,
    n: c_int,
    ranges_: *mut [c_int; 3],
    newgroup: *mut MPI_Group,
) -> c_int {
    guard("MPI_Group_range_incl", ErrObj::None, || {
        let out = out_ptr(newgroup, "newgroup")?;
        let g = group_of(group)?;
        // SAFETY: the caller's contract.
        let r = unsafe { ranges(ranges_, n) }?;
        let new = g.range_incl(&r).map_err(rank_error)?;
        // SAFETY: checked non-null.
        unsafe { put(out, new) };
        Ok(())
    })
}

/// `MPI_Group_range_excl`.
///
/// # Safety
/// `ranges` holds `n` triples; `newgroup` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_range_excl(
    group: MPI_Group,
    n: c_int,
    ranges_: *mut [c_int; 3],
    newgroup: *mut MPI_Group,
) -> c_int {
    guard("MPI_Group_range_excl", ErrObj::None, || {
        let out = out_ptr(newgroup, "newgroup")?;
        let g = group_of(group)?;
        // SAFETY: the caller's contract.
        let r = unsafe { ranges(ranges_, n) }?;
        let new = g.range_excl(&r).map_err(rank_error)?;
        // SAFETY: checked non-null.
        unsafe { put(out, new) };
        Ok(())
    })
}

/// Defines a two-group set operation.
macro_rules! set_op {
    ($name:literal, $f:ident, $method:ident) => {
        #[doc = concat!("`", $name, "`.")]
        ///
        /// # Safety
        /// `newgroup` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $f(
            group1: MPI_Group,
            group2: MPI_Group,
            newgroup: *mut MPI_Group,
        ) -> c_int {
            guard($name, ErrObj::None, || {
                let out = out_ptr(newgroup, "newgroup")?;
                let a = arg_group(group1, "group1")?;
                let b = arg_group(group2, "group2")?;
                // SAFETY: checked non-null.
                unsafe { put(out, a.$method(&b)) };
                Ok(())
            })
        }
    };
}

set_op!("MPI_Group_union", oxabi_Group_union, union);
set_op!(
    "MPI_Group_intersection",
    oxabi_Group_intersection,
    intersection
);
set_op!("MPI_Group_difference", oxabi_Group_difference, difference);

/// `MPI_Group_translate_ranks`: `MPI_UNDEFINED` for processes not in
/// `group2`; `MPI_PROC_NULL` stays itself.
///
/// # Safety
/// `ranks1` holds `n` entries and `ranks2` has room for `n`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_translate_ranks(
    group1: MPI_Group,
    n: c_int,
    ranks1: *const c_int,
    group2: MPI_Group,
    ranks2: *mut c_int,
) -> c_int {
    guard("MPI_Group_translate_ranks", ErrObj::None, || {
        let a = arg_group(group1, "group1")?;
        let b = arg_group(group2, "group2")?;
        // SAFETY: the caller's contract.
        let r = unsafe { array(ranks1, n, "ranks1") }?;
        if !r.is_empty() {
            out_ptr(ranks2, "ranks2")?;
        }
        let t = a.translate_ranks(r, &b).map_err(rank_error)?;
        for (i, v) in t.into_iter().enumerate() {
            // SAFETY: room for `n` entries: the caller's contract.
            unsafe { *ranks2.add(i) = v };
        }
        Ok(())
    })
}

/// `MPI_Group_compare`: `MPI_IDENT`, `MPI_SIMILAR` or `MPI_UNEQUAL`.
///
/// # Safety
/// `result` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_compare(
    group1: MPI_Group,
    group2: MPI_Group,
    result: *mut c_int,
) -> c_int {
    guard("MPI_Group_compare", ErrObj::None, || {
        let out = out_ptr(result, "result")?;
        let a = arg_group(group1, "group1")?;
        let b = arg_group(group2, "group2")?;
        // SAFETY: checked non-null.
        unsafe { *out = a.compare(&b) as c_int };
        Ok(())
    })
}

/// `MPI_Group_free`: sets `*group` to `MPI_GROUP_NULL` (freeing
/// `MPI_GROUP_EMPTY` is allowed and does nothing else).
///
/// # Safety
/// `group` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Group_free(group: *mut MPI_Group) -> c_int {
    guard("MPI_Group_free", ErrObj::None, || {
        let p = out_ptr(group, "group")?;
        // SAFETY: checked non-null.
        let h = unsafe { *p };
        if let GroupRef::Slot(slot) = handles::group(h)? {
            let mut st = state::lock();
            st.check_active()?;
            st.groups.remove(slot).ok_or_else(|| {
                AbiError::new(
                    Class::GROUP,
                    format!("group {h:#010x} does not exist (already freed?)"),
                )
            })?;
        }
        // SAFETY: checked non-null.
        unsafe { *p = GROUP_NULL };
        Ok(())
    })
}
