//! The common case of the blocking reductions, broadcasts and alltoalls
//! (and of `MPI_Ibcast`, `MPI_Iallreduce`, `MPI_Ialltoall` and
//! `MPI_Ireduce_scatter_block`), decided
//! before any of the general decoding: a predefined communicator, a
//! predefined type, a built-in operation and plain buffers. It goes straight to the runtime, as a Rust program's
//! call does: no staging, no type or operation object. Anything else
//! (including every argument error) returns `None`, and the general path
//! decodes and reports it.

use std::ffi::{c_int, c_void};

use oxmpi::coll::Elems;
use oxmpi::comm::Comm;
use oxmpi::ops::Op;

use super::buffers::is_in_place;
use super::datatype::{Num, Ty};
use super::reductions::predefined_reduction;
use crate::errors::ErrObj;
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use crate::raise::guard_runtime;

/// `MPI_Allreduce` (and `MPI_Allreduce_c`) in the common case.
///
/// # Safety
/// MPI's contract on the buffers.
#[inline(always)]
pub(super) unsafe fn allreduce<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<c_int> {
    let (c, send, recv, e, o) = allreduce_args(sendbuf, recvbuf, count, datatype, op, comm)?;
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffers.
        unsafe { c.allreduce_raw(send, recv, e, o) }
    }))
}

/// `MPI_Iallreduce` (and `MPI_Iallreduce_c`) in the common case: the
/// runtime's request goes straight into the handle's entry.
///
/// # Safety
/// MPI's contract on the buffers (valid until completion) and `request`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
pub(super) unsafe fn iallreduce<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Option<c_int> {
    if request.is_null() {
        return None;
    }
    let (c, send, recv, e, o) = allreduce_args(sendbuf, recvbuf, count, datatype, op, comm)?;
    // SAFETY: MPI's contract on the buffers (until the request completes)
    // and on `request`, checked non-null above.
    Some(unsafe {
        start_into(name, comm, request, move || {
            c.plan_allreduce(send, recv, e, o)
        })
    })
}

/// The decoded arguments of an allreduce in the common case (a predefined
/// communicator, type and built-in operation, plain distinct buffers or
/// `MPI_IN_PLACE` as the input), or `None`.
#[inline(always)]
#[allow(clippy::type_complexity)]
fn allreduce_args<N: Num>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<(
    &'static Comm,
    Option<*const u8>,
    *mut u8,
    Elems,
    &'static Op,
)> {
    let (c, t, o) = predefined_reduction(comm, datatype, op)?;
    let e = elems(count, t)?;
    if recvbuf.is_null() || is_in_place(recvbuf) {
        return None;
    }
    let send = if is_in_place(sendbuf) {
        None
    } else if sendbuf.is_null() || std::ptr::eq(sendbuf, recvbuf) {
        return None;
    } else {
        Some(sendbuf.cast::<u8>())
    };
    Some((c, send, recvbuf.cast::<u8>(), e, o))
}

/// Starts the collective `plan` makes and stores its request in
/// `request` (a failure is reported as the blocking calls' are).
///
/// # Safety
/// `request` is non-null and writable; `plan`'s buffers stay valid until
/// the request completes (MPI's contract).
#[inline(always)]
unsafe fn start_into(
    name: &'static str,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    plan: impl FnOnce() -> Result<oxmpi::coll::Planned<'static>, oxmpi::Error>,
) -> c_int {
    guard_runtime(name, ErrObj::Comm(comm), move || {
        let r = plan()?.start_static();
        // SAFETY: the caller's contract on `request`.
        unsafe { crate::api::p2p::store_started(request, r, comm) };
        Ok::<(), oxmpi::Error>(())
    })
}

/// `count` elements of `t`, or `None` for a negative count or a byte
/// count that overflows (the general path's errors to report).
#[inline(always)]
fn elems<N: Num>(count: N, t: &Ty) -> Option<Elems> {
    let n = usize::try_from(count.into()).ok()?;
    n.checked_mul(t.unit)?;
    Some(Elems {
        count: n,
        size: t.unit,
        ty: t.elem,
    })
}

