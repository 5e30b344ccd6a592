//! The lock-free primitives under OxMPI's runtime, apart so that loom can
//! check them: the protocol of the shared-memory SPSC rings ([`ring`]), the
//! protocol of the futex doorbells ([`doorbell`]) and the lock around the
//! progress engine ([`engine_lock`]).
//!
//! The runtime supplies what loom cannot see (the mapped segment behind a
//! ring, the `futex` system call behind a doorbell) through the thin traits
//! [`ring::Cells`] and [`doorbell::Futex`]; everything else is the code the
//! runtime runs. Built with `RUSTFLAGS="--cfg loom"`, the atomics, cells and
//! spin hints of [`atomic`] become loom's, and `tests/loom/main.rs` explores the
//! interleavings of that same code (run by `scripts/test.sh`, both tiers).

#![deny(missing_docs)]

pub mod atomic;
pub mod doorbell;
pub mod engine_lock;
pub mod ring;
