//! `MPI_Type_create_darray`: the part of an HPF-style distributed array
//! that one process owns, built from the other constructors.
//!
//! Each dimension is distributed on its own: the process's coordinate in
//! a row-major process grid picks which indices of that dimension it owns
//! (a block, every `psize`-th block of `darg` indices, or all of them).
//! The type map lists the owned elements in the array's storage order, at
//! their offsets in the global array; the result's lower bound is 0 and
//! its extent the whole global array's, as the standard specifies.

use super::{Datatype, Order};
use crate::error::Error;

/// How one dimension of a distributed array is spread over its row of
/// processes (`MPI_DISTRIBUTE_*` with the distribution argument).
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype, Distribution, Order};
/// let int = Datatype::basic(BasicType::Int);
/// // int a[8] dealt to 2 processes in blocks of 2: rank 1 owns a[2..4] and a[6..8].
/// let cyclic = [Distribution::Cyclic(Some(2))];
/// let t = Datatype::darray(2, 1, &[8], &cyclic, &[2], Order::C, &int)?;
/// assert_eq!((t.size(), t.extent()), (16, 32));
/// assert_eq!((t.true_lb(), t.true_extent()), (8, 24));
/// // Not distributed: the one process of that dimension owns it all.
/// let all = Datatype::darray(1, 0, &[8], &[Distribution::None], &[1], Order::C, &int)?;
/// assert_eq!(all.size(), 32);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// `MPI_DISTRIBUTE_BLOCK`: one block per process; `None` is
    /// `MPI_DISTRIBUTE_DFLT_DARG`, blocks of `ceil(gsize / psize)`.
    Block(Option<isize>),
    /// `MPI_DISTRIBUTE_CYCLIC`: blocks of `darg` indices dealt round-robin;
    /// `None` is `MPI_DISTRIBUTE_DFLT_DARG`, blocks of 1.
    Cyclic(Option<isize>),
    /// `MPI_DISTRIBUTE_NONE`: not distributed (the process grid must have
    /// one process in this dimension); any distribution argument is ignored.
    None,
}

/// The indices of one dimension a process owns: `count` blocks of `blk`
/// indices, `step` apart from `start`, then `rem` more indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owned {
    start: isize,
    blk: isize,
    step: isize,
    count: isize,
    rem: isize,
}

fn invalid(arg: &'static str, reason: String) -> Error {
    Error::InvalidArgument { arg, reason }
}

/// The distribution argument of dimension `i`, checked positive.
fn darg(i: usize, d: Option<isize>, default: isize) -> Result<isize, Error> {
    match d {
        None => Ok(default),
        Some(v) if v > 0 => Ok(v),
        Some(v) => Err(invalid(
            "array_of_dargs",
            format!("entry {i} is {v}; must be positive or MPI_DISTRIBUTE_DFLT_DARG"),
        )),
    }
}

/// What the process at coordinate `coord` of `psize` owns of dimension `i`
/// (`gsize` indices, distributed as `dist`).
fn owned(
    i: usize,
    gsize: isize,
    psize: isize,
    coord: isize,
    dist: Distribution,
) -> Result<Owned, Error> {
    let nothing = Owned {
        start: 0,
        blk: 0,
        step: 0,
        count: 0,
        rem: 0,
    };
    match dist {
        Distribution::None => {
            if psize != 1 {
                return Err(invalid(
                    "array_of_psizes",
                    format!(
                        "entry {i} is {psize}, but dimension {i} is MPI_DISTRIBUTE_NONE \
                         (not distributed): it must be 1"
                    ),
                ));
            }
            Ok(Owned {
                rem: gsize,
                ..nothing
            })
        }
        Distribution::Block(d) => {
            let blk = darg(i, d, gsize / psize + isize::from(gsize % psize != 0))?;
            if blk.checked_mul(psize).is_none_or(|n| n < gsize) {
                return Err(invalid(
                    "array_of_dargs",
                    format!(
                        "entry {i} is {blk}: {psize} blocks of {blk} do not cover the \
                         {gsize} indices of dimension {i} (MPI_DISTRIBUTE_BLOCK needs \
                         darg * psize >= gsize)"
                    ),
                ));
            }
            // blk * psize did not overflow, so neither does blk * coord.
            let start = blk * coord;
            let rem = (gsize - start).clamp(0, blk);
            Ok(if rem == 0 {
                nothing
            } else {
                Owned {
                    start,
                    rem,
                    ..nothing
                }
            })
        }
        Distribution::Cyclic(d) => {
            let blk = darg(i, d, 1)?;
            let (Some(start), Some(step)) = (blk.checked_mul(coord), blk.checked_mul(psize)) else {
                return Ok(nothing); // the first block starts past any array
            };
            if start >= gsize {
                return Ok(nothing);
            }
            let n = gsize - start;
            let rem = (n % step).min(blk);
            Ok(Owned {
                start,
                blk,
                step,
                count: n / step,
                rem,
            })
        }
    }
}

