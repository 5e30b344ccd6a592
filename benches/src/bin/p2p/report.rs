//! The Markdown report: targets, one table per mode and rank count, the
//! memcpy reference and the jobs.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use oxmpi_benches::format::{fmt_ratio, mbps, micros, pct, ratio, size_label, KIB, MIB};
use oxmpi_benches::machine::SLOW;
use oxmpi_benches::peers::{tree_state, ucx_tls, Impl, IMPLS, QUIET};
use oxmpi_benches::report::{host_cpu, utc_timestamp};

use crate::measure::{plan, Job, Results, PASSES};
use crate::{Options, Setup};

/// Sizes at or below this count as "small messages" for the latency target.
const SMALL: u64 = KIB;

fn us(v: Option<f64>) -> String {
    micros(v, 3)
}

/// The (ratio, size) pair with the largest ratio.
fn largest(pairs: impl Iterator<Item = (f64, u64)>) -> Option<(f64, u64)> {
    pairs.max_by(|a, b| a.0.total_cmp(&b.0))
}

fn pass(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "**met**",
        Some(false) => "**missed**",
        None => "n/a",
    }
}

/// "did not finish within 60 s (reached 64 KiB)" and the like, for a job
/// that is not `ok`.
fn job_note(job: Option<&Job>) -> Option<String> {
    let j = job?;
    let reached = match j.last_size {
        Some(s) => format!("last size reported: {}", size_label(s)),
        None => "no size finished".into(),
    };
    j.run.note(&reached)
}

struct Report<'a> {
    res: &'a Results,
    settle: Duration,
    cores: u32,
    out: String,
}

