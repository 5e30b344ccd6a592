//! The graph topology calls on a communicator (`MPI_Graph_*`,
//! `MPI_Dist_graph_*`). Building a distributed graph routes every edge
//! to both its ends with `alltoallv`, so these calls sit above the
//! collectives.

use super::{DistGraph, Graph, Topology};
use crate::coll::Blocks;
use crate::comm::{Comm, UNDEFINED};
use crate::error::Error;

/// Checks that every entry of `ranks` (argument `arg`) is a rank of a
/// communicator of `size` ranks.
fn check_ranks(ranks: &[i32], size: i32, arg: &'static str) -> Result<(), Error> {
    match ranks.iter().find(|&&r| !(0..size).contains(&r)) {
        Some(&value) => Err(Error::InvalidRank { arg, value, size }),
        None => Ok(()),
    }
}

/// Checks that weight array `arg` has one entry per edge, none negative.
fn check_weights(w: &[i32], edges: usize, arg: &'static str) -> Result<(), Error> {
    if w.len() != edges {
        return Err(Error::InvalidArgument {
            arg,
            reason: format!("{} weights for {edges} edges", w.len()),
        });
    }
    match w.iter().enumerate().find(|(_, &x)| x < 0) {
        Some((i, x)) => Err(Error::InvalidArgument {
            arg,
            reason: format!("{arg}[{i}] is {x}: weights cannot be negative"),
        }),
        None => Ok(()),
    }
}

/// Which end of an edge a routed record describes (see
/// [`Comm::dist_graph_create`]).
const OUT_EDGE: i32 = 0;
const IN_EDGE: i32 = 1;

impl Comm {
    fn graph(&self) -> Result<&Graph, Error> {
        match &self.inner.topology {
            Topology::Graph(g) => Ok(g),
            _ => Err(Error::InvalidTopology(format!(
                "{} has no graph topology (MPI_Graph_create)",
                self.describe()
            ))),
        }
    }

    fn dist_graph(&self) -> Result<&DistGraph, Error> {
        match &self.inner.topology {
            Topology::DistGraph(g) => Ok(g),
            _ => Err(Error::InvalidTopology(format!(
                "{} has no distributed graph topology (MPI_Dist_graph_create)",
                self.describe()
            ))),
        }
    }

