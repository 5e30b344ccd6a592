//! `--model`: every algorithm forced in turn, measured beside the cost
//! model's prediction; alpha, beta and gamma fitted to the measurements.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use oxmpi::coll::algos::Args;
use oxmpi::coll::select::{choose, Coll, Model};
use oxmpi_benches::capture::Capturer;
use oxmpi_benches::cli::write_result;
use oxmpi_benches::format::size_label;
use oxmpi_benches::peers::Impl;
use oxmpi_benches::report::host_cpu;

use crate::report::{header, jobs_table, shared_machine_note, us};
use crate::results::{bench_name, run_job, sel_bytes, Results};
use crate::{Options, Setup, MODEL_COLLS, MODEL_SIZES};

/// One forced-algorithm measurement.
#[derive(Debug, Clone)]
struct Point {
    coll: Coll,
    algo: &'static str,
    ranks: u32,
    size: u64,
    /// Bytes as the selector counts them.
    bytes: usize,
    /// Measured seconds per call.
    measured: f64,
    /// The algorithm OxMPI's log says ran (should be `algo`).
    logged: Option<String>,
}

impl Point {
    fn args(&self) -> Args {
        args(self.ranks, self.bytes)
    }
}

fn args(ranks: u32, bytes: usize) -> Args {
    Args::new(ranks as usize, bytes, true)
}

/// `predict`'s coefficients of alpha, beta and gamma (it is linear in them).
fn terms(c: Coll, algo: &str, a: &Args) -> [f64; 3] {
    // One node: the network's parameters play no part.
    let unit = |alpha, beta, gamma| {
        Model {
            alpha,
            beta,
            gamma,
            ..Model::SHM
        }
        .predict(c, algo, a)
    };
    [
        unit(1.0, 0.0, 0.0),
        unit(0.0, 1.0, 0.0),
        unit(0.0, 0.0, 1.0),
    ]
}

/// Solves the 3x3 (or smaller) system `m x = v` by Gaussian elimination
/// with partial pivoting; `None` when singular.
fn solve(mut m: Vec<Vec<f64>>, mut v: Vec<f64>) -> Option<Vec<f64>> {
    let n = v.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[piv][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, piv);
        v.swap(col, piv);
        for row in col + 1..n {
            let f = m[row][col] / m[col][col];
            let pivot = m[col].clone();
            for (x, p) in m[row][col..].iter_mut().zip(&pivot[col..]) {
                *x -= f * p;
            }
            v[row] -= f * v[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
        x[row] = (v[row] - s) / m[row][row];
    }
    Some(x)
}

/// A fitted model and how well it fits.
#[derive(Debug, Clone, Copy)]
struct Fit {
    model: Model,
    /// Root mean square of (predicted - measured) / measured.
    rms: f64,
    points: usize,
}

/// Root mean square relative error of `m` over `pts`.
fn rms_error(m: &Model, pts: &[&Point]) -> f64 {
    // An algorithm the model says cannot serve a call (infinite: the shared
    // area beyond its capacity, which then falls back to messages) is left out.
    let errs: Vec<f64> = pts
        .iter()
        .map(|p| (m.predict(p.coll, p.algo, &p.args()) - p.measured) / p.measured)
        .filter(|e| e.is_finite())
        .collect();
    (errs.iter().map(|e| e * e).sum::<f64>() / errs.len().max(1) as f64).sqrt()
}

/// Least squares on relative error, `measured ≈ a·alpha + b·beta +
/// c·gamma` with the terms of [`Model::predict`], over every subset of the
/// three parameters (the others zero), keeping the best fit with no
/// negative parameter.
fn fit(pts: &[&Point]) -> Option<Fit> {
    let rows: Vec<([f64; 3], f64)> = pts
        .iter()
        .filter(|p| p.measured > 0.0)
        .map(|p| (terms(p.coll, p.algo, &p.args()), p.measured))
        .filter(|(t, _)| t.iter().all(|x| x.is_finite()))
        .collect();
    if rows.len() < 3 {
        return None;
    }
    let mut best: Option<Fit> = None;
    for mask in 1u8..8 {
        let vars: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
        let k = vars.len();
        let mut m = vec![vec![0.0; k]; k];
        let mut v = vec![0.0; k];
        for (t, y) in &rows {
            // Scaled by 1/y: every row's target is 1.
            let x: Vec<f64> = vars.iter().map(|&i| t[i] / y).collect();
            for i in 0..k {
                v[i] += x[i];
                for j in 0..k {
                    m[i][j] += x[i] * x[j];
                }
            }
        }
        let Some(sol) = solve(m, v) else { continue };
        if sol.iter().any(|&s| s < 0.0 || !s.is_finite()) {
            continue;
        }
        let mut p = [0.0; 3];
        for (&i, &s) in vars.iter().zip(&sol) {
            p[i] = s;
        }
        let model = Model {
            alpha: p[0],
            beta: p[1],
            gamma: p[2],
            ..Model::SHM
        };
        let rms = rms_error(&model, pts);
        if best.is_none_or(|b| rms < b.rms) {
            best = Some(Fit {
                model,
                rms,
                points: pts.len(),
            });
        }
    }
    best
}

/// The model's pick and whether it is the fastest measured, per case.
struct Case<'a> {
    coll: Coll,
    ranks: u32,
    size: u64,
    points: Vec<&'a Point>,
}

