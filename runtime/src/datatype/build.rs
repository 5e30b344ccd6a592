//! The derived-datatype constructors (`MPI_Type_contiguous`, `_vector`,
//! `_create_hvector`, `_indexed`, `_create_hindexed`, `_create_indexed_block`,
//! `_create_hindexed_block`, `_create_struct`, `_create_resized`, `_dup`),
//! with argument validation. Counts and displacements are signed, as in
//! the C API, so that bad values are reported rather than wrapped.

use super::layout::{self, Kind};
use super::Datatype;
use crate::error::Error;

/// `v` as a count, or an error naming `arg`.
pub(super) fn nonneg(arg: &'static str, v: isize) -> Result<usize, Error> {
    usize::try_from(v).map_err(|_| Error::InvalidArgument {
        arg,
        reason: format!("must be non-negative, got {v}"),
    })
}

fn nonneg_at(arg: &'static str, i: usize, v: isize) -> Result<usize, Error> {
    usize::try_from(v).map_err(|_| Error::InvalidArgument {
        arg,
        reason: format!("entry {i} is {v}; must be non-negative"),
    })
}

/// Checks that array `arg` has as many entries as `other`.
pub(super) fn same_len(
    arg: &'static str,
    len: usize,
    other: &'static str,
    n: usize,
) -> Result<(), Error> {
    if len == n {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        arg,
        reason: format!("has {len} entries but `{other}` has {n}"),
    })
}

/// `v * by` in bytes, or an error naming `arg`.
fn scale(arg: &'static str, v: isize, by: isize) -> Result<isize, Error> {
    v.checked_mul(by).ok_or_else(|| Error::InvalidArgument {
        arg,
        reason: format!("{v} times the extent {by} overflows"),
    })
}

/// Displacements in extents of `oldtype` to bytes.
fn scale_all(displacements: &[isize], oldtype: &Datatype) -> Result<Vec<isize>, Error> {
    let ext = oldtype.extent();
    (displacements.iter())
        .map(|&d| scale("array_of_displacements", d, ext))
        .collect()
}

impl Datatype {
    /// `MPI_Type_contiguous`: `count` copies of `oldtype`, one extent apart.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let row = Datatype::contiguous(4, &Datatype::basic(BasicType::Float))?;
    /// assert_eq!((row.size(), row.extent()), (16, 16));
    /// assert!(Datatype::contiguous(-1, &row).is_err()); // counts must be non-negative
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn contiguous(count: isize, oldtype: &Datatype) -> Result<Datatype, Error> {
        let count = nonneg("count", count)?;
        layout::compose(Kind::Contiguous {
            count,
            child: oldtype.clone(),
        })
    }

