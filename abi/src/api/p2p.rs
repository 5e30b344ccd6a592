//! Point-to-point: sends in every mode, receives, probes, matched probes
//! and persistent requests, over the runtime's raw-byte entry points.
//! Buffers are decoded by [`datatype_p2p::plan`]: contiguous types move
//! in place, others through the runtime's typed paths, which pack and
//! unpack them in flight (no temporary buffer). Only buffered sends and
//! the send half of `MPI_Sendrecv_replace` copy the data first.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use oxmpi::{Comm, Request, Status};

use super::datatype_p2p::{self, Plan};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status, MessageRef,
    MESSAGE_NO_PROC, MESSAGE_NULL, PROC_NULL,
};
use crate::objects::detached::Detached;
use crate::objects::request::{Persistent, PersistentOp, ReqEntry, SendMode};
use crate::objects::stage::Stage;
use crate::raise::{guard, guard_runtime};
use crate::requests;
use crate::state;

/// Validated buffer arguments (`buf`, `count`, `datatype`).
#[inline]
pub(crate) fn buf_plan(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Result<Plan, AbiError> {
    datatype_p2p::plan(buf, count, datatype, "buf")
}

/// A status output argument: `MPI_STATUS_IGNORE` or a valid pointer.
#[inline]
fn status_arg(p: *mut MPI_Status) -> Result<*mut MPI_Status, AbiError> {
    out_ptr(p, "status")
}

/// Reports a completion: writes the status (also on truncation) and
/// returns the error.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or writable.
#[inline]
unsafe fn finish(r: Result<Status, oxmpi::Error>, status: *mut MPI_Status) -> Result<(), AbiError> {
    let (s, err) = requests::split(r, handles::COMM_WORLD);
    // SAFETY: the caller's contract.
    unsafe { handles::write_status(status, &s) };
    match err {
        // Raised on the call's own communicator.
        Some(mut e) => {
            e.raise_on = None;
            Err(e)
        }
        None => Ok(()),
    }
}

/// Starts a send in `mode` on the communicator handle `comm`.
///
/// # Safety
/// The buffer stays readable until the request completes.
unsafe fn isend(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> Result<Request<'static>, AbiError> {
    let c = state::comm(comm)?;
    let plan = buf_plan(buf, count, datatype)?;
    // SAFETY: the caller's contract.
    Ok(unsafe { c.isend_plan(&plan, dest, tag, mode == SendMode::Synchronous) }?)
}

/// Buffered send: the data is copied, the send runs detached.
fn bsend(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Result<(), AbiError> {
    let c = state::comm(comm)?;
    // SAFETY: MPI's contract: `buf` holds `count` elements.
    let data = unsafe { copy_out(&buf_plan(buf, count, datatype)?) }?;
    let len = data.len();
    // SAFETY: `data` moves into the detached entry with the request and
    // its heap buffer stays put until the request completes.
    let req = unsafe { c.isend_raw(data.as_ptr(), len, dest, tag, false) }?;
    state::lock().detached.push(Detached {
        req,
        data: Some(data),
    });
    Ok(())
}

/// A copy of the data `plan` describes, packed if the type is not
/// contiguous (what buffered sends and `MPI_Sendrecv_replace` send).
///
/// # Safety
/// The buffer holds the elements.
unsafe fn copy_out(plan: &Plan) -> Result<Vec<u8>, AbiError> {
    match plan {
        // SAFETY: the caller's contract.
        Plan::Typed(p) => Ok(unsafe { p.pack() }?),
        &Plan::Bytes { len: 0, .. } => Ok(Vec::new()),
        &Plan::Bytes { ptr, len } if ptr.is_null() => Err(AbiError::new(
            Class::BUFFER,
            format!("null buffer with {len} bytes to send"),
        )),
        &Plan::Bytes { ptr, len } if oxmpi::mem::cuda::is_device(ptr) => {
            let mut data = vec![0u8; len];
            // SAFETY: the caller's contract: `len` bytes of device memory.
            unsafe { oxmpi::mem::cuda::copy_from_device(&mut data, ptr) }?;
            Ok(data)
        }
        // SAFETY: the caller's contract.
        &Plan::Bytes { ptr, len } => Ok(unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec()),
    }
}

/// Stores a new request for `req` in `*request`.
///
/// # Safety
/// `request` is writable (checked non-null).
unsafe fn store_request(request: *mut MPI_Request, entry: ReqEntry) {
    // SAFETY: the caller's contract.
    unsafe { store_staged(request, entry, None) };
}

/// Stores a new request with the temporary buffer it uses, if any.
///
/// # Safety
/// `request` is writable (checked non-null).
pub(crate) unsafe fn store_staged(
    request: *mut MPI_Request,
    entry: ReqEntry,
    stage: Option<Stage>,
) {
    let h = match stage {
        None => requests::insert(entry),
        Some(stage) => {
            let mut st = state::lock();
            let slot = st.requests.insert(entry);
            st.staged.put(slot, stage);
            handles::request_handle(slot)
        }
    };
    // SAFETY: the caller's contract.
    unsafe { *request = h };
}

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

macro_rules! blocking_recv {
    ($(#[$doc:meta])* $name:ident, $mpi:literal, $cnt:ty) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `buf` has room for `count` elements; `status` is writable or ignored.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $cnt,
            datatype: MPI_Datatype,
            source: c_int,
            tag: c_int,
            comm: MPI_Comm,
            status: *mut MPI_Status,
        ) -> c_int {
            let count = MPI_Count::from(count);
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
                return unsafe { recv_failed($mpi, comm, r, status) };
            }
            // SAFETY: the caller's contract.
            unsafe { recv_general($mpi, buf, count, datatype, source, tag, comm, status) }
        }
    };
}

blocking_recv!(
    /// `MPI_Recv`.
    oxabi_Recv, "MPI_Recv", c_int
);
blocking_recv!(
    /// `MPI_Recv_c`: the large-count form.
    oxabi_Recv_c, "MPI_Recv_c", MPI_Count
);

/// The body of `MPI_Irecv` and `MPI_Irecv_c`.
///
/// # Safety
/// As `MPI_Irecv`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn irecv_impl(
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
        let c = state::comm(comm)?;
        let plan = buf_plan(buf, count, datatype)?;
        // SAFETY: the caller keeps the buffer until completion.
        let r = unsafe { c.irecv_plan(&plan, source, tag) }?;
        // SAFETY: checked non-null.
        unsafe { store_request(out, ReqEntry::Active { req: Some(r), comm }) };
        Ok(())
    })
}

