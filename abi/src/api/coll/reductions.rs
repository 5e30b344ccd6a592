//! Decoding a collective into a `Sink` (started now, or kept to start),
//! and the decoders of the broadcast and the reductions.

use std::ffi::{c_int, c_void};

use oxmpi::coll::{Elems, Planned};
use oxmpi::datatype::stage::Dir;
use oxmpi::ops::Op;
use oxmpi::Comm;

use crate::api::coll::buffers::{buffer, is_in_place, located, not_aliased, role, Role, Stager};
use crate::api::coll::datatype::{builtin_ty, bytes, count, ty, Num, Ty};
use crate::api::coll::ops::{builtin_op_for, op_for, reduce_unit};
use crate::errors::AbiError;
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op};
use crate::objects::launch::Launch;
use crate::state;

/// What a decoded collective becomes: a [`Launch`] kept to start now or
/// at each `MPI_Start` (non-blocking and persistent calls), or [`Ran`],
/// the blocking call done at once without boxing its plan.
pub(crate) trait Sink: Sized {
    /// Takes the collective that `plan` plans on `comm`, with the
    /// temporaries `sg` of its derived datatypes.
    ///
    /// # Safety
    /// The program's buffers named when decoding are valid: for [`Ran`],
    /// until it returns; for a [`Launch`], whenever it starts and until
    /// the operation completes.
    unsafe fn launch(
        sg: &mut Stager,
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Result<Self, AbiError>;
}

impl Sink for Launch {
    unsafe fn launch(
        _sg: &mut Stager,
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Result<Launch, AbiError> {
        Ok(Launch::new(comm, plan))
    }
}

/// A blocking collective that has run: packed, run to completion on the
/// calling thread and unpacked as soon as its arguments were decoded.
pub(crate) struct Ran;

impl Sink for Ran {
    unsafe fn launch(
        sg: &mut Stager,
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Result<Ran, AbiError> {
        // SAFETY: the caller's contract.
        unsafe {
            sg.0.pack()?;
            plan(comm)?.run()?;
            sg.0.finish()?;
        }
        Ok(Ran)
    }
}

/// What decoding a collective's arguments gives.
pub type Started = Result<Launch, AbiError>;

/// # Safety
/// None needed; `unsafe` for the uniform macro.
pub(super) unsafe fn ibarrier<L: Sink>(sg: &mut Stager, comm: MPI_Comm) -> Result<L, AbiError> {
    state::with_comm(comm, |c| L::launch(sg, c, |c| c.plan_barrier()))
}

pub(super) unsafe fn ibcast<N: Num, L: Sink>(
    sg: &mut Stager,
    buffer_: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        if role(c, root)? == Role::Idle {
            return L::launch(sg, c, move |c| {
                // SAFETY: nothing is sent or received.
                unsafe { c.plan_bcast(std::ptr::null_mut(), 0, root) }
            });
        }
        let t = ty(datatype, "datatype")?;
        let n = bytes(count, &t, "count")?;
        let p = sg.buf(buffer_, n, &t, Dir::InOut, "buffer", "in a broadcast")?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffer).
            unsafe { c.plan_bcast(p, n, root) }
        })
    })
}

/// (sendbuf or `None` for `MPI_IN_PLACE`, recvbuf) of the reductions.
pub(super) fn reduce_bufs(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    t: &Ty,
) -> Result<(Option<*const u8>, *mut u8), AbiError> {
    let why = "as the receive buffer of a reduction";
    if is_in_place(sendbuf) {
        let recv = sg.buf(recvbuf, n, t, Dir::InOut, "recvbuf", why)?;
        return Ok((None, recv));
    }
    let plain_recv = buffer(recvbuf, n, "recvbuf", why)?;
    let plain_send = buffer(sendbuf, n, "sendbuf", "")?;
    not_aliased(plain_send, plain_recv, n)?;
    if t.derived.is_none() {
        located(recvbuf, n, 0, t, "recvbuf")?;
        located(sendbuf, n, 0, t, "sendbuf")?;
        // A predefined type: the runtime moves the program's buffers.
        return Ok((Some(plain_send.cast_const()), plain_recv));
    }
    let recv = sg.buf(recvbuf, n, t, Dir::Out, "recvbuf", why)?;
    let send = sg.buf(sendbuf, n, t, Dir::In, "sendbuf", "")?;
    Ok((Some(send.cast_const()), recv))
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ireduce<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let part = role(c, root)?;
        if part == Role::Idle {
            // MPI_PROC_NULL in an intercommunicator's root group: only
            // `root` and `comm` are significant (no buffer, type or
            // operation is looked at).
            let none = Elems {
                count: 0,
                size: 1,
                ty: None,
            };
            return L::launch(sg, c, move |c| {
                // SAFETY: nothing is sent or received.
                unsafe { c.plan_reduce(None, std::ptr::null_mut(), none, &Op::SUM, root) }
            });
        }
        let t = ty(datatype, "datatype")?;
        let n = bytes(count, &t, "count")?;
        let (send, recv) = if part == Role::Root && c.is_inter() {
            let why = "as the root's receive buffer";
            (None, sg.buf(recvbuf, n, &t, Dir::Out, "recvbuf", why)?)
        } else if part == Role::Root {
            reduce_bufs(sg, sendbuf, recvbuf, n, &t)?
        } else {
            let why = "on a rank other than the root";
            let send = sg.buf(sendbuf, n, &t, Dir::In, "sendbuf", why)?;
            (Some(send.cast_const()), std::ptr::null_mut())
        };
        let o = op_for(op, &t)?;
        let e = elems(count, &t, &o)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_reduce(send, recv, e, &o, root) }
        })
    })
}

