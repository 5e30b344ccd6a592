//! Point-to-point communication (MPI 4.0 chapters 3 and 4): sends in every
//! mode, receives, probes, matched probes and persistent requests, over the
//! runtime's raw-byte entry points. Buffers are decoded by
//! [`crate::api::datatype::p2p::plan`]: contiguous types move in place, others
//! through the runtime's typed paths, which pack and unpack them in flight (no
//! temporary buffer). Only buffered sends and the send half of
//! `MPI_Sendrecv_replace` copy the data first.
//!
//! Here: what the sends and receives share; the calls, one file per kind, with
//! the requests' completion and statuses (MPI 4.0 sections 3.2.5, 3.7.3-3.7.5),
//! `MPI_Isendrecv` and partitioned communication.

pub mod buffer;
pub mod completion;
pub mod isendrecv;
pub mod partitioned;
pub mod persistent;
pub mod probe;
pub mod recv;
pub mod send;
pub mod sendrecv;
pub mod status;

use std::ffi::{c_int, c_void};

use oxmpi::{Request, Status};

use crate::api::datatype::p2p::{self as datatype_p2p, Plan};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request, MPI_Status};
use crate::objects::detached::Detached;
use crate::objects::request::{ReqEntry, SendMode};
use crate::objects::stage::Stage;
use crate::raise::guard;
use crate::{requests, state};

/// Validated buffer arguments (`buf`, `count`, `datatype`).
#[inline]
pub(crate) fn buf_plan(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Result<Plan, AbiError> {
    datatype_p2p::plan(buf, count, datatype, "buf")
}

/// Reports a failed (or panicked) non-blocking send or receive of the C
/// entries' common case (`MPI_Isend` and its modes, `MPI_Irecv`): the
/// runtime's error raised on `comm`, a panic carried on.
#[cold]
#[inline(never)]
pub(crate) fn nonblocking_failed(
    name: &'static str,
    comm: MPI_Comm,
    r: std::thread::Result<Option<Box<oxmpi::Error>>>,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || match r {
        Ok(Some(e)) => Err((*e).into()),
        Ok(None) => Ok(()),
        Err(p) => std::panic::resume_unwind(p),
    })
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
    let plan = buf_plan(buf, count, datatype)?;
    let sync = mode == SendMode::Synchronous;
    // SAFETY: the caller's contract.
    state::with_comm(comm, |c| {
        Ok(unsafe { c.isend_plan(&plan, dest, tag, sync) }?)
    })
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

/// Gives a started operation its handle: one complete already with an
/// empty status (an eager send, a collective that finished as it
/// started) gets the one builtin handle for those: no table, no lock.
///
/// # Safety
/// `out` is writable.
#[inline(always)]
pub(crate) unsafe fn store_started(out: *mut MPI_Request, r: Request<'static>, comm: MPI_Comm) {
    let entry = match r.finished_now() {
        Ok(status) if status == Status::empty() => None,
        Ok(status) => Some(ReqEntry::Ready { status, comm }),
        Err(r) => Some(ReqEntry::Active { req: Some(r), comm }),
    };
    match entry {
        // SAFETY: the caller's contract.
        None => unsafe { *out = handles::REQUEST_COMPLETE },
        // SAFETY: as above.
        Some(entry) => unsafe { store_request(out, entry) },
    }
}

/// Stores a new request for `req` in `*request`.
///
/// # Safety
/// `request` is writable (checked non-null).
#[inline]
unsafe fn store_request(request: *mut MPI_Request, entry: ReqEntry) {
    let h = requests::insert(entry);
    // SAFETY: the caller's contract.
    unsafe { *request = h };
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
