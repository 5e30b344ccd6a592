//! Collective comparison: OxMPI (Rust API) next to MPICH and Open MPI
//! running the same benchmark written in C, in one run; and a check of
//! OxMPI's cost model against measured times.
//!
//! ```text
//! cargo build --release --workspace --bins --examples
//! cargo run --release -p oxmpi-benches --bin coll -- [--quick] [--ranks 2,4,8]
//!     [--model] [--timeout SECS] [--settle SECS] [--results DIR]
//! ```
//!
//! Comparison (the default): builds `benches/c/coll.c` with `mpicc.mpich`
//! and `mpicc.openmpi` (next to this program, in `target/release/`), then
//! at each rank count runs the whole benchmark (allreduce, bcast,
//! allgather, alltoall, reduce_scatter at 8 B .. 64 MiB; see
//! `coll_bench.rs` / `coll.c`) under `oxrun` (OxMPI's `coll_bench`, with
//! `OXMPI_DEBUG=coll` so the report can say which algorithm OxMPI chose),
//! `mpiexec.hydra` (MPICH) and `mpirun.openmpi` (Open MPI), each job under
//! a hard timeout; a job past it is killed and recorded as "did not finish"
//! with the sizes it got through. Writes `RESULTS/coll.md` (also printed):
//! the geometric mean over sizes of OxMPI's time / the faster peer's, per
//! collective and rank count, the largest gaps, and per collective and
//! rank count a table of size vs time and bus bandwidth; `RESULTS/coll.csv`
//! (`impl,coll,ranks,size,metric,value`, plus `status` lines per job and
//! `algo` lines with OxMPI's choices) and `RESULTS/coll.png` (by
//! `benches/plot/coll_plot.py`, which needs Python 3 with matplotlib).
//!
//! `--model`: for every algorithm of allreduce, bcast and allgather,
//! forced with `OXMPI_<COLL>_ALGO`, at each rank count and a few sizes,
//! measures OxMPI's time and sets it beside
//! [`oxmpi::coll::select::Model::SHM`]'s prediction; says whether the
//! model's choice is the fastest algorithm measured; fits alpha, beta and
//! gamma to the measurements (least squares on relative error, no negative
//! parameter). Writes `RESULTS/coll_model.txt` (the fit for ranks with a
//! core each, as a model file for `OXMPI_COLL_MODEL`),
//! `RESULTS/coll_model.md` (also printed) and
//! `RESULTS/coll_model.csv`.
//!
//! `RESULTS` defaults to `benches/results`; `--quick` uses shorter rounds
//! and timeouts.

mod compare;
mod model;
mod report;
mod results;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use oxmpi::coll::select::Coll;
use oxmpi_benches::capture::{kill_survivors, Capturer};
use oxmpi_benches::cli::{exit_on_error, results_dir, write_result, Flags};
use oxmpi_benches::format::{KIB, MIB};
use oxmpi_benches::peers::{plot_and_say, Builds, Impl, Launchers};

const USAGE: &str = "usage: coll [--quick] [--model] [--ranks N,N,...] [--timeout SECS] \
                     [--settle SECS] [--results DIR]";

/// The collectives of the benchmark, by its names.
const COLLS: [&str; 5] = [
    "allreduce",
    "bcast",
    "allgather",
    "alltoall",
    "reduce_scatter",
];

/// Collectives whose algorithms `--model` forces one by one.
const MODEL_COLLS: [Coll; 3] = [Coll::Allreduce, Coll::Bcast, Coll::Allgather];

/// Sizes (as the benchmark counts them) `--model` measures.
const MODEL_SIZES: [u64; 5] = [8, 512, 32 * KIB, 512 * KIB, 8 * MIB];

