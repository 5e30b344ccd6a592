//! The cost model across nodes. Messages between nodes pay the network's
//! latency and bandwidth ([`Model::inter_alpha`], [`Model::inter_beta`];
//! defaults [`DEFAULT_INTER_ALPHA`], [`DEFAULT_INTER_BETA`] are placeholders
//! for a network until inter-host transports exist to measure one).
//!
//! A node-aware algorithm predicts its phases separately (see
//! `algos::*::hierarchical`). A flat algorithm on a multi-node layout is
//! approximated by [`Model::across`]: its usual single-node formula with
//! alpha and beta blended towards the network's, alpha by the share of its
//! rounds that have a message between nodes, beta by the share of its
//! bytes moved in such rounds, where `c` messages leave one node at once
//! and share that node's link (the network's beta times `c`).
//!
//! The shares and `c` come from the algorithm's communication pattern
//! (`Pattern`), assuming blocks of consecutive ranks per node of the
//! largest node's size `q` (`N` nodes, `p` ranks); when the nodes are not
//! blocks, every round is taken to cross. Uneven nodes, rounds that only
//! some ranks' messages cross, and contention inside a node are ignored:
//! a simple approximation, good enough to rank the algorithms, not to time
//! them.

use super::model::{Args, Layout, Model};

/// Network latency until one is measured: 2 us per message.
///
/// ```
/// use oxmpi::coll::inter::DEFAULT_INTER_ALPHA;
/// use oxmpi::coll::select::Model;
/// assert_eq!(Model::SHM.inter_alpha, DEFAULT_INTER_ALPHA);
/// assert!(DEFAULT_INTER_ALPHA > Model::SHM.alpha); // slower than shared memory
/// ```
pub const DEFAULT_INTER_ALPHA: f64 = 2e-6;
/// Network transfer time until one is measured: 10 GB/s.
///
/// ```
/// use oxmpi::coll::inter::DEFAULT_INTER_BETA;
/// use oxmpi::coll::select::Model;
/// assert_eq!(Model::SHM.inter_beta, DEFAULT_INTER_BETA);
/// assert!((1.0 / DEFAULT_INTER_BETA - 10e9).abs() < 1.0); // 10 GB/s
/// ```
pub const DEFAULT_INTER_BETA: f64 = 1.0 / 10e9;

/// How an algorithm's messages meet node boundaries (each algorithm
/// states its own in the registry, `algos/`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    /// Partners at distances 1, 2, 4, ..., the same bytes each round: the
    /// lg N farthest rounds cross, with every rank's message (c = q).
    Butterfly,
    /// The same partners, but the far rounds move most of the bytes
    /// (recursive halving, recursive doubling allgather): lg N rounds cross,
    /// carrying the share of the bytes that belongs to other nodes.
    Halving,
    /// A binomial tree: the lg N farthest rounds cross, about one message
    /// per node each (c = 1).
    Tree,
    /// Rank to rank + 1 (rings, chains): every step waits for a crossing
    /// link, one message per node when nodes are blocks (c = 1).
    Neighbour,
    /// Everyone with everyone: the share of peers off the node crosses,
    /// from every rank at once (c = q).
    Pairs,
    /// A root with everyone (linear gather and scatter): the share of
    /// peers off the root's node crosses, through the root's link (c = 1).
    Rooted,
    /// A node-aware algorithm: its cost prices each phase on its own links
    /// already, so [`Model::across`] leaves the model as it is.
    NodeAware,
    /// No messages: loads and stores in the communicator's shared-memory
    /// area, so only for ranks on one node (`coll/area`).
    SharedArea,
}

impl Model {
    /// The model of a phase among one rank per node: every message
    /// crosses, one per node at a time.
    ///
    /// ```
    /// use oxmpi::coll::select::Model;
    /// let m = Model::SHM;
    /// let net = m.inter();
    /// assert_eq!((net.alpha, net.beta), (m.inter_alpha, m.inter_beta));
    /// assert_eq!(net.gamma, m.gamma); // reductions still run on a core
    /// ```
    pub fn inter(&self) -> Model {
        Model {
            alpha: self.inter_alpha,
            beta: self.inter_beta,
            ..*self
        }
    }

