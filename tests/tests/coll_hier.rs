//! The node-aware (hierarchical) allreduce, bcast and reduce in real jobs on one
//! host: `OXMPI_COLL_NODES` makes the collective layer see 2 or 3 nodes of
//! consecutive world ranks, the three algorithms are forced, and every result
//! is checked against a serial computation (role `hier`: commutative and
//! non-commutative allreduce and bcast from roots that are and are not
//! node leaders, on the world, on the world reversed, and on the even
//! ranks then the odd ones, whose nodes are not blocks), together with the
//! selection log. On one node the forced algorithm falls back, logged.

#[path = "coll/roles.rs"]
mod roles;

use std::time::Duration;

use oxmpi::coll::nodes::{consecutive, NodeView};
use oxmpi_tests::{oxrun, role_job, JobOutcome};

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        roles::run(&role);
    }
}

const RANKS: &[usize] = &[2, 3, 4, 5, 6, 7, 8, 9];

/// Runs role `hier` on `n` ranks with the three algorithms forced and
/// `OXMPI_COLL_NODES` set to `nodes` (unset for `None`).
fn job(n: usize, nodes: Option<&str>) -> JobOutcome {
    let mut env = vec![
        ("OXMPI_ALLREDUCE_ALGO", "hierarchical"),
        ("OXMPI_BCAST_ALGO", "hierarchical"),
        ("OXMPI_REDUCE_ALGO", "hierarchical"),
        ("OXMPI_DEBUG", "coll"),
    ];
    env.extend(nodes.map(|k| ("OXMPI_COLL_NODES", k)));
    role_job(&oxrun(), n, "hier", &env, Duration::from_secs(300))
}

/// Selection log lines of `coll` that chose `algo`.
fn chosen(stderr: &str, coll: &str, algo: &str) -> usize {
    stderr
        .lines()
        .filter(|l| {
            l.starts_with(&format!("oxmpi[coll]: {coll} ")) && l.contains(&format!("-> {algo} "))
        })
        .count()
}

/// Whether the role's interleaved communicator (even world ranks, then
/// odd) has its nodes in blocks when the world is `k` blocks of `n` ranks.
fn interleaved_is_blocked(n: usize, k: usize) -> bool {
    let order: Vec<usize> = (0..n).step_by(2).chain((1..n).step_by(2)).collect();
    NodeView::new(&consecutive(n, k), &order, 0).layout.blocked
}

#[test]
fn hierarchical_on_two_and_three_nodes() {
    for k in [2, 3] {
        for &n in RANKS {
            let out = job(n, Some(&k.to_string()));
            let what = format!("OXMPI_COLL_NODES={k} at {n} ranks");
            assert!(out.success(), "{what}:\n{}", out.describe());
            assert!(
                out.stderr.contains("collectives see nodes"),
                "{what}:\n{}",
                out.stderr
            );
            for coll in ["allreduce", "bcast", "reduce"] {
                assert!(
                    chosen(&out.stderr, coll, "hierarchical") > 0,
                    "{what}: {coll} did not run hierarchical:\n{}",
                    out.stderr
                );
            }
            assert!(
                out.stderr.contains(&format!("on {} nodes", k.min(n))),
                "{what}:\n{}",
                out.stderr
            );
            // A non-commutative allreduce where nodes are not blocks of the
            // communicator's ranks cannot keep rank order node by node.
            let fell_back = out.stderr.contains(
                "forced allreduce algorithm hierarchical does not apply: hierarchical keeps the rank order",
            );
            assert_eq!(
                fell_back,
                !interleaved_is_blocked(n, k),
                "{what}:\n{}",
                out.stderr
            );
        }
    }
}

#[test]
fn one_node_falls_back_with_a_logged_reason() {
    // Explicitly one node, and the real node map of this one host.
    for (n, nodes) in [(2, Some("1")), (5, None)] {
        let out = job(n, nodes);
        assert!(out.success(), "{n} ranks:\n{}", out.describe());
        for coll in ["allreduce", "bcast", "reduce"] {
            let why = format!(
                "forced {coll} algorithm hierarchical does not apply: hierarchical needs ranks on more than one node"
            );
            assert!(out.stderr.contains(&why), "{n} ranks:\n{}", out.stderr);
            assert_eq!(
                chosen(&out.stderr, coll, "hierarchical"),
                0,
                "{}",
                out.stderr
            );
        }
    }
}
