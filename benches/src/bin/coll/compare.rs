//! The comparison: every collective under the three implementations at
//! each rank count, a job run again when it caught the machine slow; and
//! its report.

use std::fmt::Write as _;
use std::time::Duration;

use oxmpi_benches::capture::Capturer;
use oxmpi_benches::format::{fmt_ratio, gbps, size_label};
use oxmpi_benches::machine::{faster, too_slow};
use oxmpi_benches::peers::{Impl, IMPLS};
use oxmpi_benches::stats::geomean;

use crate::report::{header, jobs_table, shared_machine_note, us};
use crate::results::{run_job, Job, Results};
use crate::{Options, Setup, COLLS, MAX_RUNS, TARGET_RANKS};

pub fn compare_report(o: &Options, setup: &Setup, res: &Results, timeout: Duration) -> String {
    let what = "The same benchmark (`benches/src/bin/coll_bench.rs` on the OxMPI Rust API, \
                `benches/c/coll.c` built with `mpicc.mpich -O2` and `mpicc.openmpi -O2`); \
                shared memory on one host. Size = per-rank buffer as nccl-tests counts it \
                (allgather: the whole receive buffer; alltoall and reduce_scatter: the whole \
                send buffer). Time = largest average per call over the ranks (µs); busbw = \
                bytes / time × the nccl-tests factor (GB/s = 1e9 B/s). Ratios are OxMPI / \
                the faster of MPICH and Open MPI at each size (lower is better).";
    let mut out = header(
        o,
        setup,
        timeout,
        "Collectives: OxMPI vs MPICH vs Open MPI",
        what,
    );
    out += "- plot: `coll.png`; all figures: `coll.csv`\n\n";
    shared_machine_note(&mut out, &res.jobs);

    // Geometric means.
    let _ = writeln!(
        out,
        "## Geometric mean over sizes of OxMPI time / best of MPICH and Open MPI\n\n\
         Target: ≤ 1.00 at {} ranks. In brackets: sizes compared (those with an OxMPI \
         time and at least one peer's).\n",
        TARGET_RANKS.map(|r| r.to_string()).join(" and ")
    );
    let mut head = String::from("| collective |");
    let mut rule = String::from("|---|");
    for r in &o.ranks {
        let _ = write!(head, " {r} ranks |");
        rule += "--:|";
    }
    let _ = writeln!(out, "{head} target |\n{rule}---|");
    for coll in COLLS {
        let mut row = format!("| {coll} |");
        let mut verdict = Vec::new();
        for &r in &o.ranks {
            let ratios: Vec<f64> = res.ratios(coll, r).iter().map(|x| x.1).collect();
            let g = geomean(&ratios);
            let _ = write!(row, " {} ({}) |", fmt_ratio(g), ratios.len());
            if TARGET_RANKS.contains(&r) {
                verdict.push(match g {
                    Some(g) if g <= 1.0 => format!("{r}: met"),
                    Some(_) => format!("{r}: **missed**"),
                    None => format!("{r}: n/a"),
                });
            }
        }
        let _ = writeln!(out, "{row} {} |", verdict.join(", "));
    }
    out.push('\n');

    // Largest gaps.
    let mut gaps: Vec<(f64, &str, u32, u64)> = Vec::new();
    for coll in COLLS {
        for &r in &o.ranks {
            gaps.extend(
                res.ratios(coll, r)
                    .into_iter()
                    .map(|(s, x)| (x, coll, r, s)),
            );
        }
    }
    gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
    let _ = writeln!(
        out,
        "## Largest gaps (OxMPI slowest against the faster peer)\n\n\
         | collective | ranks | size | OxMPI µs | best peer µs | ratio | OxMPI algorithm (log) |\n\
         |---|--:|--:|--:|--:|--:|---|"
    );
    for &(x, coll, r, s) in gaps.iter().take(12) {
        let best = res.best_peer(coll, r, s);
        let _ = writeln!(
            out,
            "| {coll} | {r} | {} | {} | {} ({}) | {x:.2} | {} |",
            size_label(s),
            us(res.time(Impl::Ox, coll, r, s)),
            us(best.map(|b| b.0)),
            best.map_or("–", |b| b.1.label()),
            res.algo(coll, r, s).unwrap_or("?")
        );
    }
    out.push('\n');

    // Per collective and rank count.
    for coll in COLLS {
        for &r in &o.ranks {
            let _ = writeln!(out, "## {coll}, {r} ranks\n");
            for imp in IMPLS {
                if let Some(note) = res.job(imp, r).and_then(Job::note) {
                    let _ = writeln!(out, "- {}: {note}", imp.label());
                }
            }
            let sizes = res.sizes(coll, r);
            if sizes.is_empty() {
                out += "\nNo figures.\n\n";
                continue;
            }
            out += "\n| size | OxMPI µs | MPICH µs | Open MPI µs | OxMPI busbw | MPICH busbw \
                    | Open MPI busbw | OxMPI / best | OxMPI algorithm |\n\
                    |--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
            for s in sizes {
                let mut row = format!("| {} |", size_label(s));
                for imp in IMPLS {
                    let _ = write!(row, " {} |", us(res.time(imp, coll, r, s)));
                }
                for imp in IMPLS {
                    let _ = write!(row, " {} |", gbps(res.get(imp, coll, r, s, "busbw_GBps")));
                }
                let best = res.best_peer(coll, r, s).map(|b| b.0);
                let ratio = res.time(Impl::Ox, coll, r, s).zip(best).map(|(a, b)| a / b);
                let _ = writeln!(
                    out,
                    "{row} {} | {} |",
                    fmt_ratio(ratio),
                    res.algo(coll, r, s).unwrap_or("?")
                );
            }
            out.push('\n');
        }
    }
    jobs_table(&mut out, &res.jobs, setup.settle);
    out
}

pub fn compare(o: &Options, setup: &Setup, capturer: &Capturer) -> Result<Results, String> {
    let mut res = Results::default();
    let mut best = f64::INFINITY;
    for &ranks in &o.ranks {
        for imp in IMPLS {
            let mut runs = 0;
            loop {
                let cmd = setup.command(imp, ranks, &[]);
                let mut this = Results::default();
                run_job(capturer, setup, &mut this, imp, "all", ranks, cmd)?;
                runs += 1;
                let ns = this.jobs[0].run.machine_ns;
                best = best.min(ns.unwrap_or(f64::INFINITY));
                match res.job_mut(imp, ranks) {
                    Some(kept) if !faster(ns, kept.run.machine_ns) => kept.runs = runs,
                    _ => {
                        res.replace_job(imp, ranks, this);
                        if let Some(kept) = res.job_mut(imp, ranks) {
                            kept.runs = runs;
                        }
                    }
                }
                let kept_ns = res.job_mut(imp, ranks).and_then(|j| j.run.machine_ns);
                if runs >= MAX_RUNS || !too_slow(kept_ns, best) {
                    break;
                }
            }
        }
    }
    Ok(res)
}
