//! Choosing an algorithm: applicability first, then the alpha-beta-gamma
//! cost model, then an explicit override (`OXMPI_<COLL>_ALGO`, falling back
//! with a logged reason when it does not apply). Decisions are cached per
//! communicator and size class; `OXMPI_DEBUG=coll` logs each new decision
//! with its predicted time. Pure apart from the cache and the log, so the
//! same function answers `oxrun --explain` for rank counts this machine
//! cannot run.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use super::algos::{self, AlgoInfo, Args};
use crate::config::{self, Setting};
use crate::fast_hash::FastMap;

/// Collectives with a choice of algorithms.
///
/// ```
/// use oxmpi::coll::select::Coll;
/// assert_eq!(Coll::from_name("reduce_scatter"), Some(Coll::ReduceScatter));
/// assert_eq!(Coll::ReduceScatter.name(), "reduce_scatter"); // as in OXMPI_REDUCE_SCATTER_ALGO
/// assert_eq!(Coll::ALL.len(), 16);
/// let names: Vec<&str> = Coll::Bcast.algos().iter().map(|a| a.name).collect();
/// assert_eq!(names, ["binomial", "scatter_allgather", "chain", "hierarchical"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coll {
    /// MPI_Allreduce.
    Allreduce,
    /// MPI_Bcast.
    Bcast,
    /// MPI_Reduce.
    Reduce,
    /// MPI_Allgather.
    Allgather,
    /// MPI_Gather.
    Gather,
    /// MPI_Gatherv.
    Gatherv,
    /// MPI_Scatter.
    Scatter,
    /// MPI_Scatterv.
    Scatterv,
    /// MPI_Allgatherv.
    Allgatherv,
    /// MPI_Alltoall.
    Alltoall,
    /// MPI_Alltoallv.
    Alltoallv,
    /// MPI_Alltoallw.
    Alltoallw,
    /// MPI_Reduce_scatter.
    ReduceScatter,
    /// MPI_Reduce_scatter_block.
    ReduceScatterBlock,
    /// MPI_Scan.
    Scan,
    /// MPI_Exscan.
    Exscan,
}

