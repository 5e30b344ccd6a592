//! The cost model: what a collective's steps cost on this machine's links
//! ([`Model`]) and the facts about a call that selection looks at
//! ([`Args`]). Each algorithm prices itself with these (its `cost` in the
//! registry, `algos/`); `inter.rs` prices messages between nodes and
//! `calibrate.rs` measures and stores a model.

pub use super::nodes::Layout;

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
#[derive(Debug, Clone, Copy, PartialEq)]
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
}

/// The terms every cost formula starts from, for a call `a` under a model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terms {
    /// Ranks (at least 1).
    pub p: f64,
    /// Bytes ([`Args::bytes`]).
    pub n: f64,
    /// Rounds of a doubling: ceil(lg p).
    pub lg: f64,
    /// Alpha, beta, gamma.
    pub al: f64,
    pub be: f64,
    pub ga: f64,
    /// (p - 1) / p: the share of the data that comes from others.
    pub frac: f64,
    /// Folding a non-power-of-two group into a power of two: an exchange
    /// each way plus a reduction (0 for a power of two).
    pub fold: f64,
}

impl Model {
    /// The common terms of `a` under this model.
    pub(crate) fn terms(&self, a: &Args) -> Terms {
        let p = a.ranks.max(1) as f64;
        let n = a.bytes as f64;
        let (al, be, ga) = (self.alpha, self.beta, self.gamma);
        let fold = if a.ranks.is_power_of_two() {
            0.0
        } else {
            2.0 * (al + n * be) + n * ga
        };
        Terms {
            p,
            n,
            lg: p.log2().ceil(),
            al,
            be,
            ga,
            frac: (p - 1.0) / p,
            fold,
        }
    }
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
