//! The `MPIX_` functions MPICH 4.0.2 exports besides the GPU queries
//! (`gpu.rs`), which programs probe for:
//!
//! - fault tolerance (ULFM): OxMPI has no process failures to survive (a
//!   rank that dies ends the job), so what these calls observe is a world
//!   where no process has failed: `MPIX_Comm_agree` is the bitwise AND of
//!   the flags, `MPIX_Comm_shrink` a dup, `MPIX_Comm_failure_ack` does
//!   nothing and `MPIX_Comm_failure_get_acked` gives the empty group.
//!   `MPIX_Comm_revoke` would have to interrupt the peers' pending
//!   operations: it is not implemented (`functions.tsv`), and says so;
//! - `MPIX_Delete_error_class` / `_code` / `_string`: undoing
//!   `MPI_Add_error_*`;
//! - extended generalized requests (`MPIX_Grequest_start`, and the classes
//!   of `MPIX_Grequest_class_create` / `_allocate`): a `poll_fn` that tests
//!   and waits call while the request is not complete. `wait_fn` is not
//!   called: waits poll instead (MPI lets an implementation do either).

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use oxmpi::ops::Op;

use crate::api::comm::group::insert_group;
use crate::api::comm::put_new;
use crate::errors::{self, out_ptr, AbiError, Class, ErrObj};
use crate::handles::{MPI_Comm, MPI_Group, MPI_Request, MPI_Status};
use crate::objects::generalized::{Callbacks, CancelFn, FreeFn, Grequest, PollFn, QueryFn};
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::{requests, state};

/// `MPIX_Comm_agree`: `*flag` becomes the bitwise AND of every rank's
/// flag (collective; no rank can have failed).
///
/// # Safety
/// `flag` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_Comm_agree(comm: MPI_Comm, flag: *mut c_int) -> c_int {
    guard("MPIX_Comm_agree", ErrObj::Comm(comm), || {
        let p = out_ptr(flag, "flag")?;
        let c = state::comm(comm)?;
        // SAFETY: checked non-null.
        let mine = [unsafe { *p }];
        let mut all = [0 as c_int];
        c.allreduce(&mine, &mut all, &Op::BAND)?;
        // SAFETY: checked non-null.
        unsafe { *p = all[0] };
        Ok(())
    })
}

/// `MPIX_Comm_shrink`: a communicator of the ranks that have not failed,
/// i.e. of them all (collective, as `MPI_Comm_dup` without attributes).
///
/// # Safety
/// `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_Comm_shrink(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    guard("MPIX_Comm_shrink", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let c = state::comm(comm)?;
        let new = c.create(&c.group())?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, new, out) };
        Ok(())
    })
}

/// `MPIX_Comm_failure_ack`: acknowledges the failures seen so far (none).
#[no_mangle]
pub extern "C" fn oxabi_X_Comm_failure_ack(comm: MPI_Comm) -> c_int {
    guard("MPIX_Comm_failure_ack", ErrObj::Comm(comm), || {
        state::comm(comm)?;
        Ok(())
    })
}

/// `MPIX_Comm_failure_get_acked`: the failed processes acknowledged, which
/// is always `MPI_GROUP_EMPTY`.
///
/// # Safety
/// `failedgrp` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_Comm_failure_get_acked(
    comm: MPI_Comm,
    failedgrp: *mut MPI_Group,
) -> c_int {
    guard("MPIX_Comm_failure_get_acked", ErrObj::Comm(comm), || {
        let out = out_ptr(failedgrp, "failedgrp")?;
        state::comm(comm)?;
        // SAFETY: checked non-null.
        unsafe { *out = insert_group(oxmpi::Group::empty()) };
        Ok(())
    })
}

/// `MPIX_Delete_error_class`: removes a class added by
/// `MPI_Add_error_class` that has no codes left.
#[no_mangle]
pub extern "C" fn oxabi_X_Delete_error_class(errorclass: c_int) -> c_int {
    guard("MPIX_Delete_error_class", ErrObj::None, || {
        errors::delete_user_code(errorclass, true)
    })
}

