//! Start-up benchmark: job start-up to finalize under `oxrun` and
//! `mpiexec.hydra`, side by side, for a few rank counts.
//!
//! ```text
//! cargo build --release --workspace --bins
//! cargo run --release -p oxmpi-benches --bin startup -- [--reps K] [--ranks 1,8,32]
//!     [--out FILE] [--timeout SECS]
//! ```
//!
//! Two programs are timed, each with both launchers at their defaults
//! (`LAUNCHER -n N PROGRAM`): `pmi_trivial` (PMI only, this crate) and
//! `benches/c/init_finalize.c` built with `mpicc.mpich -O2` (MPICH's
//! `MPI_Init`/`MPI_Finalize`). For each N, each launcher gets 2 warm-up
//! runs, then the launchers alternate rep by rep, the order flipping every
//! rep, so both see the same machine noise. The Markdown report goes to
//! stdout and to `--out` (default `benches/results/startup.md`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use oxmpi_benches::cli::{exit_on_error, results_dir, Flags};
use oxmpi_benches::peers::{
    beside_me, compile_c_with, on_path, tree_state_of, ucx_tls, version_of,
};
use oxmpi_benches::report::{host_cpu, table, utc_timestamp, Row};
use oxmpi_benches::stats::Summary;
use oxmpi_benches::timing::{RunError, Timer};

const WARMUP: usize = 2;
const USAGE: &str = "usage: startup [--reps K] [--ranks 1,8,32] [--out FILE] [--timeout SECS]";

struct Options {
    reps: usize,
    ranks: Vec<usize>,
    out: PathBuf,
    timeout: Duration,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        reps: 15,
        ranks: vec![1, 8, 32],
        out: results_dir().join("startup.md"),
        timeout: Duration::from_secs(60),
    };
    let mut flags = Flags::new(args, USAGE);
    while let Some(flag) = flags.next_flag() {
        match flag {
            "--reps" => {
                let v = flags.value(flag)?;
                o.reps = v
                    .parse()
                    .ok()
                    .filter(|&k| k > 0)
                    .ok_or_else(|| flags.bad(flag, v))?;
            }
            "--ranks" => {
                let v = flags.value(flag)?;
                let list: Result<Vec<usize>, _> = v.split(',').map(str::parse).collect();
                o.ranks = list
                    .ok()
                    .filter(|l| !l.contains(&0))
                    .ok_or_else(|| flags.bad(flag, v))?;
            }
            "--out" => o.out = PathBuf::from(flags.value(flag)?),
            "--timeout" => o.timeout = flags.seconds(flag, false)?,
            other => return Err(flags.refuse(other)),
        }
    }
    Ok(o)
}

/// Builds the C program into `dir` with `mpicc.mpich -O2`.
fn build_c(dir: &Path) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c/init_finalize.c");
    let exe = dir.join("init_finalize_c");
    on_path("mpicc.mpich").ok_or("mpicc.mpich not found on PATH (apt install mpich)")?;
    compile_c_with("mpicc.mpich", &["-O2"], &src, &exe)?;
    Ok(exe)
}

/// Retries allowed for one sample whose job exits unsuccessfully.
const RETRIES: usize = 2;

/// Times `program` at `n` ranks under both launchers (`[oxrun, hydra]`).
/// A failed job is retried (up to [`RETRIES`] times in a row) and noted in
/// `failures`; a timeout ends the benchmark.
fn measure(
    timer: &Timer,
    launchers: [&Path; 2],
    program: &Path,
    n: usize,
    reps: usize,
    env: &[(String, String)],
    failures: &mut Vec<String>,
) -> Result<Row, String> {
    let mut samples: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut once = |which: usize, keep: bool| -> Result<(), String> {
        let mut cmd = Command::new(launchers[which]);
        cmd.arg("-n").arg(n.to_string()).arg(program);
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        for attempt in 0.. {
            match timer.run(&mut cmd) {
                Ok(took) => {
                    if keep {
                        samples[which].push(took);
                    }
                    return Ok(());
                }
                Err(RunError::Failed { status, stderr }) if attempt < RETRIES => {
                    let why = stderr.lines().rev().find(|l| !l.trim().is_empty());
                    let why = why.unwrap_or("").trim();
                    failures.push(format!("`{cmd:?}`: {status}: `{why}`"));
                }
                Err(e) => return Err(format!("{cmd:?}: {e}")),
            }
        }
        unreachable!("the retry loop returns")
    };
    for which in [0, 1] {
        for _ in 0..WARMUP {
            once(which, false)?;
        }
    }
    for rep in 0..reps {
        let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            once(which, true)?;
        }
    }
    let summary = |s: &[Duration]| Summary::of(s).expect("reps > 0");
    Ok(Row {
        ranks: n,
        oxrun: summary(&samples[0]),
        hydra: summary(&samples[1]),
    })
}