    /// The single-node model that an algorithm with communication
    /// `pattern` behaves like on `a`'s layout (itself on one node; see the
    /// module docs).
    ///
    /// ```
    /// use oxmpi::coll::algos::{Args, Layout};
    /// use oxmpi::coll::inter::Pattern;
    /// use oxmpi::coll::select::Model;
    /// let m = Model::SHM;
    /// let one = Args::new(16, 4096, true);
    /// assert_eq!(m.across(Pattern::Neighbour, &one).alpha, m.alpha); // one node: itself
    /// let four = one.on(Layout::blocks(16, 4));
    /// let ring = m.across(Pattern::Neighbour, &four);
    /// assert!(ring.alpha > m.alpha && ring.beta > m.beta); // each step waits for the network
    /// ```
    pub fn across(&self, pattern: Pattern, a: &Args) -> Model {
        let Layout {
            nodes,
            per_node,
            blocked,
        } = a.layout;
        if nodes < 2 || a.ranks < 2 || matches!(pattern, Pattern::NodeAware | Pattern::SharedArea) {
            return *self;
        }
        let (p, q) = (a.ranks as f64, per_node as f64);
        let lg = |x: f64| x.log2().ceil();
        // Share of peers on other nodes; of a butterfly's rounds that cross.
        let off = ((p - q) / (p - 1.0)).clamp(0.0, 1.0);
        let (rounds, far) = if blocked {
            ((lg(nodes as f64) / lg(p)).min(1.0), off)
        } else {
            (1.0, 1.0)
        };
        // (share of rounds, share of bytes, messages per node link).
        let (fa, fb, c) = match pattern {
            Pattern::Butterfly => (rounds, rounds, q),
            Pattern::Halving => (rounds, far, q),
            Pattern::Tree => (rounds, rounds, 1.0),
            Pattern::Neighbour => (1.0, 1.0, if blocked { 1.0 } else { q }),
            Pattern::Pairs => (off, off, q),
            Pattern::Rooted => (off, off, 1.0),
            Pattern::NodeAware | Pattern::SharedArea => (0.0, 0.0, 1.0),
        };
        Model {
            alpha: self.alpha + fa * (self.inter_alpha - self.alpha),
            beta: self.beta + fb * (c * self.inter_beta - self.beta),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coll::algos::{choose, AlgoInfo, Coll};

    /// The pattern the registry gives algorithm `name` of `coll`.
    fn pattern(coll: Coll, name: &str) -> Pattern {
        coll.algos()
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.pattern)
            .unwrap_or_else(|| panic!("{coll:?} has no {name}"))
    }

    fn on(ranks: usize, nodes: usize, bytes: usize) -> Args {
        Args::new(ranks, bytes, true).on(Layout::blocks(ranks, nodes))
    }

    #[test]
    fn flat_algorithms_pay_more_across_nodes() {
        let m = Model::SHM;
        for &coll in Coll::ALL {
            let flat = |i: &&AlgoInfo| !i.multi_node && i.pattern != Pattern::SharedArea;
            for info in coll.algos().iter().filter(flat) {
                let one = m.predict(coll, info.name, &Args::new(16, 4096, true));
                let two = m.predict(coll, info.name, &on(16, 2, 4096));
                let four = m.predict(coll, info.name, &on(16, 4, 4096));
                assert!(one < two && one < four, "{coll:?} {}", info.name);
            }
        }
        // The shared area only on one node.
        assert!(m
            .predict(Coll::Bcast, "shm", &Args::new(16, 64, true))
            .is_finite());
        assert!(m.predict(Coll::Bcast, "shm", &on(16, 2, 64)).is_infinite());
        // One node: unchanged.
        let a = on(8, 1, 1 << 20);
        assert_eq!(m.across(pattern(Coll::Allreduce, "ring"), &a).beta, m.beta);
    }

    #[test]
    fn crossing_shares_follow_the_pattern() {
        let m = Model::SHM;
        let a = on(16, 2, 0);
        // Butterfly: 1 of 4 rounds crosses, 8 ranks share the link.
        let b = m.across(pattern(Coll::Allreduce, "recursive_doubling"), &a);
        assert!((b.alpha - (m.alpha + 0.25 * (m.inter_alpha - m.alpha))).abs() < 1e-15);
        assert!((b.beta - (m.beta + 0.25 * (8.0 * m.inter_beta - m.beta))).abs() < 1e-18);
        // A ring: every step crosses, one message per node.
        let r = m.across(pattern(Coll::Allreduce, "ring"), &a);
        assert_eq!((r.alpha, r.beta), (m.inter_alpha, m.inter_beta));
        // Nodes that are not blocks: every round crosses.
        let scattered = Args {
            layout: Layout {
                blocked: false,
                ..a.layout
            },
            ..a
        };
        assert_eq!(
            m.across(pattern(Coll::Bcast, "binomial"), &scattered).alpha,
            m.inter_alpha
        );
        assert_eq!(m.inter().alpha, m.inter_alpha);
    }

    #[test]
    fn hierarchical_is_predicted_and_chosen_where_it_saves_network_time() {
        let m = Model::SHM;
        for coll in [Coll::Allreduce, Coll::Bcast, Coll::Reduce] {
            // Applicable and finite on several nodes, not on one.
            let t = m.predict(coll, "hierarchical", &on(16, 4, 65536));
            assert!(t.is_finite() && t > 0.0);
            let c = choose(coll, &on(16, 1, 64), &m, Some("hierarchical"));
            assert!(c.fallback.unwrap().contains("more than one node"));
            let c = choose(coll, &on(16, 2, 64), &m, Some("hierarchical"));
            assert_eq!((c.algo.name, c.fallback), ("hierarchical", None));
        }
        // Medium messages on many ranks per node: the leaders' phase sends
        // one message per node where a flat butterfly sends one per rank.
        let a = on(32, 4, 64 << 10);
        assert_eq!(
            choose(Coll::Allreduce, &a, &m, None).algo.name,
            "hierarchical"
        );
        // Nodes that are not blocks: a flat tree crosses every round.
        let mixed = a.on(Layout {
            blocked: false,
            ..a.layout
        });
        assert_eq!(
            choose(Coll::Bcast, &mixed, &m, None).algo.name,
            "hierarchical"
        );
        assert_eq!(
            choose(Coll::Reduce, &mixed, &m, None).algo.name,
            "hierarchical"
        );
    }
}