impl Coll {
    /// Every collective, in the order `--info` lists their overrides.
    ///
    /// See the example on [`Coll`].
    pub const ALL: &'static [Coll] = &[
        Coll::Allreduce,
        Coll::Bcast,
        Coll::Reduce,
        Coll::Allgather,
        Coll::Gather,
        Coll::Gatherv,
        Coll::Scatter,
        Coll::Scatterv,
        Coll::Allgatherv,
        Coll::Alltoall,
        Coll::Alltoallv,
        Coll::Alltoallw,
        Coll::ReduceScatter,
        Coll::ReduceScatterBlock,
        Coll::Scan,
        Coll::Exscan,
    ];

    /// Lower-case name, as in `OXMPI_ALLREDUCE_ALGO`.
    ///
    /// See the example on [`Coll`].
    pub fn name(self) -> &'static str {
        match self {
            Coll::Allreduce => "allreduce",
            Coll::Bcast => "bcast",
            Coll::Reduce => "reduce",
            Coll::Allgather => "allgather",
            Coll::Gather => "gather",
            Coll::Gatherv => "gatherv",
            Coll::Scatter => "scatter",
            Coll::Scatterv => "scatterv",
            Coll::Allgatherv => "allgatherv",
            Coll::Alltoall => "alltoall",
            Coll::Alltoallv => "alltoallv",
            Coll::Alltoallw => "alltoallw",
            Coll::ReduceScatter => "reduce_scatter",
            Coll::ReduceScatterBlock => "reduce_scatter_block",
            Coll::Scan => "scan",
            Coll::Exscan => "exscan",
        }
    }

    /// Parses a name.
    ///
    /// See the example on [`Coll`].
    pub fn from_name(name: &str) -> Option<Coll> {
        Coll::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// The algorithms implementing it, in tie-break order.
    ///
    /// See the example on [`Coll`].
    pub fn algos(self) -> &'static [AlgoInfo] {
        match self {
            Coll::Allreduce => algos::allreduce::ALL,
            Coll::Bcast => algos::bcast::ALL,
            Coll::Reduce => algos::reduce::ALL,
            Coll::Allgather => algos::allgather::ALL,
            Coll::Gather => algos::gather::ALL,
            Coll::Gatherv => algos::gather::ALL_V,
            Coll::Scatter => algos::scatter::ALL,
            Coll::Scatterv => algos::scatter::ALL_V,
            Coll::Allgatherv => algos::allgatherv::ALL,
            Coll::Alltoall => algos::alltoall::ALL,
            Coll::Alltoallv | Coll::Alltoallw => algos::alltoall::ALL_V,
            Coll::ReduceScatter | Coll::ReduceScatterBlock => algos::reduce_scatter::ALL,
            Coll::Scan | Coll::Exscan => algos::scan::ALL,
        }
    }

    fn setting(self) -> &'static Setting<Vec<String>> {
        match self {
            Coll::Allreduce => &config::ALLREDUCE_ALGO,
            Coll::Bcast => &config::BCAST_ALGO,
            Coll::Reduce => &config::REDUCE_ALGO,
            Coll::Allgather => &config::ALLGATHER_ALGO,
            Coll::Gather => &config::GATHER_ALGO,
            Coll::Gatherv => &config::GATHERV_ALGO,
            Coll::Scatter => &config::SCATTER_ALGO,
            Coll::Scatterv => &config::SCATTERV_ALGO,
            Coll::Allgatherv => &config::ALLGATHERV_ALGO,
            Coll::Alltoall => &config::ALLTOALL_ALGO,
            Coll::Alltoallv => &config::ALLTOALLV_ALGO,
            Coll::Alltoallw => &config::ALLTOALLW_ALGO,
            Coll::ReduceScatter => &config::REDUCE_SCATTER_ALGO,
            Coll::ReduceScatterBlock => &config::REDUCE_SCATTER_BLOCK_ALGO,
            Coll::Scan => &config::SCAN_ALGO,
            Coll::Exscan => &config::EXSCAN_ALGO,
        }
    }

    /// What [`Args::bytes`] means for this collective (for `--explain`).
    pub(crate) fn bytes_meaning(self) -> &'static str {
        match self {
            Coll::Gather | Coll::Scatter | Coll::Allgather => "each rank's block",
            Coll::Gatherv | Coll::Scatterv | Coll::Allgatherv => {
                "the average block (total / ranks)"
            }
            Coll::Alltoall => "the block for each peer",
            Coll::Alltoallv | Coll::Alltoallw => "the average block for each peer",
            Coll::ReduceScatter | Coll::ReduceScatterBlock => "each rank's whole input",
            _ => "each rank's buffer",
        }
    }
}

/// Machine parameters: seconds per message, per byte moved, per byte
/// reduced; messages between nodes have their own (see [`super::inter`]).
///
/// ```
/// use oxmpi::coll::algos::Args;
/// use oxmpi::coll::select::{Coll, Model};
/// // A slower network: 5 us per message, 1 GB/s, reductions at 10 GB/s.
/// let net = Model { alpha: 5e-6, beta: 1e-9, gamma: 1e-10, ..Model::SHM };
/// let a = Args::new(16, 8, true);
/// let t = net.predict(Coll::Allreduce, "recursive_doubling", &a);
/// assert!(t > 4.0 * net.alpha); // lg 16 = 4 rounds of at least one message
/// println!("{}", net.encode());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// Latency of one message (alpha).
    pub alpha: f64,
    /// Transfer time per byte (beta).
    pub beta: f64,
    /// Reduction time per byte (gamma).
    pub gamma: f64,
    /// Latency of one message between nodes.
    pub inter_alpha: f64,
    /// Transfer time per byte between nodes (one message on the link).
    pub inter_beta: f64,
}

