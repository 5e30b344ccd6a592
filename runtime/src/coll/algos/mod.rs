//! The algorithm registry. One file per algorithm holds its whole
//! definition, an [`AlgoInfo`]: name, applicability, communication
//! pattern, cost function and schedule builder. Each collective's folder
//! lists its algorithms in tie-break order and defines the call its
//! builders take; [`Coll::algos`] maps each collective to its list. Adding
//! an algorithm is one file plus one line in that list.

pub(crate) mod allgather;
pub(crate) mod allgatherv;
pub(crate) mod allreduce;
pub(crate) mod alltoall;
pub(crate) mod bcast;
pub(crate) mod gather;
#[cfg(test)]
mod hier_tests;
pub(crate) mod reduce;
pub(crate) mod reduce_scatter;
mod registry;
pub(crate) mod scan;
pub(crate) mod scatter;
#[cfg(test)]
mod tests;

pub use super::model::{Args, Layout};
pub use registry::{choose, Choice, Coll};

use super::ctx::Ctx;
use super::inter::Pattern;
use super::model::Model;
use super::sched::{Buf, Schedule};

/// What an algorithm requires of the call.
///
/// ```
/// use oxmpi::coll::algos::Args;
/// use oxmpi::coll::select::Coll;
/// let rabenseifner = Coll::Allreduce.algos().iter().find(|a| a.name == "rabenseifner").unwrap();
/// assert!(rabenseifner.commutative_only);
/// let a = Args::new(8, 1024, false);
/// assert!(rabenseifner.applicable(&a).unwrap_err().contains("commutative"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct AlgoInfo {
    /// Name used by `OXMPI_<COLL>_ALGO` and in logs.
    pub name: &'static str,
    /// Only for commutative operations (it combines out of rank order).
    pub commutative_only: bool,
    /// Only for power-of-two rank counts.
    pub pow2_only: bool,
    /// Only when the ranks span more than one node (a node-aware
    /// algorithm). Such an algorithm combines node by node, so unless it
    /// is `commutative_only` a non-commutative operation also needs every
    /// node's ranks to be consecutive ([`Layout::blocked`]).
    pub multi_node: bool,
    /// How its messages meet node boundaries (prices it across nodes).
    pub pattern: Pattern,
    /// Predicted seconds for a call under a model (for a flat algorithm,
    /// the model [`Model::across`] makes of the call's layout).
    pub cost: fn(&Model, &Args) -> f64,
    /// For a node-aware algorithm: the flat algorithms its phases would
    /// use on a call, (among the leaders, within nodes).
    pub phases: Option<Phases>,
    /// Adds its steps to a schedule.
    pub(crate) build: Build,
}

/// The flat algorithms of a node-aware algorithm's phases on a call:
/// (among the leaders, within nodes).
pub type Phases = fn(&Model, &Args) -> (&'static str, &'static str);

