//! The C ABI's overhead: one C benchmark binary, compiled once with
//! `mpicc.mpich`, run on MPICH and on OxMPI (through `LD_LIBRARY_PATH`),
//! next to the same benchmark on OxMPI's Rust API (issue 5, bar 4: OxMPI
//! through the C ABI no more than 5% slower than through its Rust API on
//! small messages).
//!
//! ```text
//! cargo build --release -p oxmpi-launcher -p oxmpi-abi -p oxmpi-benches
//! cargo run --release -p oxmpi-benches --bin abi_compare -- [--runs N]
//!     [--timeout SECS] [--results DIR]
//! ```
//!
//! Builds `benches/c/p2p.c` and `benches/c/coll.c` with `mpicc.mpich`
//! (into `target/release/abi-compare/`) and installs OxMPI's release build
//! there (`scripts/install.sh --no-build`: `lib/` holds `libmpich.so.12`
//! and `libmpi.so.12`). Then, `--runs` times (default 21: a run takes
//! about a second, and one run's figures vary by a few percent), one after
//! the other so that a disturbance hits all three alike:
//!
//! * latency (`p2p latency quick`, 2 ranks; sizes 0 B .. 4 KiB kept):
//!   the C binary under `mpiexec.hydra` (MPICH), the same binary under
//!   `oxrun` with our library (OxMPI via the C ABI), and `p2p_bench` under
//!   `oxrun` (OxMPI's Rust API);
//! * allreduce (`coll allreduce quick`, f32 sum, 2 ranks, 8 B .. 64 KiB):
//!   the same three with `coll.c` / `coll_bench`.
//!
//! Each run reports per size the median half round trip (latency) or the
//! best round's time per call (allreduce). The VM these run on changes
//! speed for minutes at a time, so the machine's own core-to-core latency
//! is measured before and after each benchmark of a run
//! ([`core_to_core_ns`]); a run whose benchmark saw it more than `SLOW`
//! times the session's best is left out of that table (all are kept when
//! fewer than three are steady). The table has the median over the kept
//! runs, and the ratio OxMPI-via-C-ABI / OxMPI-Rust-API per size (the
//! median of each kept run's ratio: the two ran back to back), flagged
//! when above 1.05. Writes `RESULTS/abi_compare.md` (also printed) and
//! `RESULTS/abi_compare.csv` (every run's figures). `RESULTS` defaults to
//! `benches/results`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use oxmpi_benches::capture::{kill_job_on_signals, Capturer};
use oxmpi_benches::cli::{results_dir, write_result, Flags};
use oxmpi_benches::format::ratio;
use oxmpi_benches::machine::{core_to_core_ns, SLOW};
use oxmpi_benches::peers::{
    beside_me, compile_c, parse_records, stderr_to_stdout, tree_state, ucx_tls, version_of,
};
use oxmpi_benches::report::{host_cpu, utc_timestamp};
use oxmpi_benches::stats::median;

const USAGE: &str = "usage: abi_compare [--runs N] [--timeout SECS] [--results DIR]";

/// Largest latency size kept (the "small messages" of the bar).
const LAT_MAX: u64 = 4096;
/// Allreduce sizes (bytes).
const ALLREDUCE_SIZES: &str = "8,64,512,4096,32768,65536";
/// Ranks in every job.
const RANKS: &str = "2";
/// Ratio above which a size is flagged.
const LIMIT: f64 = 1.05;
/// How long each machine probe bounces its cache line.
const PROBE: Duration = Duration::from_millis(20);

/// The three ways one benchmark runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Way {
    /// The C binary on MPICH, under `mpiexec.hydra`.
    Mpich,
    /// The same C binary on OxMPI's `libmpich.so.12`, under `oxrun`.
    CAbi,
    /// The Rust benchmark on OxMPI's Rust API, under `oxrun`.
    Rust,
}

const WAYS: [Way; 3] = [Way::Mpich, Way::CAbi, Way::Rust];

impl Way {
    fn key(self) -> &'static str {
        match self {
            Way::Mpich => "mpich",
            Way::CAbi => "oxmpi-c-abi",
            Way::Rust => "oxmpi-rust",
        }
    }
}

