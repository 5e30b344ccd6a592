//! The registry's index: the collectives, each one's algorithms, and the
//! choice among them by applicability and predicted cost.

use super::{allgather, allgatherv, allreduce, alltoall, bcast, gather, reduce};
use super::{reduce_scatter, scan, scatter, AlgoInfo, Args};
use crate::coll::model::Model;

/// Collectives with a choice of algorithms.
///
/// ```
/// use oxmpi::coll::select::Coll;
/// assert_eq!(Coll::from_name("reduce_scatter"), Some(Coll::ReduceScatter));
/// assert_eq!(Coll::ReduceScatter.name(), "reduce_scatter"); // as in OXMPI_REDUCE_SCATTER_ALGO
/// assert_eq!(Coll::ALL.len(), 16);
/// let names: Vec<&str> = Coll::Bcast.algos().iter().map(|a| a.name).collect();
/// assert_eq!(names, ["binomial", "scatter_allgather", "chain", "hierarchical", "shm"]);
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
            Coll::Allreduce => allreduce::ALL,
            Coll::Bcast => bcast::ALL,
            Coll::Reduce => reduce::ALL,
            Coll::Allgather => allgather::ALL,
            Coll::Gather => gather::ALL,
            Coll::Gatherv => gather::ALL_V,
            Coll::Scatter => scatter::ALL,
            Coll::Scatterv => scatter::ALL_V,
            Coll::Allgatherv => allgatherv::ALL,
            Coll::Alltoall => alltoall::ALL,
            Coll::Alltoallv | Coll::Alltoallw => alltoall::ALL_V,
            Coll::ReduceScatter | Coll::ReduceScatterBlock => reduce_scatter::ALL,
            Coll::Scan | Coll::Exscan => scan::ALL,
        }
    }

    /// The names of its algorithms, comma-separated (for messages).
    ///
    /// ```
    /// use oxmpi::coll::select::Coll;
    /// assert_eq!(Coll::Scan.algo_names(), "recursive_doubling, linear");
    /// ```
    pub fn algo_names(self) -> String {
        let names: Vec<&str> = self.algos().iter().map(|a| a.name).collect();
        names.join(", ")
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

impl Model {
    /// Predicted seconds for `algo` of `coll` on `a` (on its layout: a
    /// flat algorithm's messages between nodes cost more, see
    /// [`Model::across`]); infinite for a name `coll` does not have.
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
        match coll.algos().iter().find(|i| i.name == algo) {
            Some(info) => self.predict_algo(info, a),
            None => f64::INFINITY,
        }
    }

    /// Predicted seconds for `info` on `a`.
    pub(crate) fn predict_algo(&self, info: &AlgoInfo, a: &Args) -> f64 {
        (info.cost)(&self.across(info.pattern, a), a)
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
                        predicted: model.predict_algo(info, a),
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
        let t = model.predict_algo(info, a);
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