impl Case<'_> {
    fn fastest(&self) -> Option<&Point> {
        self.points
            .iter()
            .copied()
            .min_by(|a, b| a.measured.total_cmp(&b.measured))
    }

    fn choice(&self, m: &Model) -> Option<&'static str> {
        let p = self.points.first()?;
        Some(choose(self.coll, &p.args(), m, None).algo.name)
    }

    fn measured(&self, algo: &str) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.algo == algo)
            .map(|p| p.measured)
    }

    /// Whether `m` picks the fastest measured algorithm, or one within 5%
    /// of it (`Some(false)` when not; `None` without measurements).
    fn matches(&self, m: &Model) -> Option<(bool, f64)> {
        let fast = self.fastest()?;
        let chosen = self.measured(self.choice(m)?)?;
        let r = chosen / fast.measured;
        Some((r <= 1.05, r))
    }
}

fn cases(pts: &[Point]) -> Vec<Case<'_>> {
    let mut out: Vec<Case> = Vec::new();
    for p in pts {
        match out
            .iter_mut()
            .find(|c| c.coll == p.coll && c.ranks == p.ranks && c.size == p.size)
        {
            Some(c) => c.points.push(p),
            None => out.push(Case {
                coll: p.coll,
                ranks: p.ranks,
                size: p.size,
                points: vec![p],
            }),
        }
    }
    out
}

fn model_line(m: &Model) -> String {
    format!(
        "alpha = {:.3} µs, beta = 1 / ({:.2} GB/s), gamma = 1 / ({:.2} GB/s)",
        m.alpha * 1e6,
        inv_gbps(m.beta),
        inv_gbps(m.gamma)
    )
}

fn inv_gbps(x: f64) -> f64 {
    if x > 0.0 {
        1.0 / x / 1e9
    } else {
        f64::INFINITY
    }
}

