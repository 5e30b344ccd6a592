//! `MPI_Isendrecv` and `MPI_Isendrecv_replace` (MPI 4.0, 3.10): the
//! non-blocking forms of `MPI_Sendrecv` / `MPI_Sendrecv_replace`, with the
//! same buffer handling (`p2p::buf_plan`, `sendrecv::replace_buffers`) and
//! start (`sendrecv::start_exchange`). One
//! request ([`Pair`]) completes once both the receive and the send have;
//! its status is the receive's. In the replace form the send goes from a
//! copy made at the call, so the buffer is overwritten only by the
//! received data.

use std::ffi::{c_int, c_void};

use crate::api::datatype::p2p::Plan;
use crate::api::{large_count, p2p, wide};
use crate::errors::{out_ptr, AbiError, ErrObj};
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Request};
use crate::objects::pair::Pair;
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::{requests, state};

/// A send's destination and tag.
type SendTo = (c_int, c_int);
/// A receive's source and tag.
type RecvFrom = (c_int, c_int);

/// Starts the receive into `t` and the send of `d` on `comm`, and stores
/// the pair's request (with the send's copy of the data, if any) in
/// `*request`.
///
/// # Safety
/// The program's buffers stay valid until the request completes;
/// `request` is writable or null (checked); `d` points into `copy` if
/// it is given.
unsafe fn start_pair(
    comm: MPI_Comm,
    (d, copy): (Plan, Option<Vec<u8>>),
    to: SendTo,
    t: Plan,
    from: RecvFrom,
    request: *mut MPI_Request,
) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    let c = state::comm(comm)?;
    // SAFETY: the caller's contract; the copy `d` may point into moves
    // into the request, its heap block in place.
    let (r, s) =
        unsafe { p2p::sendrecv::start_exchange(&c, (&d, to.0, to.1), (&t, from.0, from.1)) }?;
    let pair = Box::new(Pair::new(r, s, copy));
    // SAFETY: checked non-null.
    unsafe { *out = requests::insert(ReqEntry::Pair { pair, comm }) };
    Ok(())
}

large_count! {
    /// # Safety
    /// Buffers hold their counts of elements until the request completes;
    /// `request` is writable.
    Isendrecv(
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
        request: *mut MPI_Request,
    ) -> c_int {
        let sendcount = wide(sendcount);
        let recvcount = wide(recvcount);
        let (to, from) = ((dest, sendtag), (source, recvtag));
        guard(NAME, ErrObj::Comm(comm), || {
            let d = p2p::buf_plan(sendbuf, sendcount, sendtype)?;
            let t = p2p::buf_plan(recvbuf, recvcount, recvtype)?;
            // SAFETY: the caller's contract.
            unsafe { start_pair(comm, (d, None), to, t, from, request) }
        })
    }
}

large_count! {
    /// # Safety
    /// `buf` holds `count` elements until the request completes; `request`
    /// is writable.
    Isendrecv_replace(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let count = wide(count);
        let (to, from) = ((dest, sendtag), (source, recvtag));
        guard(NAME, ErrObj::Comm(comm), || {
            // SAFETY: the caller's contract.
            let (d, copy, t) = unsafe { p2p::sendrecv::replace_buffers(buf, count, datatype) }?;
            // SAFETY: the caller's contract; the send goes from a copy.
            unsafe { start_pair(comm, (d, copy), to, t, from, request) }
        })
    }
}
