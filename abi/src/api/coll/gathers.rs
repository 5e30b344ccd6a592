//! Decoders of the gathers and scatters (rooted and to all).

use std::ffi::{c_int, c_void};

use oxmpi::coll::Blocks;
use oxmpi::datatype::stage::Dir;

use crate::api::coll::buffers::{all_blocks, blocks, buffer, is_in_place, role, Role, Stager};
use crate::api::coll::datatype::{bytes, ty, Num};
use crate::api::coll::reductions::Sink;
use crate::errors::{AbiError, Class};
use crate::handles::{MPI_Comm, MPI_Datatype};
use crate::state;

/// Checks that a rank's own block has the size the receive side expects.
pub(super) fn same_block(send: usize, recv: usize, what: &str) -> Result<(), AbiError> {
    if send != recv {
        return Err(AbiError::new(
            Class::TRUNCATE,
            format!(
                "{what}: sendcount x sendtype is {send} bytes but recvcount x recvtype is {recv} \
                 bytes"
            ),
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn igather<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let part = role(c, root)?;
        if part == Role::Idle {
            return L::launch(sg, c, move |c| {
                // SAFETY: nothing is sent or received.
                unsafe { c.plan_gather(None, 0, std::ptr::null_mut(), root) }
            });
        }
        let (send, block, recv) = if part == Role::Root {
            let rt = ty(recvtype, "recvtype")?;
            let block = bytes(recvcount, &rt, "recvcount")?;
            let all = all_blocks(block, c.peer_count() as usize, "recvcount")?;
            let why = "as the root's receive buffer";
            let (send, dir) = if c.is_inter() {
                (None, Dir::Out)
            } else if is_in_place(sendbuf) {
                buffer(recvbuf, all, "recvbuf", why)?;
                (None, Dir::InOut)
            } else {
                let st = ty(sendtype, "sendtype")?;
                let n = bytes(sendcount, &st, "sendcount")?;
                buffer(recvbuf, all, "recvbuf", why)?;
                same_block(n, block, "the root's own block")?;
                let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", "")?;
                (Some(send.cast_const()), Dir::Out)
            };
            let recv = sg.buf(recvbuf, all, &rt, dir, "recvbuf", why)?;
            (send, block, recv)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            let why = "on a rank other than the root";
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", why)?;
            (Some(send.cast_const()), n, std::ptr::null_mut())
        };
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_gather(send, block, recv, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn igatherv<N: Num, C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let part = role(c, root)?;
        let at_root = part == Role::Root;
        let in_place = at_root && is_in_place(sendbuf) && !c.is_inter();
        let (send, send_bytes) = if in_place || part == Role::Idle || (at_root && c.is_inter()) {
            (None, 0)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            let why = "on a rank other than the root";
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", why)?;
            (Some(send.cast_const()), n)
        };
        if !at_root {
            return L::launch(sg, c, move |c| {
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe {
                    c.plan_gatherv(send, send_bytes, std::ptr::null_mut(), Blocks::NONE, root)
                }
            });
        }
        let rt = ty(recvtype, "recvtype")?;
        let (unit, dunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (cs, ds) = unsafe {
            blocks(
                recvcounts,
                displs,
                c.peer_count() as usize,
                &unit,
                &dunit,
                "recvcounts",
                "displs",
            )
        }?;
        let why = "as the root's receive buffer";
        buffer(recvbuf, Blocks::new(&cs, &ds).extent(), "recvbuf", why)?;
        if send.is_some() {
            same_block(send_bytes, cs[c.rank() as usize], "the root's own block")?;
        }
        let dir = if in_place { Dir::InOut } else { Dir::Out };
        let (recv, ds) = sg.blocks(recvbuf, &cs, &ds, &|_| &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_gatherv(send, send_bytes, recv, b, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iscatter<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let part = role(c, root)?;
        if part == Role::Idle {
            return L::launch(sg, c, move |c| {
                // SAFETY: nothing is sent or received.
                unsafe { c.plan_scatter(std::ptr::null(), 0, None, root) }
            });
        }
        let (send, block, recv) = if part == Role::Root {
            let st = ty(sendtype, "sendtype")?;
            let block = bytes(sendcount, &st, "sendcount")?;
            let all = all_blocks(block, c.peer_count() as usize, "sendcount")?;
            let why = "as the root's send buffer";
            buffer(sendbuf, all, "sendbuf", why)?;
            let recv = if c.is_inter() || is_in_place(recvbuf) {
                None
            } else {
                let rt = ty(recvtype, "recvtype")?;
                let n = bytes(recvcount, &rt, "recvcount")?;
                same_block(block, n, "the root's own block")?;
                Some(sg.buf(recvbuf, n, &rt, Dir::Out, "recvbuf", "")?)
            };
            let send = sg.buf(sendbuf, all, &st, Dir::In, "sendbuf", why)?;
            (send.cast_const(), block, recv)
        } else {
            let rt = ty(recvtype, "recvtype")?;
            let n = bytes(recvcount, &rt, "recvcount")?;
            let why = "on a rank other than the root";
            let recv = sg.buf(recvbuf, n, &rt, Dir::Out, "recvbuf", why)?;
            (std::ptr::null(), n, Some(recv))
        };
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_scatter(send, block, recv, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iscatterv<N: Num, C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    displs: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let part = role(c, root)?;
        let at_root = part == Role::Root;
        let in_place = at_root && is_in_place(recvbuf);
        let (recv, recv_bytes) = if in_place || part == Role::Idle || (at_root && c.is_inter()) {
            (None, 0)
        } else {
            let rt = ty(recvtype, "recvtype")?;
            let n = bytes(recvcount, &rt, "recvcount")?;
            let why = "on a rank other than the root";
            (Some(sg.buf(recvbuf, n, &rt, Dir::Out, "recvbuf", why)?), n)
        };
        if !at_root {
            return L::launch(sg, c, move |c| {
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe { c.plan_scatterv(std::ptr::null(), Blocks::NONE, recv, recv_bytes, root) }
            });
        }
        let st = ty(sendtype, "sendtype")?;
        let (unit, dunit) = (|_| Ok(st.unit), |_| Ok(st.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (cs, ds) = unsafe {
            blocks(
                sendcounts,
                displs,
                c.peer_count() as usize,
                &unit,
                &dunit,
                "sendcounts",
                "displs",
            )
        }?;
        let why = "as the root's send buffer";
        buffer(sendbuf, Blocks::new(&cs, &ds).extent(), "sendbuf", why)?;
        if recv.is_some() {
            same_block(cs[c.rank() as usize], recv_bytes, "the root's own block")?;
        }
        let (send, ds) = sg.blocks(sendbuf, &cs, &ds, &|_| &st, Dir::In, "sendbuf", why)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_scatterv(send.cast_const(), b, recv, recv_bytes, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iallgather<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let rt = ty(recvtype, "recvtype")?;
        let block = bytes(recvcount, &rt, "recvcount")?;
        let all = all_blocks(block, c.peer_count() as usize, "recvcount")?;
        let why = "as the receive buffer";
        buffer(recvbuf, all, "recvbuf", why)?;
        let (send, dir, n) = if is_in_place(sendbuf) {
            (None, Dir::InOut, block)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            // On an intercommunicator the two groups' blocks may differ.
            if !c.is_inter() {
                same_block(n, block, "this rank's block")?;
            }
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), Dir::Out, n)
        };
        let recv = sg.buf(recvbuf, all, &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            if !c.is_inter() {
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                return unsafe { c.plan_allgather(send, block, recv) };
            }
            let m = c.peer_count() as usize;
            let (rc, rd): (Vec<usize>, Vec<usize>) =
                (vec![block; m], (0..m).map(|j| j * block).collect());
            // SAFETY: as above.
            unsafe { c.plan_allgatherv(send, n, recv, Blocks::new(&rc, &rd)) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn iallgatherv<N: Num, C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let rt = ty(recvtype, "recvtype")?;
        let (unit, dunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (cs, ds) = unsafe {
            blocks(
                recvcounts,
                displs,
                c.peer_count() as usize,
                &unit,
                &dunit,
                "recvcounts",
                "displs",
            )
        }?;
        let why = "as the receive buffer";
        buffer(recvbuf, Blocks::new(&cs, &ds).extent(), "recvbuf", why)?;
        let (send, send_bytes, dir) = if is_in_place(sendbuf) {
            (None, cs[c.rank() as usize], Dir::InOut)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            if !c.is_inter() {
                same_block(n, cs[c.rank() as usize], "this rank's block")?;
            }
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), n, Dir::Out)
        };
        let (recv, ds) = sg.blocks(recvbuf, &cs, &ds, &|_| &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_allgatherv(send, send_bytes, recv, b) }
        })
    })
}