/// Rank counts at which the geometric-mean target applies.
const TARGET_RANKS: [u32; 2] = [2, 4];
/// A comparison job that saw the machine's core-to-core latency above
/// [`oxmpi_benches::machine::SLOW`] times the best seen before its rank
/// count's jobs runs again (the VM changes speed for minutes at a time,
/// for every implementation alike), at most this many times in all; the
/// run that saw the fastest machine is kept.
const MAX_RUNS: usize = 3;

struct Options {
    quick: bool,
    model: bool,
    ranks: Vec<u32>,
    timeout: Option<Duration>,
    settle: Option<Duration>,
    results: PathBuf,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        model: false,
        ranks: vec![2, 4, 8],
        timeout: None,
        settle: None,
        results: results_dir(),
    };
    let mut flags = Flags::new(args, USAGE);
    while let Some(flag) = flags.next_flag() {
        match flag {
            "--quick" => o.quick = true,
            "--model" => o.model = true,
            "--ranks" => {
                let v = flags.value(flag)?;
                let ranks: Option<Vec<u32>> = v
                    .split(',')
                    .map(|s| s.trim().parse().ok().filter(|&n: &u32| n >= 2))
                    .collect();
                o.ranks = ranks
                    .filter(|r| !r.is_empty())
                    .ok_or(format!("bad rank list {v:?} (numbers >= 2)\n{USAGE}"))?;
            }
            "--timeout" => o.timeout = Some(flags.seconds(flag, false)?),
            "--settle" => o.settle = Some(flags.seconds(flag, true)?),
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
}

impl Setup {
    /// The benchmark at `ranks` under `imp` with `args` (plus `quick`).
    fn command(&self, imp: Impl, ranks: u32, args: &[String]) -> Command {
        let mut cmd = self.launch.command(imp, self.builds.of(imp), ranks);
        if self.quick {
            cmd.arg("quick");
        }
        cmd.args(args);
        if imp == Impl::Ox {
            cmd.env("OXMPI_DEBUG", "coll");
        }
        cmd
    }
}

fn run(o: &Options) -> Result<(), String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let setup = Setup {
        launch: Launchers::find()?,
        builds: Builds::beside_me("coll_bench", "coll_c")?,
        quick: o.quick,
        settle: o
            .settle
            .unwrap_or(Duration::from_secs(if o.quick { 5 } else { 20 })),
    };
    if !o.model {
        setup.builds.compile(&dir.join("c/coll.c"))?;
    }
    let stray = kill_survivors(&setup.builds.all());
    if stray > 0 {
        eprintln!("coll: killed {stray} benchmark processes left from an earlier run");
    }
    let timeout = o
        .timeout
        .unwrap_or(Duration::from_secs(match (o.quick, o.model) {
            (true, true) => 30,
            (true, false) => 90,
            (false, true) => 90,
            (false, false) => 240,
        }));
    let capturer = Capturer::new(timeout);
    std::fs::create_dir_all(&o.results).map_err(|e| format!("{}: {e}", o.results.display()))?;
    if o.model {
        return model::run(o, &setup, &capturer, timeout);
    }
    let res = compare::compare(o, &setup, &capturer)?;
    let text = compare::compare_report(o, &setup, &res, timeout);
    let md = write_result(&o.results, "coll.md", &text)?;
    let csv = write_result(&o.results, "coll.csv", &res.csv())?;
    print!("{text}");
    eprintln!("coll: wrote {} and {}", md.display(), csv.display());
    let png = o.results.join("coll.png");
    plot_and_say("coll", &dir.join("plot/coll_plot.py"), &csv, &png);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    exit_on_error("coll", parse_args(&args).and_then(|o| run(&o)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let a: Vec<String> = ["--quick", "--ranks", "2,4", "--model"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = parse_args(&a).unwrap();
        assert!(o.quick && o.model);
        assert_eq!(o.ranks, vec![2, 4]);
        assert!(parse_args(&["--ranks".into(), "1".into()]).is_err());
        assert!(parse_args(&["--bogus".into()]).is_err());
    }
}