/// An algorithm's schedule builder, by the family of collectives it
/// serves: each family's folder defines the call its builders take.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Build {
    Allreduce(fn(&Ctx, &mut Schedule, &allreduce::Reduction<'_>, &[usize]) -> Vec<usize>),
    Bcast(fn(&Ctx, &mut Schedule, &bcast::Broadcast, &[usize]) -> Vec<usize>),
    Reduce(fn(&Ctx, &mut Schedule, &reduce::ToRoot<'_>, &[usize]) -> Vec<usize>),
    Allgather(fn(&Ctx, &mut Schedule, &allgather::Gathered, &[usize]) -> Vec<usize>),
    Allgatherv(fn(&Ctx, &mut Schedule, &[Buf], &[usize]) -> Vec<usize>),
    Gather(fn(&Ctx, &mut Schedule, &gather::Even, &[usize]) -> Vec<usize>),
    Gatherv(fn(&Ctx, &mut Schedule, &gather::Parts<'_>, &[usize]) -> Vec<usize>),
    Scatter(fn(&Ctx, &mut Schedule, &scatter::Even, &[usize]) -> Vec<usize>),
    Scatterv(fn(&Ctx, &mut Schedule, &scatter::Parts<'_>, &[usize]) -> Vec<usize>),
    Alltoall(fn(&Ctx, &mut Schedule, &alltoall::Even, &[usize]) -> Vec<usize>),
    Alltoallv(fn(&Ctx, &mut Schedule, &alltoall::Parts<'_>, &[usize]) -> Vec<usize>),
    ReduceScatter(fn(&Ctx, &mut Schedule, &reduce_scatter::Split<'_>, &[usize]) -> Vec<usize>),
    Scan(fn(&Ctx, &mut Schedule, &scan::Prefix<'_>, &[usize]) -> Vec<usize>),
}

impl AlgoInfo {
    /// Why this algorithm cannot run the call, or `Ok`.
    ///
    /// See the example on [`AlgoInfo`].
    pub fn applicable(&self, a: &Args) -> Result<(), String> {
        if self.commutative_only && !a.commutative {
            return Err(format!("{} needs a commutative operation", self.name));
        }
        if self.pow2_only && !a.ranks.is_power_of_two() {
            return Err(format!(
                "{} needs a power-of-two number of ranks, not {}",
                self.name, a.ranks
            ));
        }
        if self.pattern == Pattern::SharedArea && a.layout.nodes > 1 {
            return Err(format!(
                "{} needs every rank on one host (they are on {})",
                self.name, a.layout.nodes
            ));
        }
        if self.multi_node && a.layout.nodes < 2 {
            return Err(format!(
                "{} needs ranks on more than one node (all {} are on one)",
                self.name, a.ranks
            ));
        }
        if self.multi_node && !self.commutative_only && !a.commutative && !a.layout.blocked {
            return Err(format!(
                "{} keeps the rank order of a non-commutative operation only when every node's ranks are consecutive",
                self.name
            ));
        }
        Ok(())
    }
}

/// Defines `$name(algo, ctx, s, call, after)` in a family's folder: adds
/// the steps of `algo`, one of the family's entries (built with
/// `Build::$variant`), for `call`.
macro_rules! family_build {
    ($name:ident, $variant:ident, $call:ty, $default:path) => {
        /// Adds the steps of `algo`, one of this family's entries.
        pub(crate) fn $name(
            algo: &$crate::coll::algos::AlgoInfo,
            ctx: &$crate::coll::ctx::Ctx,
            s: &mut $crate::coll::sched::Schedule,
            call: &$call,
            after: &[usize],
        ) -> Vec<usize> {
            match algo.build {
                $crate::coll::algos::Build::$variant(f) => f(ctx, s, call, after),
                // Never taken: `every_entry_builds_for_its_own_family`
                // checks that each table holds only its family's builders.
                _ => $default(ctx, s, call, after),
            }
        }
    };
}
pub(crate) use family_build;

/// Predicted seconds of a call through the shared-memory area that posts
/// `posted` bytes per rank and reads `read` and reduces `reduced` bytes:
/// no message, so a fraction of one message's latency for the flag and
/// the doorbells; infinite when the payload does not fit its slot or the
/// ranks span nodes.
pub(crate) fn area_cost(m: &Model, a: &Args, posted: f64, read: f64, reduced: f64) -> f64 {
    if posted > super::area::capacity() as f64 || a.layout.nodes > 1 {
        return f64::INFINITY;
    }
    0.5 * m.alpha + (posted + read) * m.beta + reduced * m.gamma
}

/// The steps a round ends with: those it added, or `prev` when it added
/// none (every message of the round was empty).
pub(crate) fn then(prev: &[usize], added: impl IntoIterator<Item = Option<usize>>) -> Vec<usize> {
    let steps: Vec<usize> = added.into_iter().flatten().collect();
    if steps.is_empty() {
        prev.to_vec()
    } else {
        steps
    }
}

/// Size of the binomial subtree of relative rank `vr` among `p` ranks:
/// the lowest set bit of `vr` (all of `p` for the root), cut at `p`.
pub(crate) fn subtree(vr: usize, p: usize) -> usize {
    if vr == 0 {
        p
    } else {
        (vr & vr.wrapping_neg()).min(p - vr)
    }
}
