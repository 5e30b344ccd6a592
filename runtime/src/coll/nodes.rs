//! Which node each rank of a communicator is on, as the collective layer
//! sees it: the input of the node-aware (hierarchical) algorithms and of
//! the cost model's multi-node terms.
//!
//! The job's map comes from the bootstrap's process mapping, unless
//! `OXMPI_COLL_NODES=<k>` (a testing and tuning knob, like MPICH's
//! `MPIR_CVAR_NUM_CLIQUES`) tells the collective layer, and only it, to
//! treat the world ranks as k nodes of consecutive ranks ([`consecutive`]);
//! the transport always uses the real map. Each communicator computes its
//! [`NodeView`] once, at its first collective call, and keeps it with its
//! collective state.

use std::sync::OnceLock;

use crate::comm::Comm;
use crate::fast_hash::FastMap;

/// The shape of a communicator's node map, as selection and the cost
/// model see it.
///
/// ```
/// use oxmpi::coll::nodes::Layout;
/// assert_eq!(Layout::single(8), Layout { nodes: 1, per_node: 8, blocked: true });
/// let three = Layout::blocks(10, 3); // nodes of 4, 3 and 3 ranks
/// assert_eq!((three.nodes, three.per_node, three.blocked), (3, 4, true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Nodes the ranks are on (at least 1).
    pub nodes: usize,
    /// Ranks on the most populated node.
    pub per_node: usize,
    /// Whether every node's ranks are consecutive communicator ranks, so
    /// that combining node by node keeps rank order.
    pub blocked: bool,
}

impl Layout {
    /// All `ranks` on one node.
    ///
    /// ```
    /// use oxmpi::coll::nodes::Layout;
    /// assert_eq!(Layout::single(4).per_node, 4);
    /// assert_eq!(Layout::single(0).per_node, 1); // never an empty node
    /// ```
    pub fn single(ranks: usize) -> Layout {
        Layout {
            nodes: 1,
            per_node: ranks.max(1),
            blocked: true,
        }
    }

    /// `ranks` in `nodes` blocks of consecutive ranks as even as possible
    /// (what [`consecutive`] makes; `oxrun --explain --nodes N`).
    ///
    /// ```
    /// use oxmpi::coll::nodes::{consecutive, Layout};
    /// assert_eq!(consecutive(10, 3), [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
    /// let l = Layout::blocks(10, 3);
    /// assert_eq!((l.nodes, l.per_node), (3, 4));
    /// assert_eq!(Layout::blocks(2, 5).nodes, 2); // no more nodes than ranks
    /// ```
    pub fn blocks(ranks: usize, nodes: usize) -> Layout {
        let nodes = nodes.clamp(1, ranks.max(1));
        Layout {
            nodes,
            per_node: ranks.max(1).div_ceil(nodes),
            blocked: true,
        }
    }
}

/// The node of each of `size` ranks split into `k` blocks of consecutive
/// ranks, the first `size % k` one rank larger (`k` is capped at `size`;
/// 0 counts as 1).
///
/// ```
/// use oxmpi::coll::nodes::consecutive;
/// assert_eq!(consecutive(5, 2), [0, 0, 0, 1, 1]); // the first node takes the extra rank
/// assert_eq!(consecutive(2, 5), [0, 1]); // at most one node per rank
/// assert_eq!(consecutive(3, 0), [0, 0, 0]); // 0 counts as 1
/// ```
pub fn consecutive(size: usize, k: usize) -> Vec<usize> {
    let k = k.clamp(1, size.max(1));
    let mut map = Vec::with_capacity(size);
    for node in 0..k {
        let (_, n) = super::ctx::block(size, k, node);
        map.resize(map.len() + n, node);
    }
    map
}

/// One rank's view of the nodes of a communicator. Nodes are numbered in
/// the order of their lowest rank, so node `i`'s leader is `leaders[i]`
/// and the leaders are ascending.
///
/// ```
/// use oxmpi::coll::nodes::NodeView;
/// // World ranks 0..4 on hosts 7, 7, 9, 9; a communicator of world ranks 3, 0, 2 (in
/// // that order), seen from its rank 0.
/// let v = NodeView::new(&[7, 7, 9, 9], &[3, 0, 2], 0);
/// assert_eq!(v.node_of, [0, 1, 0]); // node 0 is host 9, where rank 0 is
/// assert_eq!((v.leaders.as_slice(), v.leaders_world.as_slice()), (&[0, 1][..], &[3, 0][..]));
/// assert_eq!((v.local.as_slice(), v.local_world.as_slice()), (&[0, 2][..], &[3, 2][..]));
/// assert_eq!((v.layout.nodes, v.layout.per_node), (2, 2));
/// assert!(!v.layout.blocked); // node 0's ranks 0 and 2 are not consecutive
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView {
    /// The node of every communicator rank.
    pub node_of: Vec<usize>,
    /// The lowest communicator rank of each node (its leader), ascending.
    pub leaders: Vec<usize>,
    /// World ranks of [`NodeView::leaders`].
    pub leaders_world: Vec<usize>,
    /// The communicator ranks on this rank's node, ascending (leader first).
    pub local: Vec<usize>,
    /// World ranks of [`NodeView::local`].
    pub local_world: Vec<usize>,
    /// The shape of the map.
    pub layout: Layout,
}

