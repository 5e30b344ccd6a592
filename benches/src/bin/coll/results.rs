//! What the jobs measured: figures, OxMPI's logged choices of algorithm,
//! and how each job went; running one job.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::Command;

use oxmpi::coll::select::Coll;
use oxmpi_benches::capture::Capturer;
use oxmpi_benches::format::{pct, size_label};
use oxmpi_benches::job::{Before, JobRun};
use oxmpi_benches::peers::{
    parse_records, records_csv, show, stderr_to_stdout, Impl, Record, PEERS,
};

use crate::Setup;

/// The selector's collective for a benchmark collective.
pub fn sel_coll(name: &str) -> Coll {
    match name {
        "allreduce" => Coll::Allreduce,
        "bcast" => Coll::Bcast,
        "allgather" => Coll::Allgather,
        "alltoall" => Coll::Alltoall,
        _ => Coll::ReduceScatterBlock,
    }
}

/// The benchmark's name for a selector collective.
pub fn bench_name(c: Coll) -> &'static str {
    match c {
        Coll::ReduceScatterBlock => "reduce_scatter",
        c => c.name(),
    }
}

/// What the selector sees as the size (see [`Coll::bytes_meaning`]) when
/// the benchmark moves `bytes` on `ranks` ranks: a rank's block for
/// allgather and alltoall, the whole buffer otherwise.
pub fn sel_bytes(c: Coll, bytes: u64, ranks: u32) -> usize {
    match c {
        Coll::Allgather | Coll::Alltoall => (bytes / u64::from(ranks)) as usize,
        _ => bytes as usize,
    }
}

/// One `oxmpi[coll]:` decision from the debug log.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decision {
    pub coll: String,
    pub bytes: usize,
    pub ranks: u32,
    pub algo: String,
}

/// The decisions in `text` (`oxmpi[coll]: COLL N B x P ranks -> ALGO ...`)
/// and the fallback notes (`oxmpi[coll]: forced ...`), each once.
pub fn parse_log(text: &str) -> (Vec<Decision>, Vec<String>) {
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
pub struct Job {
    pub imp: Impl,
    /// What it ran: `all`, or `COLL=ALGO` in model mode.
    pub what: String,
    pub ranks: u32,
    /// How it went.
    pub run: JobRun,
    /// How many times it ran (comparison jobs run again on a slow machine).
    pub runs: usize,
    /// The last (collective, size) it reported.
    pub last: Option<(String, u64)>,
}

impl Job {
    /// "did not finish within 60 s (last: alltoall 2 MiB)" and the like,
    /// for a job that is not `ok`.
    pub fn note(&self) -> Option<String> {
        let reached = match &self.last {
            Some((c, s)) => format!("last reported: {c} {}", size_label(*s)),
            None => "nothing reported".into(),
        };
        self.run.note(&reached)
    }
}

/// Everything measured in one invocation.
#[derive(Default)]
pub struct Results {
    pub records: Vec<Record>,
    pub jobs: Vec<Job>,
    pub decisions: Vec<Decision>,
    pub notes: Vec<String>,
}

impl Results {
    /// The job of `imp` at `ranks`.
    pub fn job_mut(&mut self, imp: Impl, ranks: u32) -> Option<&mut Job> {
        self.jobs
            .iter_mut()
            .find(|j| j.imp == imp && j.ranks == ranks)
    }

    /// Puts `new`'s job, figures and log in place of those of the job of
    /// `imp` at `ranks` (if any).
    pub fn replace_job(&mut self, imp: Impl, ranks: u32, new: Results) {
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

    pub fn get(&self, imp: Impl, coll: &str, ranks: u32, size: u64, metric: &str) -> Option<f64> {
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

    pub fn time(&self, imp: Impl, coll: &str, ranks: u32, size: u64) -> Option<f64> {
        self.get(imp, coll, ranks, size, "time_us")
    }

    pub fn job(&self, imp: Impl, ranks: u32) -> Option<&Job> {
        self.jobs.iter().find(|j| j.imp == imp && j.ranks == ranks)
    }

    /// Sizes with at least one figure for `coll` at `ranks`, ascending.
    pub fn sizes(&self, coll: &str, ranks: u32) -> Vec<u64> {
        let set: BTreeSet<u64> = self
            .records
            .iter()
            .filter(|r| r.what == coll && r.ranks == ranks)
            .map(|r| r.size)
            .collect();
        set.into_iter().collect()
    }

    /// The algorithm OxMPI's log says it chose for `coll` at `size`.
    pub fn algo(&self, coll: &str, ranks: u32, size: u64) -> Option<&str> {
        let c = sel_coll(coll);
        let bytes = self.get(Impl::Ox, coll, ranks, size, "bytes")? as u64;
        let want = sel_bytes(c, bytes, ranks);
        self.decisions
            .iter()
            .find(|d| d.coll == c.name() && d.ranks == ranks && d.bytes == want)
            .map(|d| d.algo.as_str())
    }

    /// The faster peer's time and which it was.
    pub fn best_peer(&self, coll: &str, ranks: u32, size: u64) -> Option<(f64, Impl)> {
        PEERS
            .into_iter()
            .filter_map(|i| self.time(i, coll, ranks, size).map(|t| (t, i)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// OxMPI / faster peer at each size where both exist.
    pub fn ratios(&self, coll: &str, ranks: u32) -> Vec<(u64, f64)> {
        self.sizes(coll, ranks)
            .into_iter()
            .filter_map(|s| {
                let ox = self.time(Impl::Ox, coll, ranks, s)?;
                let (best, _) = self.best_peer(coll, ranks, s)?;
                (best > 0.0).then_some((s, ox / best))
            })
            .collect()
    }

    pub fn csv(&self) -> String {
        let mut out = records_csv("coll", &self.records);
        for j in &self.jobs {
            let _ = writeln!(
                out,
                "{},{},{},,status,{}",
                j.imp.key(),
                j.what,
                j.ranks,
                j.run.status
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

/// Runs one job, keeps its figures, its log's decisions and how it went.
pub fn run_job(
    capturer: &Capturer,
    setup: &Setup,
    res: &mut Results,
    imp: Impl,
    what: &str,
    ranks: u32,
    cmd: Command,
) -> Result<(), String> {
    let line = show(&cmd);
    let before = Before::wait_and_probe(setup.settle);
    eprintln!(
        "coll: {line} (others' CPU load {}, machine {} ns) ...",
        pct(before.load),
        before.machine_text()
    );
    // OxMPI's decisions go to stderr; the capturer keeps all of stdout.
    let mut merged = stderr_to_stdout(&cmd);
    let out = capturer
        .run(&mut merged)
        .map_err(|e| format!("{line}: {e}"))?;
    let records = parse_records(&out.stdout);
    let (decisions, notes) = parse_log(&out.stdout);
    let last = records.last().map(|r| (r.what.clone(), r.size));
    let said = format!("{}{}", out.stdout, out.stderr_tail);
    let run = JobRun::finish(
        line,
        before,
        &out,
        capturer.timeout(),
        &said,
        &setup.builds.all(),
    );
    if !run.ok() {
        eprintln!("coll:   {}", run.detail);
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
        run,
        runs: 1,
        last,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn slow_machine_runs_are_replaced_by_faster_ones() {
        // too_slow and faster: see oxmpi_benches::machine's tests.
        let job = |imp, ns| Job {
            imp,
            what: "all".into(),
            ranks: 2,
            run: JobRun {
                status: "ok",
                machine_ns: Some(ns),
                ..Default::default()
            },
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
    }
}
