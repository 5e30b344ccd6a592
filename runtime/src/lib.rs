//! OxMPI runtime: an MPI-compatible message-passing library.
//!
//! The crate is being built up issue by issue; see `docs/STATUS.md` for what
//! works today. The modules follow `docs/ARCHITECTURE.md`.
#![deny(missing_docs)]

pub mod bootstrap;
pub mod config;
pub mod error;
pub mod info;
pub mod mem;
pub mod p2p;
pub mod topology;
pub mod transport;

pub use error::Error;
