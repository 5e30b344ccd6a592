//! One-sided communication side by side: `benches/c/rma.c` (one source)
//! built with MPICH's mpicc and run on MPICH and, unchanged, on OxMPI's
//! library under oxrun; built with Open MPI's mpicc and run under its
//! mpirun. 2 ranks on this host.
//!
//! ```text
//! cargo build --release --workspace
//! target/release/rma [--runs N] [--timeout SECS] [--only TEST] [--results DIR]
//! ```
//!
//! Each run starts the three one after the other (so a disturbance hits
//! all alike); each figure is the best over `--runs` runs (default 5) of
//! what the benchmark prints (itself the best of 5 rounds): microseconds
//! per operation, MB/s for `put_bw`. Writes `RESULTS/rma.md` (also
//! printed) and `RESULTS/rma.csv`; `RESULTS` defaults to
//! `benches/results`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use oxmpi_benches::capture::{kill_job_on_signals, Capturer};
use oxmpi_benches::cli::{exit_on_error, results_dir, write_result, Flags};
use oxmpi_benches::format::{fmt_ratio, size_label};
use oxmpi_benches::peers::{
    beside_me, compile_c, loads_from, oxmpi_lib_dir, tree_state, Impl, Launchers, PEERS,
};
use oxmpi_benches::report::{host_cpu, utc_timestamp};

const USAGE: &str = "usage: rma [--runs N] [--timeout SECS] [--only TEST] [--results DIR]";

struct Options {
    runs: usize,
    timeout: Duration,
    only: Option<String>,
    results: PathBuf,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 5,
        timeout: Duration::from_secs(120),
        only: None,
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
                    .ok_or(flags.bad(flag, v))?;
            }
            "--timeout" => o.timeout = flags.seconds(flag, false)?,
            "--only" => o.only = Some(flags.value(flag)?.to_string()),
            "--results" => o.results = PathBuf::from(flags.value(flag)?),
            other => return Err(flags.refuse(other)),
        }
    }
    Ok(o)
}

/// (test, size) -> value, for one implementation.
type Figures = BTreeMap<(String, u64), f64>;

/// Whether a test's figure is a bandwidth (more is better).
fn is_bandwidth(test: &str) -> bool {
    test.ends_with("_bw")
}

/// The `rma TEST SIZE VALUE` lines of the benchmark's output.
fn parse(stdout: &str) -> Vec<(String, u64, f64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let ["rma", test, size, value] = f[..] else {
                return None;
            };
            Some((test.to_string(), size.parse().ok()?, value.parse().ok()?))
        })
        .collect()
}

/// Keeps the better of `value` and what `figures` holds.
fn keep_best(figures: &mut Figures, test: String, size: u64, value: f64) {
    let better = |old: f64| {
        if is_bandwidth(&test) {
            value > old
        } else {
            value < old
        }
    };
    match figures.get(&(test.clone(), size)) {
        Some(&old) if !better(old) => {}
        _ => {
            figures.insert((test, size), value);
        }
    }
}

/// The program each implementation runs, and OxMPI's library folder.
struct Programs {
    mpich: PathBuf,
    ompi: PathBuf,
    oxmpi_lib: PathBuf,
}

fn build() -> Result<Programs, String> {
    let lib = beside_me("libmpi.so")?;
    let dir = lib.parent().ok_or("no folder")?.join("rma-bench");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c/rma.c");
    let p = Programs {
        mpich: dir.join("rma_mpich"),
        ompi: dir.join("rma_openmpi"),
        oxmpi_lib: oxmpi_lib_dir(&lib, "rma-lib")?,
    };
    compile_c("mpicc.mpich", &src, &p.mpich)?;
    compile_c("mpicc.openmpi", &src, &p.ompi)?;
    loads_from(&p.mpich, &p.oxmpi_lib)?;
    Ok(p)
}

/// Every implementation's figures, and the failures met.
struct Results {
    figures: BTreeMap<Impl, Figures>,
    failures: Vec<String>,
}

fn measure(o: &Options, p: &Programs) -> Result<Results, String> {
    let launch = Launchers::find()?;
    let capturer = Capturer::new(o.timeout);
    let mut r = Results {
        figures: BTreeMap::new(),
        failures: Vec::new(),
    };
    for run in 1..=o.runs {
        for imp in [Impl::Ox, Impl::Mpich, Impl::Ompi] {
            let prog = if imp == Impl::Ompi { &p.ompi } else { &p.mpich };
            let mut cmd = launch.command(imp, prog, 2);
            if imp == Impl::Ox {
                cmd.env("LD_LIBRARY_PATH", &p.oxmpi_lib);
            }
            if let Some(t) = &o.only {
                cmd.arg(t);
            }
            let out = capturer.run(&mut cmd).map_err(|e| e.to_string())?;
            let figures = r.figures.entry(imp).or_default();
            for (test, size, value) in parse(&out.stdout) {
                keep_best(figures, test, size, value);
            }
            if !out.success() {
                // The last line that says something (Open MPI ends with rules).
                let said = |l: &&str| l.chars().any(char::is_alphanumeric);
                let tail = out
                    .stderr_tail
                    .lines()
                    .rev()
                    .find(said)
                    .unwrap_or("")
                    .trim();
                r.failures.push(format!(
                    "run {run}, {}: {:?}: {tail}",
                    imp.label(),
                    out.ending
                ));
            }
            eprintln!("rma: run {run}/{}, {} done", o.runs, imp.label());
        }
    }
    Ok(r)
}

