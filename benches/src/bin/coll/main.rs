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

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use oxmpi::coll::algos::Args;
use oxmpi::coll::select::{choose, Coll, Model};
use oxmpi_benches::capture::{kill_survivors, Capturer, Ending};
use oxmpi_benches::machine::core_to_core_ns;
use oxmpi_benches::peers::{
    beside_me, compile_c, parse_records, plot, settle, show, stderr_to_stdout, tree_state, Impl,
    Launchers, Record, IMPLS, PEERS, QUIET,
};
use oxmpi_benches::report::{host_cpu, utc_timestamp};

const USAGE: &str = "usage: coll [--quick] [--model] [--ranks N,N,...] [--timeout SECS] \
                     [--settle SECS] [--results DIR]";
const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

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
/// this factor of the best seen before its rank count's jobs runs again
/// (the VM changes speed for minutes at a time, for every implementation
/// alike), at most `MAX_RUNS` times in all; the run that saw the fastest
/// machine is kept.
const SLOW: f64 = 1.5;
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
        results: Path::new(env!("CARGO_MANIFEST_DIR")).join("results"),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--quick" => o.quick = true,
            "--model" => o.model = true,
            "--ranks" => {
                let v = value()?;
                let ranks: Option<Vec<u32>> = v
                    .split(',')
                    .map(|s| s.trim().parse().ok().filter(|&n: &u32| n >= 2))
                    .collect();
                o.ranks = ranks
                    .filter(|r| !r.is_empty())
                    .ok_or(format!("bad rank list {v:?} (numbers >= 2)\n{USAGE}"))?;
            }
            "--timeout" | "--settle" => {
                let v = value()?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|&s| s >= 0.0 && (s > 0.0 || flag == "--settle"))
                    .ok_or(format!("bad value {v:?} for {flag}\n{USAGE}"))?;
                let d = Some(Duration::from_secs_f64(secs));
                if flag == "--timeout" {
                    o.timeout = d;
                } else {
                    o.settle = d;
                }
            }
            "--results" => o.results = PathBuf::from(value()?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// The selector's collective for a benchmark collective.
fn sel_coll(name: &str) -> Coll {
    match name {
        "allreduce" => Coll::Allreduce,
        "bcast" => Coll::Bcast,
        "allgather" => Coll::Allgather,
        "alltoall" => Coll::Alltoall,
        _ => Coll::ReduceScatterBlock,
    }
}

/// The benchmark's name for a selector collective.
fn bench_name(c: Coll) -> &'static str {
    match c {
        Coll::ReduceScatterBlock => "reduce_scatter",
        c => c.name(),
    }
}

/// What the selector sees as the size (see [`Coll::bytes_meaning`]) when
/// the benchmark moves `bytes` on `ranks` ranks: a rank's block for
/// allgather and alltoall, the whole buffer otherwise.
fn sel_bytes(c: Coll, bytes: u64, ranks: u32) -> usize {
    match c {
        Coll::Allgather | Coll::Alltoall => (bytes / u64::from(ranks)) as usize,
        _ => bytes as usize,
    }
}

/// One `oxmpi[coll]:` decision from the debug log.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Decision {
    coll: String,
    bytes: usize,
    ranks: u32,
    algo: String,
}

/// The decisions in `text` (`oxmpi[coll]: COLL N B x P ranks -> ALGO ...`)
/// and the fallback notes (`oxmpi[coll]: forced ...`), each once.
fn parse_log(text: &str) -> (Vec<Decision>, Vec<String>) {
    let (mut seen, mut notes) = (BTreeSet::new(), BTreeSet::new());
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("oxmpi[coll]: ") else {
            continue;
        };
        if rest.starts_with("forced ") {
            notes.insert(rest.to_string());
            continue;
        }
        let w: Vec<&str> = rest.split_whitespace().collect();
        if let [coll, bytes, "B", "x", ranks, "ranks", "->", algo, ..] = w[..] {
            if let (Ok(bytes), Ok(ranks)) = (bytes.parse(), ranks.parse()) {
                seen.insert((coll.to_string(), bytes, ranks, algo.to_string()));
            }
        }
    }
    let decisions = seen
        .into_iter()
        .map(|(coll, bytes, ranks, algo)| Decision {
            coll,
            bytes,
            ranks,
            algo,
        })
        .collect();
    (decisions, notes.into_iter().collect())
}

