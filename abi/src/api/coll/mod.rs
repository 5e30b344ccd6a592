//! Collective operations, blocking, non-blocking and persistent, over the
//! runtime's raw-byte entry points (`Comm::i*_raw`), and reduction
//! operations (`MPI_Op_create`, `MPI_Reduce_local`).
//!
//! Every collective decodes and validates its arguments before starting
//! (communicator first, then root, datatypes, counts, buffers, operation)
//! and names the argument and its value in the error; the result is a
//! [`Launch`]. Arguments MPI declares not significant on a rank (the
//! receive side of a gather away from the root, the send side of an
//! `MPI_IN_PLACE` call) are not looked at. `collective!` makes the three
//! forms of each from its one decoding function: the non-blocking one
//! starts the launch, the blocking one also waits, the persistent one
//! (`MPI_<Coll>_init`, see `persistent_coll.rs`) keeps it for `MPI_Start`.
//!
//! Datatypes: the predefined ones, as contiguous elements; built-in
//! operations run the kernels of the element type the datatype maps to
//! (an operation the type does not support is `MPI_ERR_OP`). Derived
//! datatypes move as their packed bytes (what point-to-point sends too):
//! a contiguous one straight from the program's buffer, any other packed
//! into a temporary before the operation and unpacked from it after
//! ([`Stager`]; a non-blocking call keeps its temporaries with the
//! request, a persistent one packs and unpacks them at every round). A reduction over a derived type reduces its packed basic
//! elements, so the type must be made of one predefined type underneath
//! (a vector of `MPI_DOUBLE` with `MPI_SUM` works; a struct of an int and
//! a double is `MPI_ERR_OP`). User operations get derived types only when
//! contiguous (their function sees the program's layout).
//!
//! A value-index pair type (`MPI_DOUBLE_INT`) moves as its extent when
//! predefined and as its packed size inside a derived type: ranks must not
//! mix the two forms in one collective.
//!
//! MPI 4.0 chapter 6, with the neighborhood collectives of section 8.6
//! ([`neighbor`]) and persistent collectives ([`persistent`]).

pub mod buffers;
pub mod datatype;
pub mod exchanges;
mod fast;
pub mod gathers;
pub mod neighbor;
pub mod ops;
pub mod persistent;
pub mod reductions;
#[cfg(test)]
mod tests;

use crate::api::coll::buffers::Stager;
use crate::api::coll::exchanges::ialltoall;
use crate::api::coll::exchanges::ialltoallv;
use crate::api::coll::exchanges::ialltoallw;
use crate::api::coll::exchanges::ireduce_scatter;
use crate::api::coll::exchanges::ireduce_scatter_block;
use crate::api::coll::gathers::iallgather;
use crate::api::coll::gathers::iallgatherv;
use crate::api::coll::gathers::igather;
use crate::api::coll::gathers::igatherv;
use crate::api::coll::gathers::iscatter;
use crate::api::coll::gathers::iscatterv;
use crate::api::coll::reductions::iallreduce;
use crate::api::coll::reductions::ibarrier;
use crate::api::coll::reductions::ibcast;
use crate::api::coll::reductions::iexscan;
use crate::api::coll::reductions::ireduce;
use crate::api::coll::reductions::iscan;
use crate::api::coll::reductions::Ran;
use crate::api::coll::reductions::Started;
use crate::api::p2p::store_staged;
use crate::errors::{out_ptr, AbiError};
use crate::handles::{MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Op, MPI_Request};
use crate::objects::request::ReqEntry;
pub use oxmpi::datatype::stage::Dir;
use std::ffi::{c_int, c_void};

/// The body of a blocking collective: decodes the arguments with
/// `decode`, which runs it ([`Ran`]: packs, runs, unpacks what arrived).
pub(crate) fn blocking(
    decode: impl FnOnce(&mut Stager) -> Result<Ran, AbiError>,
) -> Result<(), AbiError> {
    decode(&mut Stager::default()).map(|Ran| ())
}

/// The body of a non-blocking collective: decodes the arguments with
/// `decode`, starts, and hands back a request (keeping the temporaries
/// with it; its completion unpacks them).
///
/// # Safety
/// The buffers stay valid until the request completes; `request` is
/// writable.
pub(crate) unsafe fn nonblocking(
    comm: MPI_Comm,
    request: *mut MPI_Request,
    decode: impl FnOnce(&mut Stager) -> Started,
) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    let mut sg = Stager::default();
    let l = decode(&mut sg)?;
    // SAFETY: the caller's contract.
    let req = unsafe { sg.start(&l) }?;
    let entry = ReqEntry::Active {
        req: Some(req),
        comm,
    };
    // SAFETY: checked non-null.
    unsafe { store_staged(out, entry, sg.into_stage()) };
    Ok(())
}