impl Model {
    /// Shared memory on the 2-core development machine: the least-squares
    /// fit of `coll --model` over runs with a core per rank
    /// (benches/results/coll_model.txt): 0.4 us per message, 13.3 GB/s
    /// transfers, 10 GB/s reductions. Used as `OXMPI_COLL_MODEL=builtin`;
    /// jobs normally use a model measured where they run (see
    /// [`super::calibrate`]).
    ///
    /// ```
    /// use oxmpi::coll::select::Model;
    /// let m = Model::SHM;
    /// assert!(m.alpha < 1e-6 && m.beta < m.gamma); // sub-microsecond, copies beat reductions
    /// ```
    pub const SHM: Model = Model {
        alpha: 0.399e-6,
        beta: 1.0 / 13.33e9,
        gamma: 1.0 / 10.05e9,
        inter_alpha: super::inter::DEFAULT_INTER_ALPHA,
        inter_beta: super::inter::DEFAULT_INTER_BETA,
    };

    /// Predicted seconds for `algo` of `coll` on `a` (on its layout: a
    /// flat algorithm's messages between nodes cost more, see
    /// [`Model::across`]).
    ///
    /// ```
    /// use oxmpi::coll::algos::Args;
    /// use oxmpi::coll::select::{Coll, Model};
    /// let m = Model::SHM;
    /// let small = Args::new(8, 8, true);
    /// let big = Args::new(8, 64 << 20, true);
    /// let ring = |a| m.predict(Coll::Allreduce, "ring", a);
    /// let rd = |a| m.predict(Coll::Allreduce, "recursive_doubling", a);
    /// assert!(rd(&small) < ring(&small)); // fewer messages win small
    /// assert!(ring(&big) < rd(&big)); // less data moved wins big
    /// assert!(m.predict(Coll::Bcast, "no_such_algo", &small).is_infinite());
    /// ```
    pub fn predict(&self, coll: Coll, algo: &str, a: &Args) -> f64 {
        match (coll, algo) {
            (Coll::Allreduce, "hierarchical") => {
                algos::allreduce::hierarchical::plan(self, a).predicted
            }
            (Coll::Bcast, "hierarchical") => algos::bcast::hierarchical::plan(self, a).predicted,
            _ => self.across(coll, algo, a).predict_flat(coll, algo, a),
        }
    }

    /// [`Model::predict`] for a flat algorithm on one node.
    fn predict_flat(&self, coll: Coll, algo: &str, a: &Args) -> f64 {
        let p = a.ranks.max(1) as f64;
        let n = a.bytes as f64;
        let lg = (a.ranks.max(1) as f64).log2().ceil();
        let (al, be, ga) = (self.alpha, self.beta, self.gamma);
        let frac = (p - 1.0) / p;
        // Folding a non-power-of-two group costs an exchange each way.
        let fold = if a.ranks.is_power_of_two() {
            0.0
        } else {
            2.0 * (al + n * be) + n * ga
        };
        match (coll, algo) {
            (Coll::Allreduce, "recursive_doubling") => lg * (al + n * be + n * ga) + fold,
            (Coll::Allreduce, "rabenseifner") => {
                2.0 * lg * al + 2.0 * n * frac * be + n * frac * ga + fold
            }
            (Coll::Allreduce, "ring") => 2.0 * (p - 1.0) * al + 2.0 * n * frac * be + n * frac * ga,
            (Coll::Allreduce, "reduce_bcast") => 2.0 * lg * (al + n * be) + lg * n * ga,
            (Coll::Bcast, "binomial") => lg * (al + n * be),
            (Coll::Bcast, "scatter_allgather") => (lg + p - 1.0) * al + 2.0 * n * frac * be,
            (Coll::Bcast, "chain") => {
                let seg = (algos::bcast::chain::MIN_SEGMENT as f64)
                    .max(n / 4096.0)
                    .min(n.max(1.0));
                (p - 2.0 + (n / seg).ceil()).max(1.0) * (al + seg * be)
            }
            (Coll::Reduce, "binomial") => lg * (al + n * be + n * ga),
            // Allgather: n is each rank's block.
            (Coll::Allgather, "recursive_doubling") => lg * al + n * (p - 1.0) * be,
            (Coll::Allgather, "bruck") => lg * al + n * (p - 1.0) * be + n * p * be,
            (Coll::Allgather, "ring") => (p - 1.0) * (al + n * be),
            _ => self.predict_more(coll, algo, a),
        }
    }

