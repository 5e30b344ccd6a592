//! Point-to-point comparison: OxMPI (Rust API) next to MPICH and Open MPI
//! running the same benchmark written in C, in one run.
//!
//! ```text
//! cargo build --release --workspace --bins --examples
//! cargo run --release -p oxmpi-benches --bin p2p -- [--quick] [--timeout SECS]
//!     [--results DIR]
//! ```
//!
//! Builds `benches/c/p2p.c` with `mpicc.mpich` and `mpicc.openmpi` (next to
//! this program, in `target/release/`), then runs every mode of the
//! benchmark (see `p2p_bench.rs` / `p2p.c`: `latency`, `bandwidth`,
//! `multipair`, and the `memcpy` reference) under `oxrun` (OxMPI's
//! `p2p_bench`), `mpiexec.hydra` (MPICH) and `mpirun.openmpi` (Open MPI),
//! each job under a hard timeout. A job past its timeout is killed and
//! recorded as "did not finish within T s" (with the sizes it got through).
//! The 2-rank latency and bandwidth jobs run in [`PASSES`] alternating
//! passes, each implementation keeping its best pass per size.
//!
//! Writes a Markdown report with the targets of issue 3 and their ratios
//! (`RESULTS/p2p.md`, also printed), every figure as CSV (`RESULTS/p2p.csv`:
//! `impl,mode,ranks,size,metric,value`; one `status` line per job) and a
//! plot (`RESULTS/p2p.png`, by `benches/plot/p2p_plot.py`, which needs
//! Python 3 with matplotlib). `RESULTS` defaults to `benches/results`.

mod measure;
mod report;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use oxmpi_benches::capture::{kill_job_on_signals, kill_survivors, Capturer};
use oxmpi_benches::cli::{exit_on_error, results_dir, write_result, Flags};
use oxmpi_benches::peers::{plot_and_say, Builds, Impl, Launchers};

const USAGE: &str =
    "usage: p2p [--quick] [--timeout SECS] [--settle SECS] [--budget SECS] [--results DIR]";

struct Options {
    quick: bool,
    timeout: Option<Duration>,
    settle: Option<Duration>,
    budget: Option<Duration>,
    results: PathBuf,
    /// The arguments as given (for the report).
    args: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        timeout: None,
        settle: None,
        budget: None,
        results: results_dir(),
        args: args.to_vec(),
    };
    let mut flags = Flags::new(args, USAGE);
    while let Some(flag) = flags.next_flag() {
        match flag {
            "--quick" => o.quick = true,
            "--timeout" => o.timeout = Some(flags.seconds(flag, false)?),
            "--settle" => o.settle = Some(flags.seconds(flag, true)?),
            "--budget" => o.budget = Some(flags.seconds(flag, false)?),
            "--results" => o.results = PathBuf::from(flags.value(flag)?),
            other => return Err(flags.refuse(other)),
        }
    }
    Ok(o)
}

/// The launchers, the three builds of the benchmark and the settings of
/// every job.
struct Setup {
    launch: Launchers,
    builds: Builds,
    quick: bool,
    /// Longest wait for a quiet machine before each job.
    settle: Duration,
    /// Time after which disturbed jobs are no longer run again.
    budget: Duration,
}

impl Setup {
    /// The command that runs `mode` at `ranks` under `imp`.
    fn command(&self, imp: Impl, mode: &str, ranks: u32) -> Command {
        let mut cmd = self.launch.command(imp, self.builds.of(imp), ranks);
        cmd.arg(mode);
        if self.quick {
            cmd.arg("quick");
        }
        cmd
    }
}

fn run(o: &Options) -> Result<(), String> {
    let setup = Setup {
        launch: Launchers::find()?,
        builds: Builds::beside_me("p2p_bench", "p2p_c")?,
        quick: o.quick,
        settle: o
            .settle
            .unwrap_or(Duration::from_secs(if o.quick { 3 } else { 10 })),
        budget: o
            .budget
            .unwrap_or(Duration::from_secs(if o.quick { 160 } else { 540 })),
    };
    setup
        .builds
        .compile(&Path::new(env!("CARGO_MANIFEST_DIR")).join("c/p2p.c"))?;
    let stray = kill_survivors(&setup.builds.all());
    if stray > 0 {
        eprintln!("p2p: killed {stray} benchmark processes left from an earlier run");
    }
    let timeout = o
        .timeout
        .unwrap_or(Duration::from_secs(if o.quick { 20 } else { 60 }));
    let capturer = Capturer::new(timeout);
    kill_job_on_signals();
    let res = measure::measure(o, &setup, &capturer)?;
    let text = report::report(o, &setup, &res, timeout);
    std::fs::create_dir_all(&o.results).map_err(|e| format!("{}: {e}", o.results.display()))?;
    let md = write_result(&o.results, "p2p.md", &text)?;
    let csv = write_result(&o.results, "p2p.csv", &res.csv())?;
    print!("{text}");
    eprintln!("p2p: wrote {} and {}", md.display(), csv.display());
    let png = o.results.join("p2p.png");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("plot/p2p_plot.py");
    plot_and_say("p2p", &script, &csv, &png);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    exit_on_error("p2p", parse_args(&args).and_then(|o| run(&o)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let o = parse_args(&["--quick".into(), "--timeout".into(), "5".into()]).unwrap();
        assert!(o.quick);
        assert_eq!(o.timeout, Some(Duration::from_secs(5)));
        assert!(parse_args(&["--bogus".into()]).is_err());
    }
}
