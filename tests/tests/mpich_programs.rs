//! Unmodified C MPI programs compiled with MPICH's `mpicc.mpich` must run
//! correctly under `oxrun -n N`, N = 1..=8: this is the proof that oxrun's
//! PMI server speaks what MPICH's `MPI_Init` expects, and that it handles
//! `MPI_Abort` and ranks killed by signals.
//!
//! The same programs under MPICH's own `mpiexec.hydra` show that the
//! programs (and this harness) are right, so a failure under oxrun is
//! oxrun's. Run with `cargo build --workspace && cargo test -p
//! oxmpi-tests`; `OXRUN=/path` replaces the launcher under test.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use oxmpi_tests::{
    build_c, launch_args, oxrun, require_mpicc_mpich, require_mpiexec_hydra, run_job, JobOutcome,
};

/// Every program runs with 1..=MAX_RANKS ranks.
const MAX_RANKS: usize = 8;
/// Hard limit per job; a correct job takes a few seconds even with 8 ranks
/// busy-polling on 2 cores next to another test's job.
const JOB_TIMEOUT: Duration = Duration::from_secs(120);
/// An aborted job must be over this soon after it started.
const ABORT_DEADLINE: Duration = Duration::from_secs(10);
/// A job with a crashed rank must be over this soon after the crash.
const CRASH_DEADLINE: Duration = Duration::from_secs(2);
/// The self-checking programs that must print `PASS <name>`.
const PASSING: [&str; 4] = ["p2p", "collectives", "comm_split", "hello"];

/// Which launcher a check runs under: oxrun's own messages are checked too.
#[derive(Clone, Copy, PartialEq)]
enum Flavor {
    Oxrun,
    Hydra,
}

fn launcher(flavor: Flavor) -> PathBuf {
    match flavor {
        Flavor::Oxrun => oxrun(),
        Flavor::Hydra => require_mpiexec_hydra(),
    }
}

/// `tests/c/<name>.c` built with MPICH (panics with setup advice if absent).
fn program(name: &str) -> PathBuf {
    build_c(name, &require_mpicc_mpich())
}

fn run(launcher: &Path, ranks: usize, name: &str, args: &[&str]) -> JobOutcome {
    let out = run_job(
        &launch_args(launcher, ranks, &program(name), args),
        JOB_TIMEOUT,
    );
    assert!(
        !out.timed_out,
        "{name} with {ranks} ranks hung; killed after {JOB_TIMEOUT:?}\n{}",
        out.describe()
    );
    out
}

/// Runs `name` with `ranks` ranks and checks it passed, and left nothing.
fn check_pass(launcher: &Path, name: &str, ranks: usize) {
    let out = run(launcher, ranks, name, &[]);
    assert!(
        out.success(),
        "{name} with {ranks} ranks failed\n{}",
        out.describe()
    );
    let pass = format!("PASS {name}");
    let passes = out.stdout.lines().filter(|l| l.trim_end() == pass).count();
    assert_eq!(
        passes,
        1,
        "{name} with {ranks} ranks: expected one `{pass}` line\n{}",
        out.describe()
    );
    assert!(
        !out.outlived,
        "{name} with {ranks} ranks: processes outlived the launcher\n{}",
        out.describe()
    );
    if name == "hello" {
        let hellos = out.stdout.lines().filter(|l| l.starts_with("hello from "));
        assert_eq!(hellos.count(), ranks, "{}", out.describe());
        for rank in 0..ranks {
            let line = format!("hello from {rank} of {ranks}");
            assert!(
                out.stdout.lines().any(|l| l.trim_end() == line),
                "missing `{line}`\n{}",
                out.describe()
            );
        }
    }
}

/// Lines of the launcher's own messages (`oxrun: ...`) on stderr.
fn oxrun_lines(out: &JobOutcome) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("oxrun:"))
        .collect()
}