impl NodeView {
    /// The view of communicator rank `rank`, whose ranks have world ranks
    /// `world_of`, when world rank `w` is on node `node_of_world[w]` (any
    /// numbering).
    ///
    /// ```
    /// use oxmpi::coll::nodes::NodeView;
    /// // Four world ranks, two per node; the world communicator seen from rank 3.
    /// let v = NodeView::new(&[0, 0, 1, 1], &[0, 1, 2, 3], 3);
    /// assert_eq!((v.leaders.as_slice(), v.local.as_slice()), (&[0, 2][..], &[2, 3][..]));
    /// assert!(v.layout.blocked);
    /// ```
    pub fn new(node_of_world: &[usize], world_of: &[usize], rank: usize) -> NodeView {
        // Node id -> node number, in order of first appearance.
        let mut number: FastMap<usize, usize> = FastMap::default();
        let mut node_of = Vec::with_capacity(world_of.len());
        let mut leaders = Vec::new();
        let mut per_node: Vec<usize> = Vec::new();
        for (r, &w) in world_of.iter().enumerate() {
            let node = *number.entry(node_of_world[w]).or_insert_with(|| {
                leaders.push(r);
                per_node.push(0);
                leaders.len() - 1
            });
            per_node[node] += 1;
            node_of.push(node);
        }
        // Consecutive iff the node numbers never go back.
        let blocked = node_of.windows(2).all(|w| w[0] <= w[1]);
        let mine = node_of[rank];
        let local: Vec<usize> = (0..world_of.len())
            .filter(|&r| node_of[r] == mine)
            .collect();
        NodeView {
            leaders_world: leaders.iter().map(|&r| world_of[r]).collect(),
            local_world: local.iter().map(|&r| world_of[r]).collect(),
            layout: Layout {
                nodes: leaders.len().max(1),
                per_node: per_node.iter().copied().max().unwrap_or(1),
                blocked,
            },
            node_of,
            leaders,
            local,
        }
    }

    /// The leader of the node communicator rank `r` is on.
    ///
    /// ```
    /// use oxmpi::coll::nodes::NodeView;
    /// let v = NodeView::new(&[0, 1, 0, 1], &[0, 1, 2, 3], 0); // nodes alternate
    /// assert_eq!((v.leader_of(2), v.leader_of(3)), (0, 1));
    /// ```
    pub fn leader_of(&self, r: usize) -> usize {
        self.leaders[self.node_of[r]]
    }
}

/// A communicator's node view, computed at its first use.
pub(crate) type Cached = OnceLock<NodeView>;

impl Comm {
    /// This communicator's node view (computed once, then cached).
    pub(crate) fn coll_nodes(&self) -> &NodeView {
        self.coll_state().nodes.get_or_init(|| {
            let nodes = &self.inner.shared.coll_node_of_rank;
            if self.inner.world_of.iter().any(|&w| w >= nodes.len()) {
                // Members of another job: their nodes are not known alike
                // on both sides, so every member counts as a node of its
                // own everywhere (the same view, hence the same choices).
                let top = self.inner.world_of.iter().max().map_or(0, |&w| w + 1);
                let own: Vec<usize> = (0..top).collect();
                return NodeView::new(&own, &self.inner.world_of, self.rank() as usize);
            }
            NodeView::new(nodes, &self.inner.world_of, self.rank() as usize)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_blocks_are_even_and_capped() {
        assert_eq!(consecutive(5, 2), [0, 0, 0, 1, 1]);
        assert_eq!(consecutive(7, 3), [0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(consecutive(2, 3), [0, 1]);
        assert_eq!(consecutive(3, 0), [0, 0, 0]);
        assert_eq!(consecutive(4, 1), [0, 0, 0, 0]);
        assert_eq!(
            Layout::blocks(7, 3),
            NodeView::new(&consecutive(7, 3), &[0, 1, 2, 3, 4, 5, 6], 0).layout
        );
        assert_eq!(Layout::blocks(2, 3).nodes, 2);
        assert_eq!(Layout::single(4), Layout::blocks(4, 1));
    }

    #[test]
    fn view_numbers_nodes_by_their_lowest_rank() {
        // World ranks 0..6 on nodes 7,7,3,3,3,9; the communicator takes
        // world ranks 5,2,0,3,1 in that order.
        let map = [7, 7, 3, 3, 3, 9];
        let world_of = [5, 2, 0, 3, 1];
        let v = NodeView::new(&map, &world_of, 3);
        assert_eq!(v.node_of, [0, 1, 2, 1, 2]);
        assert_eq!(v.leaders, [0, 1, 2]);
        assert_eq!(v.leaders_world, [5, 2, 0]);
        assert_eq!(v.local, [1, 3]);
        assert_eq!(v.local_world, [2, 3]);
        assert_eq!(v.leader_of(4), 2);
        assert_eq!(
            v.layout,
            Layout {
                nodes: 3,
                per_node: 2,
                blocked: false
            }
        );
        // Every rank agrees on everything but its own node.
        for r in 0..5 {
            let w = NodeView::new(&map, &world_of, r);
            assert_eq!(
                (&w.node_of, &w.leaders, w.layout),
                (&v.node_of, &v.leaders, v.layout)
            );
            assert!(w.local.contains(&r) && w.local.iter().all(|&q| w.node_of[q] == w.node_of[r]));
        }
    }

    #[test]
    fn one_node_and_blocked_maps() {
        let v = NodeView::new(&[0, 0, 0], &[0, 1, 2], 1);
        assert_eq!(v.layout, Layout::single(3));
        assert_eq!(
            (v.leaders.as_slice(), v.local.as_slice()),
            (&[0][..], &[0, 1, 2][..])
        );
        let v = NodeView::new(&consecutive(9, 2), &(0..9).rev().collect::<Vec<_>>(), 8);
        // Reversed order: nodes are still blocks.
        assert!(v.layout.blocked);
        assert_eq!(v.leaders, [0, 4]);
        assert_eq!(v.local, [4, 5, 6, 7, 8]);
    }
}