/// How one job went.
#[derive(Debug, Clone)]
struct Job {
    imp: Impl,
    /// What it ran: `all`, or `COLL=ALGO` in model mode.
    what: String,
    ranks: u32,
    command: String,
    /// `ok`, `dnf` or `failed`.
    status: &'static str,
    detail: String,
    elapsed: Duration,
    /// Busy share of the CPUs just before it started (other programs).
    load_before: Option<f64>,
    /// The machine's core-to-core latency just before it started (ns).
    machine_ns: Option<f64>,
    /// How many times it ran (comparison jobs run again on a slow machine).
    runs: usize,
    /// The last (collective, size) it reported.
    last: Option<(String, u64)>,
}

impl Job {
    /// "did not finish within 60 s (last: alltoall 2 MiB)" and the like,
    /// for a job that is not `ok`.
    fn note(&self) -> Option<String> {
        if self.status == "ok" {
            return None;
        }
        let reached = match &self.last {
            Some((c, s)) => format!("last reported: {c} {}", size_label(*s)),
            None => "nothing reported".into(),
        };
        Some(format!("{} ({reached})", self.detail))
    }
}

/// Everything measured in one invocation.
#[derive(Default)]
struct Results {
    records: Vec<Record>,
    jobs: Vec<Job>,
    decisions: Vec<Decision>,
    notes: Vec<String>,
}

impl Results {
    /// The job of `imp` at `ranks`.
    fn job_mut(&mut self, imp: Impl, ranks: u32) -> Option<&mut Job> {
        self.jobs
            .iter_mut()
            .find(|j| j.imp == imp && j.ranks == ranks)
    }

    /// Puts `new`'s job, figures and log in place of those of the job of
    /// `imp` at `ranks` (if any).
    fn replace_job(&mut self, imp: Impl, ranks: u32, new: Results) {
        self.records
            .retain(|r| !(r.imp == imp.key() && r.ranks == ranks));
        self.jobs.retain(|j| !(j.imp == imp && j.ranks == ranks));
        self.records.extend(new.records);
        self.jobs.extend(new.jobs);
        for d in new.decisions {
            if !self.decisions.contains(&d) {
                self.decisions.push(d);
            }
        }
        for n in new.notes {
            if !self.notes.contains(&n) {
                self.notes.push(n);
            }
        }
    }

    fn get(&self, imp: Impl, coll: &str, ranks: u32, size: u64, metric: &str) -> Option<f64> {
        self.records
            .iter()
            .find(|r| {
                r.imp == imp.key()
                    && r.what == coll
                    && r.ranks == ranks
                    && r.size == size
                    && r.metric == metric
            })
            .map(|r| r.value)
    }

    fn time(&self, imp: Impl, coll: &str, ranks: u32, size: u64) -> Option<f64> {
        self.get(imp, coll, ranks, size, "time_us")
    }

    fn job(&self, imp: Impl, ranks: u32) -> Option<&Job> {
        self.jobs.iter().find(|j| j.imp == imp && j.ranks == ranks)
    }

    /// Sizes with at least one figure for `coll` at `ranks`, ascending.
    fn sizes(&self, coll: &str, ranks: u32) -> Vec<u64> {
        let set: BTreeSet<u64> = self
            .records
            .iter()
            .filter(|r| r.what == coll && r.ranks == ranks)
            .map(|r| r.size)
            .collect();
        set.into_iter().collect()
    }

    /// The algorithm OxMPI's log says it chose for `coll` at `size`.
    fn algo(&self, coll: &str, ranks: u32, size: u64) -> Option<&str> {
        let c = sel_coll(coll);
        let bytes = self.get(Impl::Ox, coll, ranks, size, "bytes")? as u64;
        let want = sel_bytes(c, bytes, ranks);
        self.decisions
            .iter()
            .find(|d| d.coll == c.name() && d.ranks == ranks && d.bytes == want)
            .map(|d| d.algo.as_str())
    }