    /// [`Model::predict_flat`] for the collectives of issue 4. `n` is what
    /// [`Coll::bytes_meaning`] says.
    fn predict_more(&self, coll: Coll, algo: &str, a: &Args) -> f64 {
        use Coll::*;
        let p = a.ranks.max(1) as f64;
        let n = a.bytes as f64;
        let lg = p.log2().ceil();
        let (al, be, ga) = (self.alpha, self.beta, self.gamma);
        let frac = (p - 1.0) / p;
        match (coll, algo) {
            // The root receives (p-1) n either way; the tree pays lg p
            // latencies plus the copy out of its rotated scratch.
            (Gather | Scatter, "binomial") => lg * al + 2.0 * (p - 1.0) * n * be,
            (Gather | Gatherv | Scatter | Scatterv, "linear") => (p - 1.0) * (al + n * be),
            (Allgatherv, "recursive_doubling") => lg * al + n * (p - 1.0) * be,
            (Allgatherv, "ring") => (p - 1.0) * (al + n * be),
            // Posting costs each message about alpha/2 of CPU time that
            // overlapping does not hide; many large messages in flight at
            // once spill the cache (up to twice the copy time past 1 MiB).
            (Alltoall | Alltoallv | Alltoallw, "scattered") => {
                let w = (p - 1.0).min(algos::alltoall::scattered::WINDOW as f64);
                let spill = (w * n / (1u64 << 20) as f64).min(1.0);
                al + (p - 1.0) * (al / 2.0 + n * be * (1.0 + spill))
            }
            (Alltoall | Alltoallv | Alltoallw, "pairwise") => (p - 1.0) * (al + n * be),
            // Each round packs, sends and unpacks about half the blocks,
            // plus the two rotations.
            (Alltoall, "bruck") => lg * (al + 1.5 * p * n * be) + 2.0 * p * n * be,
            (ReduceScatter | ReduceScatterBlock, "recursive_halving") => {
                let fold = if a.ranks.is_power_of_two() {
                    0.0
                } else {
                    al + n * be + n * ga
                };
                lg * al + n * frac * (be + ga) + fold
            }
            (ReduceScatter | ReduceScatterBlock, "pairwise") => {
                (p - 1.0) * (al + n / p * (be + ga))
            }
            (Scan | Exscan, "recursive_doubling") => lg * (al + n * be + 2.0 * n * ga),
            (Scan | Exscan, "linear") => (p - 1.0) * (al + n * be + n * ga),
            _ => f64::INFINITY,
        }
    }
}

/// A decision and how it was reached.
///
/// Returned by [`choose`]; see the example there.
#[derive(Debug, Clone)]
pub struct Choice {
    /// The algorithm.
    pub algo: &'static AlgoInfo,
    /// Its predicted time in seconds.
    pub predicted: f64,
    /// Set when an override was ignored, saying why.
    pub fallback: Option<String>,
}

