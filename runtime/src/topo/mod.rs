//! Virtual topologies: a communicator may carry a cartesian grid
//! (`MPI_Cart_create` and friends), a general graph (`MPI_Graph_create`)
//! or a distributed graph (`MPI_Dist_graph_create*`, see [`graph`]). Grid
//! ranks are laid out row-major (the last dimension varies fastest), as MPI
//! specifies. Reordering is allowed by MPI but not done: topology rank =
//! parent rank.
//!
//! Every topology defines the in- and out-neighbors that neighborhood
//! collectives exchange with ([`Comm::neighbors`]).

mod dims;
pub mod graph;

pub use dims::dims_create;
pub use graph::{DistGraph, Graph};

use crate::comm::Comm;
use crate::error::Error;
use crate::status::PROC_NULL;

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
/// order of its buffer blocks (see [`Comm::neighbors`]). Entries may
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

/// A cartesian grid: extent and periodicity of each dimension.
///
/// ```no_run
/// use oxmpi::Topology;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let grid = world.cart_create(&[1, world.size()], &[false, true], false)?.unwrap();
/// let Topology::Cart(cart) = grid.topology() else { unreachable!() };
/// assert_eq!((cart.ndims(), cart.size()), (2, world.size()));
/// assert_eq!((cart.dims(), cart.periods()), (&[1, world.size()][..], &[false, true][..]));
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cart {
    dims: Vec<i32>,
    periods: Vec<bool>,
}

impl Cart {
    /// Extent of each dimension.
    ///
    /// See the example on [`Cart`].
    pub fn dims(&self) -> &[i32] {
        &self.dims
    }

    /// Whether each dimension wraps around.
    ///
    /// See the example on [`Cart`].
    pub fn periods(&self) -> &[bool] {
        &self.periods
    }

    /// Number of dimensions.
    ///
    /// See the example on [`Cart`].
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// Ranks in the grid.
    ///
    /// See the example on [`Cart`].
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// Coordinates of grid rank `rank` (in range).
    fn coords_of(&self, mut rank: i32) -> Vec<i32> {
        let mut coords = vec![0; self.dims.len()];
        for (c, &d) in coords.iter_mut().zip(&self.dims).rev() {
            *c = rank % d;
            rank /= d;
        }
        coords
    }

    /// Grid rank of `coords`, wrapping periodic dimensions; `None` when a
    /// coordinate of a non-periodic dimension is outside the grid.
    fn rank_of(&self, coords: &[i32]) -> Option<i32> {
        let mut rank = 0;
        for ((&c, &d), &p) in coords.iter().zip(&self.dims).zip(&self.periods) {
            let c = if p {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return None;
            };
            rank = rank * d + c;
        }
        Some(rank)
    }
}

/// What [`Comm::cart_get`] returns (`MPI_Cart_get`).
///
/// ```no_run
/// use oxmpi::topo::CartInfo;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let grid = world.cart_create(&[world.size()], &[true], false)?.unwrap();
/// let CartInfo { dims, periods, coords } = grid.cart_get()?;
/// assert_eq!((dims[0], periods[0], coords[0]), (world.size(), true, world.rank()));
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CartInfo {
    /// Extent of each dimension.
    pub dims: Vec<i32>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
    /// This rank's coordinates.
    pub coords: Vec<i32>,
}

impl Comm {
    fn cart(&self) -> Result<&Cart, Error> {
        match &self.inner.topology {
            Topology::Cart(c) => Ok(c),
            _ => Err(Error::InvalidTopology(format!(
                "{} has no cartesian topology",
                self.describe()
            ))),
        }
    }

