//! Sends in every mode, blocking and non-blocking.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use oxmpi::Request;

use crate::api::datatype::p2p as datatype_p2p;
use crate::api::p2p::{bsend, buf_plan, isend, nonblocking_failed, store_request, store_started};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request};
use crate::objects::request::{ReqEntry, SendMode};
use crate::raise::{guard, guard_runtime};
use crate::state;

/// A blocking send in its general form: any communicator, any datatype.
/// Out of line, so that the common case in [`blocking_send`]'s functions
/// keeps a small frame (its arguments are not spilled for this path).
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn send_general(
    name: &'static str,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    sync: bool,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        state::with_comm(comm, |c| {
            if let Some((ptr, len)) = datatype_p2p::contiguous_bytes(buf, count, datatype) {
                // SAFETY: blocking; MPI's contract: `buf` holds `len` bytes.
                return Ok(unsafe { c.send_raw(ptr, len, dest, tag, sync) }?);
            }
            let plan = buf_plan(buf, count, datatype)?;
            // SAFETY: blocking; MPI's contract: `buf` holds `count` elements.
            Ok(unsafe { c.send_plan(&plan, dest, tag, sync) }?)
        })
    })
}

macro_rules! blocking_send {
    ($(#[$doc:meta])* $name:ident, $mode:expr) => {
        large_count! {
            $(#[$doc])*
            ///
            /// # Safety
            /// `buf` holds `count` elements of `datatype`.
            $name(
                buf: *const c_void,
                count: Count,
                datatype: MPI_Datatype,
                dest: c_int,
                tag: c_int,
                comm: MPI_Comm,
            ) -> c_int {
                let sync = $mode == SendMode::Synchronous;
                let count = wide(count);
                // The common case: a predefined communicator, a contiguous
                // predefined type.
                if let (Some(c), Some((ptr, len))) = (
                    state::predefined_comm(comm),
                    datatype_p2p::contiguous_bytes(buf, count, datatype),
                ) {
                    // SAFETY: blocking; MPI's contract: `buf` holds `len` bytes.
                    return guard_runtime(NAME, ErrObj::Comm(comm), move || unsafe {
                        c.send_raw(ptr, len, dest, tag, sync)
                    });
                }
                // SAFETY: the caller's contract.
                unsafe { send_general(NAME, buf, count, datatype, dest, tag, comm, sync) }
            }
        }
    };
}

blocking_send!(Send, SendMode::Standard);
blocking_send!(
    /// Returns once the receive matched.
    Ssend,
    SendMode::Synchronous
);
blocking_send!(
    /// Ready mode has standard-mode semantics here.
    Rsend,
    SendMode::Standard
);

large_count! {
    /// Copies the data and returns; the send completes later.
    ///
    /// # Safety
    /// `buf` holds `count` elements of `datatype`.
    Bsend(
        buf: *const c_void,
        count: Count,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            bsend(buf, wide(count), datatype, dest, tag, comm)
        })
    }
}

/// A non-blocking send in its general form: any communicator, any
/// datatype; also reports a null `request`. Out of line, like
/// [`send_general`].
///
/// # Safety
/// As `MPI_Isend`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn isend_general(
    name: &'static str,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
    request: *mut MPI_Request,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let out = out_ptr(request, "request")?;
        let sync = mode == SendMode::Synchronous;
        let r = match (
            state::predefined_comm(comm),
            datatype_p2p::contiguous_bytes(buf, count, datatype),
        ) {
            // SAFETY: the caller keeps the buffer until completion.
            (Some(c), Some((ptr, len))) => {
                unsafe { c.isend_raw_or_done(ptr, len, dest, tag, sync) }?
            }
            // SAFETY: as above.
            _ => Some(unsafe { isend(buf, count, datatype, dest, tag, comm, mode) }?),
        };
        // SAFETY: checked non-null.
        unsafe { store_send(out, r, comm) };
        Ok(())
    })
}

/// Gives a started send its handle (see [`store_started`]); `None` is a
/// send complete already.
///
/// # Safety
/// `out` is writable.
#[inline(always)]
unsafe fn store_send(out: *mut MPI_Request, r: Option<Request<'static>>, comm: MPI_Comm) {
    match r {
        // SAFETY: the caller's contract.
        None => unsafe { *out = handles::REQUEST_COMPLETE },
        // SAFETY: as above.
        Some(r) => unsafe { store_started(out, r, comm) },
    }
}

macro_rules! nonblocking_send {
    ($(#[$doc:meta])* $name:ident, $mode:expr) => {
        large_count! {
            $(#[$doc])*
            ///
            /// # Safety
            /// `buf` holds `count` elements of `datatype` until completion;
            /// `request` is writable.
            $name(
                buf: *const c_void,
                count: Count,
                datatype: MPI_Datatype,
                dest: c_int,
                tag: c_int,
                comm: MPI_Comm,
                request: *mut MPI_Request,
            ) -> c_int {
                let count = wide(count);
                // The common case (a predefined communicator, a contiguous
                // predefined type) goes straight to the runtime, which
                // makes no request for an eager send; as in `MPI_Irecv`,
                // only that call and the handle's store run under the
                // panic guard, and only a failure comes out (boxed).
                if let (Some(c), Some((ptr, len)), false) = (
                    state::predefined_comm(comm),
                    datatype_p2p::contiguous_bytes(buf, count, datatype),
                    request.is_null(), // an error: `isend_general` reports it
                ) {
                    let sync = $mode == SendMode::Synchronous;
                    let r = catch_unwind(AssertUnwindSafe(move || {
                        // SAFETY: the caller keeps the buffer until completion.
                        match unsafe { c.isend_raw_or_done(ptr, len, dest, tag, sync) } {
                            // SAFETY: `request` was checked non-null above.
                            Ok(r) => unsafe {
                                store_send(request, r, comm);
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
                unsafe {
                    isend_general(NAME, buf, count, datatype, dest, tag, comm, $mode, request)
                }
            }
        }
    };
}

nonblocking_send!(Isend, SendMode::Standard);
nonblocking_send!(Issend, SendMode::Synchronous);
nonblocking_send!(Irsend, SendMode::Standard);

large_count! {
    /// Copies the data; the request is complete at once.
    ///
    /// # Safety
    /// `buf` holds `count` elements of `datatype`; `request` is writable.
    Ibsend(
        buf: *const c_void,
        count: Count,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            let out = out_ptr(request, "request")?;
            bsend(buf, wide(count), datatype, dest, tag, comm)?;
            let status = handles::empty_status();
            // SAFETY: checked non-null.
            unsafe { store_request(out, ReqEntry::Ready { status, comm }) };
            Ok(())
        })
    }
}
