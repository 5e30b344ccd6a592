//! Decoders of the all-to-all exchanges and of reduce-scatter.

use std::ffi::c_void;

use oxmpi::coll::{Blocks, Elems};
use oxmpi::datatype::stage::Dir;

use crate::api::coll::buffers::{
    all_blocks, blocks, buffer, counts, is_in_place, not_aliased, Stager,
};
use crate::api::coll::datatype::{bytes, count, ty, Num, Ty};
use crate::api::coll::gathers::same_block;
use crate::api::coll::ops::{op_for, reduce_unit};
use crate::api::coll::reductions::Sink;
use crate::errors::{AbiError, Class};
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op};
use crate::state;

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoall<N: Num, L: Sink>(
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
        let r = buffer(recvbuf, all, "recvbuf", why)?;
        let (send, dir, n) = if is_in_place(sendbuf) {
            (None, Dir::InOut, block)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            // On an intercommunicator the two groups' blocks may differ.
            if !c.is_inter() {
                same_block(n, block, "each block")?;
            }
            let sall = all_blocks(n, c.peer_count() as usize, "sendcount")?;
            not_aliased(buffer(sendbuf, sall, "sendbuf", "")?, r, sall.min(all))?;
            let s = sg.buf(sendbuf, sall, &st, Dir::In, "sendbuf", "")?;
            (Some(s.cast_const()), Dir::Out, n)
        };
        let recv = sg.buf(recvbuf, all, &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            if !c.is_inter() {
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                return unsafe { c.plan_alltoall(send, block, recv) };
            }
            let m = c.peer_count() as usize;
            let (sc, sd): (Vec<usize>, Vec<usize>) = (vec![n; m], (0..m).map(|j| j * n).collect());
            let (rc, rd): (Vec<usize>, Vec<usize>) =
                (vec![block; m], (0..m).map(|j| j * block).collect());
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: as above.
            unsafe { c.plan_alltoallv(send, sb, recv, rb) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoallv<C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let p = c.peer_count() as usize;
        let rt = ty(recvtype, "recvtype")?;
        let (runit, rdunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (rc, rd) = unsafe {
            blocks(
                recvcounts,
                rdispls,
                p,
                &runit,
                &rdunit,
                "recvcounts",
                "rdispls",
            )
        }?;
        let why = "as the receive buffer";
        let rext = Blocks::new(&rc, &rd).extent();
        let r = buffer(recvbuf, rext, "recvbuf", why)?;
        if is_in_place(sendbuf) {
            let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &|_| &rt, Dir::InOut, "recvbuf", why)?;
            return L::launch(sg, c, move |c| {
                let rb = Blocks::new(&rc, &rd);
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe { c.plan_alltoallv(None, Blocks::NONE, recv, rb) }
            });
        }
        let st = ty(sendtype, "sendtype")?;
        let (sunit, sdunit) = (|_| Ok(st.unit), |_| Ok(st.extent));
        // SAFETY: as above.
        let (sc, sd) = unsafe {
            blocks(
                sendcounts,
                sdispls,
                p,
                &sunit,
                &sdunit,
                "sendcounts",
                "sdispls",
            )
        }?;
        let sext = Blocks::new(&sc, &sd).extent();
        not_aliased(buffer(sendbuf, sext, "sendbuf", "")?, r, sext.min(rext))?;
        let (send, sd) = sg.blocks(sendbuf, &sc, &sd, &|_| &st, Dir::In, "sendbuf", "")?;
        let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &|_| &rt, Dir::Out, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_alltoallv(Some(send.cast_const()), sb, recv, rb) }
        })
    })
}