    /// A communicator with a cartesian grid of `dims` (`MPI_Cart_create`).
    /// Ranks `0..product(dims)` of this communicator form it (grid rank =
    /// rank here: `reorder` is accepted and not acted on); the ranks
    /// beyond the grid get `None`. Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut dims = [0, 0];
    /// oxmpi::topo::dims_create(world.size(), &mut dims)?;
    /// let grid = world.cart_create(&dims, &[true, true], false)?.unwrap();
    /// let (left, right) = grid.cart_shift(1, 1)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cart_create(
        &self,
        dims: &[i32],
        periods: &[bool],
        _reorder: bool,
    ) -> Result<Option<Comm>, Error> {
        self.check_live()?;
        if periods.len() != dims.len() {
            return Err(Error::InvalidArgument {
                arg: "periods",
                reason: format!("{} periods for {} dimensions", periods.len(), dims.len()),
            });
        }
        if let Some((i, d)) = dims.iter().enumerate().find(|(_, &d)| d <= 0) {
            return Err(Error::InvalidArgument {
                arg: "dims",
                reason: format!("dims[{i}] is {d}: extents must be positive"),
            });
        }
        let cells = dims
            .iter()
            .try_fold(1i32, |acc, &d| acc.checked_mul(d))
            .filter(|&n| n <= self.size())
            .ok_or_else(|| Error::InvalidArgument {
                arg: "dims",
                reason: format!(
                    "a grid of {dims:?} needs more than the {} ranks of the communicator",
                    self.size()
                ),
            })?;
        let members = (self.rank() < cells).then(|| self.inner.world_of[..cells as usize].to_vec());
        let cart = Cart {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        };
        self.derive(members, Topology::Cart(cart))
    }

    /// Number of dimensions of the grid (`MPI_Cartdim_get`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let grid = world.cart_create(&[world.size(), 1, 1], &[false; 3], false)?.unwrap();
    /// assert_eq!(grid.cartdim_get()?, 3);
    /// assert!(world.cartdim_get().is_err()); // no grid on world
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cartdim_get(&self) -> Result<i32, Error> {
        Ok(self.cart()?.ndims() as i32)
    }

    /// The grid and this rank's place in it (`MPI_Cart_get`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut dims = [0, 0];
    /// oxmpi::dims_create(world.size(), &mut dims)?;
    /// let grid = world.cart_create(&dims, &[false, false], false)?.unwrap();
    /// let info = grid.cart_get()?;
    /// assert_eq!(info.dims, dims);
    /// assert_eq!(info.coords, grid.cart_coords(grid.rank())?);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cart_get(&self) -> Result<CartInfo, Error> {
        let cart = self.cart()?;
        Ok(CartInfo {
            dims: cart.dims.clone(),
            periods: cart.periods.clone(),
            coords: cart.coords_of(self.rank()),
        })
    }

    /// Coordinates of `rank` in the grid (`MPI_Cart_coords`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() != 6 { return Ok(()); }
    /// let grid = world.cart_create(&[2, 3], &[false, false], false)?.unwrap();
    /// assert_eq!(grid.cart_coords(4)?, [1, 1]); // row-major: the last dimension varies fastest
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cart_coords(&self, rank: i32) -> Result<Vec<i32>, Error> {
        let cart = self.cart()?;
        if !(0..self.size()).contains(&rank) {
            return Err(Error::InvalidRank {
                arg: "rank",
                value: rank,
                size: self.size(),
            });
        }
        Ok(cart.coords_of(rank))
    }

    /// Rank at `coords` (`MPI_Cart_rank`): periodic dimensions wrap; a
    /// coordinate outside a non-periodic dimension is an error.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() != 6 { return Ok(()); }
    /// let grid = world.cart_create(&[2, 3], &[false, true], false)?.unwrap();
    /// assert_eq!(grid.cart_rank(&[1, 2])?, 5);
    /// assert_eq!(grid.cart_rank(&[1, 3])?, 3); // dimension 1 is periodic: wraps to column 0
    /// assert!(grid.cart_rank(&[2, 0]).is_err()); // dimension 0 is not
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cart_rank(&self, coords: &[i32]) -> Result<i32, Error> {
        let cart = self.cart()?;
        if coords.len() != cart.ndims() {
            return Err(Error::InvalidArgument {
                arg: "coords",
                reason: format!(
                    "{} coordinates for a grid of {} dimensions",
                    coords.len(),
                    cart.ndims()
                ),
            });
        }
        cart.rank_of(coords).ok_or_else(|| Error::InvalidArgument {
            arg: "coords",
            reason: format!(
                "{coords:?} is outside the grid {:?} (periodic: {:?})",
                cart.dims, cart.periods
            ),
        })
    }

    /// The ranks `disp` steps back and forth along `dim`
    /// (`MPI_Cart_shift`): `(source, dest)`, where `source` sends to this
    /// rank and this rank sends to `dest`; `PROC_NULL` past the edge of a
    /// non-periodic dimension.
    ///
    /// ```no_run
    /// use oxmpi::PROC_NULL;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let line = world.cart_create(&[world.size()], &[false], false)?.unwrap();
    /// let (from, to) = line.cart_shift(0, 1)?;
    /// if line.rank() == 0 {
    ///     assert_eq!(from, PROC_NULL); // nobody to the left of the first rank
    /// }
    /// // Shift data one step right; the ends talk to PROC_NULL.
    /// let mut got = [0i32];
    /// line.sendrecv(&[line.rank()], to, 0, &mut got, from, 0)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cart_shift(&self, dim: i32, disp: i32) -> Result<(i32, i32), Error> {
        let cart = self.cart()?;
        let d = usize::try_from(dim)
            .ok()
            .filter(|&d| d < cart.ndims())
            .ok_or_else(|| Error::InvalidArgument {
                arg: "direction",
                reason: format!("dimension {dim} of a grid of {} dimensions", cart.ndims()),
            })?;
        let me = cart.coords_of(self.rank());
        let at = |delta: i32| {
            let mut c = me.clone();
            c[d] = c[d].saturating_add(delta);
            cart.rank_of(&c).unwrap_or(PROC_NULL)
        };
        Ok((at(disp.saturating_neg()), at(disp)))
    }

    /// The sub-grids keeping the dimensions where `remain_dims` is true
    /// (`MPI_Cart_sub`): this rank's communicator holds the ranks sharing
    /// its coordinates in the dropped dimensions, with a grid of the kept
    /// ones (zero dimensions when none is kept). Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// # if world.size() < 4 { return Ok(()); }
    /// # let Some(grid) = world.cart_create(&[2, 2], &[false; 2], false)? else {
    /// #     return Ok(());
    /// # };
    /// let row = grid.cart_sub(&[false, true])?; // the ranks of my row
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cart_sub(&self, remain_dims: &[bool]) -> Result<Comm, Error> {
        let cart = self.cart()?;
        if remain_dims.len() != cart.ndims() {
            return Err(Error::InvalidArgument {
                arg: "remain_dims",
                reason: format!(
                    "{} entries for a grid of {} dimensions",
                    remain_dims.len(),
                    cart.ndims()
                ),
            });
        }
        let me = cart.coords_of(self.rank());
        let members = (0..self.size())
            .filter(|&r| {
                let c = cart.coords_of(r);
                (0..cart.ndims()).all(|i| remain_dims[i] || c[i] == me[i])
            })
            .map(|r| self.inner.world_of[r as usize])
            .collect();
        let sub = Cart {
            dims: kept(&cart.dims, remain_dims),
            periods: kept(&cart.periods, remain_dims),
        };
        Ok(self
            .derive(Some(members), Topology::Cart(sub))?
            .expect("every rank is in its sub-grid"))
    }
}