/// One benchmark: what it measures and how each way starts it.
struct Bench {
    /// `latency` or `allreduce`.
    name: &'static str,
    /// The figure kept from its CSV.
    metric: &'static str,
    /// The C program.
    c_exe: PathBuf,
    /// The Rust program.
    rust_exe: PathBuf,
    /// Arguments (the same for both programs).
    args: Vec<&'static str>,
    /// Sizes kept.
    keep: fn(u64) -> bool,
}

struct Paths {
    oxrun: PathBuf,
    hydra: PathBuf,
    lib: PathBuf,
}

impl Bench {
    fn command(&self, way: Way, p: &Paths) -> Command {
        let mut c;
        match way {
            Way::Mpich => {
                c = Command::new(&p.hydra);
                c.args(["-n", RANKS, "-bind-to", "core"]);
                c.env("UCX_TLS", ucx_tls());
                c.arg(&self.c_exe);
            }
            Way::CAbi => {
                c = Command::new(&p.oxrun);
                c.args(["-n", RANKS]).arg(&self.c_exe);
                c.env("LD_LIBRARY_PATH", &p.lib);
            }
            Way::Rust => {
                c = Command::new(&p.oxrun);
                c.args(["-n", RANKS]).arg(&self.rust_exe);
            }
        }
        c.args(&self.args);
        stderr_to_stdout(&c)
    }
}

struct Options {
    runs: usize,
    timeout: Duration,
    results: PathBuf,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 21,
        timeout: Duration::from_secs(60),
        results: results_dir(),
    };
    let mut flags = Flags::new(args, USAGE);
    while let Some(flag) = flags.next_flag() {
        match flag {
            "--runs" => {
                let v = flags.value(flag)?;
                o.runs = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| flags.bad(flag, v))?;
            }
            "--timeout" => o.timeout = flags.seconds(flag, false)?,
            "--results" => o.results = PathBuf::from(flags.value(flag)?),
            other => return Err(flags.refuse(other)),
        }
    }
    Ok(o)
}

fn on_path(name: &str) -> Result<PathBuf, String> {
    oxmpi_benches::peers::on_path(name).ok_or(format!("{name} not found on PATH"))
}