/// Defines, from a decode function `$start` taking X's parameters (see
/// [`Started`]): `oxabi_X` (start and wait), `oxabi_IX` (start, hand back
/// a request) and `oxabi_X_init` (a persistent request, see
/// [`crate::api::coll::persistent`]). Used for the neighborhood collectives too.
///
/// With `fast = F`, the blocking function first offers its arguments to
/// `F` (same parameters after the MPI name), which handles the common case
/// or returns `None` (see `coll_fast.rs`).
macro_rules! collective {
    ($name:literal, $iname:literal, $initname:literal, $f:ident, $if:ident, $initf:ident,
     $start:path, $comm:ident, ($($p:ident: $t:ty),*), fast = $fast:path) => {
        $crate::api::coll::collective!(@emit $name, $iname, $initname, $f, $if, $initf, $start,
            $comm, ($($p: $t),*), {
                // SAFETY: the caller's contract, forwarded.
                if let Some(rc) = unsafe { $fast($name, $($p),*) } {
                    return rc;
                }
            });
    };
    ($name:literal, $iname:literal, $initname:literal, $f:ident, $if:ident, $initf:ident,
     $start:path, $comm:ident, ($($p:ident: $t:ty),*)) => {
        $crate::api::coll::collective!(@emit $name, $iname, $initname, $f, $if, $initf, $start,
            $comm, ($($p: $t),*), {});
    };
    (@emit $name:literal, $iname:literal, $initname:literal, $f:ident, $if:ident, $initf:ident,
     $start:path, $comm:ident, ($($p:ident: $t:ty),*), $fast_path:block) => {
        #[doc = concat!("`", $name, "`.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $f($($p: $t),*) -> ::std::ffi::c_int {
            $fast_path
            $crate::raise::guard($name, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                $crate::api::coll::blocking(|sg| unsafe { $start(sg, $($p),*) })
            })
        }

        #[doc = concat!("`", $iname, "`.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments;
        /// buffers stay valid until the request completes; `request` is
        /// writable.
        #[no_mangle]
        pub unsafe extern "C" fn $if(
            $($p: $t,)*
            request: *mut $crate::handles::MPI_Request,
        ) -> ::std::ffi::c_int {
            $crate::raise::guard($iname, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                unsafe {
                    $crate::api::coll::nonblocking($comm, request, |sg| $start(sg, $($p),*))
                }
            })
        }

        #[doc = concat!("`", $initname, "`: a persistent request that `MPI_Start` launches as `",
                        $iname, "` with these arguments.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments
        /// whenever the request is started, until it is freed; `request`
        /// is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $initf(
            $($p: $t,)*
            info: $crate::handles::MPI_Info,
            request: *mut $crate::handles::MPI_Request,
        ) -> ::std::ffi::c_int {
            $crate::raise::guard($initname, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                unsafe {
                    $crate::api::coll::persistent::init($comm, info, request, |sg| {
                        $start(sg, $($p),*)
                    })
                }
            })
        }
    };
}
pub(crate) use collective;

collective!("MPI_Barrier", "MPI_Ibarrier", "MPI_Barrier_init", oxabi_Barrier, oxabi_Ibarrier, oxabi_Barrier_init, ibarrier, comm,
    (comm: MPI_Comm));
collective!("MPI_Bcast", "MPI_Ibcast", "MPI_Bcast_init", oxabi_Bcast, oxabi_Ibcast, oxabi_Bcast_init, ibcast, comm,
    (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Reduce", "MPI_Ireduce", "MPI_Reduce_init", oxabi_Reduce, oxabi_Ireduce, oxabi_Reduce_init, ireduce, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, root: c_int, comm: MPI_Comm));
collective!("MPI_Allreduce", "MPI_Iallreduce", "MPI_Allreduce_init", oxabi_Allreduce, oxabi_Iallreduce, oxabi_Allreduce_init, iallreduce,
    comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm), fast = fast::allreduce);
collective!("MPI_Scan", "MPI_Iscan", "MPI_Scan_init", oxabi_Scan, oxabi_Iscan, oxabi_Scan_init, iscan, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Exscan", "MPI_Iexscan", "MPI_Exscan_init", oxabi_Exscan, oxabi_Iexscan, oxabi_Exscan_init, iexscan, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Gather", "MPI_Igather", "MPI_Gather_init", oxabi_Gather, oxabi_Igather, oxabi_Gather_init, igather, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Gatherv", "MPI_Igatherv", "MPI_Gatherv_init", oxabi_Gatherv, oxabi_Igatherv, oxabi_Gatherv_init, igatherv, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int,
     comm: MPI_Comm));
collective!("MPI_Scatter", "MPI_Iscatter", "MPI_Scatter_init", oxabi_Scatter, oxabi_Iscatter, oxabi_Scatter_init, iscatter, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Scatterv", "MPI_Iscatterv", "MPI_Scatterv_init", oxabi_Scatterv, oxabi_Iscatterv, oxabi_Scatterv_init, iscatterv, comm,
    (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int,
     sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype,
     root: c_int, comm: MPI_Comm));
