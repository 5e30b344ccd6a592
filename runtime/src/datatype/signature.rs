//! Type signatures: the sequence of basic elements of a type, run-length
//! encoded and with repetitions kept as repetitions (a vector of a billion
//! `MPI_DOUBLE_INT`s is one piece of two runs, not two billion runs);
//! element counting (`MPI_Get_elements`, `MPI_Get_count`) and type
//! matching.

use super::{BasicType, Datatype};
use std::sync::Arc;

/// The basic elements of one element of a type, in type-map order, as
/// `(basic type, repeat)` runs. Pair types appear as their two members
/// (`MPI_DOUBLE_INT` is `[(Double, 1), (Int, 1)]`). Its size does not grow
/// with the counts of the constructors that made the type.
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype};
/// let int = Datatype::basic(BasicType::Int);
/// let v = Datatype::vector(3, 2, 5, &int)?;
/// let sig = v.signature();
/// assert_eq!(sig.runs().collect::<Vec<_>>(), [(BasicType::Int, 6)]);
/// assert_eq!((sig.len(), sig.is_empty()), (6, false));
/// let di = Datatype::basic(BasicType::DoubleInt);
/// let runs: Vec<_> = di.signature().runs().collect();
/// assert_eq!(runs, [(BasicType::Double, 1), (BasicType::Int, 1)]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Signature {
    pieces: Arc<[Piece]>,
    len: usize,
}

/// A stretch of a signature: `runs` repeated `times` times. A piece of
/// one run always has `times` 1 (the repetition is in the run).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    runs: Arc<[(BasicType, usize)]>,
    times: usize,
}

/// Runs up to which a repeated signature is written out rather than kept
/// as a repetition.
const SPELL_OUT: usize = 64;

impl PartialEq for Signature {
    /// The same sequence of basic elements, however it is stored.
    fn eq(&self, other: &Signature) -> bool {
        self.len == other.len && self.matches(1, other, 1)
    }
}

impl Eq for Signature {}

impl Signature {
    /// The runs, equal neighbours merged, made as they are walked.
    ///
    /// See the example on [`Signature`].
    pub fn runs(&self) -> impl Iterator<Item = (BasicType, usize)> + '_ {
        let mut cur = Cursor::new(self, 1);
        std::iter::from_fn(move || {
            let (t, mut n) = cur.peek()?;
            cur.consume(n);
            while let Some((_, k)) = cur.peek().filter(|&(u, _)| u == t) {
                n += k;
                cur.consume(k);
            }
            Some((t, n))
        })
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
        let first = self.pieces.first()?.runs.first()?.0;
        self.pieces
            .iter()
            .all(|p| p.runs.iter().all(|r| r.0 == first))
            .then_some(first)
    }

    /// The sum of `f(t)` over the basic elements `t` (e.g. their bytes in
    /// some representation), without walking repetitions one by one.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let di = Datatype::basic(BasicType::DoubleInt);
    /// let v = Datatype::contiguous(1000, &di)?;
    /// assert_eq!(v.signature().sum_by(|t| t.size()), 12_000);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn sum_by(&self, f: impl Fn(BasicType) -> usize) -> usize {
        self.pieces
            .iter()
            .map(|p| p.runs.iter().map(|&(t, n)| n * f(t)).sum::<usize>() * p.times)
            .sum()
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
        for p in self.pieces.iter() {
            if rem == 0 {
                break;
            }
            let bytes: usize = p.runs.iter().map(|&(t, k)| t.size() * k).sum();
            let elems: usize = p.runs.iter().map(|&(_, k)| k).sum();
            let whole = (rem / bytes.max(1)).min(p.times);
            n += whole * elems;
            rem -= whole * bytes;
            if whole == p.times {
                continue;
            }
            for &(t, k) in p.runs.iter() {
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
                    break;
                }
            }
        }
        (rem == 0).then_some(n)
    }
}

