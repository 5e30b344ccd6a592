//! Model checks with loom: every interleaving of the runtime's own protocol
//! code (built against loom's atomics, cells and spin hints), up to a
//! preemption bound.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p oxmpi-sync --release --test loom
//! ```
//!
//! `LOOM_MAX_PREEMPTIONS` overrides the bound (default [`PREEMPTIONS`]).
#![cfg(loom)]

mod doorbell;
mod engine_lock;
mod ring;
mod room;

/// Preemptions per execution that loom explores: the bugs these models
/// look for (a missing Acquire or Release, a lost wake-up) need one or two,
/// and each more multiplies the run time.
const PREEMPTIONS: usize = 3;

/// Runs `f` under loom with this suite's bound.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(PREEMPTIONS);
    builder.check(f);
}
