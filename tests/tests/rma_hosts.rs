//! One-sided communication across hosts: windows whose ranks are on
//! network-namespace test hosts (see `oxmpi_tests::hosts`) in 1+1, 2+2
//! (by slot and by node) and 2+1 layouts, so that every role has origins
//! and targets on the same host and on the other: the Rust roles of
//! `multihost/rma.rs`, and MPICH-built C programs on OxMPI's library.
//!
//! Needs root for the namespaces: without it every test here prints why it
//! is skipped (never silently).

#[path = "c_abi_harness/mod.rs"]
mod harness;
#[path = "multihost/rma.rs"]
mod rma_roles;

use std::process::Command;
use std::time::Duration;

use oxmpi_tests::hosts::TestHosts;
use oxmpi_tests::{oxrun, role_job_on, run_command};

const LIMIT: Duration = Duration::from_secs(180);

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    let Ok(role) = std::env::var("OXMPI_TEST_ROLE") else {
        return;
    };
    rma_roles::run(&role);
}

/// The test hosts, or None (with the reason printed) when they cannot be
/// made here.
fn hosts(test: &str) -> Option<TestHosts> {
    if let Some(why) = oxmpi_tests::hosts::unavailable() {
        eprintln!("SKIPPED {test}: {why}");
        return None;
    }
    Some(TestHosts::new(2).unwrap_or_else(|e| panic!("cannot build the test hosts: {e}")))
}

/// Ranks per host, oxrun's placement flags, and a name.
const LAYOUTS: &[(&[usize], &[&str], &str)] = &[
    (&[1, 1], &[], "1+1"),
    (&[2, 2], &[], "2+2 by slot"),
    (&[2, 2], &["--map-by", "node"], "2+2 by node"),
    (&[2, 1], &["--map-by", "node"], "2+1 by node"),
];

fn run_roles(test: &str, roles: &[&str]) {
    let Some(h) = hosts(test) else { return };
    for (ranks, extra, name) in LAYOUTS {
        for role in roles {
            let out = role_job_on(&h, ranks, extra, role, &[], LIMIT);
            assert!(
                out.success(),
                "rma role {role} on {name}:\n{}",
                out.describe()
            );
        }
    }
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

#[test]
fn every_flavor_with_derived_datatypes_under_fence_across_hosts() {
    run_roles(
        "every_flavor_with_derived_datatypes_under_fence_across_hosts",
        &["flavors"],
    );
}

#[test]
fn atomics_are_exact_counters_across_hosts() {
    run_roles(
        "atomics_are_exact_counters_across_hosts",
        &["counter", "accumulate"],
    );
}

#[test]
fn post_start_complete_wait_across_hosts() {
    run_roles("post_start_complete_wait_across_hosts", &["pscw"]);
}

#[test]
fn a_target_computing_without_mpi_serves_remote_origins() {
    run_roles(
        "a_target_computing_without_mpi_serves_remote_origins",
        &["busy"],
    );
}

#[test]
fn rma_errors_across_hosts_are_typed() {
    run_roles("rma_errors_across_hosts_are_typed", &["errors"]);
}

/// A rank that dies holding an exclusive lock on a rank of the other host,
/// while the rest wait for that lock (locally and by requests): the job
/// ends with the launcher's line naming the dead rank, never a hang.
#[test]
fn a_rank_dying_with_a_lock_held_ends_the_job() {
    let Some(h) = hosts("a_rank_dying_with_a_lock_held_ends_the_job") else {
        return;
    };
    for (ranks, extra, name) in LAYOUTS {
        let out = role_job_on(&h, ranks, extra, "dies", &[], LIMIT);
        assert!(
            !out.success() && !out.timed_out,
            "on {name}, the job should end by the failure:\n{}",
            out.describe()
        );
        assert!(
            out.stderr.lines().any(|l| l.starts_with("oxrun: rank 1 ")),
            "on {name}, no line names rank 1:\n{}",
            out.describe()
        );
    }
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

/// MPICH-built C programs using one-sided communication, on OxMPI's
/// library across hosts: `rma_hosts.c` (every flavor, operation and
/// synchronization mode, with derived datatypes, counters and errors) and
/// the single-host suite's programs that do not assume one host.
#[test]
fn mpich_built_rma_programs_across_hosts() {
    let Some(h) = hosts("mpich_built_rma_programs_across_hosts") else {
        return;
    };
    let lib = harness::prefix().join("lib");
    for name in [
        "rma_hosts",
        "rma_fence",
        "rma_passive",
        "rma_pscw",
        "rma_errors",
        "rma_atomics",
        "rma_unfreed",
    ] {
        let exe = harness::build(name, harness::Way::MpichBinary);
        for (ranks, extra, layout) in LAYOUTS {
            let mut cmd = Command::new(oxrun());
            cmd.args(h.oxrun_args(ranks))
                .args(*extra)
                .args(["-x", &format!("LD_LIBRARY_PATH={}", lib.display())])
                .arg(&exe);
            let out = run_command(cmd, LIMIT);
            assert!(
                out.success() && out.stdout.contains(&format!("PASS {name}")),
                "{name} on {layout}:\n{}",
                out.describe()
            );
        }
    }
}
