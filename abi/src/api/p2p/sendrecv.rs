//! `MPI_Sendrecv` and `MPI_Sendrecv_replace`, and the exchange that
//! `MPI_Isendrecv` shares with them.

use std::ffi::{c_int, c_void};

use oxmpi::{Comm, Request};

use crate::api::datatype::p2p::Plan;
use crate::api::p2p::{buf_plan, copy_out, finish, status_arg};
use crate::api::{large_count, wide};
use crate::errors::{AbiError, ErrObj};
use crate::handles::{MPI_Comm, MPI_Count, MPI_Datatype, MPI_Status};
use crate::raise::guard;
use crate::state;

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

large_count! {
    /// # Safety
    /// Buffers hold their counts of elements; `status` is writable or ignored.
    Sendrecv(
        sendbuf: *const c_void,
        sendcount: Count,
        sendtype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        recvbuf: *mut c_void,
        recvcount: Count,
        recvtype: MPI_Datatype,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        let sendcount = wide(sendcount);
        let recvcount = wide(recvcount);
        guard(NAME, ErrObj::Comm(comm), || {
            let status = status_arg(status)?;
            let c = state::comm(comm)?;
            let d = buf_plan(sendbuf, sendcount, sendtype)?;
            let t = buf_plan(recvbuf, recvcount, recvtype)?;
            // SAFETY: the caller's contract.
            unsafe { exchange(&c, (&d, dest, sendtag), (&t, source, recvtag), status) }
        })
    }
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

large_count! {
    /// Sends from a copy, receives into the buffer.
    ///
    /// # Safety
    /// `buf` holds `count` elements; `status` is writable or ignored.
    Sendrecv_replace(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        let count = wide(count);
        guard(NAME, ErrObj::Comm(comm), || {
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
}