/// `MPIX_Delete_error_code`: removes a code added by `MPI_Add_error_code`.
#[no_mangle]
pub extern "C" fn oxabi_X_Delete_error_code(errorcode: c_int) -> c_int {
    guard("MPIX_Delete_error_code", ErrObj::None, || {
        errors::delete_user_code(errorcode, false)
    })
}

/// `MPIX_Delete_error_string`: forgets the text `MPI_Add_error_string`
/// gave an added class or code.
#[no_mangle]
pub extern "C" fn oxabi_X_Delete_error_string(errorcode: c_int) -> c_int {
    guard("MPIX_Delete_error_string", ErrObj::None, || {
        errors::delete_error_string(errorcode)
    })
}

/// `MPIX_Grequest_wait_function` (taken, never called: waits poll).
pub type WaitFn = unsafe extern "C" fn(c_int, *mut *mut c_void, f64, *mut MPI_Status) -> c_int;

/// Starts a generalized request with `callbacks`; writes its handle.
fn start(callbacks: Callbacks, request: *mut MPI_Request) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    state::lock().check_active()?;
    if callbacks.poll_fn.is_some() {
        requests::note_poll_fn();
    }
    let g = Grequest {
        callbacks,
        complete: false,
        freed: false,
    };
    // SAFETY: checked non-null.
    unsafe { *out = requests::insert(ReqEntry::Generalized(g)) };
    Ok(())
}

/// `MPIX_Grequest_start`: `MPI_Grequest_start` with a `poll_fn` that
/// tests and waits call until the request is complete.
///
/// # Safety
/// The callbacks are functions of the types MPI specifies (or null);
/// `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_Grequest_start(
    query_fn: Option<QueryFn>,
    free_fn: Option<FreeFn>,
    cancel_fn: Option<CancelFn>,
    poll_fn: Option<PollFn>,
    _wait_fn: Option<WaitFn>,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    guard("MPIX_Grequest_start", ErrObj::None, || {
        let callbacks = Callbacks {
            query_fn,
            free_fn,
            cancel_fn,
            poll_fn,
            extra_state: extra_state as usize,
        };
        start(callbacks, request)
    })
}

/// The classes of `MPIX_Grequest_class_create`: callbacks without their
/// `extra_state` (an `MPIX_Grequest_class` is an index here).
static CLASSES: Mutex<Vec<Callbacks>> = Mutex::new(Vec::new());

/// `MPIX_Grequest_class_create`: callbacks for
/// `MPIX_Grequest_class_allocate` to start requests with.
///
/// # Safety
/// The callbacks are functions of the types MPI specifies (or null);
/// `greq_class` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_Grequest_class_create(
    query_fn: Option<QueryFn>,
    free_fn: Option<FreeFn>,
    cancel_fn: Option<CancelFn>,
    poll_fn: Option<PollFn>,
    _wait_fn: Option<WaitFn>,
    greq_class: *mut c_int,
) -> c_int {
    guard("MPIX_Grequest_class_create", ErrObj::None, || {
        let out = out_ptr(greq_class, "greq_class")?;
        let mut classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
        let id = c_int::try_from(classes.len())
            .map_err(|_| AbiError::new(Class::INTERN, "no generalized request classes left"))?;
        classes.push(Callbacks {
            query_fn,
            free_fn,
            cancel_fn,
            poll_fn,
            extra_state: 0,
        });
        // SAFETY: checked non-null.
        unsafe { *out = id };
        Ok(())
    })
}

/// `MPIX_Grequest_class_allocate`: a generalized request of class
/// `greq_class` with `extra_state`.
///
/// # Safety
/// `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_Grequest_class_allocate(
    greq_class: c_int,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    guard("MPIX_Grequest_class_allocate", ErrObj::None, || {
        let class = usize::try_from(greq_class)
            .ok()
            .and_then(|i| {
                CLASSES
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(i)
                    .copied()
            })
            .ok_or_else(|| {
                AbiError::new(
                    Class::ARG,
                    format!("`greq_class` {greq_class} was not made by MPIX_Grequest_class_create"),
                )
            })?;
        start(
            Callbacks {
                extra_state: extra_state as usize,
                ..class
            },
            request,
        )
    })
}
