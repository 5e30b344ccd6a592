//! Per-rank counts and displacements of the `v` collectives, and the
//! argument checks every collective shares.

use super::sched::{Buf, Schedule};
use crate::error::Error;

/// A buffer cut into one block per rank, as the counts and displacements
/// of `MPI_Gatherv` and friends: rank r's block is `counts[r]` units
/// starting `displs[r]` units into the buffer. Units are elements in the
/// typed API and bytes in the `_raw` entry points.
///
/// ```
/// use oxmpi::coll::Blocks;
/// let counts = [2, 0, 3];
/// let displs = Blocks::packed_displs(&counts);
/// assert_eq!(displs, [0, 2, 2]);
/// let b = Blocks::new(&counts, &displs);
/// assert_eq!((b.extent(), b.total()), (5, 5));
/// let gaps = Blocks::new(&[1, 1], &[4, 0]); // rank 0's block after rank 1's
/// assert_eq!((gaps.extent(), gaps.total()), (5, 2));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Blocks<'a> {
    /// Units in each rank's block.
    pub counts: &'a [usize],
    /// Where each rank's block starts, in units from the buffer's start.
    pub displs: &'a [usize],
}

impl<'a> Blocks<'a> {
    /// No blocks: for arguments significant only at the root.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let mut mine = [0u8; 1];
    /// if world.rank() == 0 {
    ///     let (counts, displs): (Vec<usize>, Vec<usize>) = (vec![1; p], (0..p).collect());
    ///     let items = vec![7u8; p];
    ///     world.scatterv(Some(&items[..]), Blocks::new(&counts, &displs), &mut mine, 0)?;
    /// } else {
    ///     // Counts and displacements matter at the root only.
    ///     world.scatterv(None, Blocks::NONE, &mut mine, 0)?;
    /// }
    /// assert_eq!(mine[0], 7);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub const NONE: Blocks<'static> = Blocks {
        counts: &[],
        displs: &[],
    };

    /// Blocks of `counts[r]` units at `displs[r]`.
    ///
    /// See the example on [`Blocks`].
    pub fn new(counts: &'a [usize], displs: &'a [usize]) -> Blocks<'a> {
        Blocks { counts, displs }
    }

    /// The displacements of blocks stored back to back in rank order.
    ///
    /// See the example on [`Blocks`].
    pub fn packed_displs(counts: &[usize]) -> Vec<usize> {
        counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect()
    }

    /// Units from the buffer's start to the end of the last-ending block.
    ///
    /// See the example on [`Blocks`].
    pub fn extent(&self) -> usize {
        self.counts
            .iter()
            .zip(self.displs)
            .map(|(&c, &d)| if c == 0 { 0 } else { c.saturating_add(d) })
            .max()
            .unwrap_or(0)
    }

    /// Total units over all blocks.
    ///
    /// See the example on [`Blocks`].
    pub fn total(&self) -> usize {
        self.counts.iter().sum()
    }

    /// Checks there is one count and one displacement per rank.
    pub(crate) fn check(
        &self,
        ranks: usize,
        counts_arg: &'static str,
        displs_arg: &'static str,
    ) -> Result<(), Error> {
        for (arg, len) in [
            (counts_arg, self.counts.len()),
            (displs_arg, self.displs.len()),
        ] {
            if len != ranks {
                return Err(Error::InvalidArgument {
                    arg,
                    reason: format!("has {len} entries for a communicator of {ranks} ranks"),
                });
            }
        }
        Ok(())
    }

    /// Checks every block lies inside a buffer of `len` units.
    pub(crate) fn check_within(&self, len: usize, buf_arg: &'static str) -> Result<(), Error> {
        for (r, (&c, &d)) in self.counts.iter().zip(self.displs).enumerate() {
            if c > 0 && c.saturating_add(d) > len {
                return Err(Error::InvalidArgument {
                    arg: buf_arg,
                    reason: format!(
                        "rank {r}'s block ({c} elements at displacement {d}) ends past its {len} elements"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The same blocks in bytes, for elements of `size` bytes.
    pub(crate) fn bytes(&self, size: usize) -> (Vec<usize>, Vec<usize>) {
        let scale = |v: &[usize]| v.iter().map(|&x| x * size).collect();
        (scale(self.counts), scale(self.displs))
    }

    /// Each block of `buf` (in bytes) as a schedule range.
    pub(crate) fn parts(&self, buf: Buf) -> Vec<Buf> {
        self.counts
            .iter()
            .zip(self.displs)
            .map(|(&c, &d)| {
                if c == 0 {
                    buf.slice(0, 0)
                } else {
                    buf.slice(d, c)
                }
            })
            .collect()
    }
}

/// The user memory at `ptr` spanning every block of `blocks` (bytes).
pub(crate) fn span(ptr: *mut u8, blocks: &Blocks<'_>) -> Buf {
    Schedule::user(ptr, blocks.extent())
}

/// Checks a buffer holds exactly `want` elements.
pub(crate) fn same_len(arg: &'static str, want: usize, got: usize) -> Result<(), Error> {
    if want == got {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            arg,
            reason: format!("holds {got} elements, {want} needed"),
        })
    }
}

/// Checks a buffer of `len` elements splits into `ranks` equal blocks.
pub(crate) fn per_rank(arg: &'static str, len: usize, ranks: usize) -> Result<usize, Error> {
    if len.is_multiple_of(ranks) {
        Ok(len / ranks)
    } else {
        Err(Error::InvalidArgument {
            arg,
            reason: format!("holds {len} elements, not a multiple of the {ranks} ranks"),
        })
    }
}

/// The error for `MPI_IN_PLACE` given where only the root may give it.
pub(crate) fn in_place_not_root(arg: &'static str) -> Error {
    Error::InvalidArgument {
        arg,
        reason: "MPI_IN_PLACE is valid only at the root".into(),
    }
}

/// The error for a root without the buffer only the root needs.
pub(crate) fn root_needs(arg: &'static str) -> Error {
    Error::InvalidArgument {
        arg,
        reason: "the root needs this buffer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_argument_and_the_value() {
        let counts = [1, 0, 2];
        let displs = [5, 100, 0];
        let b = Blocks::new(&counts, &displs);
        assert_eq!(b.extent(), 6);
        assert_eq!(b.total(), 3);
        b.check(3, "recvcounts", "displs").unwrap();
        let e = b.check(4, "recvcounts", "displs").unwrap_err();
        assert!(matches!(
            e,
            Error::InvalidArgument {
                arg: "recvcounts",
                ..
            }
        ));
        assert!(e.to_string().contains("3 entries"), "{e}");
        b.check_within(6, "recvbuf").unwrap();
        let e = b.check_within(5, "recvbuf").unwrap_err();
        assert!(e.to_string().contains("rank 0"), "{e}");
        assert_eq!(b.bytes(4), (vec![4, 0, 8], vec![20, 400, 0]));
        assert_eq!(Blocks::packed_displs(&[3, 0, 2]), [0, 3, 3]);
    }
}