/// `MPI_Irecv`.
///
/// # Safety
/// `buf` has room for `count` elements until completion; `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        irecv_impl(
            "MPI_Irecv",
            buf,
            count.into(),
            datatype,
            source,
            tag,
            comm,
            request,
        )
    }
}

/// `MPI_Irecv_c`: the large-count form.
///
/// # Safety
/// `buf` has room for `count` elements until completion; `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Irecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        irecv_impl(
            "MPI_Irecv_c",
            buf,
            count,
            datatype,
            source,
            tag,
            comm,
            request,
        )
    }
}

/// Starts a receive and a send together (`MPI_Sendrecv` and
/// `MPI_Isendrecv`): the receive is cancelled if the send cannot start (so
/// nothing is left posted). Returns (receive, send).
///
/// # Safety
/// Both buffers stay valid for their lengths until both requests complete.
pub(crate) unsafe fn start_exchange(
    c: &Comm,
    send: (&Plan, c_int, c_int),
    recv: (&Plan, c_int, c_int),
) -> Result<(Request<'static>, Request<'static>), AbiError> {
    let (t, source, recvtag) = recv;
    // SAFETY: the caller's contract.
    let r = unsafe { c.irecv_plan(t, source, recvtag) }?;
    let (d, dest, sendtag) = send;
    // SAFETY: as above.
    match unsafe { c.isend_plan(d, dest, sendtag, false) } {
        Ok(s) => Ok((r, s)),
        Err(e) => {
            r.cancel();
            drop(r);
            Err(e.into())
        }
    }
}