    /// Checks `rank` is a node of the graph.
    fn graph_node(&self, g: &Graph, rank: i32) -> Result<(), Error> {
        if (0..g.nnodes()).contains(&rank) {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                arg: "rank",
                value: rank,
                size: g.nnodes(),
            })
        }
    }

    /// A communicator with the general graph `index` / `edges`
    /// (`MPI_Graph_create`, see [`Graph`]). Ranks `0..index.len()` form it
    /// (node i = rank i here: `reorder` is accepted and not acted on); the
    /// ranks beyond the graph get `None`. Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // A ring over every rank (assuming at least 3).
    /// let n = world.size();
    /// let index: Vec<i32> = (1..=n).map(|i| 2 * i).collect();
    /// let edges: Vec<i32> = (0..n).flat_map(|i| [(i + n - 1) % n, (i + 1) % n]).collect();
    /// let ring = world.graph_create(&index, &edges, false)?.unwrap();
    /// assert_eq!(ring.graph_neighbors_count(0)?, 2);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn graph_create(
        &self,
        index: &[i32],
        edges: &[i32],
        _reorder: bool,
    ) -> Result<Option<Comm>, Error> {
        self.check_live()?;
        let g = Graph::new(index, edges, self.size())?;
        let cells = g.nnodes() as usize;
        let members = (self.rank() < g.nnodes()).then(|| self.inner.world_of[..cells].to_vec());
        self.derive(members, Topology::Graph(g))
    }

    /// The rank [`Comm::graph_create`] would give this process
    /// (`MPI_Graph_map`): its rank, or [`UNDEFINED`] beyond the graph.
    /// Checks the graph as `graph_create` does. Local.
    ///
    /// ```no_run
    /// use oxmpi::UNDEFINED;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 2 { return Ok(()); }
    /// // Two nodes joined by an edge: only ranks 0 and 1 get a place.
    /// let r = world.graph_map(&[1, 2], &[1, 0])?;
    /// assert_eq!(r, if world.rank() < 2 { world.rank() } else { UNDEFINED });
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn graph_map(&self, index: &[i32], edges: &[i32]) -> Result<i32, Error> {
        self.check_live()?;
        let g = Graph::new(index, edges, self.size())?;
        Ok(if self.rank() < g.nnodes() {
            self.rank()
        } else {
            UNDEFINED
        })
    }

    /// `(nnodes, nedges)` of the graph (`MPI_Graphdims_get`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 2 { return Ok(()); }
    /// // Two nodes joined by an edge, listed once at each end.
    /// if let Some(pair) = world.graph_create(&[1, 2], &[1, 0], false)? {
    ///     assert_eq!(pair.graphdims_get()?, (2, 2));
    /// }
    /// assert!(world.graphdims_get().is_err()); // no graph on world
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn graphdims_get(&self) -> Result<(i32, i32), Error> {
        let g = self.graph()?;
        Ok((g.nnodes(), g.nedges()))
    }

    /// The whole graph (`MPI_Graph_get`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 2 { return Ok(()); }
    /// if let Some(pair) = world.graph_create(&[1, 2], &[1, 0], false)? {
    ///     let g = pair.graph_get()?;
    ///     assert_eq!((g.index(), g.edges()), (&[1, 2][..], &[1, 0][..]));
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn graph_get(&self) -> Result<&Graph, Error> {
        self.graph()
    }

    /// Number of neighbors of `rank` (`MPI_Graph_neighbors_count`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 3 { return Ok(()); }
    /// // A star: node 0 joined to nodes 1 and 2.
    /// if let Some(star) = world.graph_create(&[2, 3, 4], &[1, 2, 0, 0], false)? {
    ///     assert_eq!(star.graph_neighbors_count(0)?, 2);
    ///     assert_eq!(star.graph_neighbors_count(1)?, 1);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn graph_neighbors_count(&self, rank: i32) -> Result<i32, Error> {
        Ok(self.graph_neighbors(rank)?.len() as i32)
    }

    /// The neighbors of `rank`, in the order given (`MPI_Graph_neighbors`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 3 { return Ok(()); }
    /// // A star: node 0 joined to nodes 1 and 2.
    /// if let Some(star) = world.graph_create(&[2, 3, 4], &[1, 2, 0, 0], false)? {
    ///     assert_eq!(star.graph_neighbors(0)?, &[1, 2]);
    ///     assert_eq!(star.graph_neighbors(2)?, &[0]);
    ///     assert!(star.graph_neighbors(3).is_err()); // not a node
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn graph_neighbors(&self, rank: i32) -> Result<&[i32], Error> {
        let g = self.graph()?;
        self.graph_node(g, rank)?;
        Ok(g.neighbors(rank))
    }

    /// A communicator whose distributed graph gives every rank its own
    /// in-neighbors `sources` and out-neighbors `destinations`
    /// (`MPI_Dist_graph_create_adjacent`), with `weights` (for the sources,
    /// for the destinations) or `None` for `MPI_UNWEIGHTED`. Every rank of
    /// this communicator is in it (`reorder` is accepted and not acted
    /// on). Collective; the edges must agree (rank a lists b as a
    /// destination as often as b lists a as a source).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, n) = (world.rank(), world.size());
    /// // Each rank receives from the previous one and sends to the next.
    /// let g = world.dist_graph_create_adjacent(&[(me + n - 1) % n], &[(me + 1) % n], None, false)?;
    /// assert_eq!(g.dist_graph_neighbors_count()?, (1, 1, false));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn dist_graph_create_adjacent(
        &self,
        sources: &[i32],
        destinations: &[i32],
        weights: Option<(&[i32], &[i32])>,
        _reorder: bool,
    ) -> Result<Comm, Error> {
        self.check_live()?;
        check_ranks(sources, self.size(), "sources")?;
        check_ranks(destinations, self.size(), "destinations")?;
        let (source_weights, dest_weights) = match weights {
            Some((sw, dw)) => {
                check_weights(sw, sources.len(), "sourceweights")?;
                check_weights(dw, destinations.len(), "destweights")?;
                (sw.to_vec(), dw.to_vec())
            }
            None => (Vec::new(), Vec::new()),
        };
        let g = DistGraph {
            sources: sources.to_vec(),
            source_weights,
            destinations: destinations.to_vec(),
            dest_weights,
            weighted: weights.is_some(),
        };
        self.derive_all(Topology::DistGraph(g))
    }

    /// A communicator with a distributed graph whose edges any rank may
    /// give (`MPI_Dist_graph_create`): this rank adds, for each `i`, the
    /// edges from `sources[i]` to the next `degrees[i]` entries of
    /// `destinations`, weighted by the same entries of `weights` (`None`
    /// for `MPI_UNWEIGHTED`). Each edge is routed to both its ends, so
    /// every rank learns its in- and out-neighbors: ordered by the rank
    /// that gave the edge, then as given there. `reorder` is accepted and
    /// not acted on. Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let n = world.size();
    /// // Rank 0 describes a star: 0 sends to everyone else.
    /// let (srcs, degs, dsts): (Vec<i32>, Vec<i32>, Vec<i32>) = if world.rank() == 0 {
    ///     (vec![0], vec![n - 1], (1..n).collect())
    /// } else {
    ///     (vec![], vec![], vec![])
    /// };
    /// let star = world.dist_graph_create(&srcs, &degs, &dsts, None, false)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn dist_graph_create(
        &self,
        sources: &[i32],
        degrees: &[i32],
        destinations: &[i32],
        weights: Option<&[i32]>,
        _reorder: bool,
    ) -> Result<Comm, Error> {
        self.check_live()?;
        let size = self.size();
        if degrees.len() != sources.len() {
            return Err(Error::InvalidArgument {
                arg: "degrees",
                reason: format!("{} degrees for {} sources", degrees.len(), sources.len()),
            });
        }
        check_ranks(sources, size, "sources")?;
        if let Some((i, &d)) = degrees.iter().enumerate().find(|(_, &d)| d < 0) {
            return Err(Error::InvalidArgument {
                arg: "degrees",
                reason: format!("degrees[{i}] is {d}: degrees cannot be negative"),
            });
        }
        let nedges: usize = degrees.iter().map(|&d| d as usize).sum();
        if destinations.len() != nedges {
            return Err(Error::InvalidArgument {
                arg: "destinations",
                reason: format!(
                    "{} destinations where the degrees add up to {nedges}",
                    destinations.len()
                ),
            });
        }
        check_ranks(destinations, size, "destinations")?;
        if let Some(w) = weights {
            check_weights(w, nedges, "weights")?;
        }
        // Records (kind, peer, weight) for each end of each edge, by the
        // rank that end belongs to.
        let mut out: Vec<Vec<i32>> = vec![Vec::new(); size as usize];
        let mut e = 0;
        for (&s, &deg) in sources.iter().zip(degrees) {
            for _ in 0..deg {
                let (d, w) = (destinations[e], weights.map_or(1, |w| w[e]));
                out[s as usize].extend([OUT_EDGE, d, w]);
                out[d as usize].extend([IN_EDGE, s, w]);
                e += 1;
            }
        }
        let counts: Vec<u64> = out.iter().map(|v| v.len() as u64).collect();
        let mut theirs = vec![0u64; size as usize];
        self.alltoall(&counts, &mut theirs)?;
        let scounts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
        let rcounts: Vec<usize> = theirs.iter().map(|&c| c as usize).collect();
        let (sd, rd) = (
            Blocks::packed_displs(&scounts),
            Blocks::packed_displs(&rcounts),
        );
        let send: Vec<i32> = out.concat();
        let mut recv = vec![0i32; rcounts.iter().sum()];
        self.alltoallv(
            &send,
            Blocks::new(&scounts, &sd),
            &mut recv,
            Blocks::new(&rcounts, &rd),
        )?;
        let mut g = DistGraph {
            sources: Vec::new(),
            source_weights: Vec::new(),
            destinations: Vec::new(),
            dest_weights: Vec::new(),
            weighted: weights.is_some(),
        };
        for rec in recv.chunks_exact(3) {
            let (peers, ws) = if rec[0] == OUT_EDGE {
                (&mut g.destinations, &mut g.dest_weights)
            } else {
                (&mut g.sources, &mut g.source_weights)
            };
            peers.push(rec[1]);
            if g.weighted {
                ws.push(rec[2]);
            }
        }
        self.derive_all(Topology::DistGraph(g))
    }

    /// `(indegree, outdegree, weighted)` of this rank's part of the
    /// distributed graph (`MPI_Dist_graph_neighbors_count`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, n) = (world.rank(), world.size());
    /// // Every rank sends to rank 0, which receives from everyone.
    /// let sources: Vec<i32> = if me == 0 { (0..n).collect() } else { vec![] };
    /// let to_root = world.dist_graph_create_adjacent(&sources, &[0], None, false)?;
    /// let indegree = if me == 0 { n } else { 0 };
    /// assert_eq!(to_root.dist_graph_neighbors_count()?, (indegree, 1, false));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn dist_graph_neighbors_count(&self) -> Result<(i32, i32, bool), Error> {
        let g = self.dist_graph()?;
        Ok((
            g.sources.len() as i32,
            g.destinations.len() as i32,
            g.weighted,
        ))
    }

    /// This rank's in- and out-neighbors with their weights
    /// (`MPI_Dist_graph_neighbors`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, n) = (world.rank(), world.size());
    /// // Rank 0 gives every edge of a chain: i -> i + 1, weighted i.
    /// let (srcs, degs, dsts, w): (Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>) = if me == 0 {
    ///     ((0..n - 1).collect(), vec![1; n as usize - 1], (1..n).collect(), (0..n - 1).collect())
    /// } else {
    ///     (vec![], vec![], vec![], vec![])
    /// };
    /// let chain = world.dist_graph_create(&srcs, &degs, &dsts, Some(&w[..]), false)?;
    /// let g = chain.dist_graph_neighbors()?;
    /// if me > 0 {
    ///     assert_eq!((g.sources(), g.source_weights()), (&[me - 1][..], &[me - 1][..]));
    /// }
    /// assert_eq!(g.destinations().len(), if me + 1 < n { 1 } else { 0 });
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn dist_graph_neighbors(&self) -> Result<&DistGraph, Error> {
        self.dist_graph()
    }

    /// A communicator of every rank of this one with `topology`.
    fn derive_all(&self, topology: Topology) -> Result<Comm, Error> {
        Ok(self
            .derive(Some(self.inner.world_of.clone()), topology)?
            .expect("every rank is a member"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_weight_checks() {
        assert!(check_ranks(&[0, 3], 4, "sources").is_ok());
        let e = check_ranks(&[0, 4], 4, "sources").unwrap_err();
        assert_eq!(e.class(), crate::ErrorClass::Rank);
        assert!(e
            .to_string()
            .contains("invalid rank 4 for argument `sources`"));
        assert!(check_weights(&[1, 0], 2, "weights").is_ok());
        let e = check_weights(&[1], 2, "weights").unwrap_err();
        assert!(e.to_string().contains("1 weights for 2 edges"), "{e}");
        let e = check_weights(&[1, -2], 2, "weights").unwrap_err();
        assert!(e.to_string().contains("weights[1] is -2"), "{e}");
    }
}
