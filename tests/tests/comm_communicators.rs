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
#[path = "comm/subgroups.rs"]
mod subgroups;

use comm::check;

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
