//! Collective operations, blocking, non-blocking and persistent, over the
//! runtime's raw-byte entry points (`Comm::i*_raw`), and reduction operations
//! (`MPI_Op_create`, `MPI_Reduce_local`).
//!
//! Every collective decodes and validates its arguments before starting
//! (communicator first, then root, datatypes, counts, buffers, operation) and
//! names the argument and its value in the error; the result is a
//! [`Launch`](crate::objects::launch::Launch).
//! Arguments MPI declares not significant on a rank (the receive side of a
//! gather away from the root, the send side of an `MPI_IN_PLACE` call) are not
//! looked at. `collective!` makes the three forms of each from its one decoding
//! function, each with its large-count (`_c`) form: the non-blocking one
//! starts the launch, the blocking one also waits, the persistent one
//! (`MPI_<Coll>_init`, see [`persistent`]) keeps it for `MPI_Start`.
//!
//! Datatypes: the predefined ones, as contiguous elements; built-in operations
//! run the kernels of the element type the datatype maps to (an operation the
//! type does not support is `MPI_ERR_OP`). Derived datatypes move as their
//! packed bytes (what point-to-point sends too): a contiguous one straight from
//! the program's buffer, any other packed into a temporary before the operation
//! and unpacked from it after ([`Stager`]; a non-blocking call keeps its
//! temporaries with the request, a persistent one packs and unpacks them at
//! every round). A reduction over a derived type reduces its packed basic
//! elements, so the type must be made of one predefined type underneath (a
//! vector of `MPI_DOUBLE` with `MPI_SUM` works; a struct of an int and a double
//! is `MPI_ERR_OP`). The `long double` types reduce through C's own
//! arithmetic (`long_double.rs` over `src/c/long_double.c`). A user
//! operation's function sees the program's layout: for a non-contiguous type
//! each piece is unpacked into temporaries of that layout around the call.
//!
//! A value-index pair type (`MPI_DOUBLE_INT`) moves as its extent when
//! predefined and as its packed size inside a derived type: ranks must not mix
//! the two forms in one collective.
//!
//! MPI 4.0 chapter 6, with the neighborhood collectives of section 8.6
//! ([`neighbor`]) and persistent collectives ([`persistent`]). Here: the
//! three forms; argument decoding in [`datatype`] and [`buffers`], the
//! operations in [`ops`], one decoder per collective in [`reductions`],
//! [`gathers`] and [`exchanges`].

pub mod buffers;
pub mod datatype;
pub mod exchanges;
mod fast;
pub mod gathers;
pub(crate) mod long_double;
pub mod neighbor;
pub mod ops;
pub mod persistent;
pub mod reductions;
#[cfg(test)]
mod tests;

use std::ffi::{c_int, c_void};