/// Runs a receive and a send together and waits for both.
///
/// # Safety
/// Both buffers are valid for their lengths; `status` writable or ignored.
unsafe fn exchange(
    c: &Comm,
    send: (&Plan, c_int, c_int),
    recv: (&Plan, c_int, c_int),
    status: *mut MPI_Status,
) -> Result<(), AbiError> {
    // SAFETY: both requests are waited on before returning.
    let (r, s) = unsafe { start_exchange(c, send, recv) }?;
    let sent = s.wait();
    // SAFETY: the caller's contract.
    let received = unsafe { finish(r.wait(), status) };
    sent?;
    received
}

/// The body of `MPI_Sendrecv` and `MPI_Sendrecv_c`.
///
/// # Safety
/// As `MPI_Sendrecv`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn sendrecv_impl(
    name: &'static str,
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let status = status_arg(status)?;
        let c = state::comm(comm)?;
        let d = buf_plan(sendbuf, sendcount, sendtype)?;
        let t = buf_plan(recvbuf, recvcount, recvtype)?;
        // SAFETY: the caller's contract.
        unsafe { exchange(&c, (&d, dest, sendtag), (&t, source, recvtag), status) }
    })
}

/// `MPI_Sendrecv`.
///
/// # Safety
/// Buffers hold their counts of elements; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        sendrecv_impl(
            "MPI_Sendrecv",
            sendbuf,
            sendcount.into(),
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount.into(),
            recvtype,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

/// `MPI_Sendrecv_c`: the large-count form.
///
/// # Safety
/// Buffers hold their counts of elements; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Sendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        sendrecv_impl(
            "MPI_Sendrecv_c",
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount,
            recvtype,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

/// The body of `MPI_Sendrecv_replace` and `MPI_Sendrecv_replace_c`.
///
/// # Safety
/// As `MPI_Sendrecv_replace`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn sendrecv_replace_impl(
    name: &'static str,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let status = status_arg(status)?;
        let c = state::comm(comm)?;
        // SAFETY: the caller's contract.
        let (d, copy, t) = unsafe { replace_buffers(buf, count, datatype) }?;
        // SAFETY: `copy` outlives the exchange; `buf` is the caller's.
        let r = unsafe { exchange(&c, (&d, dest, sendtag), (&t, source, recvtag), status) };
        drop(copy);
        r
    })
}

/// The buffers of a send-receive in place (`MPI_Sendrecv_replace`,
/// `MPI_Isendrecv_replace`) on `count` elements of `datatype` at `buf`:
/// the send goes from a copy (packed if the type is not contiguous; the
/// returned plan points into it, so keep it until the send completes),
/// and the receive may land in the buffer at any time.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
pub(crate) unsafe fn replace_buffers(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Result<(Plan, Option<Vec<u8>>, Plan), AbiError> {
    let plan = buf_plan(buf, count, datatype)?;
    if plan.is_empty() {
        return Ok((plan.clone(), None, plan));
    }
    // SAFETY: the caller's contract.
    let mut copy = unsafe { copy_out(&plan) }?;
    let send = Plan::Bytes {
        ptr: copy.as_mut_ptr(),
        len: copy.len(),
    };
    Ok((send, Some(copy), plan))
}

/// `MPI_Sendrecv_replace`: sends from a copy, receives into the buffer.
///
/// # Safety
/// `buf` holds `count` elements; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        sendrecv_replace_impl(
            "MPI_Sendrecv_replace",
            buf,
            count.into(),
            datatype,
            dest,
            sendtag,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

/// `MPI_Sendrecv_replace_c`: the large-count form.
///
/// # Safety
/// `buf` holds `count` elements; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Sendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        sendrecv_replace_impl(
            "MPI_Sendrecv_replace_c",
            buf,
            count,
            datatype,
            dest,
            sendtag,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

/// `MPI_Probe`.
///
/// # Safety
/// `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Probe", ErrObj::Comm(comm), || {
        let status = status_arg(status)?;
        let s = state::comm(comm)?.probe(source, tag)?;
        // SAFETY: checked above.
        unsafe { handles::write_status(status, &s) };
        Ok(())
    })
}

