//! Type signatures: the sequence of basic elements of a type, run-length
//! encoded; element counting (`MPI_Get_elements`, `MPI_Get_count`) and
//! type matching.

use super::{BasicType, Datatype};
use std::sync::Arc;

/// The basic elements of one element of a type, in type-map order, as
/// `(basic type, repeat)` runs with equal neighbours merged. Pair types
/// appear as their two members (`MPI_DOUBLE_INT` is `[(Double, 1), (Int, 1)]`).
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype};
/// let int = Datatype::basic(BasicType::Int);
/// let v = Datatype::vector(3, 2, 5, &int)?;
/// let sig = v.signature();
/// assert_eq!(sig.runs(), [(BasicType::Int, 6)]);
/// assert_eq!((sig.len(), sig.is_empty()), (6, false));
/// let di = Datatype::basic(BasicType::DoubleInt);
/// assert_eq!(di.signature().runs(), [(BasicType::Double, 1), (BasicType::Int, 1)]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signature {
    runs: Arc<[(BasicType, usize)]>,
    len: usize,
}

impl Signature {
    /// The runs.
    ///
    /// See the example on [`Signature`].
    pub fn runs(&self) -> &[(BasicType, usize)] {
        &self.runs
    }

    /// Number of basic elements.
    ///
    /// See the example on [`Signature`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no basic elements.
    ///
    /// See the example on [`Signature`].
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The one basic type all the elements are, if they are all the same
    /// (what a reduction over a derived type needs); `None` when empty or
    /// mixed.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let d = Datatype::basic(BasicType::Double);
    /// let col = Datatype::vector(3, 1, 4, &d)?;
    /// assert_eq!(col.signature().uniform(), Some(BasicType::Double));
    /// let di = Datatype::basic(BasicType::DoubleInt);
    /// assert_eq!(di.signature().uniform(), None); // a double and an int
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn uniform(&self) -> Option<BasicType> {
        let first = self.runs.first()?.0;
        self.runs.iter().all(|r| r.0 == first).then_some(first)
    }

    /// Whether `count` copies of `self` are a prefix of `other_count`
    /// copies of `other`: the MPI rule for a send of `count` elements to
    /// match a receive of `other_count` elements. Strict: `MPI_BYTE` matches
    /// only `MPI_BYTE`; `MPI_PACKED` needs the caller's special case.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let pair = Datatype::contiguous(2, &int)?;
    /// // Sending 3 pairs matches receiving 6 ints, or a longer receive.
    /// assert!(pair.signature().matches(3, int.signature(), 6));
    /// assert!(pair.signature().matches(3, int.signature(), 8));
    /// assert!(!pair.signature().matches(3, int.signature(), 5));
    /// let float = Datatype::basic(BasicType::Float);
    /// assert!(!int.signature().matches(1, float.signature(), 1));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn matches(&self, count: usize, other: &Signature, other_count: usize) -> bool {
        let mut a = Cursor::new(self, count);
        let mut b = Cursor::new(other, other_count);
        loop {
            let Some((ta, na)) = a.peek() else {
                return true;
            };
            let Some((tb, nb)) = b.peek() else {
                return false;
            };
            if ta != tb {
                return false;
            }
            let n = na.min(nb);
            a.consume(n);
            b.consume(n);
        }
    }

    /// Basic elements in the first `rem` bytes of one element, or `None`
    /// when `rem` ends inside a basic element.
    fn elements_in(&self, mut rem: usize) -> Option<usize> {
        let mut n = 0;
        for &(t, k) in self.runs.iter() {
            if rem == 0 {
                break;
            }
            let run = t.size() * k;
            if rem >= run {
                rem -= run;
                n += k;
            } else {
                if !rem.is_multiple_of(t.size()) {
                    return None;
                }
                n += rem / t.size();
                rem = 0;
            }
        }
        (rem == 0).then_some(n)
    }
}

/// Walks `count` repetitions of a signature run by run; a one-run
/// signature is walked as a single run of `count` times its length.
#[derive(Clone)]
pub(super) struct Cursor<'a> {
    runs: &'a [(BasicType, usize)],
    reps: usize,
    idx: usize,
    left: usize,
}

impl<'a> Cursor<'a> {
    /// The start of `count` repetitions of `sig`.
    pub(super) fn new(sig: &'a Signature, count: usize) -> Self {
        let runs: &[_] = &sig.runs;
        let (reps, left) = match runs {
            [] => (0, 0),
            [(_, n)] => (1, n * count),
            [(_, n), ..] => (count, *n),
        };
        Cursor {
            runs,
            reps,
            idx: 0,
            left,
        }
    }

    /// The current basic type and how many of it are left in this run.
    pub(super) fn peek(&self) -> Option<(BasicType, usize)> {
        (self.reps > 0 && self.left > 0).then(|| (self.runs[self.idx].0, self.left))
    }

    /// Moves on by `n` elements of the current run (at most what is left).
    pub(super) fn consume(&mut self, n: usize) {
        self.left -= n;
        if self.left == 0 {
            self.idx += 1;
            if self.idx == self.runs.len() {
                self.idx = 0;
                self.reps -= 1;
            }
            if self.reps > 0 {
                self.left = self.runs[self.idx].1;
            }
        }
    }
}

/// Builds a signature, merging equal neighbours.
#[derive(Default)]
pub(super) struct SigBuilder {
    runs: Vec<(BasicType, usize)>,
    len: usize,
}

impl SigBuilder {
    pub(super) fn push(&mut self, t: BasicType, n: usize) {
        if n == 0 {
            return;
        }
        self.len += n;
        match self.runs.last_mut() {
            Some((last, k)) if *last == t => *k += n,
            _ => self.runs.push((t, n)),
        }
    }

    /// Appends `k` copies of `s`.
    pub(super) fn extend_repeated(&mut self, s: &Signature, k: usize) {
        match &s.runs[..] {
            [] => {}
            [(t, n)] => self.push(*t, n * k),
            runs => (0..k).for_each(|_| runs.iter().for_each(|&(t, n)| self.push(t, n))),
        }
    }

    pub(super) fn finish(self) -> Signature {
        Signature {
            runs: self.runs.into(),
            len: self.len,
        }
    }
}

impl Datatype {
    /// `MPI_Get_elements`: basic elements in `bytes` bytes of data of this
    /// type; `None` (`MPI_UNDEFINED`) when `bytes` ends inside a basic element.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let di = Datatype::basic(BasicType::DoubleInt);
    /// assert_eq!(di.get_elements(12 + 8), Some(3)); // double, int, double
    /// assert_eq!(di.get_elements(4), None);
    /// ```
    pub fn get_elements(&self, bytes: usize) -> Option<usize> {
        let size = self.size();
        if size == 0 {
            return (bytes == 0).then_some(0);
        }
        let whole = (bytes / size).checked_mul(self.signature().len())?;
        whole.checked_add(self.signature().elements_in(bytes % size)?)
    }

    /// `MPI_Get_count`: whole elements of this type in `bytes`; `None`
    /// (`MPI_UNDEFINED`) when `bytes` is not a multiple of the size.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let d = Datatype::basic(BasicType::Double);
    /// assert_eq!(d.get_count(24), Some(3));
    /// assert_eq!(d.get_count(20), None); // MPI_UNDEFINED: not whole elements
    /// ```
    pub fn get_count(&self, bytes: usize) -> Option<usize> {
        match self.size() {
            0 => (bytes == 0).then_some(0),
            size => bytes.is_multiple_of(size).then_some(bytes / size),
        }
    }
}