    /// `MPI_Type_vector`: `count` blocks of `blocklength` copies of
    /// `oldtype`, block starts `stride` extents of `oldtype` apart (the
    /// stride may be negative).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let v = Datatype::vector(2, 3, 4, &int)?;
    /// assert_eq!((v.size(), v.extent()), (24, 28));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn vector(
        count: isize,
        blocklength: isize,
        stride: isize,
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        let stride = scale("stride", stride, oldtype.extent())?;
        vector_bytes("vector", count, blocklength, stride, oldtype)
    }

    /// `MPI_Type_create_hvector`: as [`vector`](Self::vector) with the
    /// stride in bytes.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let d = Datatype::basic(BasicType::Double);
    /// // A column of a 3x5 matrix of doubles: the stride is one row, 40 bytes.
    /// let col = Datatype::hvector(3, 1, 40, &d)?;
    /// assert_eq!((col.size(), col.extent()), (24, 88));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn hvector(
        count: isize,
        blocklength: isize,
        stride: isize,
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        vector_bytes("hvector", count, blocklength, stride, oldtype)
    }

    /// `MPI_Type_indexed`: block `i` is `blocklengths[i]` copies of
    /// `oldtype` at `displacements[i]` extents of `oldtype`.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// // The upper triangle of a 3x3 matrix: row i from column i.
    /// let upper = Datatype::indexed(&[3, 2, 1], &[0, 4, 8], &int)?;
    /// assert_eq!((upper.size(), upper.extent()), (24, 36));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn indexed(
        blocklengths: &[isize],
        displacements: &[isize],
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        let bytes = scale_all(displacements, oldtype)?;
        indexed_bytes("indexed", blocklengths, &bytes, oldtype)
    }

    /// `MPI_Type_create_hindexed`: as [`indexed`](Self::indexed) with the
    /// displacements in bytes.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let t = Datatype::hindexed(&[1, 2], &[16, 0], &int)?; // displacements in bytes
    /// assert_eq!((t.size(), t.lb(), t.extent()), (12, 0, 20));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn hindexed(
        blocklengths: &[isize],
        displacements: &[isize],
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        indexed_bytes("hindexed", blocklengths, displacements, oldtype)
    }

    /// `MPI_Type_create_indexed_block`: [`indexed`](Self::indexed) with
    /// every block `blocklength` long.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let short = Datatype::basic(BasicType::Short);
    /// let picks = Datatype::indexed_block(2, &[0, 5, 10], &short)?; // in shorts
    /// assert_eq!((picks.size(), picks.extent()), (12, 24));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn indexed_block(
        blocklength: isize,
        displacements: &[isize],
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        nonneg("blocklength", blocklength)?;
        let lens = vec![blocklength; displacements.len()];
        let bytes = scale_all(displacements, oldtype)?;
        indexed_bytes("indexed_block", &lens, &bytes, oldtype)
    }

    /// `MPI_Type_create_hindexed_block`: [`hindexed`](Self::hindexed) with
    /// every block `blocklength` long.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let d = Datatype::basic(BasicType::Double);
    /// let t = Datatype::hindexed_block(1, &[0, 8, 24], &d)?; // in bytes
    /// assert_eq!((t.size(), t.extent()), (24, 32));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn hindexed_block(
        blocklength: isize,
        displacements: &[isize],
        oldtype: &Datatype,
    ) -> Result<Datatype, Error> {
        nonneg("blocklength", blocklength)?;
        let lens = vec![blocklength; displacements.len()];
        indexed_bytes("hindexed_block", &lens, displacements, oldtype)
    }

    /// `MPI_Type_create_struct`: block `i` is `blocklengths[i]` copies of
    /// `types[i]` at byte `displacements[i]`. The extent is padded to the
    /// largest member alignment, as a C compiler pads the struct, unless a
    /// member has explicit bounds from [`resized`](Self::resized).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let (c, d) = (Datatype::basic(BasicType::Char), Datatype::basic(BasicType::Double));
    /// let t = Datatype::create_struct(&[1, 1], &[0, 8], &[c, d])?; // struct { char; double; }
    /// assert_eq!((t.size(), t.extent(), t.true_extent()), (9, 16, 16));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn create_struct(
        blocklengths: &[isize],
        displacements: &[isize],
        types: &[Datatype],
    ) -> Result<Datatype, Error> {
        let n = blocklengths.len();
        same_len(
            "array_of_displacements",
            displacements.len(),
            "array_of_blocklengths",
            n,
        )?;
        same_len("array_of_types", types.len(), "array_of_blocklengths", n)?;
        let blocks = (0..n)
            .map(|i| {
                let k = nonneg_at("array_of_blocklengths", i, blocklengths[i])?;
                Ok((displacements[i], k, types[i].clone()))
            })
            .collect::<Result<Box<[_]>, Error>>()?;
        layout::compose(Kind::Struct { blocks })
    }

    /// `MPI_Type_create_resized`: `oldtype` with lower bound `lb` and
    /// extent `extent` (explicit bounds, kept by types built from it).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let t = Datatype::resized(&int, -4, 12)?;
    /// assert_eq!((t.lb(), t.extent(), t.true_lb(), t.true_extent()), (-4, 12, 0, 4));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn resized(oldtype: &Datatype, lb: isize, extent: isize) -> Result<Datatype, Error> {
        let ub = lb
            .checked_add(extent)
            .ok_or_else(|| Error::InvalidArgument {
                arg: "extent",
                reason: format!("lb {lb} + extent {extent} overflows"),
            })?;
        Ok(layout::resized(oldtype, lb, ub))
    }

    /// `MPI_Type_dup`: a new type object with the same type map, bounds and
    /// committed state.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// v.commit();
    /// let d = v.dup();
    /// assert!(d.is_committed() && !d.same(&v));
    /// assert_eq!((d.size(), d.extent()), (v.size(), v.extent()));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn dup(&self) -> Datatype {
        layout::dup(self)
    }
}

fn vector_bytes(
    name: &'static str,
    count: isize,
    blocklength: isize,
    stride: isize,
    oldtype: &Datatype,
) -> Result<Datatype, Error> {
    let count = nonneg("count", count)?;
    let blocklen = nonneg("blocklength", blocklength)?;
    if count > 1 {
        scale("stride", stride, count as isize - 1)?;
    }
    layout::compose(Kind::Vector {
        count,
        blocklen,
        stride,
        child: oldtype.clone(),
        name,
    })
}

fn indexed_bytes(
    name: &'static str,
    blocklengths: &[isize],
    displacements: &[isize],
    oldtype: &Datatype,
) -> Result<Datatype, Error> {
    let n = blocklengths.len();
    same_len(
        "array_of_displacements",
        displacements.len(),
        "array_of_blocklengths",
        n,
    )?;
    let blocks = (0..n)
        .map(|i| {
            Ok((
                displacements[i],
                nonneg_at("array_of_blocklengths", i, blocklengths[i])?,
            ))
        })
        .collect::<Result<Box<[_]>, Error>>()?;
    layout::compose(Kind::Indexed {
        blocks,
        child: oldtype.clone(),
        name,
    })
}
