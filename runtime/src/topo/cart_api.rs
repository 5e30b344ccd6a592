//! The cartesian topology calls on a communicator (`MPI_Cart_*`).

use super::{Cart, CartInfo, Topology};
use crate::comm::Comm;
use crate::error::Error;

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
        Ok(cart.shift(self.rank(), d, disp))
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

/// The entries of `v` where `keep` is true.
fn kept<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
    v.iter()
        .zip(keep)
        .filter(|(_, &k)| k)
        .map(|(x, _)| *x)
        .collect()
}
