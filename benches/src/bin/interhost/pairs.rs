//! `interhost pairs`: OxMPI's ping-pong between two ranks of one host and
//! of two hosts inside the same multi-host job, next to a one-host job and
//! a 1+1 job. In a 2+2 job placed by slot ranks 0 and 1 share a host (the
//! shared-memory path of a rank that also has fabric peers); placed by
//! node they do not. Ranks 2 and 3 wait in the benchmark's closing
//! barrier meanwhile.
//!
//! `--before DIR` also runs the build in DIR (its `oxrun` and `libmpi.so`),
//! alternating which build goes first in each run, so that both see the
//! same machine; each figure is the best of the runs' minima. Before each
//! job the runner waits (up to 20 s) for other programs to leave the
//! CPUs; the busiest share seen is reported.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use oxmpi_benches::peers::{compile_c, settle, QUIET};
use oxmpi_tests::hosts::TestHosts;

use super::{
    beside_me, pick, read_flags, read_results, run_limited, work_lib, write_results, EARLIER,
};

/// Message sizes reported.
const SIZES: [usize; 3] = [8, 64 << 10, 1 << 20];
/// Longest wait for other programs to leave the CPUs before a job.
const SETTLE: Duration = Duration::from_secs(20);
/// The heading of this mode's section of the results file.
const HEADING: &str = "## Pairs within and across hosts";

/// A job layout: ranks per host, oxrun's placement flags, and where ranks
/// 0 and 1 are.
struct Layout {
    name: &'static str,
    ranks: &'static [usize],
    extra: &'static [&'static str],
    pair: &'static str,
}

const LAYOUTS: [Layout; 4] = [
    Layout {
        name: "one host, 2 ranks",
        ranks: &[2],
        extra: &[],
        pair: "same host",
    },
    Layout {
        name: "2+2 by slot",
        ranks: &[2, 2],
        extra: &[],
        pair: "same host",
    },
    Layout {
        name: "1+1",
        ranks: &[1, 1],
        extra: &[],
        pair: "across",
    },
    Layout {
        name: "2+2 by node",
        ranks: &[2, 2],
        extra: &["--map-by", "node"],
        pair: "across",
    },
];

/// One OxMPI build: its launcher and the folder holding its `libmpi.so.12`.
struct Build {
    label: &'static str,
    oxrun: PathBuf,
    libdir: PathBuf,
}

impl Build {
    fn in_dir(label: &'static str, oxrun: PathBuf, lib: &Path) -> Result<Build, String> {
        if !lib.is_file() || !oxrun.is_file() {
            return Err(format!(
                "{label}: {} or {} missing",
                oxrun.display(),
                lib.display()
            ));
        }
        Ok(Build {
            label,
            oxrun,
            libdir: work_lib(lib)?,
        })
    }
}

/// Runs the pairs comparison (arguments after `pairs`).
pub(super) fn run(args: &[String]) -> Result<(), String> {
    let super::Options { runs, before, .. } = read_flags(args, true)?;
    let mut builds = vec![Build::in_dir(
        "now",
        beside_me("oxrun")?,
        &beside_me("libmpi.so")?,
    )?];
    if let Some(dir) = &before {
        builds.push(Build::in_dir(
            "before",
            dir.join("oxrun"),
            &dir.join("libmpi.so"),
        )?);
    }
    let hosts = TestHosts::new(2)?;
    let work = hosts.dir().join("pairs");
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let exe = work.join("p2p_mpich");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c/p2p.c");
    compile_c("mpicc.mpich", &src, &exe)?;
    // best[layout][build][size]
    let mut best = vec![vec![[None::<f64>; SIZES.len()]; builds.len()]; LAYOUTS.len()];
    let mut notes = Vec::new();
    let mut busiest = 0f64;
    let sizes = format!("sizes={}", SIZES.map(|n| n.to_string()).join(","));
    for run in 0..runs {
        for (li, layout) in LAYOUTS.iter().enumerate() {
            for k in 0..builds.len() {
                // Alternate which build goes first.
                let bi = (k + run) % builds.len();
                let b = &builds[bi];
                busiest = busiest.max(settle(SETTLE).unwrap_or(0.0));
                let mut cmd = Command::new(&b.oxrun);
                cmd.args(hosts.oxrun_args(layout.ranks))
                    .args(layout.extra)
                    .args(["-x", &format!("LD_LIBRARY_PATH={}", b.libdir.display())])
                    .arg(&exe)
                    .args(["latency", "quick", &sizes]);
                let records = match run_limited("oxmpi", &cmd) {
                    Ok(r) => r,
                    Err(e) => {
                        let first = e.lines().next().unwrap_or("").to_string();
                        notes.push(format!("failed: {} {}: {first}", layout.name, b.label));
                        continue;
                    }
                };
                for (si, &n) in SIZES.iter().enumerate() {
                    let v = pick(&records, "latency", n, "lat_us_min");
                    let cell = &mut best[li][bi][si];
                    *cell = match (*cell, v) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    };
                }
            }
        }
    }
    if busiest >= QUIET {
        notes.push(format!(
            "other programs kept up to {:.0}% of the CPUs busy before some jobs",
            busiest * 100.0
        ));
    }
    let section = report(&builds, &best, runs, before.as_deref(), &notes);
    print!("{section}");
    // This section replaces its previous version, before the earlier runs.
    let old = read_results();
    let (head, earlier) = old.split_at(old.find(EARLIER).unwrap_or(old.len()));
    let kept = head.split_once(HEADING).map_or(head, |(h, _)| h);
    write_results(&format!(
        "{}\n\n{}\n{earlier}",
        kept.trim_end(),
        section.trim_end()
    ))
}

/// This mode's section of the results file.
fn report(
    builds: &[Build],
    best: &[Vec<[Option<f64>; SIZES.len()]>],
    runs: usize,
    before: Option<&Path>,
    notes: &[String],
) -> String {
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let mut md = format!(
        "{HEADING}\n\n\
         `target/release/interhost pairs --runs {runs}{}`: OxMPI alone, \
         `benches/c/p2p.c latency quick` under oxrun; ping-pong half round trip \
         between ranks 0 and 1 (us, best of the runs' minima). In the 2+2 jobs \
         ranks 2 and 3 wait in a barrier meanwhile.\n\n\
         | job | ranks 0 and 1 | build | 8 B | 64 KiB | 1 MiB |\n\
         |---|---|---|---|---|---|\n",
        before.map_or(String::new(), |d| format!(" --before {}", d.display()))
    );
    for (layout, per_build) in LAYOUTS.iter().zip(best) {
        for (b, v) in builds.iter().zip(per_build) {
            let cells: Vec<String> = v.iter().map(|x| cell(*x)).collect();
            md += &format!(
                "| {} | {} | {} | {} |\n",
                layout.name,
                layout.pair,
                b.label,
                cells.join(" | ")
            );
        }
    }
    if !notes.is_empty() {
        md += &format!("\n{}\n", notes.join("; "));
    }
    md
}