/// Picks the algorithm for `coll` on `a`; `forced` names an override.
///
/// ```
/// use oxmpi::coll::algos::Args;
/// use oxmpi::coll::select::{choose, Coll, Model};
/// let a = Args::new(6, 1 << 20, true);
/// let c = choose(Coll::Allreduce, &a, &Model::SHM, None);
/// assert!(c.predicted.is_finite() && c.fallback.is_none());
/// // An override that cannot apply falls back, saying why.
/// let forced = choose(Coll::Allreduce, &a, &Model::SHM, Some("no_such_algo"));
/// assert!(forced.fallback.unwrap().contains("does not exist"));
/// ```
pub fn choose(coll: Coll, a: &Args, model: &Model, forced: Option<&str>) -> Choice {
    let candidates = coll.algos();
    let mut fallback = None;
    if let Some(name) = forced {
        match candidates.iter().find(|i| i.name == name) {
            Some(info) => match info.applicable(a) {
                Ok(()) => {
                    return Choice {
                        algo: info,
                        predicted: model.predict(coll, info.name, a),
                        fallback: None,
                    }
                }
                Err(why) => {
                    fallback = Some(format!(
                        "forced {} algorithm {name} does not apply: {why}",
                        coll.name()
                    ))
                }
            },
            None => {
                fallback = Some(format!(
                    "forced {} algorithm {name} does not exist for {}",
                    coll.name(),
                    coll.name()
                ))
            }
        }
    }
    let mut best: Option<(&'static AlgoInfo, f64)> = None;
    for info in candidates.iter().filter(|i| i.applicable(a).is_ok()) {
        let t = model.predict(coll, info.name, a);
        if best.is_none_or(|(_, bt)| t < bt) {
            best = Some((info, t));
        }
    }
    // Every collective has an algorithm without preconditions, so `best` is set.
    let (algo, predicted) = best.unwrap_or((&candidates[0], f64::INFINITY));
    Choice {
        algo,
        predicted,
        fallback,
    }
}

/// Every algorithm's prediction for a case, and the choice: what
/// `oxrun --explain` prints.
///
/// ```
/// use oxmpi::coll::algos::Args;
/// use oxmpi::coll::select::{explain, Coll, Model};
/// let a = Args::new(12, 4096, true);
/// let text = explain(Coll::Bcast, &a, &Model::SHM); // what `oxrun --explain` prints
/// assert!(text.starts_with("bcast of 4096 bytes"));
/// assert_eq!(text.matches("<- chosen").count(), 1);
/// ```
pub fn explain(coll: Coll, a: &Args, model: &Model) -> String {
    let choice = choose(coll, a, model, None);
    let mut out = format!(
        "{} of {} bytes ({}) on {} ranks{} ({}commutative op); model alpha={:.2e} s, beta={:.2e} s/B, gamma={:.2e} s/B\n",
        coll.name(),
        a.bytes,
        coll.bytes_meaning(),
        a.ranks,
        nodes_text(&a.layout),
        if a.commutative { "" } else { "non-" },
        model.alpha,
        model.beta,
        model.gamma
    );
    if a.layout.nodes > 1 {
        let _ = writeln!(
            out,
            "  between nodes: alpha={:.2e} s, beta={:.2e} s/B",
            model.inter_alpha, model.inter_beta
        );
    }
    for info in coll.algos() {
        let status = match info.applicable(a) {
            Ok(()) => format!(
                "{:>12.2} us{}",
                model.predict(coll, info.name, a) * 1e6,
                phases(coll, info.name, a, model)
            ),
            Err(why) => format!("not applicable: {why}"),
        };
        let mark = if info.name == choice.algo.name {
            "  <- chosen"
        } else {
            ""
        };
        let _ = writeln!(out, "  {:<20} {status}{mark}", info.name);
    }
    out
}

/// `" (leaders: X, in nodes: Y)"`: the flat algorithms the phases of a
/// node-aware algorithm would use; empty for the others.
fn phases(coll: Coll, algo: &str, a: &Args, model: &Model) -> String {
    let (leaders, local) = match (coll, algo) {
        (Coll::Allreduce, "hierarchical") => {
            let p = algos::allreduce::hierarchical::plan(model, a);
            (p.leaders, p.local)
        }
        (Coll::Bcast, "hierarchical") => {
            let p = algos::bcast::hierarchical::plan(model, a);
            (p.leaders, p.local)
        }
        _ => return String::new(),
    };
    format!(" (leaders: {leaders}, in nodes: {local})")
}

/// `" on N nodes (up to Q per node)"` for a multi-node layout, else empty.
fn nodes_text(l: &algos::Layout) -> String {
    if l.nodes < 2 {
        return String::new();
    }
    let mixed = if l.blocked { "" } else { ", not in blocks" };
    format!(
        " on {} nodes (up to {} per node{mixed})",
        l.nodes, l.per_node
    )
}

/// Cache key: (communicator context, collective, size class, commutative,
/// ranks, layout). A context id is reused after its communicator is freed,
/// perhaps by one of another size or layout: those are in the key too.
type CacheKey = (u32, u8, u32, bool, usize, algos::Layout);

/// Size classes: a size's bit length, 0..=64.
const CLASSES: usize = usize::BITS as usize + 1;

/// One communicator's selections by (collective, size class,
/// commutative), kept from their first use: on a given communicator the
/// selector's answer depends on nothing else, so repeated calls skip its
/// lock and table. The table is made at the first collective call.
#[derive(Debug, Default)]
pub(crate) struct Picks(OnceLock<Box<[AtomicPtr<AlgoInfo>]>>);

impl Picks {
    /// The kept choice for this call, or `pick`'s (then kept).
    #[inline]
    pub(crate) fn get_or(
        &self,
        coll: Coll,
        bytes: usize,
        commutative: bool,
        pick: impl FnOnce() -> &'static AlgoInfo,
    ) -> &'static AlgoInfo {
        let table = self.0.get_or_init(|| {
            (0..Coll::ALL.len() * 2 * CLASSES)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect()
        });
        let class = (usize::BITS - bytes.leading_zeros()) as usize;
        let slot = &table[(coll as usize * 2 + commutative as usize) * CLASSES + class];
        let kept = slot.load(Ordering::Acquire);
        if !kept.is_null() {
            // SAFETY: only `&'static AlgoInfo`s are stored.
            return unsafe { &*kept };
        }
        let info = pick();
        slot.store(std::ptr::from_ref(info).cast_mut(), Ordering::Release);
        info
    }
}