/// A valid root of `c`, or `None` (the general path reports it).
fn root_of(c: &oxmpi::comm::Comm, root: c_int) -> Option<i32> {
    (0..c.size()).contains(&root).then_some(root)
}

/// `MPI_Reduce` (and `MPI_Reduce_c`) in the common case.
///
/// # Safety
/// MPI's contract on the buffers.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn reduce<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Option<c_int> {
    let (c, t, o) = predefined_reduction(comm, datatype, op)?;
    let root = root_of(c, root)?;
    let e = elems(count, t)?;
    let at_root = c.rank() == root;
    // The root needs a receive buffer apart from its input (or
    // MPI_IN_PLACE); the others need an input and ignore `recvbuf`.
    if sendbuf.is_null() || (at_root && (recvbuf.is_null() || is_in_place(recvbuf))) {
        return None;
    }
    let send = if is_in_place(sendbuf) {
        if !at_root {
            return None;
        }
        None
    } else if at_root && std::ptr::eq(sendbuf, recvbuf) {
        return None;
    } else {
        Some(sendbuf.cast::<u8>())
    };
    let recv = recvbuf.cast::<u8>();
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffers.
        unsafe { c.reduce_raw(send, recv, e, o, root) }
    }))
}

/// `MPI_Bcast` (and `MPI_Bcast_c`) of a predefined type on a predefined
/// communicator.
///
/// # Safety
/// MPI's contract on the buffer.
#[inline(always)]
pub(super) unsafe fn bcast<N: Num>(
    name: &'static str,
    buffer: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Option<c_int> {
    let c = crate::state::predefined_comm(comm)?;
    let t = super::datatype::builtin_ty(datatype)?;
    let root = root_of(c, root)?;
    let len = usize::try_from(count.into()).ok()?.checked_mul(t.unit)?;
    if buffer.is_null() || is_in_place(buffer) {
        return None;
    }
    let buf = buffer.cast::<u8>();
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffer.
        unsafe { c.bcast_raw(buf, len, root) }
    }))
}

/// `MPI_Ibcast` (and `MPI_Ibcast_c`) of a predefined type on a predefined
/// communicator: a call complete as it starts (the root's eager sends, a
/// leaf whose message was there) gets `REQUEST_COMPLETE`, as an eager
/// `MPI_Isend` does: no table entry.
///
/// # Safety
/// MPI's contract on the buffer (valid until completion) and `request`.
#[inline(always)]
pub(super) unsafe fn ibcast<N: Num>(
    name: &'static str,
    buffer: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Option<c_int> {
    let c = crate::state::predefined_comm(comm)?;
    let t = super::datatype::builtin_ty(datatype)?;
    let root = root_of(c, root)?;
    let len = usize::try_from(count.into()).ok()?.checked_mul(t.unit)?;
    if buffer.is_null() || is_in_place(buffer) || request.is_null() {
        return None;
    }
    let buf = buffer.cast::<u8>();
    // SAFETY: MPI's contract on the buffer (until the request completes)
    // and on `request`, checked non-null above.
    Some(unsafe { start_into(name, comm, request, move || c.plan_bcast(buf, len, root)) })
}

/// `MPI_Alltoall` (and `MPI_Alltoall_c`) in the common case.
///
/// # Safety
/// MPI's contract on the buffers.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
pub(super) unsafe fn alltoall<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Option<c_int> {
    let (c, send, block, recv) = alltoall_args(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
    )?;
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffers.
        unsafe { c.plan_alltoall(Some(send), block, recv) }?.run()
    }))
}

