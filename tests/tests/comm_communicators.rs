//! Communicators, groups and attributes through the real launcher: this
//! test binary re-runs itself under `oxrun -n N` as the ranks (role in
//! OXMPI_TEST_ROLE); each rank checks MPI semantics and a wrong result
//! fails its rank and therefore the job.

#[allow(dead_code)]
mod comm;
#[path = "comm/comms.rs"]
mod comms;
#[path = "comm/intercomms.rs"]
mod intercomms;
#[path = "comm/ports.rs"]
mod ports;
#[path = "comm/ports_jobs.rs"]
mod ports_jobs;
#[path = "comm/subgroups.rs"]
mod subgroups;

use comm::check;
use oxmpi_tests::{oxrun, role_job, JobOutcome, ScratchDir};
use std::path::Path;
use std::time::Duration;

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        comms::run(&role);
    }
}

#[test]
fn split_parity_reverse_key_undefined_and_isolation() {
    check(&[1, 2, 3, 5, 8], "split");
}

#[test]
fn dup_is_congruent_and_isolated_names_free_errors() {
    check(&[1, 2, 4], "dup");
}

#[test]
fn five_thousand_dup_free_cycles_reuse_ids_and_exhaustion_is_an_error() {
    check(&[2, 3, 5], "cycles");
}

#[test]
fn create_from_incl_excl_and_disjoint_groups() {
    check(&[1, 2, 4, 7], "create");
}

#[test]
fn split_type_shared_groups_the_node() {
    check(&[1, 3, 4], "split_type");
}

#[test]
fn attributes_copy_and_delete_callbacks_counted() {
    check(&[1, 3], "attrs");
}

#[test]
fn group_algebra_matches_a_serial_model() {
    check(&[1, 4, 9], "groups");
}

#[test]
fn concurrent_creation_from_two_threads() {
    check(&[2, 3, 4], "threads");
}

#[test]
fn create_group_by_the_members_only() {
    check(&[1, 2, 3, 5], "create_group");
}

#[test]
fn idups_started_in_opposite_orders_complete() {
    check(&[1, 2, 4], "idup");
}

#[test]
fn intercommunicators_across_uneven_groups() {
    check(&[1, 2, 3, 5], "intercomm");
}

#[test]
fn ports_accept_connect_names_and_join() {
    check(&[1, 2, 3, 4], "ports");
}

/// One role of `ports_jobs.rs` as a job of `n` ranks sharing `dir` (and its
/// name directory) with the other job.
fn ports_job(dir: &Path, n: usize, role: &str, other: usize, timeout: &str) -> JobOutcome {
    ports_job_with(dir, n, role, other, timeout, &[])
}

fn ports_job_with(
    dir: &Path,
    n: usize,
    role: &str,
    other: usize,
    timeout: &str,
    extra: &[(&str, &str)],
) -> JobOutcome {
    let mut env = vec![
        ("OXMPI_TEST_PORTS_DIR", dir.to_string_lossy().into_owned()),
        ("OXMPI_TEST_PORTS_OTHER", other.to_string()),
        (
            "OXMPI_NAME_DIR",
            dir.join("names").to_string_lossy().into_owned(),
        ),
        ("OXMPI_PORT_TIMEOUT", timeout.to_string()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    role_job(&oxrun(), n, role, &env, Duration::from_secs(180))
}

/// A server job and a client job, started separately with 1 and 2 ranks
/// each, connect twice in a row on one port and once through the shared
/// name directory; a client of a server job that ended, and one whose
/// port never answers, get MPI_ERR_PORT, and a client job without a fabric
/// fails both jobs' calls (never a hang).
#[test]
fn ports_between_separate_jobs() {
    for (servers, clients) in [(1, 1), (2, 2), (1, 2), (2, 1)] {
        let scratch = ScratchDir::new();
        let dir = scratch.path().to_path_buf();
        let server = std::thread::spawn({
            let dir = dir.clone();
            move || ports_job(&dir, servers, "ports_server", clients, "30")
        });
        let client = ports_job(&dir, clients, "ports_client", servers, "30");
        let server = server.join().expect("the server's thread");
        let what = format!("{servers} server and {clients} client ranks");
        assert!(server.success(), "server, {what}:\n{}", server.describe());
        assert!(client.success(), "client, {what}:\n{}", client.describe());
        let late = ports_job(&dir, clients, "ports_late", servers, "30");
        assert!(late.success(), "late client, {what}:\n{}", late.describe());
    }
    // A listener that accepts (the kernel's backlog) and never answers.
    let scratch = ScratchDir::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let tcp = listener.local_addr().expect("address").port();
    let name = format!("oxmpi-port:kvs_0_0:0:1:127.0.0.1:{tcp}:0123456789abcdef");
    std::fs::write(scratch.path().join("port"), name).expect("write the port");
    let silent = ports_job(scratch.path(), 1, "ports_silent", 0, "2");
    assert!(silent.success(), "silent port:\n{}", silent.describe());
    // The client's members cannot open their fabric endpoints.
    let scratch = ScratchDir::new();
    let dir = scratch.path().to_path_buf();
    let server = std::thread::spawn({
        let dir = dir.clone();
        move || ports_job(&dir, 2, "ports_failing_server", 2, "180")
    });
    let bad = [("OXMPI_OFI_PROVIDER", "no-such-provider")];
    let client = ports_job_with(&dir, 2, "ports_no_fabric_client", 2, "180", &bad);
    let server = server.join().expect("the server's thread");
    assert!(
        client.success(),
        "client without a fabric:\n{}",
        client.describe()
    );
    assert!(server.success(), "its server:\n{}", server.describe());
}
