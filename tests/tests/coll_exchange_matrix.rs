//! The exchange collective matrix: gather, scatter, gatherv,
//! scatterv, allgatherv, alltoall, alltoallv, alltoallw, reduce_scatter,
//! reduce_scatter_block, scan, exscan. Every algorithm forced (and the
//! choice checked in the selection log) x rank counts 1..9 x sizes 0, 1,
//! around the 8 KiB shm cell and the 64 KiB eager limit, 1 MiB; uneven and
//! zero counts; non-commutative operations; in place; error cases; many
//! non-blocking collectives completed in reverse order.

#[path = "coll/exchange.rs"]
mod exchange;
#[path = "coll/exchange_roles.rs"]
mod exchange_roles;
#[path = "coll/nonblocking.rs"]
mod nonblocking;
#[path = "coll/reductions.rs"]
mod reductions;
#[path = "coll/rooted.rs"]
mod rooted;

use std::time::Duration;

use oxmpi::coll::algos::Args;
use oxmpi::coll::select::Coll;
use oxmpi_tests::{oxrun, role_job, JobOutcome};

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var("OXMPI_TEST_ROLE") {
        exchange_roles::run(&role);
    }
}

const RANKS: &[usize] = &[1, 2, 3, 4, 5, 6, 7, 8, 9];

fn job(n: usize, role: &str, env: &[(String, String)]) -> JobOutcome {
    let mut env = env.to_vec();
    env.push(("OXMPI_DEBUG".into(), "coll".into()));
    role_job(&oxrun(), n, role, &env, Duration::from_secs(300))
}

/// Whether the selection log shows `coll` running `algo`, or the logged
/// fallback when `algo` does not apply to `coll` at `n` ranks.
fn check_log(stderr: &str, coll: Coll, algo: &str, n: usize) -> Result<(), String> {
    let name = coll.name();
    let used = stderr.lines().any(|l| {
        l.starts_with(&format!("oxmpi[coll]: {name} ")) && l.contains(&format!("-> {algo} "))
    });
    let info = coll.algos().iter().find(|i| i.name == algo);
    let args = Args::new(n, 0, true);
    match info {
        Some(i) if i.applicable(&args).is_ok() => {
            if used {
                return Ok(());
            }
            Err(format!("{name} did not run {algo}"))
        }
        Some(_) => {
            let why = format!("forced {name} algorithm {algo} does not apply");
            if stderr.contains(&why) && !used {
                return Ok(());
            }
            Err(format!("{name}: no logged fallback from {algo}"))
        }
        None => Err(format!("{name} has no {algo}: the job should not have run")),
    }
}

/// Runs `role` at every rank count with each of `algos` forced for every
/// collective of `colls`, checking the results (in the role) and the log.
fn forced(role: &str, colls: &[Coll], algos: &[&str]) {
    let var = |c: Coll| format!("OXMPI_{}_ALGO", c.name().to_uppercase());
    for &algo in algos {
        let (has, lacks): (Vec<Coll>, Vec<Coll>) = colls
            .iter()
            .partition(|c| c.algos().iter().any(|i| i.name == algo));
        // A name the collective does not have is an error at start-up that
        // names the variable and lists that collective's algorithms.
        for &c in &lacks {
            let out = job(2, role, &[(var(c), algo.to_string())]);
            let listed = format!("list of {}", c.algo_names().replace(", ", "|"));
            assert!(
                !out.success() && out.stderr.contains(&var(c)) && out.stderr.contains(&listed),
                "{role} with {}={algo}: no error listing {listed}:\n{}",
                var(c),
                out.describe()
            );
        }
        let env: Vec<(String, String)> = has.iter().map(|&c| (var(c), algo.to_string())).collect();
        for &n in RANKS {
            let out = job(n, role, &env);
            assert!(
                out.success(),
                "{role} with {algo} forced at {n} ranks:\n{}",
                out.describe()
            );
            for &c in &has {
                if let Err(why) = check_log(&out.stderr, c, algo, n) {
                    panic!("{role}, {algo} forced at {n} ranks: {why}\n{}", out.stderr);
                }
            }
        }
    }
}

#[test]
fn gather_scatter_every_algorithm() {
    use Coll::*;
    forced(
        "rooted",
        &[Gather, Scatter, Gatherv, Scatterv],
        &["binomial", "linear"],
    );
}

#[test]
fn allgatherv_every_algorithm() {
    forced(
        "allgatherv",
        &[Coll::Allgatherv],
        &["ring", "recursive_doubling"],
    );
}

#[test]
fn alltoall_every_algorithm() {
    use Coll::*;
    forced(
        "alltoall",
        &[Alltoall, Alltoallv, Alltoallw],
        &["pairwise", "scattered", "bruck", "shm"],
    );
}

#[test]
fn reduce_scatter_every_algorithm() {
    use Coll::*;
    forced(
        "reduce_scatter",
        &[ReduceScatter, ReduceScatterBlock],
        &["recursive_halving", "pairwise", "shm"],
    );
}

#[test]
fn scan_every_algorithm() {
    use Coll::*;
    forced("scan", &[Scan, Exscan], &["recursive_doubling", "linear"]);
}

#[test]
fn argument_errors_are_clear_and_leave_the_communicator_usable() {
    for &n in &[1, 3, 4] {
        let out = job(n, "errors", &[]);
        assert!(out.success(), "errors at {n} ranks:\n{}", out.describe());
    }
}

#[test]
fn many_nonblocking_collectives_completed_in_reverse() {
    for &n in &[1, 2, 3, 5, 8] {
        let out = job(n, "nonblocking", &[]);
        assert!(
            out.success(),
            "nonblocking at {n} ranks:\n{}",
            out.describe()
        );
    }
}
