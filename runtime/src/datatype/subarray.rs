//! `MPI_Type_create_subarray`, built from the other constructors.

use super::build::same_len;
use super::Datatype;
use crate::error::Error;

/// Storage order of a multi-dimensional array.
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype, Order};
/// let int = Datatype::basic(BasicType::Int);
/// // The 2x3 block at (1, 1) of a 4x5 array, stored row-major or column-major.
/// let c = Datatype::subarray(&[4, 5], &[2, 3], &[1, 1], Order::C, &int)?;
/// let f = Datatype::subarray(&[4, 5], &[2, 3], &[1, 1], Order::Fortran, &int)?;
/// assert_eq!((c.size(), f.size()), (24, 24));
/// assert_eq!(c.true_lb(), 24); // a[1][1] is 1*5 + 1 ints in
/// assert_eq!(f.true_lb(), 20); // a(1,1) is 1 + 1*4 ints in
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row-major: the last index varies fastest (`MPI_ORDER_C`).
    C,
    /// Column-major: the first index varies fastest (`MPI_ORDER_FORTRAN`).
    Fortran,
}

fn bad(arg: &'static str, i: usize, v: isize, range: String) -> Error {
    Error::InvalidArgument {
        arg,
        reason: format!("entry {i} is {v}; must be in {range}"),
    }
}

impl Datatype {
    /// `MPI_Type_create_subarray`: the `subsizes` block starting at
    /// `starts` of an array of `sizes` elements of `oldtype`. The result's
    /// lower bound is 0 and its extent is the whole array's, so that
    /// consecutive elements are consecutive arrays.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, Order};
    /// let int = Datatype::basic(BasicType::Int);
    /// // int a[4][5]; the 2x3 block at a[1][1].
    /// let t = Datatype::subarray(&[4, 5], &[2, 3], &[1, 1], Order::C, &int)?;
    /// assert_eq!((t.size(), t.lb(), t.extent()), (24, 0, 80));
    /// assert_eq!((t.true_lb(), t.true_extent()), (24, 32));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn subarray(
        sizes: &[isize],
        subsizes: &[isize],
        starts: &[isize],
        order: Order,
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        let n = sizes.len();
        if n == 0 {
            return Err(Error::InvalidArgument {
                arg: "ndims",
                reason: "must be at least 1, got 0".into(),
            });
        }
        same_len("array_of_subsizes", subsizes.len(), "array_of_sizes", n)?;
        same_len("array_of_starts", starts.len(), "array_of_sizes", n)?;
        for i in 0..n {
            let (size, sub, start) = (sizes[i], subsizes[i], starts[i]);
            if size < 1 {
                return Err(bad("array_of_sizes", i, size, "1..".into()));
            }
            if !(0..=size).contains(&sub) {
                return Err(bad("array_of_subsizes", i, sub, format!("0..={size}")));
            }
            if !(0..=size - sub).contains(&start) {
                let range = format!("0..={} (size {size}, subsize {sub})", size - sub);
                return Err(bad("array_of_starts", i, start, range));
            }
        }
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        let ext = oldtype.extent();
        let overflow = || Error::InvalidArgument {
            arg: "array_of_sizes",
            reason: format!("an array of {sizes:?} elements of extent {ext} overflows"),
        };
        // `stride`: bytes between consecutive indices of the next dimension.
        let mut t = Datatype::contiguous(subsizes[dims[0]], oldtype)?;
        let mut disp = starts[dims[0]].checked_mul(ext).ok_or_else(overflow)?;
        let mut stride = sizes[dims[0]].checked_mul(ext).ok_or_else(overflow)?;
        for &d in &dims[1..] {
            t = Datatype::hvector(subsizes[d], 1, stride, &t)?;
            disp = (starts[d].checked_mul(stride))
                .and_then(|o| o.checked_add(disp))
                .ok_or_else(overflow)?;
            stride = stride.checked_mul(sizes[d]).ok_or_else(overflow)?;
        }
        let t = Datatype::hindexed(&[1], &[disp], &t)?;
        Datatype::resized(&t, 0, stride)
    }
}