/// Whether `line` mentions `rank R` (and not, say, `rank R0`).
fn names_rank(line: &str, rank: usize) -> bool {
    let needle = format!("rank {rank}");
    line.match_indices(&needle)
        .any(|(at, _)| !line[at + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// `abort [victim]` with `ranks` ranks must end the job with exit code 7.
fn check_abort(flavor: Flavor, ranks: usize, victim: Option<usize>) {
    let arg = victim.map(|v| v.to_string());
    let args: Vec<&str> = arg.iter().map(String::as_str).collect();
    let mut out = run(&launcher(flavor), ranks, "abort", &args);
    // Hydra itself sometimes loses the abort code: it reports exit code 1
    // and "Hangup (signal 1)" (the SIGHUP it sends while cleaning up wins
    // the race). That is MPICH's launcher, not the program: run it again.
    for _ in 0..3 {
        if flavor != Flavor::Hydra || out.code != Some(1) || !out.stdout.contains("Hangup") {
            break;
        }
        out = run(&launcher(flavor), ranks, "abort", &args);
    }
    let victim = victim.unwrap_or(ranks - 1);
    let what = format!("abort by rank {victim} of {ranks}");
    assert_eq!(
        (out.code, out.signal),
        (Some(7), None),
        "{what}: the job must exit with code 7\n{}",
        out.describe()
    );
    assert!(
        out.elapsed < ABORT_DEADLINE,
        "{what}: took {:?}, more than {ABORT_DEADLINE:?}\n{}",
        out.elapsed,
        out.describe()
    );
    assert!(
        !out.outlived,
        "{what}: ranks outlived the launcher\n{}",
        out.describe()
    );
    if flavor == Flavor::Oxrun {
        // MPICH's MPI_Abort sends PMI `abort` only when the job has more than
        // one rank (seen with hydra's -verbose); a lone rank just exits with
        // the code, so only then can oxrun not know that it aborted.
        let naming: Vec<&str> = oxrun_lines(&out)
            .into_iter()
            .filter(|l| names_rank(l, victim))
            .collect();
        let says_abort = ranks == 1 || naming.iter().any(|l| l.contains("abort"));
        assert!(
            naming.len() == 1 && says_abort,
            "{what}: expected exactly one `oxrun:` line on stderr naming `rank {victim}` (and, \
             with several ranks, saying it aborted), got {naming:?}\n{}",
            out.describe()
        );
    }
}

/// `crash` with `ranks` ranks: rank 1 (0 when alone) dies by SIGSEGV; the
/// job must end non-zero within [`CRASH_DEADLINE`] of the crash.
fn check_crash(flavor: Flavor, ranks: usize) {
    let out = run(&launcher(flavor), ranks, "crash", &[]);
    let what = format!("crash with {ranks} ranks");
    assert!(
        !out.success(),
        "{what}: the job must fail\n{}",
        out.describe()
    );
    let (victim, crashed_ns) = out
        .stdout
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("CRASH rank=")?;
            let (rank, ns) = rest.split_once(" realtime_ns=")?;
            Some((rank.parse::<usize>().ok()?, ns.trim().parse::<u128>().ok()?))
        })
        .unwrap_or_else(|| {
            panic!(
                "{what}: no `CRASH rank=R realtime_ns=T` line on stdout\n{}",
                out.describe()
            )
        });
    assert_eq!(victim, usize::from(ranks > 1), "{}", out.describe());
    let ended_ns = out
        .ended_at
        .duration_since(UNIX_EPOCH)
        .expect("clock before 1970")
        .as_nanos();
    let after = Duration::from_nanos(ended_ns.saturating_sub(crashed_ns) as u64);
    assert!(
        after <= CRASH_DEADLINE,
        "{what}: the launcher exited {after:?} after rank {victim} crashed, more than \
         {CRASH_DEADLINE:?}\n{}",
        out.describe()
    );
    assert!(
        !out.outlived,
        "{what}: ranks outlived the launcher\n{}",
        out.describe()
    );
    if flavor == Flavor::Oxrun {
        let lines = oxrun_lines(&out);
        assert!(
            lines.iter().any(
                |l| names_rank(l, victim) && (l.contains("SIGSEGV") || l.contains("signal 11"))
            ),
            "{what}: expected an `oxrun:` line on stderr naming `rank {victim}` and its signal \
             (SIGSEGV or `signal 11`), got {lines:?}\n{}",
            out.describe()
        );
    }
}

fn check_all_rank_counts(flavor: Flavor, name: &str) {
    let launcher = launcher(flavor);
    for ranks in 1..=MAX_RANKS {
        check_pass(&launcher, name, ranks);
    }
}

#[test]
fn p2p_under_oxrun() {
    check_all_rank_counts(Flavor::Oxrun, "p2p");
}

#[test]
fn collectives_under_oxrun() {
    check_all_rank_counts(Flavor::Oxrun, "collectives");
}

#[test]
fn comm_split_under_oxrun() {
    check_all_rank_counts(Flavor::Oxrun, "comm_split");
}

#[test]
fn hello_under_oxrun() {
    check_all_rank_counts(Flavor::Oxrun, "hello");
}

#[test]
fn abort_under_oxrun_exits_with_the_abort_code() {
    for ranks in 1..=MAX_RANKS {
        check_abort(Flavor::Oxrun, ranks, None);
    }
    check_abort(Flavor::Oxrun, 4, Some(0));
}

#[test]
fn crash_under_oxrun_ends_the_job_quickly() {
    for ranks in 1..=MAX_RANKS {
        check_crash(Flavor::Oxrun, ranks);
    }
}

/// A rank that exits 0 without calling `MPI_Init`, while the others are in
/// `MPI_Init` (a PMI fence) waiting for it, ends the job within a second
/// with one line naming it; a rank that calls `MPI_Init` late is fine.
#[test]
fn rank_that_skips_mpi_init_ends_the_job_under_oxrun() {
    let hello = program("hello");
    let hello = hello.to_str().unwrap();
    for ranks in [2, 4] {
        let script = "if [ $PMI_RANK = 1 ]; then exit 0; fi; exec \"$0\"";
        let n = ranks.to_string();
        let out = run_job(
            &[
                oxrun().to_str().unwrap(),
                "-n",
                &n,
                "sh",
                "-c",
                script,
                hello,
            ],
            JOB_TIMEOUT,
        );
        assert!(!out.timed_out, "{}", out.describe());
        assert_eq!(out.code, Some(1), "{ranks} ranks\n{}", out.describe());
        assert!(
            out.elapsed < CRASH_DEADLINE,
            "{ranks} ranks: took {:?}\n{}",
            out.elapsed,
            out.describe()
        );
        let lines = oxrun_lines(&out);
        assert!(
            lines.len() == 1
                && names_rank(lines[0], 1)
                && lines[0].contains("without initializing"),
            "{ranks} ranks: {lines:?}\n{}",
            out.describe()
        );
    }
    let late = "if [ $PMI_RANK = 1 ]; then sleep 2; fi; exec \"$0\"";
    let out = run_job(
        &[
            oxrun().to_str().unwrap(),
            "-n",
            "2",
            "sh",
            "-c",
            late,
            hello,
        ],
        JOB_TIMEOUT,
    );
    assert!(out.success(), "late MPI_Init\n{}", out.describe());
}

/// The reference: every program and expectation above, under MPICH's own
/// launcher (minus the checks of oxrun's messages).
#[test]
fn programs_are_right_under_mpiexec_hydra() {
    for name in PASSING {
        check_all_rank_counts(Flavor::Hydra, name);
    }
    for ranks in 1..=MAX_RANKS {
        check_abort(Flavor::Hydra, ranks, None);
        check_crash(Flavor::Hydra, ranks);
    }
    check_abort(Flavor::Hydra, 4, Some(0));
}

#[test]
fn env_check_builds() {
    let exe = program("env_check");
    let out = run_job(
        &[exe.as_os_str(), "OXMPI_SURELY_UNSET".as_ref()],
        JOB_TIMEOUT,
    );
    assert!(out.success(), "{}", out.describe());
    assert_eq!(out.stdout, "rank ?: OXMPI_SURELY_UNSET unset\n");
}

#[test]
fn names_rank_matches_whole_numbers() {
    assert!(names_rank("oxrun: rank 1 killed by SIGSEGV", 1));
    assert!(names_rank("oxrun: rank 1", 1));
    assert!(!names_rank("oxrun: rank 10 killed", 1));
    assert!(names_rank("oxrun: rank 10 killed", 10));
}
