//! Receives, blocking and non-blocking.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::api::datatype::p2p as datatype_p2p;
use crate::api::p2p::{buf_plan, finish, nonblocking_failed, status_arg, store_request};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request, MPI_Status};
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::{requests, state};

/// Reports a failed (or panicked) receive of [`blocking_recv`]'s common case:
/// the status is written as for any completion, then the error raised.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or writable.
#[cold]
#[inline(never)]
unsafe fn recv_failed(
    name: &'static str,
    comm: MPI_Comm,
    r: std::thread::Result<Option<Box<oxmpi::Error>>>,
    status: *mut MPI_Status,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || match r {
        // SAFETY: the caller's contract.
        Ok(Some(e)) => unsafe { finish(Err(*e), status) },
        Ok(None) => Ok(()),
        Err(p) => std::panic::resume_unwind(p),
    })
}

/// A blocking receive in its general form: any communicator, any datatype.
/// Out of line, like [`send_general`].
///
/// # Safety
/// As `MPI_Recv`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn recv_general(
    name: &'static str,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let status = status_arg(status)?;
        state::with_comm(comm, |c| {
            if let Some((ptr, cap)) = datatype_p2p::contiguous_bytes(buf, count, datatype) {
                // SAFETY: blocking; MPI's contract: `buf` has room for `cap` bytes.
                let r = unsafe { c.recv_raw(ptr, cap, source, tag) };
                // The common case reads the status in place: handing the
                // whole Result on to `finish` costs a store-forwarding stall.
                if let Ok(s) = &r {
                    // SAFETY: checked above.
                    unsafe { handles::write_status(status, s) };
                    return Ok(());
                }
                // SAFETY: checked above.
                return unsafe { finish(r, status) };
            }
            let plan = buf_plan(buf, count, datatype)?;
            // SAFETY: blocking; MPI's contract: `buf` has room for `count` elements.
            let r = unsafe { c.recv_plan(&plan, source, tag) };
            // SAFETY: checked above.
            unsafe { finish(r, status) }
        })
    })
}

large_count! {
    /// # Safety
    /// `buf` has room for `count` elements; `status` is writable or ignored.
    Recv(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        let count = wide(count);
        // The common case: a predefined communicator, a contiguous
        // predefined type, a status to fill or ignore. (A function per
        // name, as for sends: one shared body would not be inlined.)
        if let (Some(c), Some((ptr, cap)), false) = (
            state::predefined_comm(comm),
            datatype_p2p::contiguous_bytes(buf, count, datatype),
            status.is_null(), // an error: `recv_general` reports it
        ) {
            // Only the runtime call runs under the panic guard, so that
            // the guard's frame stays small enough to be inlined here.
            // The status is written inside and only a failure comes out
            // (boxed): handing the whole `Result<Status, Error>` out
            // made the common case copy it field by field, reading back
            // stores of other widths (store-forwarding stalls).
            let r = catch_unwind(AssertUnwindSafe(move || {
                // SAFETY: blocking; MPI's contract: `buf` has room for
                // `cap` bytes.
                match unsafe { c.recv_raw(ptr, cap, source, tag) } {
                    // SAFETY: `status` was checked above.
                    Ok(s) => unsafe {
                        handles::write_status(status, &s);
                        None
                    },
                    Err(e) => Some(Box::new(e)),
                }
            }));
            if let Ok(None) = r {
                return 0;
            }
            // SAFETY: as above.
            return unsafe { recv_failed(NAME, comm, r, status) };
        }
        // SAFETY: the caller's contract.
        unsafe { recv_general(NAME, buf, count, datatype, source, tag, comm, status) }
    }
}

/// A non-blocking receive in its general form: any communicator, any
/// datatype; also reports a null `request`. Out of line, like
/// [`recv_general`].
///
/// # Safety
/// As `MPI_Irecv`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn irecv_general(
    name: &'static str,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let out = out_ptr(request, "request")?;
        let r = match (
            state::predefined_comm(comm),
            datatype_p2p::contiguous_bytes(buf, count, datatype),
        ) {
            // SAFETY: the caller keeps the buffer until completion.
            (Some(c), Some((ptr, cap))) => unsafe { c.irecv_raw_static(ptr, cap, source, tag) }?,
            _ => {
                let plan = buf_plan(buf, count, datatype)?;
                // SAFETY: as above.
                state::with_comm(comm, |c| Ok(unsafe { c.irecv_plan(&plan, source, tag) }?))?
            }
        };
        // SAFETY: checked non-null.
        unsafe { store_request(out, ReqEntry::Active { req: Some(r), comm }) };
        Ok(())
    })
}

large_count! {
    /// # Safety
    /// `buf` has room for `count` elements until completion; `request` is writable.
    Irecv(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let count = wide(count);
        // The common case: a predefined communicator, a contiguous
        // predefined type. As in `MPI_Recv`, only the runtime call and the
        // table entry run under the panic guard and only a failure comes
        // out (boxed): the new request goes from the runtime's result
        // straight into its entry, not through the general path's
        // `Result<(), AbiError>`.
        if let (Some(c), Some((ptr, cap)), false) = (
            state::predefined_comm(comm),
            datatype_p2p::contiguous_bytes(buf, count, datatype),
            request.is_null(), // an error: `irecv_general` reports it
        ) {
            let r = catch_unwind(AssertUnwindSafe(move || {
                // SAFETY: the caller keeps the buffer until completion.
                match unsafe { c.irecv_raw_ticket(ptr, cap, source, tag) } {
                    // The running receive's ticket is the handle (no
                    // table entry): see `handles::ticket_handle`.
                    // SAFETY: `request` was checked non-null above.
                    Ok(r) => unsafe {
                        *request = requests::handle_of(r, comm);
                        None
                    },
                    Err(e) => Some(Box::new(e)),
                }
            }));
            if let Ok(None) = r {
                return 0;
            }
            return nonblocking_failed(NAME, comm, r);
        }
        // SAFETY: the caller's contract.
        unsafe { irecv_general(NAME, buf, count, datatype, source, tag, comm, request) }
    }
}