/// `MPI_Iprobe`.
///
/// # Safety
/// `flag` is writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Iprobe", ErrObj::Comm(comm), || {
        let flag = out_ptr(flag, "flag")?;
        let status = status_arg(status)?;
        let found = state::comm(comm)?.iprobe(source, tag)?;
        // SAFETY: checked above.
        unsafe {
            *flag = c_int::from(found.is_some());
            if let Some(s) = found {
                handles::write_status(status, &s);
            }
        }
        Ok(())
    })
}

/// Stores a matched message and returns its handle.
fn store_message(msg: oxmpi::Message, source: c_int, comm: MPI_Comm) -> MPI_Message {
    if source == PROC_NULL {
        return MESSAGE_NO_PROC;
    }
    requests::insert(ReqEntry::Message { msg, comm })
}

/// `MPI_Mprobe`.
///
/// # Safety
/// `message` is writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Mprobe", ErrObj::Comm(comm), || {
        let out = out_ptr(message, "message")?;
        let status = status_arg(status)?;
        let (msg, s) = state::comm(comm)?.mprobe(source, tag)?;
        // SAFETY: checked above.
        unsafe {
            *out = store_message(msg, source, comm);
            handles::write_status(status, &s);
        }
        Ok(())
    })
}

/// `MPI_Improbe`.
///
/// # Safety
/// `flag` and `message` are writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Improbe", ErrObj::Comm(comm), || {
        let flag = out_ptr(flag, "flag")?;
        let out = out_ptr(message, "message")?;
        let status = status_arg(status)?;
        let found = state::comm(comm)?.improbe(source, tag)?;
        // SAFETY: checked above.
        unsafe {
            *flag = c_int::from(found.is_some());
            if let Some((msg, s)) = found {
                *out = store_message(msg, source, comm);
                handles::write_status(status, &s);
            }
        }
        Ok(())
    })
}

/// Takes the message a handle names out of the table (`None`: no-proc).
fn take_message(h: MPI_Message) -> Result<Option<(oxmpi::Message, MPI_Comm)>, AbiError> {
    let slot = match handles::message(h)? {
        MessageRef::NoProc => return Ok(None),
        MessageRef::Slot(s) => s,
    };
    let mut st = state::lock();
    match st.requests.remove(slot) {
        Some(ReqEntry::Message { msg, comm }) => Ok(Some((msg, comm))),
        Some(other) => {
            st.requests.put(slot, other);
            Err(AbiError::new(
                Class::REQUEST,
                format!("handle {h:#010x} is a request, not a message"),
            ))
        }
        None => Err(AbiError::new(
            Class::REQUEST,
            format!("message {h:#010x} does not exist (already received)"),
        )),
    }
}

/// The status of receiving `MPI_MESSAGE_NO_PROC`.
fn no_proc_status() -> Status {
    Status::empty()
}

