//! Neighborhood collectives (`MPI_Neighbor_allgather(v)`,
//! `MPI_Neighbor_alltoall(v,w)`), blocking, non-blocking (`MPI_Ineighbor_*`)
//! and persistent (`MPI_Neighbor_*_init`), with their `_c` forms, over the
//! runtime's (`Comm::ineighbor_*_raw`). The three forms of each come from
//! one decoding function through `collective!` (`coll/mod.rs`), which also
//! brings the datatype handling of the other collectives (derived types
//! packed through temporaries).
//!
//! Arguments are checked in the order communicator, topology
//! (`MPI_ERR_TOPOLOGY` without one), datatypes, counts, buffers; count and
//! displacement arrays have one entry per in-neighbor (receive side) or
//! out-neighbor (send side). `MPI_IN_PLACE` is not allowed (MPI 4.0,
//! 7.6).

use std::ffi::c_void;

use oxmpi::coll::Blocks;
use oxmpi::datatype::stage::Dir;
use oxmpi::{Comm, PROC_NULL};

use crate::api::coll::buffers::{blocks, Stager};
use crate::api::coll::collective;
use crate::api::coll::datatype::{bytes, ty, Num};
use crate::api::coll::exchanges::types;
use crate::api::coll::reductions::Sink;
use crate::errors::{AbiError, Class};
use crate::handles::{MPI_Aint, MPI_Comm, MPI_Datatype};
use crate::state;

/// Why `MPI_IN_PLACE` is refused.
const WHY: &str = "in a neighborhood collective";

/// `(indegree, outdegree, how the receive buffer is used)` of this rank
/// in `c`'s topology. The blocks of `MPI_PROC_NULL` in-neighbors must stay
/// as they are: with one, a receive buffer of a non-contiguous datatype
/// is packed into its temporary before the operation too (`Dir::InOut`),
/// so that unpacking after it writes those blocks back unchanged.
fn degrees(c: &Comm) -> Result<(usize, usize, Dir), AbiError> {
    let n = c.neighbors()?;
    let rdir = if n.sources.contains(&PROC_NULL) {
        Dir::InOut
    } else {
        Dir::Out
    };
    Ok((n.sources.len(), n.destinations.len(), rdir))
}

