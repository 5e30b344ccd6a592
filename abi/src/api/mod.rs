//! The implemented MPI functions, as `oxabi_<Name>` symbols that the
//! generated `PMPI_<Name>` shims call: one folder per chapter of the MPI
//! 4.0 standard. Every function runs its body through
//! [`crate::raise::guard`].

pub mod coll;
pub mod comm;
pub mod datatype;
pub mod env;
pub mod gpu;
pub mod p2p;
pub mod topo;