/// The body of `MPI_Mrecv` and `MPI_Mrecv_c`.
///
/// # Safety
/// As `MPI_Mrecv`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn mrecv_impl(
    name: &'static str,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    guard(name, ErrObj::None, || {
        let mh = out_ptr(message, "message")?;
        let status = status_arg(status)?;
        let t = buf_plan(buf, count, datatype)?;
        // SAFETY: checked non-null.
        let taken = take_message(unsafe { *mh })?;
        // SAFETY: checked non-null.
        unsafe { *mh = MESSAGE_NULL };
        let Some((msg, comm)) = taken else {
            // SAFETY: checked above.
            unsafe { handles::write_status(status, &no_proc_status()) };
            return Ok(());
        };
        // SAFETY: waited on before returning.
        let r =
            unsafe { msg.irecv_plan(&t) }.map_err(|e| AbiError::from(e).on(ErrObj::Comm(comm)))?;
        // SAFETY: checked above.
        unsafe { finish(r.wait(), status) }.map_err(|e| e.on(ErrObj::Comm(comm)))
    })
}

/// `MPI_Mrecv`.
///
/// # Safety
/// `buf` has room for `count` elements; `message` is writable; `status`
/// is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { mrecv_impl("MPI_Mrecv", buf, count.into(), datatype, message, status) }
}

/// `MPI_Mrecv_c`: the large-count form.
///
/// # Safety
/// `buf` has room for `count` elements; `message` is writable; `status`
/// is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Mrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { mrecv_impl("MPI_Mrecv_c", buf, count, datatype, message, status) }
}

/// The body of `MPI_Imrecv` and `MPI_Imrecv_c`.
///
/// # Safety
/// As `MPI_Imrecv`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn imrecv_impl(
    name: &'static str,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    guard(name, ErrObj::None, || {
        let mh = out_ptr(message, "message")?;
        let out = out_ptr(request, "request")?;
        let t = buf_plan(buf, count, datatype)?;
        // SAFETY: checked non-null.
        let taken = take_message(unsafe { *mh })?;
        // SAFETY: checked non-null.
        unsafe { *mh = MESSAGE_NULL };
        let entry = match taken {
            None => ReqEntry::Ready {
                status: no_proc_status(),
                comm: handles::COMM_SELF,
            },
            Some((msg, comm)) => {
                // SAFETY: the caller keeps the buffer until completion.
                let r = unsafe { msg.irecv_plan(&t) }
                    .map_err(|e| AbiError::from(e).on(ErrObj::Comm(comm)))?;
                ReqEntry::Active { req: Some(r), comm }
            }
        };
        // SAFETY: checked non-null.
        unsafe { store_request(out, entry) };
        Ok(())
    })
}

/// `MPI_Imrecv`.
///
/// # Safety
/// `buf` has room for `count` elements until completion; `message` and
/// `request` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { imrecv_impl("MPI_Imrecv", buf, count.into(), datatype, message, request) }
}

/// `MPI_Imrecv_c`: the large-count form.
///
/// # Safety
/// `buf` has room for `count` elements until completion; `message` and
/// `request` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Imrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { imrecv_impl("MPI_Imrecv_c", buf, count, datatype, message, request) }
}

/// Makes a persistent request (a partitioned operation's arguments were
/// checked when its channel was made).
///
/// # Safety
/// `request` is writable (checked here).
pub(crate) unsafe fn persistent(
    comm: MPI_Comm,
    op: PersistentOp,
    stage: Option<Stage>,
    request: *mut MPI_Request,
) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    let c = state::comm(comm)?;
    // Check the arguments now, as MPI_*_init does; MPI_Start repeats it.
    match &op {
        &PersistentOp::Send { dest, tag, .. } => {
            if !(0..=oxmpi::TAG_UB).contains(&tag) {
                return Err(oxmpi::Error::InvalidTag {
                    arg: "tag",
                    value: tag,
                    allows_any: false,
                }
                .into());
            }
            if dest != PROC_NULL && !(0..c.size()).contains(&dest) {
                return Err(oxmpi::Error::InvalidRank {
                    arg: "dest",
                    value: dest,
                    size: c.size(),
                }
                .into());
            }
        }
        &PersistentOp::Recv { source, tag, .. } => {
            if tag != handles::ANY_TAG && !(0..=oxmpi::TAG_UB).contains(&tag) {
                return Err(oxmpi::Error::InvalidTag {
                    arg: "tag",
                    value: tag,
                    allows_any: true,
                }
                .into());
            }
            if source != PROC_NULL
                && source != handles::ANY_SOURCE
                && !(0..c.size()).contains(&source)
            {
                return Err(oxmpi::Error::InvalidRank {
                    arg: "source",
                    value: source,
                    size: c.size(),
                }
                .into());
            }
        }
        PersistentOp::PartitionedSend { .. } | PersistentOp::PartitionedRecv { .. } => {}
        // Collectives are checked by their own decoding (persistent_coll.rs).
        PersistentOp::Coll(_) => {}
    }
    let p = Persistent {
        comm: c,
        op,
        started: false,
        active: None,
    };
    // SAFETY: checked non-null.
    unsafe { store_staged(out, ReqEntry::Persistent { p, comm }, stage) };
    Ok(())
}

