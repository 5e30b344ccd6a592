//! Virtual topologies through the real launcher (see
//! comm_communicators.rs for how the ranks run): cartesian grids, graphs
//! and distributed graphs, and the neighborhood collectives on each.

#[allow(dead_code)]
mod comm;
#[path = "comm/neighbor.rs"]
mod neighbor;
#[path = "comm/topo.rs"]
mod topo;

use comm::check;

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        if role.starts_with("neighbor") {
            neighbor::run(&role);
        } else {
            topo::run(&role);
        }
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

#[test]
fn neighbor_collectives_on_2d_grids_periodic_open_and_mixed() {
    check(&[1, 2, 4, 6, 9], "neighbor_cart");
}

#[test]
fn graph_queries_and_neighbor_collectives_on_a_ring_graph() {
    check(&[1, 2, 3, 5], "neighbor_graph");
}

#[test]
fn dist_graphs_adjacent_and_routed_with_weights_and_neighbor_collectives() {
    check(&[1, 2, 3, 4, 7], "neighbor_dist");
}

#[test]
fn persistent_collectives_started_in_different_orders_on_different_ranks() {
    check(&[1, 2, 3, 4, 5], "neighbor_persistent");
}
