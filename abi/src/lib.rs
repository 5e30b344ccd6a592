//! OxMPI C ABI: the MPICH-compatible `libmpi.so.12` front end (work in progress).
#![deny(missing_docs)]
