//! The common case of the blocking reductions, decided before any of the
//! general decoding: a predefined communicator, a predefined type, a
//! built-in operation and plain buffers. It goes straight to the runtime,
//! as a Rust program's call does: no staging, no type or operation object.
//! Anything else (including every argument error) returns `None`, and the
//! general path decodes and reports it.

use std::ffi::{c_int, c_void};

use oxmpi::coll::Elems;

use super::buffers::is_in_place;
use super::datatype::{Num, Ty};
use super::reductions::predefined_reduction;
use crate::errors::ErrObj;
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op};
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
    let recv = recvbuf.cast::<u8>();
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffers.
        unsafe { c.plan_allreduce(send, recv, e, o) }?.run()
    }))
}

/// `MPI_Reduce_scatter_block` (and `_c`) in the common case: separate,
/// non-overlapping buffers (the general path reports overlaps).
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
    let (c, t, o) = predefined_reduction(comm, datatype, op)?;
    let e = elems(recvcount, t)?;
    let mine = e.count * e.size;
    let total = mine.checked_mul(c.size() as usize)?;
    // Device buffers go through the general path's staging.
    if recvbuf.is_null()
        || is_in_place(recvbuf)
        || sendbuf.is_null()
        || is_in_place(sendbuf)
        || oxmpi::mem::cuda::active()
    {
        return None;
    }
    let (send, recv) = (sendbuf.cast::<u8>(), recvbuf.cast::<u8>());
    let apart = send as usize + total <= recv as usize || recv as usize + mine <= send as usize;
    if !apart {
        return None;
    }
    Some(guard_runtime(name, ErrObj::Comm(comm), move || {
        // SAFETY: blocking; MPI's contract on the buffers.
        unsafe { c.plan_reduce_scatter_block(Some(send), recv, e, o) }?.run()
    }))
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
        unsafe { c.plan_reduce(send, recv, e, o, root) }?.run()
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
        unsafe { c.plan_bcast(buf, len, root) }?.run()
    }))
}
