//! What a request handle stands for: the entries of the request table,
//! with the kinds of request they hold ([`super::pair`],
//! [`super::generalized`]); completing them is [`crate::requests`].

use std::ffi::c_int;
use std::sync::Arc;

use oxmpi::comm::PartitionedChannel;
use oxmpi::datatype::stage::Plan;
use oxmpi::request::Sweep;
use oxmpi::{Comm, Message, PendingComm, Request, Status};

use super::generalized::Grequest;
use super::launch::Launch;
use super::pair::Pair;
use crate::handles::{MPI_Comm, COMM_WORLD};

/// How a send is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// `MPI_Send` (also ready and, for persistent requests, buffered mode).
    Standard,
    /// `MPI_Ssend`: completes once matched.
    Synchronous,
}

/// The operation of a persistent request; buffers are kept as addresses.
#[derive(Debug, Clone)]
pub enum PersistentOp {
    /// `MPI_Send_init` and friends.
    Send {
        /// The buffer (a non-contiguous one is packed in flight at each start).
        plan: Plan,
        /// Destination rank.
        dest: c_int,
        /// Tag.
        tag: c_int,
        /// Mode.
        mode: SendMode,
    },
    /// `MPI_Recv_init`.
    Recv {
        /// The buffer (a non-contiguous one is unpacked in flight).
        plan: Plan,
        /// Source rank (or wildcard).
        source: c_int,
        /// Tag (or wildcard).
        tag: c_int,
    },
    /// `MPI_Psend_init`: every partition in one message, sent once all
    /// are marked ready (`MPI_Pready*`) after a start.
    PartitionedSend {
        /// Buffer address.
        buf: usize,
        /// Bytes to send.
        len: usize,
        /// Destination and tag, matched once.
        channel: PartitionedChannel,
        /// Which partitions are ready since the last start.
        ready: Vec<bool>,
        /// How many are not.
        left: usize,
    },
    /// `MPI_Precv_init`: received as one message.
    PartitionedRecv {
        /// Buffer address.
        buf: usize,
        /// Capacity in bytes.
        cap: usize,
        /// Source and tag, matched once.
        channel: PartitionedChannel,
        /// Number of partitions (for `MPI_Parrived`).
        partitions: usize,
    },
    /// `MPI_<Coll>_init`: the decoded collective.
    Coll(Arc<Launch>),
}

impl PersistentOp {
    /// Whether this is a partitioned operation.
    pub fn is_partitioned(&self) -> bool {
        matches!(
            self,
            PersistentOp::PartitionedSend { .. } | PersistentOp::PartitionedRecv { .. }
        )
    }
}

/// A persistent request.
pub struct Persistent {
    /// Its communicator.
    pub comm: Comm,
    /// What `MPI_Start` does.
    pub op: PersistentOp,
    /// Started and not yet completed.
    pub started: bool,
    /// The running operation (taken out while a thread waits on it).
    pub active: Option<Request<'static>>,
}

/// What a request handle stands for.
pub enum ReqEntry {
    /// A non-blocking operation; `None` while a waiting thread holds it.
    Active {
        /// The runtime request.
        req: Option<Request<'static>>,
        /// Its communicator's handle (errors are raised there).
        comm: MPI_Comm,
    },
    /// An operation that completed when it started (e.g. `MPI_Ibsend`).
    Ready {
        /// Its status.
        status: Status,
        /// Its communicator's handle.
        comm: MPI_Comm,
    },
    /// A persistent request (boxed: the entries the hot path moves stay small).
    Persistent {
        /// The request.
        p: Box<Persistent>,
        /// Its communicator's handle.
        comm: MPI_Comm,
    },
    /// A message from `MPI_Mprobe` / `MPI_Improbe`.
    Message {
        /// The message.
        msg: Message,
        /// Its communicator's handle.
        comm: MPI_Comm,
    },
    /// `MPI_Isendrecv` / `MPI_Isendrecv_replace`.
    Pair {
        /// The two operations.
        pair: Box<Pair>,
        /// Their communicator's handle.
        comm: MPI_Comm,
    },
    /// A generalized request (errors go to `MPI_COMM_WORLD`'s handler).
    Generalized(Grequest),
}

impl ReqEntry {
    /// The communicator handle its errors are raised on.
    pub fn comm(&self) -> MPI_Comm {
        match self {
            ReqEntry::Active { comm, .. }
            | ReqEntry::Ready { comm, .. }
            | ReqEntry::Persistent { comm, .. }
            | ReqEntry::Message { comm, .. }
            | ReqEntry::Pair { comm, .. } => *comm,
            ReqEntry::Generalized(_) => COMM_WORLD,
        }
    }

    /// Whether the operation has finished (or is inactive), without
    /// completing it (`MPI_Testall` completes none unless all are): a
    /// finished runtime request keeps its outcome for the completion.
    pub fn settled(&mut self, sweep: &mut Sweep<'_>) -> bool {
        match self {
            ReqEntry::Active { req: Some(r), .. } => sweep.settle(r),
            ReqEntry::Active { req: None, .. } => false,
            ReqEntry::Persistent { p, .. } => {
                !p.started || p.active.as_mut().is_some_and(|r| sweep.settle(r))
            }
            ReqEntry::Pair { pair, .. } => pair.settled(sweep),
            ReqEntry::Generalized(g) => g.complete,
            ReqEntry::Ready { .. } | ReqEntry::Message { .. } => true,
        }
    }
}

/// The communicator an `MPI_Comm_idup` makes: given a handle, written to
/// the program's `newcomm`, when its request completes.
pub struct PendingIdup {
    /// The communicator to take.
    pub pending: PendingComm,
    /// The program's `newcomm` (an address: written at completion).
    pub out: usize,
    /// The parent's handle (the new communicator gets its error handler).
    pub parent: MPI_Comm,
}