/// Installs the release build into `prefix` (for its `lib/`).
fn install(prefix: &Path) -> Result<(), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install.sh");
    let out = Command::new(script)
        .arg("--prefix")
        .arg(prefix)
        .arg("--no-build")
        .output()
        .map_err(|e| format!("scripts/install.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "scripts/install.sh failed (build first: cargo build --release -p oxmpi-launcher \
             -p oxmpi-abi -p oxmpi-benches):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// (bench, way, size) -> (run, value) per run.
type Samples = BTreeMap<(&'static str, Way, u64), Vec<(usize, f64)>>;

/// (bench, run) -> the slower of the machine probes around it (ns).
type Probes = BTreeMap<(&'static str, usize), f64>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse_args(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&opts) {
        eprintln!("abi_compare: {e}");
        std::process::exit(1);
    }
}

fn run(opts: &Options) -> Result<(), String> {
    kill_job_on_signals();
    let started = Instant::now();
    let oxrun = beside_me("oxrun")?;
    let dir = oxrun
        .parent()
        .ok_or("oxrun has no directory")?
        .join("abi-compare");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let prefix = dir.join("prefix");
    install(&prefix)?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c");
    let (p2p_c, coll_c) = (dir.join("p2p_c"), dir.join("coll_c"));
    compile_c("mpicc.mpich", &src.join("p2p.c"), &p2p_c)?;
    compile_c("mpicc.mpich", &src.join("coll.c"), &coll_c)?;
    let paths = Paths {
        oxrun,
        hydra: on_path("mpiexec.hydra")?,
        lib: prefix.join("lib"),
    };
    let benches = [
        Bench {
            name: "latency",
            metric: "lat_us_median",
            c_exe: p2p_c,
            rust_exe: beside_me("p2p_bench")?,
            args: vec!["latency", "quick"],
            keep: |s| s <= LAT_MAX,
        },
        Bench {
            name: "allreduce",
            metric: "time_us",
            c_exe: coll_c,
            rust_exe: beside_me("coll_bench")?,
            args: vec!["allreduce", "quick", "sizes=8,64,512,4096,32768,65536"],
            keep: |_| true,
        },
    ];
    debug_assert!(benches[1].args[2].ends_with(ALLREDUCE_SIZES));

    let capturer = Capturer::new(opts.timeout);
    let mut samples = Samples::new();
    let mut probes = Probes::new();
    let mut csv = String::from("run,bench,way,ranks,size,metric,value\n");
    let mut failures = Vec::new();
    for run in 0..opts.runs {
        for b in &benches {
            let before = core_to_core_ns(PROBE);
            for way in WAYS {
                let mut cmd = b.command(way, &paths);
                let got = capturer
                    .run(&mut cmd)
                    .map_err(|e| format!("cannot start {}: {e}", b.name))?;
                if !got.success() {
                    failures.push(format!(
                        "run {run} {} {}: {:?} after {:.1} s\n{}{}",
                        b.name,
                        way.key(),
                        got.ending,
                        got.elapsed.as_secs_f64(),
                        got.stdout,
                        got.stderr_tail
                    ));
                }
                for r in parse_records(&got.stdout) {
                    if r.what != b.name || r.metric != b.metric || !(b.keep)(r.size) {
                        continue;
                    }
                    let _ = writeln!(
                        csv,
                        "{run},{},{},{},{},{},{}",
                        b.name,
                        way.key(),
                        r.ranks,
                        r.size,
                        r.metric,
                        r.value
                    );
                    samples
                        .entry((b.name, way, r.size))
                        .or_default()
                        .push((run, r.value));
                }
            }
            if let (Some(a), Some(z)) = (before, core_to_core_ns(PROBE)) {
                probes.insert((b.name, run), a.max(z));
            }
        }
        eprintln!(
            "abi_compare: run {} of {} done ({:.0} s)",
            run + 1,
            opts.runs,
            started.elapsed().as_secs_f64()
        );
    }

    let report = report(
        opts,
        &benches,
        &samples,
        &probes,
        &failures,
        started.elapsed(),
    );
    print!("{report}");
    std::fs::create_dir_all(&opts.results).map_err(|e| e.to_string())?;
    for (name, text) in [("abi_compare.md", &report), ("abi_compare.csv", &csv)] {
        write_result(&opts.results, name, text)?;
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} job(s) failed:\n{}",
            failures.len(),
            failures.join("\n")
        ))
    }
}

/// The runs of `bench` to tabulate: those that saw the machine within
/// `SLOW` of the session's best probe (all of them when fewer than three
/// did, or when nothing was probed).
fn steady_runs(bench: &str, runs: usize, probes: &Probes) -> Vec<usize> {
    let best = probes.values().copied().fold(f64::INFINITY, f64::min);
    let steady: Vec<usize> = (0..runs)
        .filter(|&r| probes.get(&(bench, r)).is_some_and(|&ns| ns <= SLOW * best))
        .collect();
    if steady.len() >= 3 {
        steady
    } else {
        (0..runs).collect()
    }
}

/// The median over `runs` of `f(run)` where it has a value.
fn median_over(runs: &[usize], f: impl Fn(usize) -> Option<f64>) -> Option<f64> {
    let mut v: Vec<f64> = runs.iter().filter_map(|&r| f(r)).collect();
    (!v.is_empty()).then(|| median(&mut v))
}

