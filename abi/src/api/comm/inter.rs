//! Intercommunicators (MPI 4.0 section 7.6): `MPI_Comm_test_inter`,
//! `MPI_Comm_remote_size`, `MPI_Comm_remote_group`, `MPI_Intercomm_create`
//! (the peer communicator matters at the local leader only),
//! `MPI_Intercomm_create_from_groups` and `MPI_Intercomm_merge`. `dup`,
//! `split`, `create` and `free` of an intercommunicator go through the
//! usual calls; collectives take `MPI_ROOT` / `MPI_PROC_NULL` roots.

use std::ffi::{c_char, c_int, CStr};

use crate::api::comm::group::{group_of, insert_group};
use crate::api::comm::put_new;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Errhandler, MPI_Group, COMM_WORLD};
use crate::raise::guard;
use crate::state;

/// `MPI_Comm_test_inter`.
///
/// # Safety
/// `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int {
    guard("MPI_Comm_test_inter", ErrObj::Comm(comm), || {
        let out = out_ptr(flag, "flag")?;
        let inter = state::comm(comm)?.is_inter();
        // SAFETY: checked non-null.
        unsafe { *out = c_int::from(inter) };
        Ok(())
    })
}

/// `MPI_Comm_remote_size`: `MPI_ERR_COMM` on an intracommunicator.
///
/// # Safety
/// `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    guard("MPI_Comm_remote_size", ErrObj::Comm(comm), || {
        let out = out_ptr(size, "size")?;
        let n = state::comm(comm)?.remote_size()?;
        // SAFETY: checked non-null.
        unsafe { *out = n };
        Ok(())
    })
}

/// `MPI_Comm_remote_group`: `MPI_ERR_COMM` on an intracommunicator.
///
/// # Safety
/// `group` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_remote_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
    guard("MPI_Comm_remote_group", ErrObj::Comm(comm), || {
        let out = out_ptr(group, "group")?;
        let g = state::comm(comm)?.remote_group()?;
        // SAFETY: checked non-null.
        unsafe { *out = insert_group(g) };
        Ok(())
    })
}

/// `MPI_Intercomm_merge`: the group passing `high = 0` first.
///
/// # Safety
/// `newintracomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newintracomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Intercomm_merge", ErrObj::Comm(intercomm), || {
        let out = out_ptr(newintracomm, "newintracomm")?;
        let new = state::comm(intercomm)?.merge(high != 0)?;
        // SAFETY: checked non-null.
        unsafe { put_new(intercomm, Some(new), out) };
        Ok(())
    })
}

/// `MPI_Intercomm_create`: `peer_comm` is looked at on the local leader
/// only (others may pass `MPI_COMM_NULL`).
///
/// # Safety
/// `newintercomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Intercomm_create", ErrObj::Comm(local_comm), || {
        let out = out_ptr(newintercomm, "newintercomm")?;
        let local = state::comm(local_comm)?;
        let peer = if local.rank() == local_leader {
            Some(state::comm(peer_comm)?)
        } else {
            None
        };
        let new = local.intercomm_create(local_leader, peer.as_ref(), remote_leader, tag)?;
        // SAFETY: checked non-null.
        unsafe { put_new(local_comm, Some(new), out) };
        Ok(())
    })
}

/// A string argument (`stringtag`).
pub(crate) fn string_arg<'a>(p: *const c_char, arg: &str) -> Result<&'a str, AbiError> {
    if p.is_null() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    // SAFETY: a non-null C string by MPI's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| AbiError::new(Class::ARG, format!("`{arg}` is not UTF-8")))
}

/// Registers `new` with the error handler `errhandler`
/// (`MPI_ERRHANDLER_NULL`: `MPI_ERRORS_ARE_FATAL`) and writes its handle.
///
/// # Safety
/// `out` is writable.
pub(crate) unsafe fn put_with_errhandler(
    new: oxmpi::Comm,
    errhandler: MPI_Errhandler,
    out: *mut MPI_Comm,
) -> Result<(), AbiError> {
    let e = match errhandler {
        handles::ERRHANDLER_NULL => handles::Errhandler::Fatal,
        h => handles::errhandler(h)?,
    };
    let mut st = state::lock();
    let h = st.insert_comm(new, e);
    // SAFETY: the caller's contract.
    unsafe { *out = h };
    Ok(())
}

/// `MPI_Intercomm_create_from_groups`: every member knows both groups, so
/// the leaders need not talk first; `stringtag` keeps creations apart.
///
/// # Safety
/// `stringtag` is a C string; `newintercomm` is writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn oxabi_Intercomm_create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    stringtag: *const c_char,
    _info: c_int,
    errhandler: MPI_Errhandler,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Intercomm_create_from_groups", ErrObj::None, || {
        let out = out_ptr(newintercomm, "newintercomm")?;
        let tag = string_arg(stringtag, "stringtag")?;
        let (l, r) = (group_of(local_group)?, group_of(remote_group)?);
        for (leader, g, arg) in [
            (local_leader, &l, "local_leader"),
            (remote_leader, &r, "remote_leader"),
        ] {
            if !(0..g.size()).contains(&leader) {
                return Err(AbiError::new(
                    Class::RANK,
                    format!("`{arg}` is {leader}: the group has {} ranks", g.size()),
                ));
            }
        }
        let any = state::comm(COMM_WORLD)?;
        let new = any.intercomm_from_groups(&l, &r, &format!("inter:{tag}"))?;
        // SAFETY: checked non-null.
        unsafe { put_with_errhandler(new, errhandler, out) }
    })
}
