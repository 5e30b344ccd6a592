//! Persistent collectives (`MPI_<Coll>_init` and `_init_c`, MPI 4.0
//! section 6.13), for every collective and neighborhood collective: the
//! functions themselves are generated with the blocking and non-blocking
//! forms by `collective!` (`coll/mod.rs`), from the same decoding.
//!
//! Initialization decodes and checks the arguments exactly as the
//! non-blocking call does (so errors are reported by `MPI_*_init`) and
//! reserves the collective's tags; the request is inactive. `MPI_Start` /
//! `MPI_Startall` pack the send data of non-contiguous datatypes and start
//! the non-blocking collective with the saved arguments
//! ([`crate::requests::start`]); the wait and test family completes it
//! (unpacking what arrived) and leaves it inactive, ready to start again;
//! `MPI_Request_free` frees it. Info hints are checked and ignored.

use std::sync::Arc;

use crate::api::coll::buffers::Stager;
use crate::api::coll::reductions::Started;
use crate::api::env::info::check_hints;
use crate::api::p2p::store_staged;
use crate::errors::{out_ptr, AbiError};
use crate::handles::{MPI_Comm, MPI_Info, MPI_Request};
use crate::objects::request::{Persistent, PersistentOp, ReqEntry};

/// The body of `MPI_<Coll>_init`: decodes the arguments with `decode` and
/// stores an inactive persistent request in `*request`.
///
/// # Safety
/// `request` is writable; the buffers `decode` names stay valid whenever
/// the request is started, until it is freed.
pub(crate) unsafe fn init(
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
    decode: impl FnOnce(&mut Stager) -> Started,
) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    let mut sg = Stager::default();
    let l = decode(&mut sg)?.persistent();
    check_hints(info)?;
    let p = Persistent {
        comm: l.comm().clone(),
        op: PersistentOp::Coll(Arc::new(l)),
        started: false,
        active: None,
    };
    let entry = ReqEntry::Persistent {
        p: Box::new(p),
        comm,
    };
    // SAFETY: checked non-null.
    unsafe { store_staged(out, entry, sg.into_persistent_stage()) };
    Ok(())
}
