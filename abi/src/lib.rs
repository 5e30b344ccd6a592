//! OxMPI's C ABI: `libmpi.so.12`, binary-compatible with MPICH 4.0.2, so
//! programs compiled against MPICH (or Intel MPI, MVAPICH) run on OxMPI
//! unmodified.
//!
//! # How it is built
//!
//! `functions.tsv` lists every MPI function MPICH exports (619), with its C
//! signature and whether it is implemented. `build.rs` generates from it
//! the prototypes in `include/mpi.h` and a C file where every `PMPI_X` is a
//! strong function and `MPI_X` a weak alias of it (the profiling
//! interface). Implemented functions forward to `oxabi_X` in [`api`]; the
//! others call [`raise::oxabi_unsupported`], which raises
//! `MPI_ERR_UNSUPPORTED_OPERATION` naming the function. Implementing one
//! more function is: write `oxabi_X`, set its row's `impl` to `rust`.
//!
//! # Layout
//!
//! In layers, each importing only those below it:
//!
//! - [`api`]: the `oxabi_*` functions, one folder per MPI chapter;
//! - [`requests`]: request completion;
//! - [`raise`]: raising errors through handlers, the panic-catching guard;
//! - [`state`]: the runtime and the tables behind direct handles;
//! - [`objects`]: what those tables hold, as data;
//! - [`handles`]: the MPICH handle encodings and `MPI_Status` (the one
//!   place that knows bit layouts);
//! - [`errors`]: error classes, codes and their messages.
#![deny(missing_docs)]

pub mod api;
pub mod errors;
pub mod handles;
pub mod objects;
pub mod raise;
pub mod requests;
pub mod state;

/// The function table as data.
pub mod table {
    include!(concat!(env!("OUT_DIR"), "/table.rs"));
}