/// `v * by`, or an error naming `array_of_gsizes`.
fn times(v: isize, by: isize, gsizes: &[isize], ext: isize) -> Result<isize, Error> {
    v.checked_mul(by).ok_or_else(|| {
        invalid(
            "array_of_gsizes",
            format!("an array of {gsizes:?} elements of extent {ext} overflows the address space"),
        )
    })
}

impl Datatype {
    /// `MPI_Type_create_darray`: the elements of a global array of `gsizes`
    /// elements of `oldtype` that process `rank` of `size` owns when
    /// dimension `i` is distributed as `distribs[i]` over `psizes[i]`
    /// processes (the process grid is row-major, whatever `order` is). The
    /// lower bound is 0 and the extent the whole array's.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, Distribution, Order};
    /// let int = Datatype::basic(BasicType::Int);
    /// // int a[4][6] on a 2x2 grid, blocks of 2x3: rank 3 owns a[2..4][3..6].
    /// let b = Distribution::Block(None);
    /// let t = Datatype::darray(4, 3, &[4, 6], &[b, b], &[2, 2], Order::C, &int)?;
    /// assert_eq!((t.size(), t.lb(), t.extent()), (24, 0, 96));
    /// assert_eq!((t.true_lb(), t.true_extent()), (60, 36));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: isize,
        rank: isize,
        gsizes: &[isize],
        distribs: &[Distribution],
        psizes: &[isize],
        order: Order,
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        let n = gsizes.len();
        if n == 0 {
            return Err(invalid("ndims", "must be at least 1, got 0".into()));
        }
        super::build::same_len("array_of_distribs", distribs.len(), "array_of_gsizes", n)?;
        super::build::same_len("array_of_psizes", psizes.len(), "array_of_gsizes", n)?;
        if size < 1 {
            return Err(invalid("size", format!("must be positive, got {size}")));
        }
        if !(0..size).contains(&rank) {
            return Err(Error::InvalidRank {
                arg: "rank",
                value: i32::try_from(rank).unwrap_or(i32::MIN),
                size: i32::try_from(size).unwrap_or(i32::MAX),
            });
        }
        let mut procs: isize = 1;
        for i in 0..n {
            let bad = |arg, v| invalid(arg, format!("entry {i} is {v}; must be positive"));
            if gsizes[i] < 1 {
                return Err(bad("array_of_gsizes", gsizes[i]));
            }
            if psizes[i] < 1 {
                return Err(bad("array_of_psizes", psizes[i]));
            }
            procs = procs.saturating_mul(psizes[i]);
        }
        if procs != size {
            return Err(invalid(
                "array_of_psizes",
                format!("{psizes:?} is a grid of {procs} processes, but `size` is {size}"),
            ));
        }
        // Row-major coordinates of `rank` in the process grid.
        let mut coords = vec![0; n];
        let mut r = rank;
        for i in (0..n).rev() {
            coords[i] = r % psizes[i];
            r /= psizes[i];
        }
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        let ext = oldtype.extent();
        let mut t = oldtype.clone();
        // Bytes between consecutive indices of the current dimension.
        let mut stride = ext;
        for &i in &dims {
            let o = owned(i, gsizes[i], psizes[i], coords[i], distribs[i])?;
            let row = times(gsizes[i], stride, gsizes, ext)?;
            let (mut lens, mut disps, mut types) = (vec![], vec![], vec![]);
            if o.count > 0 {
                lens.push(1);
                disps.push(times(o.start, stride, gsizes, ext)?);
                types.push(Datatype::vector(o.count, o.blk, o.step, &t)?);
            }
            if o.rem > 0 {
                lens.push(o.rem);
                let at = times(o.count, o.step, gsizes, ext)? + o.start;
                disps.push(times(at, stride, gsizes, ext)?);
                types.push(t.clone());
            }
            t = Datatype::resized(&Datatype::create_struct(&lens, &disps, &types)?, 0, row)?;
            stride = row;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::BasicType;

    const B: Distribution = Distribution::Block(None);
    const C: Distribution = Distribution::Cyclic(None);
    const N: Distribution = Distribution::None;

    fn int() -> Datatype {
        Datatype::basic(BasicType::Int)
    }

    /// The global element indices (offsets / 4) of one `int` darray element.
    fn indices(t: &Datatype) -> Vec<isize> {
        t.commit();
        let mut v = vec![];
        for s in t.segments(1).unwrap() {
            assert_eq!((s.offset % 4, s.len % 4), (0, 0));
            v.extend((0..s.len as isize / 4).map(|k| s.offset / 4 + k));
        }
        v
    }

    fn darray(
        size: isize,
        rank: isize,
        g: &[isize],
        d: &[Distribution],
        p: &[isize],
        o: Order,
    ) -> Datatype {
        Datatype::darray(size, rank, g, d, p, o, &int()).unwrap()
    }

    #[test]
    fn block_block_in_c_and_fortran_order() {
        // int a[4][6] on a 2x2 grid: rank 1 is grid coordinate (0, 1).
        let t = darray(4, 1, &[4, 6], &[B, B], &[2, 2], Order::C);
        assert_eq!(indices(&t), [3, 4, 5, 9, 10, 11]);
        assert_eq!((t.size(), t.lb(), t.extent()), (24, 0, 96));
        assert_eq!((t.true_lb(), t.true_extent()), (12, 36));
        // Fortran order: dimension 0 (4 long) varies fastest.
        let t = darray(4, 1, &[4, 6], &[B, B], &[2, 2], Order::Fortran);
        assert_eq!(indices(&t), [12, 13, 16, 17, 20, 21]);
        let t = darray(4, 2, &[4, 6], &[B, B], &[2, 2], Order::Fortran);
        assert_eq!(indices(&t), [2, 3, 6, 7, 10, 11]);
        assert_eq!((t.true_lb(), t.true_extent()), (8, 40));
    }

    #[test]
    fn cyclic_with_a_short_last_block() {
        // 7 indices, cyclic(3) over 2 processes: {0,1,2,6} and {3,4,5}.
        let c3 = Distribution::Cyclic(Some(3));
        assert_eq!(
            indices(&darray(2, 0, &[7], &[c3], &[2], Order::C)),
            [0, 1, 2, 6]
        );
        assert_eq!(
            indices(&darray(2, 1, &[7], &[c3], &[2], Order::C)),
            [3, 4, 5]
        );
        // Cyclic(1) (the default) over 3: every third.
        assert_eq!(
            indices(&darray(3, 1, &[8], &[C], &[3], Order::C)),
            [1, 4, 7]
        );
        let t = darray(3, 2, &[8], &[C], &[3], Order::C);
        assert_eq!(indices(&t), [2, 5]);
        assert_eq!(
            (t.lb(), t.extent(), t.true_lb(), t.true_extent()),
            (0, 32, 8, 16)
        );
    }

    #[test]
    fn cyclic_rows_over_block_columns() {
        // int a[5][7], rows cyclic(2) over 2, columns block over 2 (4 + 3).
        let c2 = Distribution::Cyclic(Some(2));
        let t = darray(4, 0, &[5, 7], &[c2, B], &[2, 2], Order::C);
        assert_eq!(indices(&t), [0, 1, 2, 3, 7, 8, 9, 10, 28, 29, 30, 31]);
        let t = darray(4, 3, &[5, 7], &[c2, B], &[2, 2], Order::C);
        assert_eq!(indices(&t), [18, 19, 20, 25, 26, 27]);
        assert_eq!(
            (t.size(), t.extent(), t.true_lb(), t.true_extent()),
            (24, 140, 72, 40)
        );
        // Both cyclic: rows {0,1,4}, columns cyclic(3) {0,1,2,6}.
        let c3 = Distribution::Cyclic(Some(3));
        let t = darray(4, 0, &[5, 7], &[c2, c3], &[2, 2], Order::C);
        assert_eq!(indices(&t), [0, 1, 2, 6, 7, 8, 9, 13, 28, 29, 30, 34]);
    }

    #[test]
    fn not_distributed_dimensions_and_three_dimensions() {
        // int a[5][7], rows whole, columns cyclic over 3.
        let t = darray(3, 1, &[5, 7], &[N, C], &[1, 3], Order::C);
        assert_eq!(indices(&t), [1, 4, 8, 11, 15, 18, 22, 25, 29, 32]);
        // A Fortran 3x4x5 array (dimension 0 fastest) on a 2x2x2 grid:
        // rank 5 is grid coordinate (1, 0, 1).
        let c2 = Distribution::Cyclic(Some(2));
        let t = darray(8, 5, &[3, 4, 5], &[c2, B, c2], &[2, 2, 2], Order::Fortran);
        let mut want = vec![];
        for k in [2, 3] {
            for j in [0, 1] {
                want.push(2 + 3 * j + 12 * k);
            }
        }
        assert_eq!(indices(&t), want);
        assert_eq!(t.extent(), 60 * 4);
    }

    #[test]
    fn processes_with_nothing_get_an_empty_type_of_full_extent() {
        // 3 rows in blocks of 1 over 4 processes: the last has none.
        let t = darray(4, 3, &[3, 2], &[B, N], &[4, 1], Order::C);
        assert_eq!((t.size(), t.lb(), t.extent()), (0, 0, 24));
        assert_eq!((t.true_lb(), t.true_extent()), (0, 0));
        let c3 = Distribution::Cyclic(Some(3));
        let t = darray(4, 3, &[7, 2], &[c3, N], &[4, 1], Order::C);
        assert_eq!((t.size(), t.extent()), (0, 56));
        let t = darray(4, 2, &[7, 2], &[c3, N], &[4, 1], Order::C);
        assert_eq!(indices(&t), [12, 13]);
    }

    #[test]
    fn oldtype_extent_scales_the_offsets() {
        // Every element is a resized int of extent 8 (lb 0).
        let wide = Datatype::resized(&int(), 0, 8).unwrap();
        let t = Datatype::darray(2, 1, &[4], &[B], &[2], Order::C, &wide).unwrap();
        assert_eq!(
            (t.size(), t.extent(), t.true_lb(), t.true_extent()),
            (8, 32, 16, 12)
        );
    }

    #[test]
    fn invalid_arguments_name_the_argument_and_value() {
        let err = |size, rank, g: &[isize], d: &[Distribution], p: &[isize]| {
            let e = Datatype::darray(size, rank, g, d, p, Order::C, &int()).unwrap_err();
            e.to_string()
        };
        let msg = err(2, 0, &[10], &[Distribution::Block(Some(2))], &[2]);
        assert!(
            msg.contains("array_of_dargs") && msg.contains("entry 0 is 2"),
            "{msg}"
        );
        let msg = err(2, 0, &[10], &[Distribution::Cyclic(Some(0))], &[2]);
        assert!(
            msg.contains("array_of_dargs") && msg.contains("is 0"),
            "{msg}"
        );
        let msg = err(2, 0, &[10], &[N], &[2]);
        assert!(
            msg.contains("array_of_psizes") && msg.contains("MPI_DISTRIBUTE_NONE"),
            "{msg}"
        );
        let msg = err(2, 0, &[10], &[B], &[3]);
        assert!(
            msg.contains("grid of 3 processes") && msg.contains("`size` is 2"),
            "{msg}"
        );
        let msg = err(2, 0, &[0], &[B], &[2]);
        assert!(
            msg.contains("array_of_gsizes") && msg.contains("is 0"),
            "{msg}"
        );
        let msg = err(1, 0, &[4], &[B], &[0]);
        assert!(msg.contains("array_of_psizes"), "{msg}");
        let msg = err(0, 0, &[4], &[B], &[1]);
        assert!(msg.contains("`size`") && msg.contains("got 0"), "{msg}");
        let msg = err(2, 2, &[4], &[B], &[2]);
        assert!(msg.contains("rank 2"), "{msg}");
        let msg = err(1, 0, &[], &[], &[]);
        assert!(msg.contains("ndims"), "{msg}");
        let msg = err(1, 0, &[4, 4], &[B], &[1, 1]);
        assert!(msg.contains("array_of_distribs"), "{msg}");
        let msg = err(1, 0, &[isize::MAX / 2, 4], &[N, N], &[1, 1]);
        assert!(msg.contains("overflows"), "{msg}");
        // The argument of an undistributed dimension is ignored.
        let t = Datatype::darray(1, 0, &[3], &[N], &[1], Order::C, &int()).unwrap();
        assert_eq!(t.size(), 12);
    }
}