/// Per-process selection state: overrides read once, the model, the cache.
pub(crate) struct Selector {
    model: Model,
    forced: FastMap<u8, String>,
    debug: bool,
    cache: Mutex<FastMap<CacheKey, &'static AlgoInfo>>,
}

impl Selector {
    /// Reads the overrides; selects with `model` (the job's, see
    /// [`super::calibrate`]), logging decisions when `debug`.
    pub(crate) fn from_env(debug: bool, model: Model) -> Result<Selector, crate::Error> {
        let mut forced = FastMap::default();
        for &coll in Coll::ALL {
            if let Some(name) = config::get(coll.setting())?.into_iter().next() {
                forced.insert(coll as u8, name);
            }
        }
        Ok(Selector {
            model,
            forced,
            debug,
            cache: Mutex::new(FastMap::default()),
        })
    }

    /// The job's cost model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The algorithm for `coll` on a communicator with collective context `context`.
    pub(crate) fn pick(&self, context: u32, coll: Coll, a: &Args) -> &'static AlgoInfo {
        let class = usize::BITS - a.bytes.leading_zeros();
        let key = (context, coll as u8, class, a.commutative, a.ranks, a.layout);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = cache.get(&key) {
            return info;
        }
        let choice = choose(
            coll,
            a,
            &self.model,
            self.forced.get(&(coll as u8)).map(String::as_str),
        );
        if self.debug {
            if let Some(why) = &choice.fallback {
                eprintln!("oxmpi[coll]: {why}; falling back to the cost model");
            }
            eprintln!(
                "oxmpi[coll]: {} {} B x {} ranks{} -> {} (predicted {:.2} us)",
                coll.name(),
                a.bytes,
                a.ranks,
                nodes_text(&a.layout),
                choice.algo.name,
                choice.predicted * 1e6
            );
        }
        cache.insert(key, choice.algo);
        choice.algo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(ranks: usize, bytes: usize, commutative: bool) -> Args {
        Args::new(ranks, bytes, commutative)
    }

