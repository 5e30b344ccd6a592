//! MPI datatypes as data: basic types, derived-type constructors (subarray
//! and darray included), bounds, the flattened `(offset, len)` form, a
//! resumable segment iterator, and pack / unpack, native or external32.
//!
//! A [`Datatype`] is an immutable value behind an `Arc`: clones are cheap
//! and share everything, including the committed state. Constructors
//! validate their arguments and return [`Error::InvalidArgument`] naming the
//! argument and the value. A derived type must be [`commit`](Datatype::commit)ted
//! before it is used to move data ([`segments`](Datatype::segments),
//! [`pack`](Datatype::pack), [`unpack`](Datatype::unpack)); uncommitted
//! types may still be used to build other types. Basic types are always
//! committed.
//!
//! Bounds follow the MPI standard with MPICH's conventions: `lb`/`ub` of a
//! derived type are the min / max over its blocks of the children's
//! `lb`/`ub`; a `struct` pads its extent up to the largest alignment of its
//! members, unless a member carries explicit bounds from
//! [`resized`](Datatype::resized) (the standard's "markers"), which then
//! define the bounds.
//!
//! ```
//! use oxmpi::datatype::{BasicType, Datatype};
//! let int = Datatype::basic(BasicType::Int);
//! // Two blocks of 3 ints, 4 ints apart.
//! let v = Datatype::vector(2, 3, 4, &int)?;
//! assert_eq!((v.size(), v.extent(), v.lb()), (24, 28, 0));
//! v.commit();
//! let offsets: Vec<_> = v.segments(1)?.map(|s| (s.offset, s.len)).collect();
//! assert_eq!(offsets, [(0, 12), (16, 12)]);
//! # Ok::<(), oxmpi::Error>(())
//! ```

mod basic;
mod build;
mod cursor;
mod darray;
mod external_repr;
#[cfg(test)]
mod flat_tests;
mod layout;
mod pack;
mod segments;
mod signature;
pub mod stage;
mod status_count;
mod subarray;
mod view;

pub use basic::{BasicType, ElementKind, PairKind};
pub use cursor::Cursor;
pub use darray::Distribution;
pub use segments::{Segment, Segments};
pub use signature::Signature;
pub use subarray::Order;
pub use view::{View, ViewMut};

use crate::error::Error;
use layout::{Bounds, Flat, Kind};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// An MPI datatype: a type map of basic elements at byte displacements,
/// with bounds. Cheap to clone.
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype};
/// let int = Datatype::basic(BasicType::Int);
/// let v = Datatype::vector(2, 1, 2, &int)?; // int, gap, int
/// assert_eq!((v.size(), v.lb(), v.ub(), v.extent()), (8, 0, 12, 12));
/// let r = Datatype::resized(&v, -4, 16)?;
/// assert_eq!((r.lb(), r.ub(), r.extent()), (-4, 12, 16));
/// assert_eq!((r.true_lb(), r.true_extent()), (0, 12)); // where the data really is
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Clone)]
pub struct Datatype(Arc<Inner>);

struct Inner {
    kind: Kind,
    /// Bytes of data in one element.
    size: usize,
    bounds: Bounds,
    /// Largest alignment of the basic types inside (for struct padding).
    align: usize,
    /// `Some((start, len))` when one element's data is a single run of
    /// bytes in type-map order.
    run: Option<(isize, usize)>,
    signature: Signature,
    committed: AtomicBool,
    flat: OnceLock<Arc<Flat>>,
}

impl Datatype {
    /// The predefined datatype `t` (shared, committed).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let di = Datatype::basic(BasicType::DoubleInt);
    /// assert_eq!((di.size(), di.extent(), di.true_extent()), (12, 16, 12));
    /// ```
    pub fn basic(t: BasicType) -> Datatype {
        static ALL: OnceLock<Vec<Datatype>> = OnceLock::new();
        let all = ALL.get_or_init(|| BasicType::ALL.iter().map(|&b| layout::basic(b)).collect());
        // ALL lists the variants in declaration order (same macro).
        all[t as usize].clone()
    }

    /// Bytes of data in one element (`MPI_Type_size`).
    ///
    /// See the example on [`Datatype`].
    pub fn size(&self) -> usize {
        self.0.size
    }

    /// Lower bound (`MPI_Type_get_extent`'s `lb`).
    ///
    /// See the example on [`Datatype`].
    pub fn lb(&self) -> isize {
        self.0.bounds.lb
    }

    /// Upper bound: `lb() + extent()`.
    ///
    /// See the example on [`Datatype`].
    pub fn ub(&self) -> isize {
        self.0.bounds.ub
    }

    /// Distance between consecutive elements in a buffer (`ub - lb`).
    ///
    /// See the example on [`Datatype`].
    pub fn extent(&self) -> isize {
        self.0.bounds.ub - self.0.bounds.lb
    }