fn report(
    opts: &Options,
    benches: &[Bench],
    samples: &Samples,
    probes: &Probes,
    failures: &[String],
    took: Duration,
) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# OxMPI through the C ABI vs its Rust API\n");
    let _ = writeln!(
        md,
        "One C benchmark binary per table, built once with `mpicc.mpich -O2` \
         (`benches/c/p2p.c`, `benches/c/coll.c`), run on MPICH (`mpiexec.hydra`) and on \
         OxMPI (`oxrun`, `LD_LIBRARY_PATH` at OxMPI's `libmpich.so.12`), next to the same \
         benchmark on OxMPI's Rust API (`p2p_bench`, `coll_bench` under `oxrun`). \
         {RANKS} ranks; {} runs, the three ways one after the other each run. The \
         machine's core-to-core latency is probed before and after each benchmark of a \
         run: a run that saw it above {SLOW}x the session's best is left out (the VM \
         changes speed for minutes at a time). Each cell is the median over the kept runs; \
         C ABI / Rust is the median of each kept run's ratio (the two ran back to back), \
         C ABI / MPICH the ratio of the medians. **Bold**: above {LIMIT} (bar 4 of issue 5: \
         no more than 5% slower on small messages).\n",
        opts.runs
    );
    let _ = writeln!(
        md,
        "- when: {}\n- host: {}\n- tree: {}\n- MPICH: {}\n- took: {:.0} s\n",
        utc_timestamp(SystemTime::now()),
        host_cpu(),
        tree_state(),
        version_of(
            &oxmpi_benches::peers::on_path("mpiexec.hydra").unwrap_or_default(),
            &["--version"],
            "Version:"
        ),
        took.as_secs_f64()
    );
    for b in benches {
        let what = match b.name {
            "latency" => "Latency: ping-pong half round trip, median over rounds (µs)",
            _ => "Allreduce (f32 sum): best round's time per call (µs)",
        };
        let _ = writeln!(md, "## {what}\n");
        let kept = steady_runs(b.name, opts.runs, probes);
        let probed: Vec<String> = (0..opts.runs)
            .map(|r| {
                probes
                    .get(&(b.name, r))
                    .map_or("-".into(), |ns| format!("{ns:.0}"))
            })
            .collect();
        let _ = writeln!(
            md,
            "Runs kept: {} of {} (machine probe per run, ns: {}).\n",
            kept.len(),
            opts.runs,
            probed.join(", ")
        );
        let _ = writeln!(
            md,
            "| size (B) | MPICH | OxMPI via C ABI | OxMPI Rust API | C ABI / Rust | C ABI / MPICH |"
        );
        let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|");
        let sizes: std::collections::BTreeSet<u64> = samples
            .keys()
            .filter(|k| k.0 == b.name)
            .map(|k| k.2)
            .collect();
        let mut over = 0;
        for size in sizes {
            let value = |way: Way, run: usize| {
                samples
                    .get(&(b.name, way, size))?
                    .iter()
                    .find(|(r, _)| *r == run)
                    .map(|(_, v)| *v)
            };
            let cell = |way: Way| median_over(&kept, |run| value(way, run));
            let (m, c, r) = (cell(Way::Mpich), cell(Way::CAbi), cell(Way::Rust));
            let fmt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
            let cr = median_over(&kept, |run| {
                ratio(value(Way::CAbi, run), value(Way::Rust, run))
            });
            let cr_text = match cr {
                Some(x) if x > LIMIT => {
                    over += 1;
                    format!("**{x:.3}**")
                }
                Some(x) => format!("{x:.3}"),
                None => "-".into(),
            };
            let cm = ratio(c, m).map_or("-".into(), |x| format!("{x:.3}"));
            let _ = writeln!(
                md,
                "| {size} | {} | {} | {} | {cr_text} | {cm} |",
                fmt(m),
                fmt(c),
                fmt(r)
            );
        }
        let _ = writeln!(
            md,
            "\n{} size(s) above {LIMIT}.\n",
            if over == 0 {
                "No".to_string()
            } else {
                over.to_string()
            }
        );
    }
    if !failures.is_empty() {
        let _ = writeln!(md, "## Failed jobs\n");
        for f in failures {
            let _ = writeln!(md, "```\n{}\n```", f.trim_end());
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_that_caught_a_slow_machine_are_left_out() {
        let mut probes = Probes::new();
        for (run, ns) in [(0, 55.0), (1, 260.0), (2, 60.0), (3, 58.0), (4, 90.0)] {
            probes.insert(("latency", run), ns);
        }
        assert_eq!(steady_runs("latency", 5, &probes), [0, 2, 3]);
        // Fewer than three steady: all kept.
        probes.insert(("latency", 3), 300.0);
        assert_eq!(steady_runs("latency", 5, &probes), [0, 1, 2, 3, 4]);
        // Nothing probed (one CPU): all kept.
        assert_eq!(steady_runs("allreduce", 2, &Probes::new()), [0, 1]);
    }

    #[test]
    fn median_over_skips_missing_runs() {
        let v = [Some(3.0), None, Some(1.0), Some(2.0)];
        assert_eq!(median_over(&[0, 1, 2, 3], |r| v[r]), Some(2.0));
        assert_eq!(median_over(&[1], |r| v[r]), None);
    }
}
