//! The collective test matrix: every algorithm forced (and the choice
//! checked in the selection log) x rank counts 1..9 x sizes (0, 1, around the
//! thresholds, 1 MiB, 16 MiB), with exact serial references; non-commutative operations;
//! many non-blocking collectives completed in reverse order.

#[path = "coll/roles.rs"]
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

const RANKS: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9];

fn job(n: usize, role: &str, env: &[(&str, &str)]) -> JobOutcome {
    let mut env = env.to_vec();
    env.push(("OXMPI_DEBUG", "coll"));
    role_job(&oxrun(), n, role, &env, Duration::from_secs(180))
}

/// Runs `role` at every rank count with `var` forcing each of `algos`,
/// checking the result and that the forced algorithm was used (or that the
/// fallback was logged when it does not apply).
fn forced(role: &str, var: &str, coll: &str, algos: &[&str]) {
    for &algo in algos {
        for &n in RANKS {
            let out = job(n, role, &[(var, algo)]);
            assert!(
                out.success(),
                "{role} with {var}={algo} at {n} ranks:\n{}",
                out.describe()
            );
            if n > 1 {
                let used = out.stderr.contains(&format!("{coll} "))
                    && out.stderr.contains(&format!("-> {algo} "));
                let fell_back = out
                    .stderr
                    .contains(&format!("forced {coll} algorithm {algo} does not apply"));
                assert!(
                    used || fell_back,
                    "{var}={algo} at {n} ranks: neither used nor a logged fallback:\n{}",
                    out.stderr
                );
            }
        }
    }
}

#[test]
fn an_unknown_algorithm_name_fails_listing_that_collectives_algorithms_only() {
    use oxmpi::coll::select::Coll;
    let out = job(1, "allreduce", &[("OXMPI_ALLREDUCE_ALGO", "nonsense")]);
    assert!(
        !out.success(),
        "ran with an unknown algorithm:\n{}",
        out.describe()
    );
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("OXMPI_ALLREDUCE_ALGO") && l.contains("nonsense"))
        .unwrap_or_else(|| panic!("no message naming the variable:\n{}", out.stderr));
    let allreduce: Vec<&str> = Coll::Allreduce.algos().iter().map(|a| a.name).collect();
    for name in &allreduce {
        assert!(line.contains(name), "{name} missing from: {line}");
    }
    for &coll in Coll::ALL {
        for other in coll.algos().iter().filter(|a| !allreduce.contains(&a.name)) {
            assert!(
                !line.contains(other.name),
                "{} listed in: {line}",
                other.name
            );
        }
    }
}

#[test]
fn allreduce_every_algorithm() {
    forced(
        "allreduce",
        "OXMPI_ALLREDUCE_ALGO",
        "allreduce",
        &[
            "recursive_doubling",
            "rabenseifner",
            "ring",
            "reduce_bcast",
            "shm",
        ],
    );
}

#[test]
fn noncommutative_ops_keep_rank_order() {
    forced(
        "noncommutative",
        "OXMPI_ALLREDUCE_ALGO",
        "allreduce",
        &["recursive_doubling", "reduce_bcast", "ring", "shm"],
    );
}

#[test]
fn bcast_every_algorithm() {
    forced(
        "bcast",
        "OXMPI_BCAST_ALGO",
        "bcast",
        &["binomial", "scatter_allgather", "chain", "shm"],
    );
}

#[test]
fn reduce_every_root() {
    forced(
        "reduce",
        "OXMPI_REDUCE_ALGO",
        "reduce",
        &["binomial", "shm"],
    );
}

#[test]
fn allgather_every_algorithm() {
    forced(
        "allgather",
        "OXMPI_ALLGATHER_ALGO",
        "allgather",
        &["ring", "recursive_doubling", "bruck", "shm"],
    );
}

#[test]
fn many_nonblocking_collectives_completed_in_reverse() {
    for &n in &[1, 2, 3, 4, 7] {
        let out = job(n, "nonblocking", &[]);
        assert!(
            out.success(),
            "nonblocking at {n} ranks:\n{}",
            out.describe()
        );
    }
}

#[test]
fn concurrent_collectives_on_rows_and_columns_of_a_grid() {
    for &n in &[1, 2, 4, 6, 9] {
        let out = job(n, "grid", &[]);
        assert!(out.success(), "grid at {n} ranks:\n{}", out.describe());
    }
}

/// A user operation that panics inside a blocking collective unwinds to
/// its caller (the schedule's pending receives are cancelled and its sends
/// waited for); inside a non-blocking one it fails the request instead.
/// At 2 ranks the ranks go on communicating; not caught, the rank dies and
/// oxrun ends the job within seconds, naming it.
#[test]
fn panicking_user_op_unwinds_to_the_caller() {
    for role in ["op_panics", "op_panics_nonblocking"] {
        let out = job(2, role, &[]);
        assert!(out.success(), "{role}: {}", out.describe());
        assert!(out.stderr.contains("failed on purpose"), "{}", out.stderr);
    }
    for n in [3, 4] {
        let out = job(n, "op_panics_uncaught", &[]);
        assert!(!out.success(), "{n} ranks:\n{}", out.describe());
        assert!(
            out.elapsed < Duration::from_secs(20),
            "{n} ranks: the job must end soon:\n{}",
            out.describe()
        );
        assert!(out.stderr.contains("failed on purpose"), "{}", out.stderr);
        assert!(out.stderr.contains("rank 0"), "{}", out.stderr);
    }
}

/// The cost model comes from `OXMPI_COLL_MODEL` (read by rank 0 and
/// published to every rank): a model where messages are very expensive
/// makes every rank pick the algorithm with the fewest rounds at every
/// size, where the built-in model picks Rabenseifner for large buffers; a
/// bad file ends the job with an error naming the variable.
#[test]
fn cost_model_file_drives_every_rank() {
    let dir = std::env::temp_dir().join(format!("oxmpi-coll-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let slow = dir.join("slow-messages");
    std::fs::write(
        &slow,
        "alpha_us = 100000\nbeta_gbps = 10\ngamma_gbps = 10\n",
    )
    .unwrap();
    let decisions = |out: &JobOutcome, algo: &str| {
        out.stderr
            .lines()
            .filter(|l| l.contains("oxmpi[coll]: allreduce ") && l.contains(&format!("-> {algo} ")))
            .count()
    };
    let out = job(
        4,
        "allreduce",
        &[("OXMPI_COLL_MODEL", slow.to_str().unwrap())],
    );
    assert!(out.success(), "{}", out.describe());
    assert!(out.stderr.contains("cost model File("), "{}", out.stderr);
    assert!(decisions(&out, "recursive_doubling") > 0, "{}", out.stderr);
    assert_eq!(decisions(&out, "rabenseifner"), 0, "{}", out.stderr);
    let builtin = job(4, "allreduce", &[("OXMPI_COLL_MODEL", "builtin")]);
    assert!(builtin.success(), "{}", builtin.describe());
    assert!(
        decisions(&builtin, "rabenseifner") > 0,
        "{}",
        builtin.stderr
    );
    let bad = dir.join("bad");
    std::fs::write(&bad, "alpha_us = fast\n").unwrap();
    let out = job(
        2,
        "allreduce",
        &[("OXMPI_COLL_MODEL", bad.to_str().unwrap())],
    );
    assert!(!out.success(), "{}", out.describe());
    assert!(out.stderr.contains("OXMPI_COLL_MODEL"), "{}", out.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}
