//! Derived datatypes in the Rust API, through the real launcher: this test
//! binary re-runs itself under `oxrun -n N` as the ranks (role in
//! OXMPI_TEST_ROLE); each rank sends, receives and runs collectives on
//! `View` / `ViewMut`s and checks the results against serial computations.
//! A wrong result fails its rank and therefore the job.

#[path = "dtype/coll.rs"]
mod coll;
#[path = "dtype/p2p.rs"]
mod p2p;
#[path = "dtype/zero_copy.rs"]
mod zero_copy;

use std::time::Duration;

use oxmpi_tests::{oxrun, role_job};

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        run(&role);
    }
}

/// Runs the role named `role` on this rank.
fn run(role: &str) {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let result = match role {
        "halo" => p2p::halo(&world),
        "structs" => p2p::structs(&world),
        "subarray" => p2p::subarray(&world),
        "out_of_order" => p2p::out_of_order(&world),
        "bounds" => p2p::bounds(&world),
        "coll" => coll::all(&world),
        "zero_copy" => zero_copy::transfers(&world),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    universe.finalize().expect("finalize");
}

fn check_env(ns: &[usize], role: &str, env: &[(&str, &str)]) {
    for &n in ns {
        let out = role_job(&oxrun(), n, role, env, Duration::from_secs(180));
        assert!(
            out.success(),
            "{role} at {n} ranks with {env:?}:\n{}",
            out.describe()
        );
    }
}

fn check(ns: &[usize], role: &str) {
    check_env(ns, role, &[]);
}

#[test]
fn halo_exchange_of_vector_columns() {
    check(&[1, 2, 3], "halo");
}

#[test]
fn struct_arrays_with_resized_extent() {
    check(&[1, 2, 3], "structs");
}

#[test]
fn subarray_into_contiguous_and_back() {
    check(&[1, 2, 3], "subarray");
}

#[test]
fn non_contiguous_requests_completed_out_of_order() {
    check(&[1, 2, 3], "out_of_order");
}

#[test]
fn staged_buffers_under_both_rendezvous_protocols() {
    for env in [("OXMPI_CMA", "off"), ("OXMPI_RNDV_PROTOCOL", "cma")] {
        for role in ["halo", "out_of_order", "coll"] {
            check_env(&[2, 3], role, &[env]);
        }
    }
}

/// Non-contiguous sends and receives of every size without temporaries,
/// under each rendezvous protocol (2 ranks have a core each: `auto`
/// streams; 3 ranks on 2 cores: `auto` reads with CMA).
#[test]
fn non_contiguous_p2p_without_temporaries() {
    check(&[2, 3], "zero_copy");
    for env in [
        ("OXMPI_RNDV_PROTOCOL", "cma"),
        ("OXMPI_RNDV_PROTOCOL", "stream"),
        ("OXMPI_CMA", "off"),
    ] {
        check_env(&[2], "zero_copy", &[env]);
    }
}

#[test]
fn views_past_their_slice_are_errors() {
    check(&[1, 2], "bounds");
}

#[test]
fn collectives_with_vector_types_match_serial_results() {
    check(&[1, 2, 3, 4, 5], "coll");
}
