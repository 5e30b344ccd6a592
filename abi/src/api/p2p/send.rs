//! Sends in every mode, blocking and non-blocking.

use crate::api::datatype::p2p::{self as datatype_p2p};
use crate::api::p2p::bsend;
use crate::api::p2p::buf_plan;
use crate::api::p2p::isend;
use crate::api::p2p::store_request;
use crate::errors::{out_ptr, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request};
use crate::objects::request::{ReqEntry, SendMode};
use crate::raise::{guard, guard_runtime};
use crate::state;
use std::ffi::{c_int, c_void};

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
    ($(#[$doc:meta])* $name:ident, $mpi:literal, $cnt:ty, $mode:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `buf` holds `count` elements of `datatype`.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: $cnt,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> c_int {
            let sync = $mode == SendMode::Synchronous;
            let count = MPI_Count::from(count);
            // The common case: a predefined communicator, a contiguous
            // predefined type.
            if let (Some(c), Some((ptr, len))) = (
                state::predefined_comm(comm),
                datatype_p2p::contiguous_bytes(buf, count, datatype),
            ) {
                // SAFETY: blocking; MPI's contract: `buf` holds `len` bytes.
                return guard_runtime($mpi, ErrObj::Comm(comm), move || unsafe {
                    c.send_raw(ptr, len, dest, tag, sync)
                });
            }
            // SAFETY: the caller's contract.
            unsafe { send_general($mpi, buf, count, datatype, dest, tag, comm, sync) }
        }
    };
}

blocking_send!(
    /// `MPI_Send`.
    oxabi_Send, "MPI_Send", c_int, SendMode::Standard
);
blocking_send!(
    /// `MPI_Send_c`: the large-count form.
    oxabi_Send_c, "MPI_Send_c", MPI_Count, SendMode::Standard
);
blocking_send!(
    /// `MPI_Ssend`: returns once the receive matched.
    oxabi_Ssend, "MPI_Ssend", c_int, SendMode::Synchronous
);
blocking_send!(
    /// `MPI_Ssend_c`: the large-count form.
    oxabi_Ssend_c, "MPI_Ssend_c", MPI_Count, SendMode::Synchronous
);
blocking_send!(
    /// `MPI_Rsend`: ready mode has standard-mode semantics here.
    oxabi_Rsend, "MPI_Rsend", c_int, SendMode::Standard
);
blocking_send!(
    /// `MPI_Rsend_c`: the large-count form.
    oxabi_Rsend_c, "MPI_Rsend_c", MPI_Count, SendMode::Standard
);

/// The body of `MPI_Bsend` and `MPI_Bsend_c`.
///
/// # Safety
/// As `MPI_Bsend`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn bsend_impl(
    name: &'static str,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        bsend(buf, count, datatype, dest, tag, comm)
    })
}

/// `MPI_Bsend`: copies the data and returns; the send completes later.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Bsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { bsend_impl("MPI_Bsend", buf, count.into(), datatype, dest, tag, comm) }
}

/// `MPI_Bsend_c`: the large-count form.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Bsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { bsend_impl("MPI_Bsend_c", buf, count, datatype, dest, tag, comm) }
}

macro_rules! nonblocking_send {
    ($(#[$doc:meta])* $name:ident, $mpi:literal, $cnt:ty, $mode:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `buf` holds `count` elements of `datatype` until completion;
        /// `request` is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: $cnt,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            guard($mpi, ErrObj::Comm(comm), || {
                let out = out_ptr(request, "request")?;
                // SAFETY: the caller keeps the buffer until completion.
                let r = unsafe { isend(buf, count.into(), datatype, dest, tag, comm, $mode) }?;
                // SAFETY: checked non-null.
                unsafe { store_request(out, ReqEntry::Active { req: Some(r), comm }) };
                Ok(())
            })
        }
    };
}

nonblocking_send!(
    /// `MPI_Isend`.
    oxabi_Isend, "MPI_Isend", c_int, SendMode::Standard
);
nonblocking_send!(
    /// `MPI_Isend_c`: the large-count form.
    oxabi_Isend_c, "MPI_Isend_c", MPI_Count, SendMode::Standard
);
nonblocking_send!(
    /// `MPI_Issend`.
    oxabi_Issend, "MPI_Issend", c_int, SendMode::Synchronous
);
nonblocking_send!(
    /// `MPI_Issend_c`: the large-count form.
    oxabi_Issend_c, "MPI_Issend_c", MPI_Count, SendMode::Synchronous
);
nonblocking_send!(
    /// `MPI_Irsend`.
    oxabi_Irsend, "MPI_Irsend", c_int, SendMode::Standard
);
nonblocking_send!(
    /// `MPI_Irsend_c`: the large-count form.
    oxabi_Irsend_c, "MPI_Irsend_c", MPI_Count, SendMode::Standard
);

/// The body of `MPI_Ibsend` and `MPI_Ibsend_c`.
///
/// # Safety
/// As `MPI_Ibsend`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn ibsend_impl(
    name: &'static str,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let out = out_ptr(request, "request")?;
        bsend(buf, count, datatype, dest, tag, comm)?;
        let status = handles::empty_status();
        // SAFETY: checked non-null.
        unsafe { store_request(out, ReqEntry::Ready { status, comm }) };
        Ok(())
    })
}

/// `MPI_Ibsend`: copies the data; the request is complete at once.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Ibsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        ibsend_impl(
            "MPI_Ibsend",
            buf,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            request,
        )
    }
}

/// `MPI_Ibsend_c`: the large-count form.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Ibsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        ibsend_impl(
            "MPI_Ibsend_c",
            buf,
            count,
            datatype,
            dest,
            tag,
            comm,
            request,
        )
    }
}