    /// Offset of the first data byte (`MPI_Type_get_true_extent`'s `lb`).
    ///
    /// See the example on [`Datatype`].
    pub fn true_lb(&self) -> isize {
        self.0.bounds.true_lb
    }

    /// Bytes from the first to just past the last data byte.
    ///
    /// See the example on [`Datatype`].
    pub fn true_extent(&self) -> isize {
        self.0.bounds.true_ub - self.0.bounds.true_lb
    }

    /// Whether `count` elements at `buf` are exactly the `count * size()`
    /// bytes starting at `buf + true_lb()`, in pack order: one run per
    /// element and `size() == extent()`. True for empty types.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// assert!(int.is_contiguous());
    /// assert!(Datatype::contiguous(4, &int)?.is_contiguous());
    /// assert!(!Datatype::vector(2, 1, 2, &int)?.is_contiguous()); // a gap between the ints
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_contiguous(&self) -> bool {
        self.0.size == 0 || self.0.run.is_some_and(|(_, l)| l as isize == self.extent())
    }

    /// The basic type, for predefined types and their [`dup`](Self::dup)s.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, ElementKind};
    /// let d = Datatype::basic(BasicType::Double);
    /// assert_eq!(d.basic_type(), Some(BasicType::Double));
    /// assert_eq!(d.dup().basic_type(), Some(BasicType::Double));
    /// assert_eq!(d.element_kind(), Some(ElementKind::F64));
    /// assert_eq!(Datatype::contiguous(2, &d)?.basic_type(), None);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn basic_type(&self) -> Option<BasicType> {
        match &self.0.kind {
            Kind::Basic(b) => Some(*b),
            Kind::Dup(c) => c.basic_type(),
            _ => None,
        }
    }

    /// What the reduction kernels see, for basic types (and their dups).
    ///
    /// See the example on [`Datatype::basic_type`].
    pub fn element_kind(&self) -> Option<ElementKind> {
        self.basic_type().map(BasicType::kind)
    }

    /// The sequence of basic elements of one element (pairs count as their
    /// two members), run-length encoded.
    ///
    /// See the example on [`Signature`].
    pub fn signature(&self) -> &Signature {
        &self.0.signature
    }

    /// `MPI_Type_commit`: builds the flattened form so the type can move
    /// data. Idempotent; all clones see it.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// assert!(int.is_committed()); // basic types always are
    /// let v = Datatype::vector(2, 1, 2, &int)?;
    /// assert!(!v.is_committed());
    /// assert!(v.segments(1).is_err()); // cannot move data yet
    /// let alias = v.clone();
    /// v.commit();
    /// assert!(alias.is_committed()); // clones share the state
    /// assert!(v.segments(1).is_ok());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn commit(&self) {
        self.flat();
        self.0.committed.store(true, Ordering::Release);
    }

    /// Whether the type may be used to move data.
    ///
    /// See the example on [`Datatype::commit`].
    pub fn is_committed(&self) -> bool {
        self.0.committed.load(Ordering::Acquire)
    }

    /// Whether `self` and `other` are the same type object (one handle).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let a = Datatype::basic(BasicType::Int);
    /// assert!(a.same(&a.clone()));
    /// assert!(a.same(&Datatype::basic(BasicType::Int))); // one object per basic type
    /// assert!(!a.same(&a.dup())); // the same type map, another object
    /// ```
    pub fn same(&self, other: &Datatype) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The flattened form, built on first use.
    fn flat(&self) -> &Arc<Flat> {
        self.0.flat.get_or_init(|| match &self.0.kind {
            Kind::Dup(c) => c.flat().clone(),
            _ => Arc::new(layout::flatten(self)),
        })
    }

    /// The flattened form of a committed type, or an error naming `arg`.
    fn committed_flat(&self, arg: &'static str) -> Result<&Arc<Flat>, Error> {
        if !self.is_committed() {
            return Err(Error::InvalidDatatype(format!(
                "`{arg}` is not committed ({self:?}); call commit() before moving data with it"
            )));
        }
        Ok(self.flat())
    }

    /// Number of `(offset, len)` segments of one element once flattened
    /// (builds the flattened form if needed).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// assert_eq!(Datatype::vector(3, 2, 4, &int)?.num_segments(), 3);
    /// assert_eq!(Datatype::contiguous(5, &int)?.num_segments(), 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn num_segments(&self) -> usize {
        let flat = self.flat();
        flat.segs.len().saturating_mul(flat.units())
    }
}

impl fmt::Debug for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (size {}, lb {}, extent {})",
            self.0.kind.name(),
            self.size(),
            self.lb(),
            self.extent()
        )
    }
}

impl From<BasicType> for Datatype {
    fn from(t: BasicType) -> Datatype {
        Datatype::basic(t)
    }
}