impl Comm {
    /// The neighbors of this rank that neighborhood collectives
    /// (`MPI_Neighbor_*`) exchange with, as MPI orders them: for a grid,
    /// for each dimension the rank at -1 then the rank at +1 (`PROC_NULL`
    /// past an open edge), the same list in both directions; for a general
    /// graph, [`Comm::graph_neighbors`] of this rank in both directions;
    /// for a distributed graph, its sources and destinations.
    ///
    /// Errors: `MPI_ERR_TOPOLOGY` for a communicator without a topology.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let grid = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let n = grid.neighbors()?; // [left, right] both ways
    /// assert_eq!(n.sources.len(), 2);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbors(&self) -> Result<Neighbors, Error> {
        let (sources, destinations) = match &self.inner.topology {
            Topology::Cart(c) => {
                let mut v = Vec::with_capacity(2 * c.ndims());
                for d in 0..c.ndims() {
                    let (lo, hi) = self.cart_shift(d as i32, 1)?;
                    v.extend([lo, hi]);
                }
                (v.clone(), v)
            }
            Topology::Graph(g) => {
                let v = g.neighbors(self.rank()).to_vec();
                (v.clone(), v)
            }
            Topology::DistGraph(g) => (g.sources().to_vec(), g.destinations().to_vec()),
            Topology::None => {
                return Err(Error::InvalidTopology(format!(
                    "{} has no topology: neighborhood collectives need a cartesian, graph \
                     or distributed graph communicator",
                    self.describe()
                )))
            }
        };
        Ok(Neighbors {
            sources,
            destinations,
        })
    }
}

/// The entries of `v` where `keep` is true.
fn kept<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
    v.iter()
        .zip(keep)
        .filter(|(_, &k)| k)
        .map(|(x, _)| *x)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_coords_and_wrapping() {
        let c = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        assert_eq!(c.coords_of(0), vec![0, 0]);
        assert_eq!(c.coords_of(4), vec![1, 1]);
        assert_eq!(c.rank_of(&[1, 2]), Some(5));
        assert_eq!(c.rank_of(&[1, -1]), Some(5));
        assert_eq!(c.rank_of(&[0, 7]), Some(1));
        assert_eq!(c.rank_of(&[2, 0]), None);
        assert_eq!(c.rank_of(&[-1, 0]), None);
        for r in 0..6 {
            assert_eq!(c.rank_of(&c.coords_of(r)), Some(r));
        }
        let zero = Cart {
            dims: vec![],
            periods: vec![],
        };
        assert_eq!((zero.size(), zero.rank_of(&[])), (1, Some(0)));
    }
}