fn run(o: &Options) -> Result<String, String> {
    let oxrun = beside_me("oxrun")?;
    let trivial = beside_me("pmi_trivial")?;
    let dir = oxrun.parent().ok_or("oxrun has no directory")?;
    let hydra =
        on_path("mpiexec.hydra").ok_or("mpiexec.hydra not found on PATH (apt install mpich)")?;
    let c_prog = build_c(dir)?;
    let timer = Timer::new(o.timeout);
    let launchers = [oxrun.as_path(), hydra.as_path()];

    let ranks: Vec<String> = o.ranks.iter().map(usize::to_string).collect();
    let mut report = format!(
        "# Start-up: oxrun vs mpiexec.hydra\n\n\
         Wall clock of a whole job, launcher start to launcher exit, in ms \
         (`LAUNCHER -n N PROGRAM`, both launchers at their defaults). {} reps per \
         launcher and N after {WARMUP} warm-up runs each; launchers alternate rep by \
         rep, order flipped every rep; {:?} hard timeout per run. \
         Ratio = oxrun median / hydra median.\n\n\
         - date: {}\n- host: {}\n- tree: {}\n- oxrun: {}\n- hydra: {}\n\
         - command: `cargo run --release -p oxmpi-benches --bin startup -- --reps {} --ranks {}`\n",
        o.reps,
        o.timeout,
        utc_timestamp(SystemTime::now()),
        host_cpu(),
        tree_state_of(&["launcher", "runtime/src/bootstrap"]),
        version_of(&oxrun, &["--version"], "oxrun"),
        version_of(&hydra, &["--version"], "Version:"),
        o.reps,
        ranks.join(","),
    );
    // UCX (MPICH's netmod here) scans network interfaces in MPI_Init and
    // fails with "No such device" when one vanishes mid-scan, as happens on
    // hosts where other jobs create and delete veth pairs; one node needs
    // only shared memory anyway. Both launchers get the same setting.
    let programs = [
        (
            "Trivial PMI program (`pmi_trivial`: PMI-1 put, fence, get, finalize)",
            &trivial,
            vec![],
        ),
        (
            "MPICH `MPI_Init` + `MPI_Finalize` (`benches/c/init_finalize.c`, `mpicc.mpich -O2`)",
            &c_prog,
            vec![("UCX_TLS".to_string(), ucx_tls())],
        ),
    ];
    for (title, program, env) in programs {
        let (mut rows, mut failures) = (Vec::new(), Vec::new());
        for &n in &o.ranks {
            eprintln!("startup: {} at N={n} ...", program.display());
            let row = measure(&timer, launchers, program, n, o.reps, &env, &mut failures)?;
            rows.push(row);
        }
        report += &format!("\n## {title}\n\n");
        for (k, v) in &env {
            report += &format!("Environment for both launchers: `{k}={v}`.\n\n");
        }
        report += &table(&rows);
        if !failures.is_empty() {
            report += "\nFailed runs (retried, not counted):\n\n";
            for f in &failures {
                report += &format!("- {f}\n");
            }
        }
    }
    Ok(report)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse_args(&args).and_then(|o| {
        let report = run(&o)?;
        if let Some(parent) = o.out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&o.out, &report).map_err(|e| format!("{}: {e}", o.out.display()))?;
        print!("{report}");
        eprintln!("startup: wrote {}", o.out.display());
        Ok(())
    });
    exit_on_error("startup", result);
}