/// OxMPI's figure over the faster peer's (time ratio; bandwidth as the
/// peer's over OxMPI's): below 1, OxMPI is faster.
fn against_faster(r: &Results, key: &(String, u64)) -> Option<f64> {
    let ox = *r.figures.get(&Impl::Ox)?.get(key)?;
    let peers = PEERS
        .iter()
        .filter_map(|i| r.figures.get(i).and_then(|f| f.get(key)).copied());
    if is_bandwidth(&key.0) {
        peers.reduce(f64::max).map(|best| best / ox)
    } else {
        peers.reduce(f64::min).map(|best| ox / best)
    }
}

fn report(o: &Options, r: &Results) -> String {
    let mut t = String::from("# One-sided communication: OxMPI, MPICH and Open MPI\n\n");
    let _ = writeln!(
        t,
        "`target/release/rma --runs {}`: `benches/c/rma.c`, 2 ranks on one host \
         ({}), {}; tree {}. us per operation (MB/s for put_bw), best of the runs; \
         the ratio is OxMPI over the faster peer (bandwidth: the peer's over OxMPI's), \
         below 1 when OxMPI is faster.\n",
        o.runs,
        host_cpu(),
        utc_timestamp(SystemTime::now()),
        tree_state()
    );
    t.push_str("| test | size | MPICH | Open MPI | OxMPI | OxMPI / faster |\n");
    t.push_str("|---|---:|---:|---:|---:|---:|\n");
    let mut keys: Vec<&(String, u64)> = r.figures.values().flat_map(|f| f.keys()).collect();
    keys.sort();
    keys.dedup();
    let cell = |imp: Impl, key: &(String, u64)| {
        r.figures
            .get(&imp)
            .and_then(|f| f.get(key))
            .map_or("-".to_string(), |v| format!("{v:.3}"))
    };
    let mut logs = Vec::new();
    for key in keys {
        let ratio = against_faster(r, key);
        logs.extend(ratio.map(f64::ln));
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} |",
            key.0,
            size_label(key.1),
            cell(Impl::Mpich, key),
            cell(Impl::Ompi, key),
            cell(Impl::Ox, key),
            fmt_ratio(ratio)
        );
    }
    if !logs.is_empty() {
        let geo = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        let _ = writeln!(t, "\nGeometric mean of the ratios: {geo:.2}.");
    }
    if !r.failures.is_empty() {
        t.push_str("\nFailed jobs (their figures are missing or from other runs):\n\n");
        for f in &r.failures {
            let _ = writeln!(t, "- {f}");
        }
    }
    t
}

fn run(o: &Options) -> Result<(), String> {
    kill_job_on_signals();
    let programs = build()?;
    let results = measure(o, &programs)?;
    let text = report(o, &results);
    let mut csv = String::from("impl,test,size,value\n");
    for (imp, figures) in &results.figures {
        for ((test, size), v) in figures {
            let _ = writeln!(csv, "{},{test},{size},{v}", imp.key());
        }
    }
    std::fs::create_dir_all(&o.results).map_err(|e| format!("{}: {e}", o.results.display()))?;
    let md = write_result(&o.results, "rma.md", &text)?;
    write_result(&o.results, "rma.csv", &csv)?;
    print!("{text}");
    eprintln!("rma: wrote {}", md.display());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    exit_on_error("rma", parse_args(&args).and_then(|o| run(&o)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmarks_lines_parse_and_the_best_is_kept_each_way() {
        let got = parse("rma put_lock 4 0.087\nnoise\nrma put_bw 1024 812.5\n");
        assert_eq!(
            got,
            vec![
                ("put_lock".to_string(), 4, 0.087),
                ("put_bw".to_string(), 1024, 812.5)
            ]
        );
        let mut f = Figures::new();
        keep_best(&mut f, "put_lock".into(), 4, 0.2);
        keep_best(&mut f, "put_lock".into(), 4, 0.1);
        keep_best(&mut f, "put_lock".into(), 4, 0.3);
        keep_best(&mut f, "put_bw".into(), 4, 10.0);
        keep_best(&mut f, "put_bw".into(), 4, 30.0);
        keep_best(&mut f, "put_bw".into(), 4, 20.0);
        assert_eq!(f[&("put_lock".to_string(), 4)], 0.1);
        assert_eq!(f[&("put_bw".to_string(), 4)], 30.0);
    }

    #[test]
    fn options() {
        let o = parse_args(&[
            "--runs".into(),
            "2".into(),
            "--only".into(),
            "get_lock".into(),
        ])
        .unwrap();
        assert_eq!((o.runs, o.only.as_deref()), (2, Some("get_lock")));
        assert!(parse_args(&["--runs".into(), "0".into()]).is_err());
        assert!(parse_args(&["--bogus".into()]).is_err());
    }
}