use crate::api::coll::buffers::Stager;
use crate::api::coll::exchanges::{
    ialltoall, ialltoallv, ialltoallw, ireduce_scatter, ireduce_scatter_block,
};
use crate::api::coll::gathers::{iallgather, iallgatherv, igather, igatherv, iscatter, iscatterv};
use crate::api::coll::reductions::{
    iallreduce, ibarrier, ibcast, iexscan, ireduce, iscan, Ran, Started,
};
use crate::api::p2p::store_staged;
use crate::errors::{out_ptr, AbiError};
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use crate::objects::request::ReqEntry;

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
/// [`Started`]), the three forms of collective `MPI_X`: `oxabi_X` (start
/// and wait), `oxabi_IX` (start, hand back a request) and `oxabi_X_init`
/// (a persistent request, see [`crate::api::coll::persistent`]), each in
/// the classic and the large-count (`_c`) form from the one parameter list
/// (`Count` and `Disp` in it: `c_int` and `c_int` in the first,
/// `MPI_Count` and `MPI_Aint` in the second); `int_only` for a collective
/// without counts. Used for the neighborhood collectives
/// too.
///
/// With `fast = F`, the blocking function first offers its arguments to
/// `F` (same parameters after the MPI name), which handles the common case
/// or returns `None` (see `fast.rs`); with `ifast = G` too, the
/// non-blocking one offers them (and `request`) to `G` likewise.
macro_rules! collective {
    ($name:ident / $iname:ident, $start:path, $comm:ident, ($($p:ident: $t:ty),*),
     fast = $fast:path, ifast = $ifast:path) => {
        $crate::api::coll::collective!(@both $name, $iname, $start, $comm, ($($p: $t),*), {
            // SAFETY: the caller's contract, forwarded.
            if let Some(rc) = unsafe { $fast(NAME, $($p),*) } {
                return rc;
            }
        }, request, {
            // SAFETY: the caller's contract, forwarded.
            if let Some(rc) = unsafe { $ifast(NAME, $($p,)* request) } {
                return rc;
            }
        });
    };
    ($name:ident / $iname:ident, $start:path, $comm:ident, ($($p:ident: $t:ty),*),
     fast = $fast:path) => {
        $crate::api::coll::collective!(@both $name, $iname, $start, $comm, ($($p: $t),*), {
            // SAFETY: the caller's contract, forwarded.
            if let Some(rc) = unsafe { $fast(NAME, $($p),*) } {
                return rc;
            }
        }, request, {});
    };
    ($name:ident / $iname:ident, $start:path, $comm:ident, ($($p:ident: $t:ty),*)) => {
        $crate::api::coll::collective!(@both $name, $iname, $start, $comm, ($($p: $t),*), {}, request, {});
    };
    (int_only $name:ident / $iname:ident, $start:path, $comm:ident, ($($p:ident: $t:ty),*)) => {
        const _: () = {
            $crate::api::coll::collective!(@forms "", $name, $iname, $start, $comm,
                ($($p: $t),*), {}, request, {});
        };
    };
    (@both $name:ident, $iname:ident, $start:path, $comm:ident, ($($p:ident: $t:ty),*),
     $fast_path:block, $req:ident, $ifast_path:block) => {
        const _: () = {
            #[allow(unused)]
            type Count = ::std::ffi::c_int;
            #[allow(unused)]
            type Disp = ::std::ffi::c_int;
            $crate::api::coll::collective!(@forms "", $name, $iname, $start, $comm,
                ($($p: $t),*), $fast_path, $req, $ifast_path);
        };
        const _: () = {
            #[allow(unused)]
            type Count = $crate::handles::MPI_Count;
            #[allow(unused)]
            type Disp = $crate::handles::MPI_Aint;
            $crate::api::coll::collective!(@forms "_c", $name, $iname, $start, $comm,
                ($($p: $t),*), $fast_path, $req, $ifast_path);
        };
    };
    (@forms $sfx:literal, $name:ident, $iname:ident, $start:path, $comm:ident,
     ($($p:ident: $t:ty),*), $fast_path:block, $req:ident, $ifast_path:block) => {
        #[doc = concat!("`MPI_", stringify!($name), $sfx, "`.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments.
        #[export_name = concat!("oxabi_", stringify!($name), $sfx)]
        pub unsafe extern "C" fn blocking_form($($p: $t),*) -> ::std::ffi::c_int {
            const NAME: &str = concat!("MPI_", stringify!($name), $sfx);
            // Tags of its own kind: a blocking collective never matches a
            // non-blocking one (see the runtime's coll/tag.rs).
            let _blocking = ::oxmpi::coll::BlockingCall::enter();
            $fast_path
            $crate::raise::guard(NAME, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                $crate::api::coll::blocking(|sg| unsafe { $start(sg, $($p),*) })
            })
        }

        #[doc = concat!("`MPI_", stringify!($iname), $sfx, "`.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments;
        /// buffers stay valid until the request completes; `request` is
        /// writable.
        #[export_name = concat!("oxabi_", stringify!($iname), $sfx)]
        pub unsafe extern "C" fn nonblocking_form(
            $($p: $t,)*
            $req: *mut $crate::handles::MPI_Request,
        ) -> ::std::ffi::c_int {
            const NAME: &str = concat!("MPI_", stringify!($iname), $sfx);
            $ifast_path
            $crate::raise::guard(NAME, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                unsafe {
                    $crate::api::coll::nonblocking($comm, $req, |sg| $start(sg, $($p),*))
                }
            })
        }

        #[doc = concat!("`MPI_", stringify!($name), "_init", $sfx,
                        "`: a persistent request that `MPI_Start` launches as `MPI_",
                        stringify!($iname), "` with these arguments.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments
        /// whenever the request is started, until it is freed; `request`
        /// is writable.
        #[export_name = concat!("oxabi_", stringify!($name), "_init", $sfx)]
        pub unsafe extern "C" fn persistent_form(
            $($p: $t,)*
            info: $crate::handles::MPI_Info,
            request: *mut $crate::handles::MPI_Request,
        ) -> ::std::ffi::c_int {
            const NAME: &str =
                concat!("MPI_", stringify!($name), "_init", $sfx);
            $crate::raise::guard(NAME, $crate::errors::ErrObj::Comm($comm), || {
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

collective!(int_only Barrier / Ibarrier, ibarrier, comm, (comm: MPI_Comm));
collective!(Bcast / Ibcast, ibcast, comm,
    (buffer: *mut c_void, count: Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm),
    fast = fast::bcast, ifast = fast::ibcast);
collective!(Reduce / Ireduce, ireduce, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: Count, datatype: MPI_Datatype, op: MPI_Op,
    root: c_int, comm: MPI_Comm), fast = fast::reduce);
collective!(Allreduce / Iallreduce, iallreduce, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: Count, datatype: MPI_Datatype, op: MPI_Op,
    comm: MPI_Comm), fast = fast::allreduce, ifast = fast::iallreduce);
collective!(Scan / Iscan, iscan, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: Count, datatype: MPI_Datatype, op: MPI_Op,
    comm: MPI_Comm));