macro_rules! send_init {
    ($(#[$doc:meta])* $name:ident, $mpi:literal, $cnt:ty, $mode:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `buf` holds `count` elements whenever the request is started;
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
                let plan = buf_plan(buf, MPI_Count::from(count), datatype)?;
                let op = PersistentOp::Send {
                    plan,
                    dest,
                    tag,
                    mode: $mode,
                };
                // SAFETY: the caller's contract.
                unsafe { persistent(comm, op, None, request) }
            })
        }
    };
}

send_init!(
    /// `MPI_Send_init`.
    oxabi_Send_init, "MPI_Send_init", c_int, SendMode::Standard
);
send_init!(
    /// `MPI_Send_init_c`: the large-count form.
    oxabi_Send_init_c, "MPI_Send_init_c", MPI_Count, SendMode::Standard
);
send_init!(
    /// `MPI_Ssend_init`.
    oxabi_Ssend_init, "MPI_Ssend_init", c_int, SendMode::Synchronous
);
send_init!(
    /// `MPI_Ssend_init_c`: the large-count form.
    oxabi_Ssend_init_c, "MPI_Ssend_init_c", MPI_Count, SendMode::Synchronous
);
send_init!(
    /// `MPI_Rsend_init`.
    oxabi_Rsend_init, "MPI_Rsend_init", c_int, SendMode::Standard
);
send_init!(
    /// `MPI_Rsend_init_c`: the large-count form.
    oxabi_Rsend_init_c, "MPI_Rsend_init_c", MPI_Count, SendMode::Standard
);
send_init!(
    /// `MPI_Bsend_init`: a standard-mode send each time it is started.
    oxabi_Bsend_init, "MPI_Bsend_init", c_int, SendMode::Standard
);
send_init!(
    /// `MPI_Bsend_init_c`: the large-count form.
    oxabi_Bsend_init_c, "MPI_Bsend_init_c", MPI_Count, SendMode::Standard
);

/// The body of `MPI_Recv_init` and `MPI_Recv_init_c`.
///
/// # Safety
/// As `MPI_Recv_init`.
#[allow(clippy::too_many_arguments)] // MPI's parameter list
unsafe fn recv_init_impl(
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
        let plan = buf_plan(buf, count, datatype)?;
        let op = PersistentOp::Recv { plan, source, tag };
        // SAFETY: the caller's contract.
        unsafe { persistent(comm, op, None, request) }
    })
}

/// `MPI_Recv_init`.
///
/// # Safety
/// `buf` has room for `count` elements whenever the request is started;
/// `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        recv_init_impl(
            "MPI_Recv_init",
            buf,
            count.into(),
            datatype,
            source,
            tag,
            comm,
            request,
        )
    }
}

/// `MPI_Recv_init_c`: the large-count form.
///
/// # Safety
/// `buf` has room for `count` elements whenever the request is started;
/// `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Recv_init_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        recv_init_impl(
            "MPI_Recv_init_c",
            buf,
            count,
            datatype,
            source,
            tag,
            comm,
            request,
        )
    }
}
