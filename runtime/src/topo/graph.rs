//! Graph topologies: the general graph of `MPI_Graph_create` (every rank
//! knows the whole graph) and the distributed graph of
//! `MPI_Dist_graph_create` / `MPI_Dist_graph_create_adjacent` (each rank
//! knows its own in- and out-edges only). As for grids, ranks are not
//! reordered: graph rank = rank in the parent communicator.

use crate::error::Error;

/// A general graph (`MPI_GRAPH`): node `i`'s neighbors are
/// `edges[index[i-1]..index[i]]` (from 0 for node 0), as MPI lays it out.
/// Self-loops and repeated edges are allowed.
///
/// ```
/// use oxmpi::topo::Graph;
/// // 0 - 1, 0 - 2 and a self-loop on 2; node 3 has no edges.
/// let g = Graph::new(&[2, 3, 5, 5], &[1, 2, 0, 0, 2], 4)?;
/// assert_eq!((g.nnodes(), g.nedges()), (4, 5));
/// assert_eq!(g.index(), &[2, 3, 5, 5]);
/// assert_eq!(g.edges(), &[1, 2, 0, 0, 2]);
/// assert_eq!(g.neighbors(2), &[0, 2]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub(super) index: Vec<i32>,
    pub(super) edges: Vec<i32>,
}

impl Graph {
    /// Checks MPI's graph description for a communicator of `size` ranks:
    /// at most `size` nodes, `index` non-decreasing and ending at
    /// `edges.len()`, every edge naming a node.
    ///
    /// ```
    /// use oxmpi::topo::Graph;
    /// // A ring of 3: each node's neighbors are the two others.
    /// let g = Graph::new(&[2, 4, 6], &[1, 2, 0, 2, 0, 1], 4)?;
    /// assert_eq!(g.neighbors(1), &[0, 2]);
    /// assert!(Graph::new(&[2, 4, 6], &[1, 2, 0, 2, 0, 3], 4).is_err());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn new(index: &[i32], edges: &[i32], size: i32) -> Result<Graph, Error> {
        let nnodes = index.len();
        if nnodes > size.max(0) as usize {
            return Err(Error::InvalidArgument {
                arg: "index",
                reason: format!(
                    "a graph of {nnodes} nodes needs more than the {size} ranks of the \
                     communicator"
                ),
            });
        }
        let mut prev = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < prev {
                return Err(Error::InvalidArgument {
                    arg: "index",
                    reason: format!(
                        "index[{i}] is {x}, below {prev}: the entries are cumulative degrees \
                         and cannot decrease"
                    ),
                });
            }
            prev = x;
        }
        if prev as usize != edges.len() {
            return Err(Error::InvalidArgument {
                arg: "index",
                reason: format!(
                    "the last entry is {prev} but {} edges were given",
                    edges.len()
                ),
            });
        }
        if let Some((i, &e)) = edges
            .iter()
            .enumerate()
            .find(|(_, &e)| !(0..nnodes as i32).contains(&e))
        {
            return Err(Error::InvalidArgument {
                arg: "edges",
                reason: format!("edges[{i}] is {e}, not a node of the {nnodes}-node graph"),
            });
        }
        Ok(Graph {
            index: index.to_vec(),
            edges: edges.to_vec(),
        })
    }

    /// Number of nodes.
    ///
    /// See the example on [`Graph`].
    pub fn nnodes(&self) -> i32 {
        self.index.len() as i32
    }

    /// Number of edges (each undirected edge counts twice, once per end,
    /// as MPI's description lists it).
    ///
    /// See the example on [`Graph`].
    pub fn nedges(&self) -> i32 {
        self.edges.len() as i32
    }

    /// The cumulative degrees (`index` of `MPI_Graph_get`).
    ///
    /// See the example on [`Graph`].
    pub fn index(&self) -> &[i32] {
        &self.index
    }

    /// Every node's neighbors, concatenated (`edges` of `MPI_Graph_get`).
    ///
    /// See the example on [`Graph`].
    pub fn edges(&self) -> &[i32] {
        &self.edges
    }

    /// The neighbors of node `node` (in range), in the order given.
    ///
    /// ```
    /// use oxmpi::topo::Graph;
    /// // A path 0 - 1 - 2.
    /// let path = Graph::new(&[1, 3, 4], &[1, 0, 2, 1], 3)?;
    /// assert_eq!(path.neighbors(0), &[1]);
    /// assert_eq!(path.neighbors(1), &[0, 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbors(&self, node: i32) -> &[i32] {
        let i = node as usize;
        let start = if i == 0 {
            0
        } else {
            self.index[i - 1] as usize
        };
        &self.edges[start..self.index[i] as usize]
    }
}

