//! MPI-IO through the Rust API of `oxmpi::io`, ranks under oxrun (see
//! comm_communicators.rs for how the ranks run): two-phase aggregation
//! makes a block-cyclic collective write one `pwrite` per aggregator, and
//! a collective read one `pread` per aggregator, where independent
//! writes take one per block (and an independent read sieves the blocks
//! into one `pread`).

#[allow(dead_code)]
mod comm;
#[path = "io/two_phase.rs"]
mod two_phase;

use std::time::Duration;

use oxmpi_tests::{oxrun, role_job, ScratchDir};

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        two_phase::run(&role);
    }
}

fn check(ns: &[usize], role: &str) {
    for &n in ns {
        let dir = ScratchDir::new();
        let env = [("OXMPI_TEST_DIR", dir.path().as_os_str())];
        let out = role_job(&oxrun(), n, role, &env, Duration::from_secs(180));
        assert!(out.success(), "{role} at {n} ranks:\n{}", out.describe());
    }
}

#[test]
fn collective_cyclic_writes_and_reads_are_one_access_per_aggregator() {
    check(&[1, 2, 3, 4], "two_phase");
}