    /// The faster peer's time and which it was.
    fn best_peer(&self, coll: &str, ranks: u32, size: u64) -> Option<(f64, Impl)> {
        PEERS
            .into_iter()
            .filter_map(|i| self.time(i, coll, ranks, size).map(|t| (t, i)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// OxMPI / faster peer at each size where both exist.
    fn ratios(&self, coll: &str, ranks: u32) -> Vec<(u64, f64)> {
        self.sizes(coll, ranks)
            .into_iter()
            .filter_map(|s| {
                let ox = self.time(Impl::Ox, coll, ranks, s)?;
                let (best, _) = self.best_peer(coll, ranks, s)?;
                (best > 0.0).then_some((s, ox / best))
            })
            .collect()
    }

    fn csv(&self) -> String {
        let mut out = String::from("impl,coll,ranks,size,metric,value\n");
        for r in &self.records {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{}",
                r.imp, r.what, r.ranks, r.size, r.metric, r.value
            );
        }
        for j in &self.jobs {
            let _ = writeln!(
                out,
                "{},{},{},,status,{}",
                j.imp.key(),
                j.what,
                j.ranks,
                j.status
            );
        }
        for d in &self.decisions {
            let _ = writeln!(
                out,
                "oxmpi,{},{},{},algo,{}",
                d.coll, d.ranks, d.bytes, d.algo
            );
        }
        out
    }
}

/// Geometric mean.
fn geomean(v: &[f64]) -> Option<f64> {
    if v.is_empty() || v.iter().any(|&x| x <= 0.0) {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// Paths and settings shared by every job.
struct Setup {
    launch: Launchers,
    ox_bench: PathBuf,
    mpich_bench: PathBuf,
    ompi_bench: PathBuf,
    quick: bool,
    /// Longest wait for a quiet machine before each job.
    settle: Duration,
}

impl Setup {
    fn bench(&self, imp: Impl) -> &Path {
        match imp {
            Impl::Ox => &self.ox_bench,
            Impl::Mpich => &self.mpich_bench,
            Impl::Ompi => &self.ompi_bench,
        }
    }

    /// The benchmark at `ranks` under `imp` with `args` (plus `quick`).
    fn command(&self, imp: Impl, ranks: u32, args: &[String]) -> Command {
        let mut cmd = self.launch.command(imp, self.bench(imp), ranks);
        if self.quick {
            cmd.arg("quick");
        }
        cmd.args(args);
        if imp == Impl::Ox {
            cmd.env("OXMPI_DEBUG", "coll");
        }
        cmd
    }

    fn benches(&self) -> [&Path; 3] {
        [&self.ox_bench, &self.mpich_bench, &self.ompi_bench]
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |v| format!("{:.0}%", v * 100.0))
}

/// Runs one job, keeps its figures, its log's decisions and how it went.
fn run_job(
    capturer: &Capturer,
    setup: &Setup,
    res: &mut Results,
    imp: Impl,
    what: &str,
    ranks: u32,
    cmd: Command,
) -> Result<(), String> {
    let line = show(&cmd);
    let load_before = settle(setup.settle);
    let machine_ns = core_to_core_ns(Duration::from_millis(50));
    eprintln!(
        "coll: {line} (others' CPU load {}, machine {} ns) ...",
        pct(load_before),
        machine_ns.map_or("?".into(), |ns| format!("{ns:.0}"))
    );
    // OxMPI's decisions go to stderr; the capturer keeps all of stdout.
    let mut merged = stderr_to_stdout(&cmd);
    let out = capturer
        .run(&mut merged)
        .map_err(|e| format!("{line}: {e}"))?;
    let records = parse_records(&out.stdout);
    let (decisions, notes) = parse_log(&out.stdout);
    let last = records.last().map(|r| (r.what.clone(), r.size));
    let t = capturer.timeout().as_secs_f64();
    let (status, detail) = match &out.ending {
        Ending::TimedOut => ("dnf", format!("did not finish within {t:.0} s")),
        Ending::Exited(s) if s.success() => ("ok", String::new()),
        Ending::Exited(s) => {
            let text = format!("{}{}", out.stdout, out.stderr_tail);
            let why = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty() && parse_records(l).is_empty());
            ("failed", format!("{s}: `{}`", why.unwrap_or("").trim()))
        }
    };
    let leftovers = kill_survivors(&setup.benches());
    let detail = if leftovers > 0 {
        format!("{detail} ({leftovers} stray ranks killed after the job)")
    } else {
        detail
    };
    if status != "ok" {
        eprintln!("coll:   {detail}");
    }
    res.records.extend(records);
    for d in decisions {
        if !res.decisions.contains(&d) {
            res.decisions.push(d);
        }
    }
    res.notes.extend(notes);
    res.jobs.push(Job {
        imp,
        what: what.to_string(),
        ranks,
        command: line,
        status,
        detail,
        elapsed: out.elapsed,
        load_before,
        machine_ns,
        runs: 1,
        last,
    });
    Ok(())
}

// ---------------------------------------------------------------- format

fn size_label(size: u64) -> String {
    if size >= MIB && size.is_multiple_of(MIB) {
        format!("{} MiB", size / MIB)
    } else if size >= KIB && size.is_multiple_of(KIB) {
        format!("{} KiB", size / KIB)
    } else {
        format!("{size} B")
    }
}

fn us(v: Option<f64>) -> String {
    match v {
        Some(v) if v < 10.0 => format!("{v:.2}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
        None => "–".into(),
    }
}

fn gbps(v: Option<f64>) -> String {
    match v {
        Some(v) if v < 0.01 => format!("{v:.4}"),
        Some(v) if v < 1.0 => format!("{v:.3}"),
        Some(v) => format!("{v:.2}"),
        None => "–".into(),
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or("–".into(), |r| format!("{r:.2}"))
}

// ---------------------------------------------------------------- comparison

fn header(o: &Options, setup: &Setup, timeout: Duration, title: &str, what: &str) -> String {
    let [ox, mpich, ompi] = setup.launch.versions();
    let mut flags = String::new();
    if o.quick {
        flags += " --quick";
    }
    if o.model {
        flags += " --model";
    }
    let ranks: Vec<String> = o.ranks.iter().map(u32::to_string).collect();
    format!(
        "# {title}\n\n{what}\n\n\
         - date: {}\n- host: {}\n- tree: {}\n- oxrun: {ox}\n- MPICH: {mpich}\n\
         - Open MPI: {ompi}\n\
         - command: `cargo run --release -p oxmpi-benches --bin coll --{flags} --ranks {}`\n\
         - every job under a {:.0} s hard timeout; {} (see `coll_bench.rs`)\n\
         - launch: OxMPI `oxrun -n N` (binds each rank to a core; oversubscribed, \
         round-robin over the cores when they share the ranks evenly) with \
         `OXMPI_DEBUG=coll`; MPICH `UCX_TLS=self,sm \
         mpiexec.hydra -n N` plus `-bind-to core` when N ≤ {} cores; Open MPI \
         `mpirun.openmpi --allow-run-as-root --oversubscribe -n N`\n",
        utc_timestamp(SystemTime::now()),
        host_cpu(),
        tree_state(),
        ranks.join(","),
        timeout.as_secs_f64(),
        if o.quick {
            "quick: 7 rounds of about 3 ms (at least one call) per size, time = the fastest round"
        } else {
            "15 rounds of about 10 ms (at least one call) per size, time = the fastest round"
        },
        setup.launch.cores,
    )
}

fn shared_machine_note(out: &mut String, jobs: &[Job]) {
    let loads: Vec<f64> = jobs.iter().filter_map(|j| j.load_before).collect();
    let busy = loads.iter().filter(|&&b| b >= QUIET).count();
    let worst = loads.iter().copied().fold(0.0, f64::max);
    if busy > 0 {
        let _ = writeln!(
            out,
            "**Shared machine:** {busy} of {} jobs started with other programs keeping at \
             least {:.0}% of the CPUs busy (worst {}); their figures are disturbed.\n",
            jobs.len(),
            QUIET * 100.0,
            pct(Some(worst))
        );
    }
}

fn jobs_table(out: &mut String, jobs: &[Job], settle: Duration) {
    let _ = writeln!(
        out,
        "## Jobs\n\nOthers' load: share of all CPUs busy over 0.3 s just before the job, \
         with none of ours running (each job waited up to {:.0} s for it to drop below \
         {:.0}%). Machine: half a round trip of one cache line between two cores, \
         measured just before the job without MPI; a comparison job whose figure \
         exceeded {SLOW}× the best seen ran again (at most {MAX_RUNS} runs), keeping \
         the run that saw the fastest machine.\n\n\
         | command | status | wall s | others' load | machine ns | runs |\n\
         |---|---|--:|--:|--:|--:|",
        settle.as_secs_f64(),
        QUIET * 100.0
    );
    for j in jobs {
        let _ = writeln!(
            out,
            "| `{}` | {} | {:.1} | {} | {} | {} |",
            j.command,
            j.note().unwrap_or_else(|| "ok".into()),
            j.elapsed.as_secs_f64(),
            pct(j.load_before),
            j.machine_ns.map_or("–".into(), |ns| format!("{ns:.0}")),
            j.runs
        );
    }
    out.push('\n');
}

fn compare_report(o: &Options, setup: &Setup, res: &Results, timeout: Duration) -> String {
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

fn compare(o: &Options, setup: &Setup, capturer: &Capturer) -> Result<Results, String> {
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
                let ns = this.jobs[0].machine_ns;
                best = best.min(ns.unwrap_or(f64::INFINITY));
                match res.job_mut(imp, ranks) {
                    Some(kept) if !faster(ns, kept.machine_ns) => kept.runs = runs,
                    _ => {
                        res.replace_job(imp, ranks, this);
                        if let Some(kept) = res.job_mut(imp, ranks) {
                            kept.runs = runs;
                        }
                    }
                }
                let kept_ns = res.job_mut(imp, ranks).and_then(|j| j.machine_ns);
                if runs >= MAX_RUNS || !too_slow(kept_ns, best) {
                    break;
                }
            }
        }
    }
    Ok(res)
}

/// Whether a job that saw `ns` caught the machine slower than `SLOW` times
/// the best seen (unknown: no).
fn too_slow(ns: Option<f64>, best: f64) -> bool {
    matches!(ns, Some(ns) if ns > SLOW * best)
}

/// Whether a run that saw `ns` saw a faster machine than one that saw `kept`.
fn faster(ns: Option<f64>, kept: Option<f64>) -> bool {
    match (ns, kept) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        _ => false,
    }
}

// ---------------------------------------------------------------- model

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
    let sum: f64 = pts
        .iter()
        .map(|p| {
            let e = (m.predict(p.coll, p.algo, &p.args()) - p.measured) / p.measured;
            e * e
        })
        .sum();
    (sum / pts.len().max(1) as f64).sqrt()
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

// ---------------------------------------------------------------- main

fn run(o: &Options) -> Result<(), String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ox_bench = beside_me("coll_bench")?;
    let bin_dir = ox_bench
        .parent()
        .ok_or("coll_bench has no directory")?
        .to_path_buf();
    let setup = Setup {
        launch: Launchers::find()?,
        ox_bench,
        mpich_bench: bin_dir.join("coll_c_mpich"),
        ompi_bench: bin_dir.join("coll_c_openmpi"),
        quick: o.quick,
        settle: o
            .settle
            .unwrap_or(Duration::from_secs(if o.quick { 5 } else { 20 })),
    };
    if !o.model {
        let src = dir.join("c/coll.c");
        compile_c("mpicc.mpich", &src, &setup.mpich_bench)?;
        compile_c("mpicc.openmpi", &src, &setup.ompi_bench)?;
    }
    let stray = kill_survivors(&setup.benches());
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
    let write = |name: &str, body: &str| -> Result<PathBuf, String> {
        let p = o.results.join(name);
        std::fs::write(&p, body).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(p)
    };
    if o.model {
        let (res, pts) = model_check(o, &setup, &capturer)?;
        let text = model_report(o, &setup, &res, &pts, timeout);
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
        return Ok(());
    }
    let res = compare(o, &setup, &capturer)?;
    let text = compare_report(o, &setup, &res, timeout);
    let md = write("coll.md", &text)?;
    let csv = write("coll.csv", &res.csv())?;
    print!("{text}");
    eprintln!("coll: wrote {} and {}", md.display(), csv.display());
    let png = o.results.join("coll.png");
    match plot(&dir.join("plot/coll_plot.py"), &csv, &png) {
        Ok(()) => eprintln!("coll: wrote {}", png.display()),
        Err(e) => eprintln!("coll: {e}"),
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = parse_args(&args).and_then(|o| run(&o)) {
        eprintln!("coll: {e}");
        std::process::exit(2);
    }
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

    #[test]
    fn reads_decisions_from_the_log() {
        let log = "oxmpi,bcast,2,8,time_us,1\n\
                   oxmpi[coll]: allgather 1024 B x 4 ranks -> ring (predicted 0.98 us)\n\
                   oxmpi[coll]: allgather 1024 B x 4 ranks -> ring (predicted 0.98 us)\n\
                   oxmpi[coll]: forced bcast algorithm x does not exist for bcast; falling back\n";
        let (d, notes) = parse_log(log);
        assert_eq!(
            d,
            vec![Decision {
                coll: "allgather".into(),
                bytes: 1024,
                ranks: 4,
                algo: "ring".into()
            }]
        );
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn geometric_mean() {
        assert!((geomean(&[2.0, 0.5]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
    }

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

    #[test]
    fn slow_machine_runs_are_replaced_by_faster_ones() {
        assert!(too_slow(Some(40.0), 25.0) && !too_slow(Some(30.0), 25.0));
        assert!(!too_slow(None, 25.0), "unprobed: kept");
        assert!(faster(Some(24.0), Some(220.0)) && !faster(Some(230.0), Some(220.0)));
        assert!(faster(Some(24.0), None) && !faster(None, Some(24.0)));
        let job = |imp, ns| Job {
            imp,
            what: "all".into(),
            ranks: 2,
            command: String::new(),
            status: "ok",
            detail: String::new(),
            elapsed: Duration::ZERO,
            load_before: None,
            machine_ns: Some(ns),
            runs: 1,
            last: None,
        };
        let record = |imp: Impl, value| Record {
            imp: imp.key().into(),
            what: "allreduce".into(),
            ranks: 2,
            size: 8,
            metric: "time_us".into(),
            value,
        };
        let mut res = Results {
            jobs: vec![job(Impl::Ox, 220.0), job(Impl::Mpich, 25.0)],
            records: vec![record(Impl::Ox, 0.9), record(Impl::Mpich, 0.3)],
            ..Default::default()
        };
        let again = Results {
            jobs: vec![job(Impl::Ox, 24.0)],
            records: vec![record(Impl::Ox, 0.25)],
            ..Default::default()
        };
        res.replace_job(Impl::Ox, 2, again);
        assert_eq!(res.time(Impl::Ox, "allreduce", 2, 8), Some(0.25));
        assert_eq!(res.time(Impl::Mpich, "allreduce", 2, 8), Some(0.3));
        assert_eq!(res.jobs.len(), 2);
    }

    #[test]
    fn selector_sizes() {
        assert_eq!(sel_bytes(Coll::Allgather, 4096, 4), 1024);
        assert_eq!(sel_bytes(Coll::Bcast, 4096, 4), 4096);
        assert_eq!(sel_coll("reduce_scatter"), Coll::ReduceScatterBlock);
        assert_eq!(bench_name(Coll::ReduceScatterBlock), "reduce_scatter");
        assert_eq!(size_label(64 * MIB), "64 MiB");
    }
}
