//! Persistent point-to-point requests: `MPI_Send_init` (every mode) and
//! `MPI_Recv_init`.

use std::ffi::{c_int, c_void};

use crate::api::p2p::{buf_plan, store_staged};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Datatype, MPI_Request, PROC_NULL};
use crate::objects::request::{Persistent, PersistentOp, ReqEntry, SendMode};
use crate::objects::stage::Stage;
use crate::raise::guard;
use crate::state;

/// Makes a persistent request (a partitioned operation's arguments were
/// checked when its channel was made).
///
/// # Safety
/// `request` is writable (checked here).
pub(crate) unsafe fn persistent(
    comm: MPI_Comm,
    op: PersistentOp,
    stage: Option<Stage>,
    request: *mut MPI_Request,
) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    let c = state::comm(comm)?;
    // Check the arguments now, as MPI_*_init does; MPI_Start repeats it.
    match &op {
        &PersistentOp::Send { dest, tag, .. } => {
            if !(0..=oxmpi::TAG_UB).contains(&tag) {
                return Err(oxmpi::Error::InvalidTag {
                    arg: "tag",
                    value: tag,
                    allows_any: false,
                }
                .into());
            }
            if dest != PROC_NULL && !(0..c.peer_count()).contains(&dest) {
                return Err(oxmpi::Error::InvalidRank {
                    arg: "dest",
                    value: dest,
                    size: c.peer_count(),
                }
                .into());
            }
        }
        &PersistentOp::Recv { source, tag, .. } => {
            if tag != handles::ANY_TAG && !(0..=oxmpi::TAG_UB).contains(&tag) {
                return Err(oxmpi::Error::InvalidTag {
                    arg: "tag",
                    value: tag,
                    allows_any: true,
                }
                .into());
            }
            if source != PROC_NULL
                && source != handles::ANY_SOURCE
                && !(0..c.peer_count()).contains(&source)
            {
                return Err(oxmpi::Error::InvalidRank {
                    arg: "source",
                    value: source,
                    size: c.peer_count(),
                }
                .into());
            }
        }
        PersistentOp::PartitionedSend { .. } | PersistentOp::PartitionedRecv { .. } => {}
        // Collectives are checked by their own decoding (`coll/persistent.rs`).
        PersistentOp::Coll(_) => {}
    }
    let p = Persistent {
        comm: c,
        op,
        started: false,
        active: None,
    };
    // SAFETY: checked non-null.
    unsafe {
        store_staged(
            out,
            ReqEntry::Persistent {
                p: Box::new(p),
                comm,
            },
            stage,
        )
    };
    Ok(())
}

macro_rules! send_init {
    ($(#[$doc:meta])* $name:ident, $mode:expr) => {
        large_count! {
            $(#[$doc])*
            ///
            /// # Safety
            /// `buf` holds `count` elements whenever the request is started;
            /// `request` is writable.
            $name(
                buf: *const c_void,
                count: Count,
                datatype: MPI_Datatype,
                dest: c_int,
                tag: c_int,
                comm: MPI_Comm,
                request: *mut MPI_Request,
            ) -> c_int {
                guard(NAME, ErrObj::Comm(comm), || {
                    let plan = buf_plan(buf, wide(count), datatype)?;
                    let op = PersistentOp::Send {
                        plan,
                        dest,
                        tag,
                        mode: $mode,
                    };
                    // SAFETY: the caller's contract.
                    unsafe { persistent(comm, op, None, request) }
                })
            }
        }
    };
}

send_init!(Send_init, SendMode::Standard);
send_init!(Ssend_init, SendMode::Synchronous);
send_init!(Rsend_init, SendMode::Standard);
send_init!(
    /// A standard-mode send each time it is started.
    Bsend_init,
    SendMode::Standard
);

large_count! {
    /// # Safety
    /// `buf` has room for `count` elements whenever the request is started;
    /// `request` is writable.
    Recv_init(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let count = wide(count);
        guard(NAME, ErrObj::Comm(comm), || {
            let plan = buf_plan(buf, count, datatype)?;
            let op = PersistentOp::Recv { plan, source, tag };
            // SAFETY: the caller's contract.
            unsafe { persistent(comm, op, None, request) }
        })
    }
}