/// The elements a reduction of `count_` elements of `t` under `o` works on.
pub(super) fn elems(count_: impl Num, t: &Ty, o: &Op) -> Result<Elems, AbiError> {
    let (per, size) = reduce_unit(t, o);
    Ok(Elems {
        count: count(count_, "count")? * per,
        size,
        ty: t.elem,
    })
}

/// The shared start of allreduce, scan and exscan.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn reduction<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    which: Reduction,
) -> Result<L, AbiError> {
    // The common case: no type or operation object made, nothing to stage.
    if let Some((c, t, o)) = predefined_reduction(comm, datatype, op) {
        let n = bytes(count, t, "count")?;
        let (send, recv) = reduce_bufs(sg, sendbuf, recvbuf, n, t)?;
        let e = elems(count, t, o)?;
        // SAFETY: forwarded contract.
        return unsafe { launch_reduction(sg, c, send, recv, e, o, which) };
    }
    state::with_comm(comm, |c| {
        let t = ty(datatype, "datatype")?;
        let n = bytes(count, &t, "count")?;
        let (send, recv) = reduce_bufs(sg, sendbuf, recvbuf, n, &t)?;
        let o = op_for(op, &t)?;
        let e = elems(count, &t, &o)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe {
                match which {
                    Reduction::All => c.plan_allreduce(send, recv, e, &o),
                    Reduction::Scan => c.plan_scan(send, recv, e, &o),
                    Reduction::Exscan => c.plan_exscan(send, recv, e, &o),
                }
            }
        })
    })
}

/// The common case of a reduction: a predefined communicator, a predefined
/// type and a built-in operation defined for it (lent from static tables).
#[inline(always)]
pub(super) fn predefined_reduction(
    comm: MPI_Comm,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Option<(&'static Comm, &'static Ty, &'static Op)> {
    let c = state::predefined_comm(comm)?;
    let t = builtin_ty(datatype)?;
    Some((c, t, builtin_op_for(op, t)?))
}

/// [`reduction`]'s launch with an operation from the static table.
///
/// # Safety
/// As for [`Sink::launch`].
#[inline(always)]
pub(super) unsafe fn launch_reduction<L: Sink>(
    sg: &mut Stager,
    c: &Comm,
    send: Option<*const u8>,
    recv: *mut u8,
    e: Elems,
    o: &'static Op,
    which: Reduction,
) -> Result<L, AbiError> {
    // SAFETY: the caller's contract.
    unsafe {
        L::launch(sg, c, move |c| match which {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            Reduction::All => c.plan_allreduce(send, recv, e, o),
            Reduction::Scan => c.plan_scan(send, recv, e, o),
            Reduction::Exscan => c.plan_exscan(send, recv, e, o),
        })
    }
}

#[derive(Clone, Copy)]
pub(super) enum Reduction {
    All,
    Scan,
    Exscan,
}

pub(super) unsafe fn iallreduce<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    // SAFETY: forwarded contract.
    unsafe {
        reduction(
            sg,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::All,
        )
    }
}

pub(super) unsafe fn iscan<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    // SAFETY: forwarded contract.
    unsafe {
        reduction(
            sg,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::Scan,
        )
    }
}

pub(super) unsafe fn iexscan<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    // SAFETY: forwarded contract.
    unsafe {
        reduction(
            sg,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::Exscan,
        )
    }
}