collective!("MPI_Allgather", "MPI_Iallgather", "MPI_Allgather_init", oxabi_Allgather, oxabi_Iallgather, oxabi_Allgather_init, iallgather,
    comm, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype,
     recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Allgatherv", "MPI_Iallgatherv", "MPI_Allgatherv_init", oxabi_Allgatherv, oxabi_Iallgatherv, oxabi_Allgatherv_init,
    iallgatherv, comm, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype,
     recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int,
     recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoall", "MPI_Ialltoall", "MPI_Alltoall_init", oxabi_Alltoall, oxabi_Ialltoall, oxabi_Alltoall_init, ialltoall, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallv", "MPI_Ialltoallv", "MPI_Alltoallv_init", oxabi_Alltoallv, oxabi_Ialltoallv, oxabi_Alltoallv_init, ialltoallv,
    comm, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int,
     sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int,
     rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw_init", oxabi_Alltoallw, oxabi_Ialltoallw, oxabi_Alltoallw_init, ialltoallw,
    comm, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int,
     sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int,
     rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Reduce_scatter", "MPI_Ireduce_scatter", "MPI_Reduce_scatter_init", oxabi_Reduce_scatter, oxabi_Ireduce_scatter, oxabi_Reduce_scatter_init, ireduce_scatter, comm, (sendbuf: *const c_void,
     recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op,
     comm: MPI_Comm));
collective!("MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", "MPI_Reduce_scatter_block_init", oxabi_Reduce_scatter_block, oxabi_Ireduce_scatter_block, oxabi_Reduce_scatter_block_init, ireduce_scatter_block, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm));

// The large-count (`_c`) forms: `MPI_Count` counts, `MPI_Aint` displacements.
collective!("MPI_Bcast_c", "MPI_Ibcast_c", "MPI_Bcast_init_c", oxabi_Bcast_c, oxabi_Ibcast_c, oxabi_Bcast_init_c, ibcast, comm, (buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Reduce_c", "MPI_Ireduce_c", "MPI_Reduce_init_c", oxabi_Reduce_c, oxabi_Ireduce_c, oxabi_Reduce_init_c, ireduce, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm));
collective!("MPI_Allreduce_c", "MPI_Iallreduce_c", "MPI_Allreduce_init_c", oxabi_Allreduce_c, oxabi_Iallreduce_c, oxabi_Allreduce_init_c, iallreduce, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm), fast = fast::allreduce);
collective!("MPI_Scan_c", "MPI_Iscan_c", "MPI_Scan_init_c", oxabi_Scan_c, oxabi_Iscan_c, oxabi_Scan_init_c, iscan, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Exscan_c", "MPI_Iexscan_c", "MPI_Exscan_init_c", oxabi_Exscan_c, oxabi_Iexscan_c, oxabi_Exscan_init_c, iexscan, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Gather_c", "MPI_Igather_c", "MPI_Gather_init_c", oxabi_Gather_c, oxabi_Igather_c, oxabi_Gather_init_c, igather, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Gatherv_c", "MPI_Igatherv_c", "MPI_Gatherv_init_c", oxabi_Gatherv_c, oxabi_Igatherv_c, oxabi_Gatherv_init_c, igatherv, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Scatter_c", "MPI_Iscatter_c", "MPI_Scatter_init_c", oxabi_Scatter_c, oxabi_Iscatter_c, oxabi_Scatter_init_c, iscatter, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Scatterv_c", "MPI_Iscatterv_c", "MPI_Scatterv_init_c", oxabi_Scatterv_c, oxabi_Iscatterv_c, oxabi_Scatterv_init_c, iscatterv, comm, (sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Allgather_c", "MPI_Iallgather_c", "MPI_Allgather_init_c", oxabi_Allgather_c, oxabi_Iallgather_c, oxabi_Allgather_init_c, iallgather, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Allgatherv_c", "MPI_Iallgatherv_c", "MPI_Allgatherv_init_c", oxabi_Allgatherv_c, oxabi_Iallgatherv_c, oxabi_Allgatherv_init_c, iallgatherv, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoall_c", "MPI_Ialltoall_c", "MPI_Alltoall_init_c", oxabi_Alltoall_c, oxabi_Ialltoall_c, oxabi_Alltoall_init_c, ialltoall, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallv_c", "MPI_Ialltoallv_c", "MPI_Alltoallv_init_c", oxabi_Alltoallv_c, oxabi_Ialltoallv_c, oxabi_Alltoallv_init_c, ialltoallv, comm, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallw_c", "MPI_Ialltoallw_c", "MPI_Alltoallw_init_c", oxabi_Alltoallw_c, oxabi_Ialltoallw_c, oxabi_Alltoallw_init_c, ialltoallw, comm, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Reduce_scatter_c", "MPI_Ireduce_scatter_c", "MPI_Reduce_scatter_init_c", oxabi_Reduce_scatter_c, oxabi_Ireduce_scatter_c, oxabi_Reduce_scatter_init_c, ireduce_scatter, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Reduce_scatter_block_c", "MPI_Ireduce_scatter_block_c", "MPI_Reduce_scatter_block_init_c", oxabi_Reduce_scatter_block_c, oxabi_Ireduce_scatter_block_c, oxabi_Reduce_scatter_block_init_c, ireduce_scatter_block, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
