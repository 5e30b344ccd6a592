//! Cartesian topologies through the real launcher (see
//! comm_communicators.rs for how the ranks run).

#[allow(dead_code)]
mod comm;
#[path = "comm/topo.rs"]
mod topo;

use comm::check;

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        topo::run(&role);
    }
}

#[test]
fn dims_create_table_of_cases() {
    check(&[1], "dims");
}

#[test]
fn cart_2d_periodic_and_not_shift_halo_exchange() {
    check(&[1, 2, 4, 6, 9], "cart2d");
}

#[test]
fn cart_sub_rows_columns_planes_sums() {
    check(&[1, 4, 6, 8], "cartsub");
}
