//! Cartesian grids as a communicator carries them: extent and
//! periodicity of each dimension, row-major ranks.

use crate::status::PROC_NULL;

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
    pub(super) dims: Vec<i32>,
    pub(super) periods: Vec<bool>,
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
    pub(super) fn coords_of(&self, mut rank: i32) -> Vec<i32> {
        let mut coords = vec![0; self.dims.len()];
        for (c, &d) in coords.iter_mut().zip(&self.dims).rev() {
            *c = rank % d;
            rank /= d;
        }
        coords
    }

    /// Grid rank of `coords`, wrapping periodic dimensions; `None` when a
    /// coordinate of a non-periodic dimension is outside the grid.
    pub(super) fn rank_of(&self, coords: &[i32]) -> Option<i32> {
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

    /// The grid ranks `disp` steps back and forth from `rank` along
    /// dimension `d` (in range): `PROC_NULL` past an open edge.
    pub(super) fn shift(&self, rank: i32, d: usize, disp: i32) -> (i32, i32) {
        let me = self.coords_of(rank);
        let at = |delta: i32| {
            let mut c = me.clone();
            c[d] = c[d].saturating_add(delta);
            self.rank_of(&c).unwrap_or(PROC_NULL)
        };
        (at(disp.saturating_neg()), at(disp))
    }
}

/// What [`Comm::cart_get`](crate::comm::Comm::cart_get) returns (`MPI_Cart_get`).
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
