//! The implemented MPI functions, as `oxabi_<Name>` symbols that the
//! generated `PMPI_<Name>` shims call (one module per function group).
//! Every function runs its body through [`crate::raise::guard`].

pub mod attr;
pub mod coll;
pub mod comm;
pub mod completion;
pub mod datatype;
pub mod datatype_ext;
pub mod datatype_p2p;
pub mod datatype_query;
pub mod env;
pub mod errh;
pub mod gpu;
pub mod graph;
pub mod grequest;
pub mod group;
pub mod info;
pub mod isendrecv;
pub mod neighbor;
pub mod p2p;
pub mod partitioned;
pub mod persistent_coll;
pub mod status;
pub mod topo;
pub mod type_attr;
