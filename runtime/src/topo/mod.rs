//! Virtual topologies: a communicator may carry a cartesian grid
//! (`MPI_Cart_create` and friends), a general graph (`MPI_Graph_create`)
//! or a distributed graph (`MPI_Dist_graph_create*`, see [`graph`]). Grid
//! ranks are laid out row-major (the last dimension varies fastest), as MPI
//! specifies. Reordering is allowed by MPI but not done: topology rank =
//! parent rank.
//!
//! Every topology defines the in- and out-neighbors that neighborhood
//! collectives exchange with ([`Comm::neighbors`](crate::comm::Comm::neighbors)).

mod cart;
mod cart_api;
mod dims;
pub mod graph;
mod graph_api;

pub use cart::{Cart, CartInfo};
pub use dims::dims_create;
pub use graph::{DistGraph, Graph};

/// The topology a communicator carries (`MPI_Topo_test`).
///
/// ```no_run
/// use oxmpi::Topology;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// # let grid = world.cart_create(&[world.size()], &[false], false)?.unwrap();
/// match grid.topology() {
///     Topology::Cart(cart) => println!("a {}-d grid of {:?}", cart.ndims(), cart.dims()),
///     Topology::Graph(g) => println!("a graph of {} nodes", g.nnodes()),
///     Topology::DistGraph(_) => println!("a distributed graph"),
///     Topology::None => println!("no topology"),
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Topology {
    /// No topology (`MPI_UNDEFINED`).
    #[default]
    None,
    /// A cartesian grid (`MPI_CART`).
    Cart(Cart),
    /// A general graph (`MPI_GRAPH`).
    Graph(Graph),
    /// A distributed graph (`MPI_DIST_GRAPH`).
    DistGraph(DistGraph),
}

/// The ranks a neighborhood collective receives from and sends to, in the
/// order of its buffer blocks (see [`Comm::neighbors`](crate::comm::Comm::neighbors)). Entries may
/// repeat; `PROC_NULL` entries (open grid edges) take a block that is
/// neither sent nor received.
///
/// ```no_run
/// use oxmpi::topo::Neighbors;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let line = world.cart_create(&[world.size()], &[false], false)?.unwrap();
/// let Neighbors { sources, destinations } = line.neighbors()?;
/// assert_eq!(sources, destinations); // a grid exchanges with the same ranks both ways
/// if line.rank() == 0 {
///     assert_eq!(sources[0], oxmpi::PROC_NULL); // nobody left of the first rank
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbors {
    /// In-neighbors: block i of the receive buffer comes from `sources[i]`.
    pub sources: Vec<i32>,
    /// Out-neighbors: block j of the send buffer goes to `destinations[j]`.
    pub destinations: Vec<i32>,
}

impl Topology {
    /// The neighbors of `rank` that neighborhood collectives exchange with
    /// (see [`Comm::neighbors`](crate::comm::Comm::neighbors)); `None`
    /// without a topology.
    pub(crate) fn neighbors(&self, rank: i32) -> Option<Neighbors> {
        let (sources, destinations) = match self {
            Topology::Cart(c) => {
                let mut v = Vec::with_capacity(2 * c.ndims());
                for d in 0..c.ndims() {
                    let (lo, hi) = c.shift(rank, d, 1);
                    v.extend([lo, hi]);
                }
                (v.clone(), v)
            }
            Topology::Graph(g) => {
                let v = g.neighbors(rank).to_vec();
                (v.clone(), v)
            }
            Topology::DistGraph(g) => (g.sources().to_vec(), g.destinations().to_vec()),
            Topology::None => return None,
        };
        Some(Neighbors {
            sources,
            destinations,
        })
    }
}