/// The datatypes of an alltoallw side, decoded.
///
/// # Safety
/// A non-null `types` holds `n` entries.
pub(crate) unsafe fn types(
    types: *const MPI_Datatype,
    n: usize,
    arg: &str,
) -> Result<Vec<Ty>, AbiError> {
    if types.is_null() && n > 0 {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    (0..n)
        // SAFETY: the caller's contract.
        .map(|i| ty(unsafe { *types.add(i) }, &format!("{arg}[{i}]")))
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ialltoallw<C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let p = c.peer_count() as usize;
        let bytes_unit = |_| Ok(1);
        // SAFETY: MPI's contract: one entry per rank.
        let rts = unsafe { types(recvtypes, p, "recvtypes") }?;
        let runit = |i: usize| Ok(rts[i].unit);
        // SAFETY: as above.
        let (rc, rd) = unsafe {
            blocks(
                recvcounts,
                rdispls,
                p,
                &runit,
                &bytes_unit,
                "recvcounts",
                "rdispls",
            )
        }?;
        let why = "as the receive buffer";
        let rext = Blocks::new(&rc, &rd).extent();
        let r = buffer(recvbuf, rext, "recvbuf", why)?;
        let rty = |i: usize| &rts[i];
        if is_in_place(sendbuf) {
            let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &rty, Dir::InOut, "recvbuf", why)?;
            return L::launch(sg, c, move |c| {
                let rb = Blocks::new(&rc, &rd);
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe { c.plan_alltoallw(None, Blocks::NONE, recv, rb) }
            });
        }
        // SAFETY: as above.
        let sts = unsafe { types(sendtypes, p, "sendtypes") }?;
        let sunit = |i: usize| Ok(sts[i].unit);
        // SAFETY: as above.
        let (sc, sd) = unsafe {
            blocks(
                sendcounts,
                sdispls,
                p,
                &sunit,
                &bytes_unit,
                "sendcounts",
                "sdispls",
            )
        }?;
        let sext = Blocks::new(&sc, &sd).extent();
        not_aliased(buffer(sendbuf, sext, "sendbuf", "")?, r, sext.min(rext))?;
        let sty = |i: usize| &sts[i];
        let (send, sd) = sg.blocks(sendbuf, &sc, &sd, &sty, Dir::In, "sendbuf", "")?;
        let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &rty, Dir::Out, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_alltoallw(Some(send.cast_const()), sb, recv, rb) }
        })
    })
}

pub(super) unsafe fn ireduce_scatter<C: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let t = ty(datatype, "datatype")?;
        // SAFETY: MPI's contract: one entry per rank.
        let cs = unsafe { counts(recvcounts, c.size() as usize, "recvcounts") }?;
        let total: usize = cs.iter().sum();
        let total_bytes = total
            .checked_mul(t.unit)
            .ok_or_else(|| AbiError::new(Class::COUNT, "`recvcounts` sum overflows"))?;
        let mine = cs[c.rank() as usize] * t.unit;
        let why = "as the receive buffer";
        let (send, recv) = if is_in_place(sendbuf) {
            let recv = sg.buf(recvbuf, total_bytes, &t, Dir::InOut, "recvbuf", why)?;
            (None, recv)
        } else {
            let r = buffer(recvbuf, mine, "recvbuf", why)?;
            not_aliased(buffer(sendbuf, total_bytes, "sendbuf", "")?, r, mine)?;
            let recv = sg.buf(recvbuf, mine, &t, Dir::Out, "recvbuf", why)?;
            let send = sg.buf(sendbuf, total_bytes, &t, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), recv)
        };
        let o = op_for(op, &t)?;
        let (per, size) = reduce_unit(&t, &o);
        let cs: Vec<usize> = cs.iter().map(|&n| n * per).collect();
        let elem = t.elem;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_reduce_scatter(send, recv, &cs, size, elem, &o) }
        })
    })
}

pub(super) unsafe fn ireduce_scatter_block<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let t = ty(datatype, "datatype")?;
        let mine = bytes(recvcount, &t, "recvcount")?;
        let total = all_blocks(mine, c.size() as usize, "recvcount")?;
        let why = "as the receive buffer";
        let (send, recv) = if is_in_place(sendbuf) {
            let recv = sg.buf(recvbuf, total, &t, Dir::InOut, "recvbuf", why)?;
            (None, recv)
        } else {
            let r = buffer(recvbuf, mine, "recvbuf", why)?;
            not_aliased(buffer(sendbuf, total, "sendbuf", "")?, r, mine)?;
            let recv = sg.buf(recvbuf, mine, &t, Dir::Out, "recvbuf", why)?;
            let send = sg.buf(sendbuf, total, &t, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), recv)
        };
        let o = op_for(op, &t)?;
        let (per, size) = reduce_unit(&t, &o);
        let e = Elems {
            count: count(recvcount, "recvcount")? * per,
            size,
            ty: t.elem,
        };
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_reduce_scatter_block(send, recv, e, &o) }
        })
    })
}
