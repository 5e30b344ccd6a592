//! Collective algorithms: one file per algorithm, each with its
//! applicability as data ([`AlgoInfo`]) and a `build` function that adds its
//! steps to a schedule.

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
pub(crate) mod scan;
pub(crate) mod scatter;
#[cfg(test)]
mod tests;

pub use super::nodes::Layout;

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
}

/// The facts selection looks at.
///
/// ```
/// use oxmpi::coll::algos::Args;
/// use oxmpi::coll::select::Coll;
/// let odd = Args::new(7, 64, true);
/// let usable: Vec<&str> = Coll::Allreduce
///     .algos()
///     .iter()
///     .filter(|a| a.applicable(&odd).is_ok())
///     .map(|a| a.name)
///     .collect();
/// assert!(usable.contains(&"ring"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Args {
    /// Ranks in the communicator.
    pub ranks: usize,
    /// Bytes per rank (the message size as nccl-tests counts it).
    pub bytes: usize,
    /// Whether the operation is commutative (true when there is none).
    pub commutative: bool,
    /// How the ranks are spread over nodes.
    pub layout: Layout,
}

impl Args {
    /// A call on `ranks` ranks of one node.
    ///
    /// ```
    /// use oxmpi::coll::algos::{Args, Layout};
    /// let a = Args::new(8, 1024, true);
    /// assert_eq!((a.ranks, a.bytes, a.commutative), (8, 1024, true));
    /// assert_eq!(a.layout, Layout::single(8));
    /// ```
    pub fn new(ranks: usize, bytes: usize, commutative: bool) -> Args {
        Args {
            ranks,
            bytes,
            commutative,
            layout: Layout::single(ranks),
        }
    }

    /// The same call with the ranks spread as `layout` says.
    ///
    /// ```
    /// use oxmpi::coll::algos::{Args, Layout};
    /// use oxmpi::coll::select::Coll;
    /// let flat = Args::new(8, 1024, true);
    /// let two = flat.on(Layout::blocks(8, 2));
    /// assert_eq!((two.ranks, two.layout.nodes, two.layout.per_node), (8, 2, 4));
    /// let hier = Coll::Allreduce.algos().iter().find(|a| a.name == "hierarchical").unwrap();
    /// assert!(hier.applicable(&flat).is_err()); // one node: nothing to be node-aware of
    /// assert!(hier.applicable(&two).is_ok());
    /// ```
    pub fn on(self, layout: Layout) -> Args {
        Args { layout, ..self }
    }
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