/// Walks `count` repetitions of a signature run by run; a one-run
/// signature is walked as a single run of `count` times its length.
/// Neighbouring runs of one type are not merged.
#[derive(Clone)]
pub(super) struct Cursor<'a> {
    pieces: &'a [Piece],
    /// Repetitions of the whole signature left, the current one included.
    reps: usize,
    piece: usize,
    /// Repetitions of the current piece left, the current one included.
    times: usize,
    run: usize,
    left: usize,
}

impl<'a> Cursor<'a> {
    /// The start of `count` repetitions of `sig`.
    pub(super) fn new(sig: &'a Signature, count: usize) -> Self {
        let pieces: &[Piece] = &sig.pieces;
        let (reps, times, left) = match pieces {
            _ if count == 0 => (0, 0, 0),
            [] => (0, 0, 0),
            [p] if p.runs.len() == 1 => (1, 1, p.runs[0].1 * count),
            [p, ..] => (count, p.times, p.runs[0].1),
        };
        Cursor {
            pieces,
            reps,
            piece: 0,
            times,
            run: 0,
            left,
        }
    }

    /// The current basic type and how many of it are left in this run.
    pub(super) fn peek(&self) -> Option<(BasicType, usize)> {
        (self.reps > 0 && self.left > 0)
            .then(|| (self.pieces[self.piece].runs[self.run].0, self.left))
    }

    /// Moves on by `n` elements of the current run (at most what is left).
    pub(super) fn consume(&mut self, n: usize) {
        self.left -= n;
        if self.left > 0 {
            return;
        }
        self.run += 1;
        if self.run == self.pieces[self.piece].runs.len() {
            self.run = 0;
            self.times -= 1;
            if self.times == 0 {
                self.piece += 1;
                if self.piece == self.pieces.len() {
                    self.piece = 0;
                    self.reps -= 1;
                }
                self.times = self.pieces[self.piece].times;
            }
        }
        if self.reps > 0 {
            self.left = self.pieces[self.piece].runs[self.run].1;
        }
    }
}

/// Builds a signature: equal neighbours merged, repetitions of more than
/// a few runs kept as pieces.
#[derive(Default)]
pub(super) struct SigBuilder {
    pieces: Vec<(Vec<(BasicType, usize)>, usize)>,
    len: usize,
}

impl SigBuilder {
    pub(super) fn push(&mut self, t: BasicType, n: usize) {
        if n == 0 {
            return;
        }
        self.len += n;
        match self.pieces.last_mut() {
            Some((runs, 1)) => match runs.last_mut() {
                Some((last, k)) if *last == t => *k += n,
                _ => runs.push((t, n)),
            },
            _ => self.pieces.push((vec![(t, n)], 1)),
        }
    }

    /// Appends `runs` repeated `times` times.
    fn piece(&mut self, runs: &[(BasicType, usize)], times: usize) {
        if let [(t, n)] = runs {
            return self.push(*t, n * times);
        }
        if times == 1 || runs.len().saturating_mul(times) <= SPELL_OUT {
            (0..times).for_each(|_| runs.iter().for_each(|&(t, n)| self.push(t, n)));
            return;
        }
        self.len += runs.iter().map(|r| r.1).sum::<usize>() * times;
        match self.pieces.last_mut() {
            Some((last, k)) if *k > 1 && last[..] == *runs => *k += times,
            _ => self.pieces.push((runs.to_vec(), times)),
        }
    }

    /// Appends `k` copies of `s`.
    pub(super) fn extend_repeated(&mut self, s: &Signature, k: usize) {
        if k == 0 || s.is_empty() {
            return;
        }
        match &s.pieces[..] {
            [p] => self.piece(&p.runs, p.times.saturating_mul(k)),
            pieces if k == 1 => pieces.iter().for_each(|p| self.piece(&p.runs, p.times)),
            _ => {
                // Several pieces repeated: one period written out (only a
                // type nesting repetitions of mixed types gets here).
                let period: Vec<_> = s.runs().collect();
                self.piece(&period, k);
            }
        }
    }

    pub(super) fn finish(self) -> Signature {
        let pieces = self
            .pieces
            .into_iter()
            .map(|(runs, times)| Piece {
                runs: runs.into(),
                times,
            })
            .collect();
        Signature {
            pieces,
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