/// A distributed graph (`MPI_DIST_GRAPH`) as one rank knows it: the ranks
/// it receives from and sends to, with the edges' weights.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let (me, n) = (world.rank(), world.size());
/// let (prev, next) = ((me + n - 1) % n, (me + 1) % n);
/// // A ring with weight 5 on every edge (both ends give the same weight).
/// let w = [5];
/// let ring = world.dist_graph_create_adjacent(&[prev], &[next], Some((&w[..], &w[..])), false)?;
/// let g = ring.dist_graph_neighbors()?;
/// assert_eq!((g.sources(), g.source_weights()), (&[prev][..], &[5][..]));
/// assert_eq!((g.destinations(), g.dest_weights()), (&[next][..], &[5][..]));
/// assert!(g.weighted());
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistGraph {
    pub(super) sources: Vec<i32>,
    pub(super) source_weights: Vec<i32>,
    pub(super) destinations: Vec<i32>,
    pub(super) dest_weights: Vec<i32>,
    pub(super) weighted: bool,
}

impl DistGraph {
    /// Ranks with an edge to this one (in-neighbors), in order.
    ///
    /// See the example on [`DistGraph`].
    pub fn sources(&self) -> &[i32] {
        &self.sources
    }

    /// Weights of the in-edges (empty when unweighted).
    ///
    /// See the example on [`DistGraph`].
    pub fn source_weights(&self) -> &[i32] {
        &self.source_weights
    }

    /// Ranks this one has an edge to (out-neighbors), in order.
    ///
    /// See the example on [`DistGraph`].
    pub fn destinations(&self) -> &[i32] {
        &self.destinations
    }

    /// Weights of the out-edges (empty when unweighted).
    ///
    /// See the example on [`DistGraph`].
    pub fn dest_weights(&self) -> &[i32] {
        &self.dest_weights
    }

    /// Whether the graph was created with weights (`MPI_UNWEIGHTED` was
    /// not given).
    ///
    /// See the example on [`DistGraph`].
    pub fn weighted(&self) -> bool {
        self.weighted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_queries_follow_the_index_layout() {
        // 0 - 1, 0 - 2, 2 - 2 (a self-loop), node 3 isolated.
        let g = Graph::new(&[2, 3, 5, 5], &[1, 2, 0, 0, 2], 5).unwrap();
        assert_eq!((g.nnodes(), g.nedges()), (4, 5));
        assert_eq!(g.neighbors(0), &[1, 2]);
        assert_eq!(g.neighbors(1), &[0]);
        assert_eq!(g.neighbors(2), &[0, 2]);
        assert!(g.neighbors(3).is_empty());
        assert_eq!(g.index(), &[2, 3, 5, 5]);
        assert_eq!(g.edges(), &[1, 2, 0, 0, 2]);
        let empty = Graph::new(&[], &[], 3).unwrap();
        assert_eq!((empty.nnodes(), empty.nedges()), (0, 0));
    }

    #[test]
    fn bad_graphs_name_the_argument_and_value() {
        let msg = |r: Result<Graph, Error>| r.unwrap_err().to_string();
        let e = msg(Graph::new(&[1, 2, 3], &[1, 2, 0], 2));
        assert!(e.contains("`index`") && e.contains("3 nodes"), "{e}");
        let e = msg(Graph::new(&[2, 1], &[1, 0], 2));
        assert!(e.contains("index[1] is 1"), "{e}");
        let e = msg(Graph::new(&[1, 3], &[1, 0], 2));
        assert!(e.contains("last entry is 3 but 2 edges"), "{e}");
        let e = msg(Graph::new(&[1, 2], &[1, 2], 4));
        assert!(e.contains("`edges`") && e.contains("edges[1] is 2"), "{e}");
        let e = msg(Graph::new(&[1, 2], &[-1, 0], 4));
        assert!(e.contains("edges[0] is -1"), "{e}");
        assert_eq!(
            Graph::new(&[1, 2], &[-1, 0], 4).unwrap_err().class(),
            crate::ErrorClass::Arg
        );
    }
}