impl Report<'_> {
    fn lat(&self, imp: Impl, ranks: u32, size: u64) -> Option<f64> {
        self.res
            .get(imp.key(), "latency", ranks, size, "lat_us_median")
    }

    fn pp_bw(&self, imp: Impl, size: u64) -> Option<f64> {
        self.res
            .get(imp.key(), "latency", 2, size, "bw_MBps_median")
    }

    fn memcpy(&self, size: u64, metric: &str) -> Option<f64> {
        self.res.get("rust", "memcpy", 1, size, metric)
    }

    fn best_c_lat(&self, ranks: u32, size: u64) -> Option<(f64, Impl)> {
        [Impl::Mpich, Impl::Ompi]
            .into_iter()
            .filter_map(|i| self.lat(i, ranks, size).map(|v| (v, i)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    fn line(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn lat_of(&self, imp: Impl, ranks: u32, size: u64, stat: &str) -> Option<f64> {
        self.res.get(imp.key(), "latency", ranks, size, stat)
    }

    fn best_c(&self, ranks: u32, size: u64, stat: &str) -> Option<(f64, Impl)> {
        [Impl::Mpich, Impl::Ompi]
            .into_iter()
            .filter_map(|i| self.lat_of(i, ranks, size, stat).map(|v| (v, i)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// Worst (largest) OxMPI / faster-C latency ratio over the small sizes.
    fn small_worst(&self, stat: &str) -> Option<(f64, u64)> {
        largest(self.res.sizes("latency", 2).into_iter().filter_map(|size| {
            let best = self.best_c(2, size, stat).map(|b| b.0);
            let r = ratio(self.lat_of(Impl::Ox, 2, size, stat), best)?;
            (size <= SMALL).then_some((r, size))
        }))
    }

    fn targets(&mut self, timeout: Duration) {
        const MED: &str = "lat_us_median";
        const MIN: &str = "lat_us_min";
        self.line("## Targets\n");
        self.line(
            "Verdicts use medians; the ratio of the mins (best round of each) is \
             shown beside them because this machine is shared.\n",
        );
        self.line("| target | measured (medians) | ratio | ratio of mins | verdict |");
        self.line("|---|---|--:|--:|---|");
        // Small-message latency.
        let (worst, worst_min) = (self.small_worst(MED), self.small_worst(MIN));
        let zero = self.best_c(2, 0, MED);
        let row = format!(
            "| small-message latency (0 B–{}, 2 ranks, half round trip) ≤ the faster \
             of MPICH and Open MPI | 0 B: OxMPI {} µs, best {} µs ({}); worst size {} \
             (mins: {}) | {} | {} | {} |",
            size_label(SMALL),
            us(self.lat_of(Impl::Ox, 2, 0, MED)),
            us(zero.map(|z| z.0)),
            zero.map_or("–", |z| z.1.label()),
            worst.map_or("–".into(), |w| size_label(w.1)),
            worst_min.map_or("–".into(), |w| size_label(w.1)),
            fmt_ratio(worst.map(|w| w.0)),
            fmt_ratio(worst_min.map(|w| w.0)),
            pass(worst.map(|w| w.0 <= 1.0)),
        );
        self.line(&row);
        // Ping-pong bandwidth vs MPICH: size / half round trip, so the
        // bandwidth ratio is the inverse latency ratio.
        for (size, want) in [(MIB, 1.5), (4 * MIB, 1.1)] {
            let inv = |stat: &str| {
                ratio(
                    self.lat_of(Impl::Mpich, 2, size, stat),
                    self.lat_of(Impl::Ox, 2, size, stat),
                )
            };
            let r = inv(MED);
            let row = format!(
                "| {} ping-pong bandwidth ≥ {want}× MPICH | OxMPI {} MB/s, MPICH {} MB/s \
                 (Open MPI {} MB/s) | {} | {} | {} |",
                size_label(size),
                mbps(self.pp_bw(Impl::Ox, size)),
                mbps(self.pp_bw(Impl::Mpich, size)),
                mbps(self.pp_bw(Impl::Ompi, size)),
                fmt_ratio(r),
                fmt_ratio(inv(MIN)),
                pass(r.map(|r| r >= want)),
            );
            self.line(&row);
        }
        // Against a single memcpy.
        for size in [MIB, 4 * MIB] {
            let (o, warm, cold) = (
                self.lat_of(Impl::Ox, 2, size, MED),
                self.memcpy(size, "warm_us_median"),
                self.memcpy(size, "cold_us"),
            );
            let share = |r: Option<f64>| r.map_or("–".into(), |r| format!("{:.0}%", r * 100.0));
            let row = format!(
                "| {} one-way transfer vs one memcpy of that size (no target; memcpy time / \
                 OxMPI time) | OxMPI {} µs; memcpy warm {} µs, cold {} µs | {} of warm, {} \
                 of cold | {} of warm | |",
                size_label(size),
                us(o),
                us(warm),
                us(cold),
                share(ratio(warm, o)),
                share(ratio(cold, o)),
                share(ratio(warm, self.lat_of(Impl::Ox, 2, size, MIN))),
            );
            self.line(&row);
        }
        // More ranks than cores: per-size ratios over the small sizes.
        let small8 = |stat: &str| {
            let mut v: Vec<f64> = self
                .res
                .sizes("latency", 8)
                .into_iter()
                .filter(|&size| size <= SMALL)
                .filter_map(|size| {
                    ratio(
                        self.lat_of(Impl::Ox, 8, size, stat),
                        self.lat_of(Impl::Ox, 2, size, stat),
                    )
                })
                .collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        let worst8 = largest(self.res.sizes("latency", 8).into_iter().filter_map(|size| {
            let r = ratio(
                self.lat_of(Impl::Ox, 8, size, MED),
                self.lat_of(Impl::Ox, 2, size, MED),
            )?;
            Some((r, size))
        }));
        let row = format!(
            "| {} ranks on {} cores: ping-pong between two of them ≤ 3× the 2-rank \
             figure (ratio: median over 0 B–{} of the per-size ratios) | 0 B: {} µs vs \
             {} µs; 1 KiB: {} µs vs {} µs; worst size {} ({}×) | {} | {} | {} |",
            8,
            self.cores,
            size_label(SMALL),
            us(self.lat_of(Impl::Ox, 8, 0, MED)),
            us(self.lat_of(Impl::Ox, 2, 0, MED)),
            us(self.lat_of(Impl::Ox, 8, SMALL, MED)),
            us(self.lat_of(Impl::Ox, 2, SMALL, MED)),
            worst8.map_or("–".into(), |w| size_label(w.1)),
            fmt_ratio(worst8.map(|w| w.0)),
            fmt_ratio(small8(MED)),
            fmt_ratio(small8(MIN)),
            pass(small8(MED).map(|r| r <= 3.0)),
        );
        self.line(&row);
        for ranks in [4, 8] {
            let job = self.res.job(Impl::Mpich, "latency", ranks);
            let measured = match job {
                Some(j) if j.run.ok() => format!(
                    "finished in {:.1} s; 0 B: {} µs",
                    j.run.elapsed.as_secs_f64(),
                    us(self.lat_of(Impl::Mpich, ranks, 0, MED))
                ),
                Some(_) => job_note(job).unwrap_or_default(),
                None => "not run".into(),
            };
            let row = format!(
                "| (reference) MPICH, the same ping-pong at {ranks} ranks, {:.0} s limit \
                 | {measured} | | | |",
                timeout.as_secs_f64()
            );
            self.line(&row);
        }
        self.line("");
    }

    fn notes_for(&mut self, mode: &str, ranks: u32) {
        for imp in IMPLS {
            if let Some(note) = job_note(self.res.job(imp, mode, ranks)) {
                let line = format!("- {}: {note}", imp.label());
                self.line(&line);
            }
        }
    }

    /// The title and the notes on the jobs of a table; its sizes, or none
    /// after saying there are no figures.
    fn table_start(&mut self, title: &str, mode: &str, ranks: u32) -> Option<Vec<u64>> {
        self.line(&format!("## {title}\n"));
        self.notes_for(mode, ranks);
        let sizes = self.res.sizes(mode, ranks);
        if sizes.is_empty() {
            self.line("\nNo figures.\n");
            return None;
        }
        self.line("");
        Some(sizes)
    }

    fn latency_table(&mut self, ranks: u32) {
        let title = format!(
            "Ping-pong, {ranks} ranks (half round trip, µs: min / median over rounds; \
             MB/s = size / median)"
        );
        let Some(sizes) = self.table_start(&title, "latency", ranks) else {
            return;
        };
        let mut head = String::from("| size |");
        for imp in IMPLS {
            let _ = write!(head, " {} µs |", imp.label());
        }
        head += " OxMPI / best |";
        for imp in IMPLS {
            let _ = write!(head, " {} MB/s |", imp.label());
        }
        head += " OxMPI / MPICH MB/s |";
        self.line(&head);
        self.line("|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for size in sizes {
            let mut row = format!("| {} |", size_label(size));
            for imp in IMPLS {
                let min = self
                    .res
                    .get(imp.key(), "latency", ranks, size, "lat_us_min");
                let med = self.lat(imp, ranks, size);
                let _ = write!(row, " {} / {} |", us(min), us(med));
            }
            let best = self.best_c_lat(ranks, size).map(|b| b.0);
            let _ = write!(
                row,
                " {} |",
                fmt_ratio(ratio(self.lat(Impl::Ox, ranks, size), best))
            );
            let bw = |imp: Impl| {
                self.res
                    .get(imp.key(), "latency", ranks, size, "bw_MBps_median")
            };
            for imp in IMPLS {
                let _ = write!(row, " {} |", mbps(bw(imp)));
            }
            let _ = write!(
                row,
                " {} |",
                fmt_ratio(ratio(bw(Impl::Ox), bw(Impl::Mpich)))
            );
            self.line(&row);
        }
        self.line("");
    }

    fn bandwidth_table(&mut self, mode: &str, ranks: u32, title: &str) {
        let Some(sizes) = self.table_start(title, mode, ranks) else {
            return;
        };
        let mut head = String::from("| size |");
        for imp in IMPLS {
            let _ = write!(head, " {} |", imp.label());
        }
        head += " OxMPI / MPICH | OxMPI / Open MPI |";
        self.line(&head);
        self.line("|--:|--:|--:|--:|--:|--:|");
        for size in sizes {
            let bw = |imp: Impl| self.res.get(imp.key(), mode, ranks, size, "bw_MBps_median");
            let mut row = format!("| {} |", size_label(size));
            for imp in IMPLS {
                let _ = write!(row, " {} |", mbps(bw(imp)));
            }
            let _ = write!(
                row,
                " {} | {} |",
                fmt_ratio(ratio(bw(Impl::Ox), bw(Impl::Mpich))),
                fmt_ratio(ratio(bw(Impl::Ox), bw(Impl::Ompi)))
            );
            self.line(&row);
        }
        self.line("");
    }

    fn memcpy_table(&mut self) {
        self.line(
            "## memcpy reference (Rust `copy_from_slice`, one process)\n\n\
             cold: one copy into a fresh allocation, page faults included (a single \
             timing: noisy for small sizes); warm: median per copy between two buffers \
             touched before. Ping-pong one-way = OxMPI 2-rank median half round trip.\n",
        );
        self.line("| size | cold µs | warm µs | warm MB/s | OxMPI one-way µs | OxMPI / warm memcpy time |");
        self.line("|--:|--:|--:|--:|--:|--:|");
        for size in self.res.sizes("memcpy", 1) {
            if size < KIB {
                continue;
            }
            let warm = self.memcpy(size, "warm_us_median");
            let o = self.lat(Impl::Ox, 2, size);
            let row = format!(
                "| {} | {} | {} | {} | {} | {} |",
                size_label(size),
                us(self.memcpy(size, "cold_us")),
                us(warm),
                mbps(self.memcpy(size, "warm_MBps_median")),
                us(o),
                fmt_ratio(ratio(o, warm)),
            );
            self.line(&row);
        }
        self.line("");
    }

    fn jobs_table(&mut self) {
        self.line("## Jobs\n");
        self.line(&format!(
            "Others' load: share of all CPUs busy over 0.3 s just before / just after \
             the job, with none of ours running (each job first waited up to {:.0} s for \
             it to drop below {:.0}%). A job with others' load at or above that ran \
             again while the time budget lasted; the least disturbed run is kept. \
             Machine: half a round trip of one cache line between two cores, measured \
             just before the job without MPI (the best over its runs); a job whose \
             figure exceeded {SLOW}× the run's best ran again while the budget lasted, \
             keeping per size the best over its runs.\n",
            self.settle.as_secs_f64(),
            QUIET * 100.0
        ));
        self.line(
            "| command | status | wall s | others' load before / after | machine ns | runs |",
        );
        self.line("|---|---|--:|--:|--:|--:|");
        for j in &self.res.jobs {
            let status = if j.run.ok() {
                "ok".to_string()
            } else {
                job_note(Some(j)).unwrap_or_default()
            };
            let row = format!(
                "| `{}` | {} | {:.1} | {} / {} | {} | {} |",
                j.run.command,
                status,
                j.run.elapsed.as_secs_f64(),
                pct(j.run.load_before),
                pct(j.load_after),
                j.run.machine_cell(),
                j.attempts,
            );
            self.out.push_str(&row);
            self.out.push('\n');
        }
        self.line("");
    }
}

pub fn report(o: &Options, setup: &Setup, res: &Results, timeout: Duration) -> String {
    let mut r = Report {
        res,
        settle: setup.settle,
        cores: setup.launch.cores,
        out: String::new(),
    };
    let flag = if o.args.is_empty() {
        String::new()
    } else {
        format!(" -- {}", o.args.join(" "))
    };
    let [ox_version, mpich_version, ompi_version] = setup.launch.versions();
    let header = format!(
        "# Point-to-point: OxMPI vs MPICH vs Open MPI\n\n\
         The same benchmark (`benches/src/bin/p2p_bench.rs` on the OxMPI Rust API, \
         `benches/c/p2p.c` built with `mpicc.mpich -O2` and `mpicc.openmpi -O2`), every \
         job under a {:.0} s hard timeout; shared memory on one host. Latency = half a \
         round trip; MB/s = 1e6 bytes/s; medians over {} rounds unless noted. The \
         2-rank latency and bandwidth jobs run in {PASSES} passes (OxMPI, MPICH, Open MPI, \
         then again): this VM's speed changes for minutes at a time, for every \
         implementation alike, and per size each implementation keeps its best pass. \
         Ratios are OxMPI / other (for latency lower is better, for bandwidth higher).\n\n\
         - date: {}\n- host: {}\n- tree: {}\n- oxrun: {}\n- MPICH: {}\n- Open MPI: {}\n\
         - command: `cargo run --release -p oxmpi-benches --bin p2p{flag}`\n\
         - launch: OxMPI `oxrun -n N` (binds each rank to a core; oversubscribed, \
         round-robin over the cores when they share the ranks evenly); MPICH \
         `UCX_TLS={} mpiexec.hydra -n N` plus `-bind-to core` \
         when N ≤ {} cores (hydra binds nothing by default); Open MPI \
         `mpirun.openmpi --allow-run-as-root --oversubscribe -n N` (binds to cores \
         for N ≤ 2, none when oversubscribed).\n\
         - plot: `p2p.png`; all figures: `p2p.csv`\n",
        timeout.as_secs_f64(),
        if o.quick { 3 } else { 7 },
        utc_timestamp(SystemTime::now()),
        host_cpu(),
        tree_state(),
        ox_version,
        mpich_version,
        ompi_version,
        ucx_tls(),
        setup.launch.cores,
    );
    r.line(&header);
    let loads: Vec<f64> = res.jobs.iter().filter_map(Job::disturbance).collect();
    let busy = res.jobs.iter().filter(|j| j.disturbed()).count();
    let worst = loads.iter().copied().fold(0.0, f64::max);
    if busy > 0 {
        r.line(&format!(
            "**Shared machine:** other programs kept up to {} of the CPUs busy around \
             the jobs kept; {busy} of {} jobs had others' load at or above {:.0}% just \
             before or after them, even after running again (see Jobs). Their figures \
             are disturbed: mins are the better guide to what each library can do.\n",
            pct(Some(worst)),
            res.jobs.len(),
            QUIET * 100.0
        ));
    }
    r.targets(timeout);
    r.latency_table(2);
    r.bandwidth_table(
        "bandwidth",
        2,
        "Streaming bandwidth, 2 ranks (MB/s, median; window of 64 non-blocking sends, \
         at most 64 MiB in flight, then an ack)",
    );
    for (mode, ranks, _) in plan(o.quick) {
        if mode == "multipair" {
            let title = format!(
                "Multi-pair streaming bandwidth, {ranks} ranks ({} pairs at once; \
                 aggregate MB/s, median)",
                ranks / 2
            );
            r.bandwidth_table("multipair", ranks, &title);
        }
    }
    for (mode, ranks, _) in plan(o.quick) {
        if mode == "latency" && ranks > 2 {
            r.latency_table(ranks);
        }
    }
    r.memcpy_table();
    r.jobs_table();
    r.out
}