/// `MPI_Ialltoall` (and `MPI_Ialltoall_c`) in the common case.
///
/// # Safety
/// MPI's contract on the buffers (valid until completion) and `request`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
pub(super) unsafe fn ialltoall<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Option<c_int> {
    if request.is_null() {
        return None;
    }
    let (c, send, block, recv) = alltoall_args(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
    )?;
    // SAFETY: MPI's contract on the buffers (until the request completes)
    // and on `request`, checked non-null above.
    Some(unsafe {
        start_into(name, comm, request, move || {
            c.plan_alltoall(Some(send), block, recv)
        })
    })
}

/// The decoded arguments of an alltoall in the common case (a predefined
/// intracommunicator, predefined types, equal blocks, distinct non-null
/// buffers, no `MPI_IN_PLACE`): the communicator, the input, the block's
/// bytes and the output; else `None`.
#[inline(always)]
fn alltoall_args<N: Num>(
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Option<(&'static Comm, *const u8, usize, *mut u8)> {
    let c = crate::state::predefined_comm(comm)?;
    let (st, rt) = (
        super::datatype::builtin_ty(sendtype)?,
        super::datatype::builtin_ty(recvtype)?,
    );
    let n = usize::try_from(sendcount.into())
        .ok()?
        .checked_mul(st.unit)?;
    let block = usize::try_from(recvcount.into())
        .ok()?
        .checked_mul(rt.unit)?;
    block.checked_mul(c.size() as usize)?;
    if n != block
        || c.is_inter()
        || sendbuf.is_null()
        || recvbuf.is_null()
        || is_in_place(sendbuf)
        || is_in_place(recvbuf)
        || std::ptr::eq(sendbuf, recvbuf)
    {
        return None;
    }
    Some((c, sendbuf.cast::<u8>(), block, recvbuf.cast::<u8>()))
}

/// `MPI_Reduce_scatter_block` (and its `_c` form) in the common case.
///
/// # Safety
/// MPI's contract on the buffers.
#[inline(always)]
pub(super) unsafe fn reduce_scatter_block<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<c_int> {
    let (c, send, recv, e, o) = rsb_args(sendbuf, recvbuf, recvcount, datatype, op, comm)?;
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffers.
        unsafe { c.plan_reduce_scatter_block(Some(send), recv, e, o) }?.run()
    }))
}

/// `MPI_Ireduce_scatter_block` (and its `_c` form) in the common case.
///
/// # Safety
/// MPI's contract on the buffers (valid until completion) and `request`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // MPI's parameter list
pub(super) unsafe fn ireduce_scatter_block<N: Num>(
    name: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> Option<c_int> {
    if request.is_null() {
        return None;
    }
    let (c, send, recv, e, o) = rsb_args(sendbuf, recvbuf, recvcount, datatype, op, comm)?;
    // SAFETY: MPI's contract on the buffers (until the request completes)
    // and on `request`, checked non-null above.
    Some(unsafe {
        start_into(name, comm, request, move || {
            c.plan_reduce_scatter_block(Some(send), recv, e, o)
        })
    })
}

/// The decoded arguments of a reduce_scatter_block in the common case (a
/// predefined communicator, type and built-in operation, distinct
/// non-null buffers, no `MPI_IN_PLACE`), or `None`.
#[inline(always)]
#[allow(clippy::type_complexity)]
fn rsb_args<N: Num>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Option<(&'static Comm, *const u8, *mut u8, Elems, &'static Op)> {
    let (c, t, o) = predefined_reduction(comm, datatype, op)?;
    let e = elems(recvcount, t)?;
    let mine = e.count * e.size;
    let total = mine.checked_mul(c.size() as usize)?;
    // Device buffers go through the general path's staging.
    if sendbuf.is_null()
        || recvbuf.is_null()
        || is_in_place(sendbuf)
        || is_in_place(recvbuf)
        || oxmpi::mem::cuda::active()
    {
        return None;
    }
    let (send, recv) = (sendbuf.cast::<u8>(), recvbuf.cast::<u8>());
    // Overlapping buffers are the general path's error to report.
    let apart = send as usize + total <= recv as usize || recv as usize + mine <= send as usize;
    apart.then_some((c, send, recv, e, o))
}