collective!(Exscan / Iexscan, iexscan, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: Count, datatype: MPI_Datatype, op: MPI_Op,
    comm: MPI_Comm));
collective!(Gather / Igather, igather, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcount: Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!(Gatherv / Igatherv, igatherv, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcounts: *const Count, displs: *const Disp, recvtype: MPI_Datatype, root: c_int,
    comm: MPI_Comm));
collective!(Scatter / Iscatter, iscatter, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcount: Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!(Scatterv / Iscatterv, iscatterv, comm,
    (sendbuf: *const c_void, sendcounts: *const Count, displs: *const Disp, sendtype: MPI_Datatype,
    recvbuf: *mut c_void, recvcount: Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!(Allgather / Iallgather, iallgather, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcount: Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!(Allgatherv / Iallgatherv, iallgatherv, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcounts: *const Count, displs: *const Disp, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!(Alltoall / Ialltoall, ialltoall, comm,
    (sendbuf: *const c_void, sendcount: Count, sendtype: MPI_Datatype, recvbuf: *mut c_void,
    recvcount: Count, recvtype: MPI_Datatype, comm: MPI_Comm),
    fast = fast::alltoall, ifast = fast::ialltoall);
collective!(Alltoallv / Ialltoallv, ialltoallv, comm,
    (sendbuf: *const c_void, sendcounts: *const Count, sdispls: *const Disp, sendtype: MPI_Datatype,
    recvbuf: *mut c_void, recvcounts: *const Count, rdispls: *const Disp, recvtype: MPI_Datatype,
    comm: MPI_Comm));
collective!(Alltoallw / Ialltoallw, ialltoallw, comm,
    (sendbuf: *const c_void, sendcounts: *const Count, sdispls: *const Disp,
    sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const Count,
    rdispls: *const Disp, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
collective!(Reduce_scatter / Ireduce_scatter, ireduce_scatter, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const Count, datatype: MPI_Datatype,
    op: MPI_Op, comm: MPI_Comm));
collective!(Reduce_scatter_block / Ireduce_scatter_block, ireduce_scatter_block, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: Count, datatype: MPI_Datatype,
    op: MPI_Op, comm: MPI_Comm),
    fast = fast::reduce_scatter_block, ifast = fast::ireduce_scatter_block);