fn model_report(
    o: &Options,
    setup: &Setup,
    res: &Results,
    pts: &[Point],
    timeout: Duration,
) -> String {
    let sizes: Vec<String> = MODEL_SIZES.iter().map(|&s| size_label(s)).collect();
    let what = format!(
        "OxMPI's `coll_bench` with each algorithm of allreduce (f32 sum), bcast and \
         allgather forced by `OXMPI_<COLL>_ALGO`, at sizes {} (as the benchmark counts \
         them; the model sees a rank's block for allgather), against \
         `oxmpi::coll::select::Model::SHM.predict` ({}). \"match\": the model's choice \
         is the fastest algorithm measured or within 5% of it.",
        sizes.join(", "),
        model_line(&Model::SHM)
    );
    let mut out = header(o, setup, timeout, "Collective cost model check", &what);
    out.push('\n');
    shared_machine_note(&mut out, &res.jobs);
    if !res.notes.is_empty() {
        out += "Fallbacks logged:\n\n";
        for n in &res.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    let off: Vec<String> = pts
        .iter()
        .filter(|p| p.logged.as_deref().is_some_and(|l| l != p.algo))
        .map(|p| {
            format!(
                "{} {} at {} ranks {}: ran {}",
                p.coll.name(),
                p.algo,
                p.ranks,
                size_label(p.size),
                p.logged.as_deref().unwrap_or("?")
            )
        })
        .collect();
    if !off.is_empty() {
        let _ = writeln!(
            out,
            "**Forced algorithm not used** (the log names another): {}\n",
            off.join("; ")
        );
    }

    let all: Vec<&Point> = pts.iter().collect();
    let cores = setup.launch.cores;
    let within: Vec<&Point> = pts.iter().filter(|p| p.ranks <= cores).collect();
    let fits = [
        ("all rank counts", fit(&all)),
        ("ranks ≤ cores (not oversubscribed)", fit(&within)),
    ];
    let cs = cases(pts);

    // Summary.
    out += "## Does the model pick the fastest algorithm?\n\n\
            | collective | ranks | cases | matches (SHM) | matches (fit, all) | worst: choice / fastest (SHM) |\n\
            |---|--:|--:|--:|--:|--:|\n";
    let fit_all = fits[0].1.map(|f| f.model);
    for c in MODEL_COLLS {
        for &r in &o.ranks {
            let sel: Vec<&Case> = cs.iter().filter(|k| k.coll == c && k.ranks == r).collect();
            let count = |m: Option<Model>| {
                m.map_or("–".into(), |m| {
                    let n = sel
                        .iter()
                        .filter(|k| k.matches(&m).is_some_and(|x| x.0))
                        .count();
                    n.to_string()
                })
            };
            let worst = sel
                .iter()
                .filter_map(|k| k.matches(&Model::SHM).map(|x| (x.1, k.size)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let _ = writeln!(
                out,
                "| {} | {r} | {} | {} | {} | {} |",
                c.name(),
                sel.len(),
                count(Some(Model::SHM)),
                count(fit_all),
                worst.map_or("–".into(), |w| format!(
                    "{:.2} ({})",
                    w.0,
                    size_label(w.1)
                ))
            );
        }
    }
    out.push('\n');

    // Fitted parameters.
    out += "## Fitted parameters\n\n\
            Least squares on relative error over the measurements below, with the \
            terms of `Model::predict` (each parameter ≥ 0). RMS = root mean square of \
            (predicted − measured) / measured.\n\n\
            | data | points | alpha µs | beta: GB/s | gamma: GB/s | RMS rel. error (fit) | RMS rel. error (SHM) |\n\
            |---|--:|--:|--:|--:|--:|--:|\n";
    for (name, f) in &fits {
        let pts_of: &[&Point] = if name.starts_with("all") {
            &all
        } else {
            &within
        };
        match f {
            Some(f) => {
                let _ = writeln!(
                    out,
                    "| {name} | {} | {:.3} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    f.points,
                    f.model.alpha * 1e6,
                    inv_gbps(f.model.beta),
                    inv_gbps(f.model.gamma),
                    f.rms,
                    rms_error(&Model::SHM, pts_of)
                );
            }
            None => {
                let _ = writeln!(out, "| {name} | {} | – | – | – | – | – |", pts_of.len());
            }
        }
    }
    let _ = writeln!(
        out,
        "| `Model::SHM` (current) | | {:.3} | {:.2} | {:.2} | | |\n",
        Model::SHM.alpha * 1e6,
        inv_gbps(Model::SHM.beta),
        inv_gbps(Model::SHM.gamma)
    );

    // Per collective.
    for c in MODEL_COLLS {
        let names: Vec<&str> = c.algos().iter().map(|i| i.name).collect();
        let _ = writeln!(
            out,
            "## {}: predicted / measured µs (`Model::SHM`)\n",
            c.name()
        );
        let mut head = String::from("| ranks | size |");
        let mut rule = String::from("|--:|--:|");
        for n in &names {
            let _ = write!(head, " {n} |");
            rule += "--:|";
        }
        let _ = writeln!(
            out,
            "{head} model's choice | fastest measured | match |\n{rule}---|---|---|"
        );
        for k in cs.iter().filter(|k| k.coll == c) {
            let mut row = format!("| {} | {} |", k.ranks, size_label(k.size));
            for n in &names {
                let cell = match k.points.iter().find(|p| p.algo == *n) {
                    Some(p) => format!(
                        "{} / {}",
                        us(Some(Model::SHM.predict(c, n, &p.args()) * 1e6)),
                        us(Some(p.measured * 1e6))
                    ),
                    None => "–".into(),
                };
                let _ = write!(row, " {cell} |");
            }
            let m = k.matches(&Model::SHM);
            let _ = writeln!(
                out,
                "{row} {} | {} | {} |",
                k.choice(&Model::SHM).unwrap_or("?"),
                k.fastest().map_or("?", |p| p.algo),
                match m {
                    Some((true, _)) => "yes".to_string(),
                    Some((false, r)) => format!("**no** ({r:.2}×)"),
                    None => "–".into(),
                }
            );
        }
        out.push('\n');
    }
    jobs_table(&mut out, &res.jobs, setup.settle);
    out
}

fn model_check(
    o: &Options,
    setup: &Setup,
    capturer: &Capturer,
) -> Result<(Results, Vec<Point>), String> {
    let mut res = Results::default();
    let mut pts = Vec::new();
    let sizes: Vec<String> = MODEL_SIZES.iter().map(u64::to_string).collect();
    let size_arg = format!("sizes={}", sizes.join(","));
    for &ranks in &o.ranks {
        for c in MODEL_COLLS {
            for info in c.algos() {
                if let Err(why) = info.applicable(&args(ranks, 0)) {
                    eprintln!("coll: skipping {} {}: {why}", c.name(), info.name);
                    continue;
                }
                let var = format!("OXMPI_{}_ALGO", c.name().to_uppercase());
                let mut cmd =
                    setup.command(Impl::Ox, ranks, &[bench_name(c).into(), size_arg.clone()]);
                cmd.env(&var, info.name);
                let what = format!("{}={}", c.name(), info.name);
                let first = res.records.len();
                run_job(capturer, setup, &mut res, Impl::Ox, &what, ranks, cmd)?;
                for r in &mut res.records[first..] {
                    r.imp = format!("oxmpi:{}", info.name);
                }
                let (times, bytes): (HashMap<u64, f64>, HashMap<u64, f64>) = {
                    let of = |metric: &str| {
                        res.records[first..]
                            .iter()
                            .filter(|r| r.metric == metric)
                            .map(|r| (r.size, r.value))
                            .collect()
                    };
                    (of("time_us"), of("bytes"))
                };
                for &size in &MODEL_SIZES {
                    let (Some(&t), Some(&b)) = (times.get(&size), bytes.get(&size)) else {
                        continue;
                    };
                    let sb = sel_bytes(c, b as u64, ranks);
                    let logged = res
                        .decisions
                        .iter()
                        .find(|d| d.coll == c.name() && d.ranks == ranks && d.bytes == sb)
                        .map(|d| d.algo.clone());
                    pts.push(Point {
                        coll: c,
                        algo: info.name,
                        ranks,
                        size,
                        bytes: sb,
                        measured: t * 1e-6,
                        logged,
                    });
                }
                // Decisions differ per forced run: keep only this run's.
                res.decisions.clear();
            }
        }
    }
    Ok((res, pts))
}

fn model_csv(pts: &[Point]) -> String {
    let mut out =
        String::from("coll,algo,ranks,size,selector_bytes,measured_us,predicted_us,logged\n");
    for p in pts {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{:.4},{:.4},{}",
            p.coll.name(),
            p.algo,
            p.ranks,
            p.size,
            p.bytes,
            p.measured * 1e6,
            Model::SHM.predict(p.coll, p.algo, &p.args()) * 1e6,
            p.logged.as_deref().unwrap_or("")
        );
    }
    out
}

/// The whole `--model` run: measures, writes `coll_model.md` (also
/// printed), `coll_model.csv` and `coll_model.txt`.
pub fn run(
    o: &Options,
    setup: &Setup,
    capturer: &Capturer,
    timeout: Duration,
) -> Result<(), String> {
    let write = |name: &str, body: &str| write_result(&o.results, name, body);
    let (res, pts) = model_check(o, setup, capturer)?;
    let text = model_report(o, setup, &res, &pts, timeout);
    let md = write("coll_model.md", &text)?;
    let csv = write("coll_model.csv", &model_csv(&pts))?;
    print!("{text}");
    eprintln!("coll: wrote {} and {}", md.display(), csv.display());
    // The fit over runs with a core per rank, as a model file for
    // OXMPI_COLL_MODEL (see oxmpi::coll::calibrate).
    let within: Vec<&Point> = pts
        .iter()
        .filter(|p| p.ranks <= setup.launch.cores)
        .collect();
    if let Some(f) = fit(&within) {
        let body = format!(
            "# OxMPI collective cost model fitted by `coll --model` on {} ({} points)\n{}",
            host_cpu(),
            f.points,
            f.model.encode()
        );
        let txt = write("coll_model.txt", &body)?;
        eprintln!(
            "coll: wrote {} (use it with OXMPI_COLL_MODEL)",
            txt.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_known_parameters() {
        let truth = Model {
            alpha: 1e-6,
            beta: 1.0 / 4e9,
            gamma: 1.0 / 5e9,
            ..Model::SHM
        };
        let mut pts = Vec::new();
        for c in MODEL_COLLS {
            // One node: the node-aware algorithms do not apply.
            for info in c.algos().iter().filter(|i| !i.multi_node) {
                for ranks in [2, 4, 8] {
                    for size in MODEL_SIZES {
                        let bytes = sel_bytes(c, size, ranks);
                        let measured = truth.predict(c, info.name, &args(ranks, bytes));
                        if !measured.is_finite() {
                            continue; // the algorithm does not apply (the area's capacity)
                        }
                        pts.push(Point {
                            coll: c,
                            algo: info.name,
                            ranks,
                            size,
                            bytes,
                            measured,
                            logged: None,
                        });
                    }
                }
            }
        }
        let refs: Vec<&Point> = pts.iter().collect();
        let f = fit(&refs).unwrap();
        assert!((f.model.alpha / truth.alpha - 1.0).abs() < 1e-6, "{f:?}");
        assert!((f.model.beta / truth.beta - 1.0).abs() < 1e-6, "{f:?}");
        assert!((f.model.gamma / truth.gamma - 1.0).abs() < 1e-6, "{f:?}");
        assert!(f.rms < 1e-9);
        let cs = cases(&pts);
        assert!(cs.iter().all(|k| k.matches(&truth).unwrap().0));
    }
}