    #[test]
    fn small_messages_favour_latency_large_favour_bandwidth() {
        let m = Model::SHM;
        assert_eq!(
            choose(Coll::Allreduce, &args(8, 8, true), &m, None)
                .algo
                .name,
            "recursive_doubling"
        );
        let big = choose(Coll::Allreduce, &args(8, 16 << 20, true), &m, None)
            .algo
            .name;
        assert!(big == "rabenseifner" || big == "ring", "{big}");
        assert_eq!(
            choose(Coll::Bcast, &args(8, 8, true), &m, None).algo.name,
            "binomial"
        );
    }

    #[test]
    fn forced_algorithms_fall_back_when_they_do_not_apply() {
        let m = Model::SHM;
        let c = choose(Coll::Allreduce, &args(4, 1 << 20, false), &m, Some("ring"));
        assert_ne!(c.algo.name, "ring");
        assert!(c
            .fallback
            .unwrap()
            .contains("needs a commutative operation"));
        let c = choose(
            Coll::Allgather,
            &args(6, 64, true),
            &m,
            Some("recursive_doubling"),
        );
        assert!(c.fallback.unwrap().contains("power-of-two"));
        let c = choose(Coll::Bcast, &args(6, 64, true), &m, Some("chain"));
        assert_eq!(c.algo.name, "chain");
        assert!(c.fallback.is_none());
    }

    #[test]
    fn every_collective_has_a_name_a_setting_and_an_unconditional_algorithm() {
        for &c in Coll::ALL {
            assert_eq!(Coll::from_name(c.name()), Some(c));
            assert_eq!(
                c.setting().entry.env,
                format!("OXMPI_{}_ALGO", c.name().to_uppercase())
            );
            assert!(
                c.algos()
                    .iter()
                    .any(|i| !i.pow2_only && !i.commutative_only),
                "{c:?}"
            );
            for info in c.algos() {
                assert!(crate::config::COLL_ALGOS.contains(&info.name));
                let t = Model::SHM.predict(c, info.name, &args(6, 4096, true));
                assert!(t.is_finite() && t > 0.0, "{c:?} {}", info.name);
            }
        }
    }

    #[test]
    fn alltoall_follows_message_size_and_reduce_scatter_the_operation() {
        let m = Model::SHM;
        let pick = |c, a: Args| choose(c, &a, &m, None).algo.name;
        assert_eq!(pick(Coll::Alltoall, args(16, 16, true)), "bruck");
        assert_eq!(pick(Coll::Alltoall, args(16, 4096, true)), "scattered");
        assert_eq!(pick(Coll::Alltoall, args(16, 1 << 20, true)), "pairwise");
        assert_eq!(pick(Coll::Alltoallv, args(16, 16, true)), "scattered");
        assert_eq!(
            pick(Coll::ReduceScatter, args(8, 1 << 16, true)),
            "recursive_halving"
        );
        assert_eq!(
            pick(Coll::ReduceScatter, args(8, 1 << 16, false)),
            "pairwise"
        );
        let c = choose(
            Coll::Allgatherv,
            &args(6, 64, true),
            &m,
            Some("recursive_doubling"),
        );
        assert_eq!(c.algo.name, "ring");
        assert!(c.fallback.unwrap().contains("power-of-two"));
    }

    #[test]
    fn explain_lists_every_algorithm() {
        let text = explain(Coll::Allreduce, &args(64, 1 << 20, true), &Model::SHM);
        for info in Coll::Allreduce.algos() {
            assert!(text.contains(info.name), "{text}");
        }
        assert!(text.contains("<- chosen"));
        assert!(!text.contains("between nodes"), "{text}");
        let a = args(64, 1 << 20, true).on(algos::Layout::blocks(64, 4));
        let text = explain(Coll::Allreduce, &a, &Model::SHM);
        assert!(text.contains("on 4 nodes (up to 16 per node)"), "{text}");
        assert!(text.contains("between nodes: alpha=2.00e-6 s"), "{text}");
        assert!(text.contains("(leaders: "), "{text}");
    }
}
