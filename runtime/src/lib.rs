//! OxMPI runtime: an MPI-compatible message-passing library.
//!
//! The crate is being built up issue by issue; see `docs/STATUS.md` for what
//! works today. The modules follow `docs/ARCHITECTURE.md`.
#![deny(missing_docs)]

pub mod bootstrap;
pub mod buffer;
pub mod coll;
pub mod comm;
pub mod config;
pub mod datatype;
pub mod dynamic;
pub mod error;
mod fast_hash;
pub mod group;
pub mod info;
pub mod io;
#[cfg(test)]
mod layer_check;
pub mod machine;
pub mod mem;
pub mod ops;
pub mod p2p;
pub(crate) mod progress;
pub mod request;
pub mod rma;
pub mod status;
pub mod topo;
pub mod transport;
pub mod universe;

pub use buffer::Scalar;
pub use coll::intercomm::ROOT;
pub use coll::Blocks;
pub use comm::{
    AttrValue, Comm, CommId, CopyPolicy, Keyval, Message, PendingComm, Persistent, SplitType,
    UNDEFINED,
};
pub use error::{Error, ErrorClass};
pub use group::{Comparison, Group};
pub use request::{test_all, test_any, test_some, wait_all, wait_any, wait_some, Request};
pub use status::{Status, ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};
pub use topo::{dims_create, Topology};
pub use universe::{
    finalized, init, init_thread, initialized, processor_name, wtick, wtime, Threading, Universe,
};