/// `block * n` bytes, for count argument `arg`.
fn times(block: usize, n: usize, arg: &str) -> Result<usize, AbiError> {
    block.checked_mul(n).ok_or_else(|| {
        AbiError::new(
            Class::COUNT,
            format!("`{arg}` x {n} neighbors overflows the address space"),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ineighbor_allgather<N: Num, L: Sink>(
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
        let (indeg, _, rdir) = degrees(c)?;
        let (st, rt) = (ty(sendtype, "sendtype")?, ty(recvtype, "recvtype")?);
        let len = bytes(sendcount, &st, "sendcount")?;
        let block = bytes(recvcount, &rt, "recvcount")?;
        let all = times(block, indeg, "recvcount")?;
        let send = sg.buf(sendbuf, len, &st, Dir::In, "sendbuf", WHY)?;
        let recv = sg.buf(recvbuf, all, &rt, rdir, "recvbuf", WHY)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_neighbor_allgather(send, len, recv, block) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ineighbor_allgatherv<N: Num, C: Num, D: Num, L: Sink>(
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
        let (indeg, _, rdir) = degrees(c)?;
        let (st, rt) = (ty(sendtype, "sendtype")?, ty(recvtype, "recvtype")?);
        let len = bytes(sendcount, &st, "sendcount")?;
        let (unit, dunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per in-neighbor.
        let (cs, ds) = unsafe {
            blocks(
                recvcounts,
                displs,
                indeg,
                &unit,
                &dunit,
                "recvcounts",
                "displs",
            )
        }?;
        let send = sg.buf(sendbuf, len, &st, Dir::In, "sendbuf", WHY)?;
        let (recv, ds) = sg.blocks(recvbuf, &cs, &ds, &|_| &rt, rdir, "recvbuf", WHY)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_neighbor_allgatherv(send, len, recv, b) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ineighbor_alltoall<N: Num, L: Sink>(
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
        let (indeg, outdeg, rdir) = degrees(c)?;
        let (st, rt) = (ty(sendtype, "sendtype")?, ty(recvtype, "recvtype")?);
        let sblock = bytes(sendcount, &st, "sendcount")?;
        let rblock = bytes(recvcount, &rt, "recvcount")?;
        let (sall, rall) = (
            times(sblock, outdeg, "sendcount")?,
            times(rblock, indeg, "recvcount")?,
        );
        let send = sg.buf(sendbuf, sall, &st, Dir::In, "sendbuf", WHY)?;
        let recv = sg.buf(recvbuf, rall, &rt, rdir, "recvbuf", WHY)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_neighbor_alltoall(send, sblock, recv, rblock) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ineighbor_alltoallv<C: Num, D: Num, L: Sink>(
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
        let (indeg, outdeg, rdir) = degrees(c)?;
        let (st, rt) = (ty(sendtype, "sendtype")?, ty(recvtype, "recvtype")?);
        let (sunit, sdunit) = (|_| Ok(st.unit), |_| Ok(st.extent));
        let (runit, rdunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per out- / in-neighbor.
        let ((sc, sd), (rc, rd)) = unsafe {
            (
                blocks(
                    sendcounts,
                    sdispls,
                    outdeg,
                    &sunit,
                    &sdunit,
                    "sendcounts",
                    "sdispls",
                )?,
                blocks(
                    recvcounts,
                    rdispls,
                    indeg,
                    &runit,
                    &rdunit,
                    "recvcounts",
                    "rdispls",
                )?,
            )
        };
        let (send, sd) = sg.blocks(sendbuf, &sc, &sd, &|_| &st, Dir::In, "sendbuf", WHY)?;
        let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &|_| &rt, rdir, "recvbuf", WHY)?;
        L::launch(sg, c, move |c| {
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_neighbor_alltoallv(send, sb, recv, rb) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ineighbor_alltoallw<C: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let (indeg, outdeg, rdir) = degrees(c)?;
        // SAFETY: MPI's contract: one entry per out- / in-neighbor.
        let (sts, rts) = unsafe {
            (
                types(sendtypes, outdeg, "sendtypes")?,
                types(recvtypes, indeg, "recvtypes")?,
            )
        };
        let byte = |_| Ok(1);
        let (sunit, runit) = (|i: usize| Ok(sts[i].unit), |i: usize| Ok(rts[i].unit));
        // SAFETY: as above.
        let ((sc, sd), (rc, rd)) = unsafe {
            (
                blocks(
                    sendcounts,
                    sdispls,
                    outdeg,
                    &sunit,
                    &byte,
                    "sendcounts",
                    "sdispls",
                )?,
                blocks(
                    recvcounts,
                    rdispls,
                    indeg,
                    &runit,
                    &byte,
                    "recvcounts",
                    "rdispls",
                )?,
            )
        };
        let (sty, rty) = (|i: usize| &sts[i], |i: usize| &rts[i]);
        let (send, sd) = sg.blocks(sendbuf, &sc, &sd, &sty, Dir::In, "sendbuf", WHY)?;
        let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &rty, rdir, "recvbuf", WHY)?;
        L::launch(sg, c, move |c| {
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_neighbor_alltoallv(send, sb, recv, rb) }
        })
    })
}

collective!(Neighbor_allgather / Ineighbor_allgather, ineighbor_allgather, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcount: Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!(Neighbor_allgatherv / Ineighbor_allgatherv, ineighbor_allgatherv, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcounts: *const Count, displs: *const Disp, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!(Neighbor_alltoall / Ineighbor_alltoall, ineighbor_alltoall, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcount: Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!(Neighbor_alltoallv / Ineighbor_alltoallv, ineighbor_alltoallv, comm,
    (sendbuf: *const c_void, sendcounts: *const Count, sdispls: *const Disp, sendtype: MPI_Datatype,
    recvbuf: *mut c_void, recvcounts: *const Count, rdispls: *const Disp, recvtype: MPI_Datatype,
    comm: MPI_Comm));
collective!(Neighbor_alltoallw / Ineighbor_alltoallw, ineighbor_alltoallw, comm,
    (sendbuf: *const c_void, sendcounts: *const Count, sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const Count,
    rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
