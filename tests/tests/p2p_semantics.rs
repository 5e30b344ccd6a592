//! Point-to-point semantics through the real launcher: this test binary
//! re-runs itself under `oxrun -n N` as the ranks (role in OXMPI_TEST_ROLE)
//! and each rank checks MPI semantics; a wrong result fails its rank and
//! therefore the job.

#[path = "p2p/roles.rs"]
mod roles;

use std::time::Duration;

use oxmpi_tests::{oxrun, role_job, JobOutcome};

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        roles::run(&role);
    }
}

fn job_with(launcher: &std::path::Path, n: usize, role: &str, limit: Duration) -> JobOutcome {
    role_job(launcher, n, role, &[] as &[(&str, &str)], limit)
}

fn job_env(n: usize, role: &str, env: &[(&str, &str)]) -> JobOutcome {
    role_job(&oxrun(), n, role, env, Duration::from_secs(120))
}

fn job(n: usize, role: &str) -> JobOutcome {
    job_with(&oxrun(), n, role, Duration::from_secs(120))
}

fn check(ns: &[usize], role: &str) {
    for &n in ns {
        let out = job(n, role);
        assert!(out.success(), "{role} at {n} ranks:\n{}", out.describe());
    }
}

#[test]
fn basic_send_recv_wildcards_zero_bytes_proc_null_self() {
    check(&[1, 2, 3, 5, 9], "basic");
}

#[test]
fn non_overtaking_order() {
    check(&[2, 3], "order");
}

#[test]
fn any_source_flood_keeps_per_sender_order() {
    check(&[2, 4], "flood");
}

#[test]
fn preposted_receives_matched_out_of_order() {
    check(&[2], "preposted");
}

#[test]
fn large_messages_verified_byte_by_byte() {
    check(&[2], "large");
}

#[test]
fn large_messages_without_cma_are_streamed() {
    for role in ["large", "truncate", "ssend"] {
        let out = job_env(2, role, &[("OXMPI_CMA", "off")]);
        assert!(
            out.success(),
            "{role} with OXMPI_CMA=off:\n{}",
            out.describe()
        );
    }
}

#[test]
fn large_messages_read_with_cma_single_copy() {
    for role in ["large", "truncate", "ssend", "probe"] {
        let out = job_env(2, role, &[("OXMPI_RNDV_PROTOCOL", "cma")]);
        assert!(
            out.success(),
            "{role} with OXMPI_RNDV_PROTOCOL=cma:\n{}",
            out.describe()
        );
    }
}

#[test]
fn large_messages_with_cooperative_split_copy() {
    for role in ["large", "truncate"] {
        let out = job_env(
            2,
            role,
            &[
                ("OXMPI_CMA_SPLIT_MIN", "64k"),
                ("OXMPI_RNDV_PROTOCOL", "cma"),
            ],
        );
        assert!(
            out.success(),
            "{role} with OXMPI_CMA_SPLIT_MIN=64k:\n{}",
            out.describe()
        );
    }
}

#[test]
fn synchronous_send_completes_only_when_matched() {
    check(&[2], "ssend");
}

#[test]
fn probe_iprobe_mprobe() {
    check(&[2], "probe");
}

#[test]
fn truncation_is_an_error_with_status() {
    check(&[2], "truncate");
}

#[test]
fn cancel_pending_receive() {
    check(&[1, 2], "cancel");
}

#[test]
fn wait_and_test_variants() {
    check(&[1, 2], "waits");
}

#[test]
fn persistent_requests() {
    check(&[1, 2, 4], "persistent");
}

#[test]
fn bad_arguments_are_errors() {
    check(&[2], "errors");
}

#[test]
fn thread_multiple_two_threads_per_rank() {
    check(&[2, 3], "threads");
}

#[test]
fn killed_rank_ends_the_job_and_leaves_no_segment() {
    let before = shm_files();
    let out = job_with(&oxrun(), 3, "kill9", Duration::from_secs(30));
    assert_eq!(out.code, Some(128 + 9), "{}", out.describe());
    assert!(
        out.elapsed < Duration::from_secs(4),
        "took {:?}",
        out.elapsed
    );
    assert!(
        out.stderr.contains("rank 1") && out.stderr.contains("SIGKILL"),
        "{}",
        out.stderr
    );
    let after = shm_files();
    let new: Vec<_> = after.iter().filter(|f| !before.contains(f)).collect();
    assert!(new.is_empty(), "left in /dev/shm: {new:?}");
}

fn shm_files() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("oxmpi"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn same_semantics_under_mpiexec_hydra() {
    let hydra = oxmpi_tests::require_mpiexec_hydra();
    for role in ["basic", "order", "probe", "large"] {
        let out = job_with(&hydra, 4, role, Duration::from_secs(120));
        assert!(out.success(), "{role} under hydra:\n{}", out.describe());
    }
}
