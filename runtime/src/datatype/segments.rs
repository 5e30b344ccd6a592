//! Walking the data of `count` elements as `(offset, len)` byte ranges, in
//! pack order, from any position of the packed stream.

use super::layout::{Flat, MAX_DIMS};
use super::Datatype;
use crate::error::Error;
use std::iter::FusedIterator;
use std::ops::Range;
use std::sync::Arc;

/// A run of bytes at `offset` from the buffer address (may be negative).
///
/// See the example on [`Datatype::segments`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Byte offset from the buffer address.
    pub offset: isize,
    /// Length in bytes (> 0).
    pub len: usize,
}

/// Iterator over the data of `count` elements of a committed type as
/// [`Segment`]s, in pack order, adjacent runs merged (also across element
/// boundaries). Walking costs O(segments) with no allocation; starting
/// at a packed position costs one binary search.
///
/// Made by [`Datatype::segments`] and [`Datatype::segments_range`]; holds
/// the flattened form (shared), so it can be stored and resumed later.
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype};
/// let v = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Int))?;
/// v.commit();
/// let mut segs = v.segments(1)?;
/// assert_eq!((segs.packed_position(), segs.remaining()), (0, 12));
/// let first = segs.next().unwrap();
/// assert_eq!((first.offset, first.len), (0, 4));
/// assert_eq!((segs.packed_position(), segs.remaining()), (4, 8));
/// let later = segs.clone(); // resume from here another time
/// assert_eq!(later.count(), 2);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Segments {
    flat: Arc<Flat>,
    extent: isize,
    /// One run per element, `extent` long: the whole range is one segment.
    contiguous: bool,
    /// Where the current repetition of the pattern starts, from the
    /// buffer address.
    base: isize,
    /// The current repetition's index along each of the pattern's
    /// dimensions (the element is the outermost one).
    at: Position,
    idx: usize,
    skip: usize,
    pos: usize,
    end: usize,
}

/// Which repetition of the pattern a walk is in.
#[derive(Debug, Clone, Copy, Default)]
struct Position {
    elem: usize,
    digits: [usize; MAX_DIMS],
}

impl Position {
    /// Repetition `unit` of element `elem`, and its offset from the buffer.
    fn of(flat: &Flat, extent: isize, elem: usize, mut unit: usize) -> (Position, isize) {
        let mut at = Position {
            elem,
            ..Position::default()
        };
        let mut base = (elem as isize).wrapping_mul(extent);
        for (d, &(n, step)) in flat.dims.iter().enumerate().rev() {
            at.digits[d] = unit % n;
            unit /= n;
            base = base.wrapping_add((at.digits[d] as isize).wrapping_mul(step));
        }
        (at, base)
    }

    /// Moves to the next repetition; returns the new base.
    #[inline]
    fn advance(&mut self, flat: &Flat, extent: isize, base: isize) -> isize {
        let Some(&(n, step)) = flat.dims.last() else {
            self.elem += 1;
            return base.wrapping_add(extent);
        };
        let d = flat.dims.len() - 1;
        self.digits[d] += 1;
        if self.digits[d] < n {
            return base.wrapping_add(step);
        }
        self.carry(flat, extent, base)
    }

    /// [`Position::advance`] past the end of the innermost dimension.
    fn carry(&mut self, flat: &Flat, extent: isize, mut base: isize) -> isize {
        for (d, &(n, step)) in flat.dims.iter().enumerate().rev() {
            if self.digits[d] < n {
                self.digits[d] += 1;
            }
            if self.digits[d] < n {
                return base.wrapping_add(step);
            }
            self.digits[d] = 0;
            base = base.wrapping_sub((n as isize - 1).wrapping_mul(step));
        }
        self.elem += 1;
        base.wrapping_add(extent)
    }
}

impl Datatype {
    /// The data of `count` elements at a buffer as byte ranges relative to
    /// the buffer address (see [`segments_range`](Self::segments_range)).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, Segment};
    /// let int = Datatype::basic(BasicType::Int);
    /// let col = Datatype::vector(3, 1, 4, &int)?; // a column of a 3x4 matrix
    /// let col = Datatype::resized(&col, 0, 4)?; // next column starts 4 bytes on
    /// col.commit();
    /// let segs: Vec<_> = col.segments(2)?.collect();
    /// let s = |offset, len| Segment { offset, len };
    /// assert_eq!(segs, [s(0, 4), s(16, 4), s(32, 4), s(4, 4), s(20, 4), s(36, 4)]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn segments(&self, count: usize) -> Result<Segments, Error> {
        let total = self.pack_size(count)?;
        self.segments_range(count, 0..total)
    }

    /// The byte ranges holding packed bytes `packed.start .. packed.end` of
    /// `count` elements: what a transport sends when it moves a
    /// non-contiguous buffer in pieces. Fails when the type is not
    /// committed or the range is outside the `count * size()` packed bytes.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Int))?; // ints at 0, 8, 16
    /// v.commit();
    /// // Packed bytes 2..10: half of the first int, the second, half of the third.
    /// let parts: Vec<_> = v.segments_range(1, 2..10)?.map(|s| (s.offset, s.len)).collect();
    /// assert_eq!(parts, [(2, 2), (8, 4), (16, 2)]);
    /// assert!(v.segments_range(1, 0..13).is_err()); // one element packs to 12 bytes
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn segments_range(&self, count: usize, packed: Range<usize>) -> Result<Segments, Error> {
        let flat = self.committed_flat("datatype")?.clone();
        let total = self.pack_size(count)?;
        self.data_span(count)?;
        if packed.start > packed.end || packed.end > total {
            return Err(Error::InvalidArgument {
                arg: "position",
                reason: format!(
                    "packed range {}..{} is outside the {total} bytes of {count} elements of {self:?}",
                    packed.start, packed.end
                ),
            });
        }
        let size = self.size();
        let (mut elem, mut unit, mut idx, mut skip) = (0, 0, 0, 0);
        if let (Some(e), Some(within)) = (
            packed.start.checked_div(size),
            packed.start.checked_rem(size),
        ) {
            elem = e;
            unit = within / flat.unit;
            let within = within % flat.unit;
            idx = flat.segs.partition_point(|s| s.packed + s.len <= within);
            skip = within - flat.segs.get(idx).map_or(within, |s| s.packed);
        }
        let extent = self.extent();
        let (at, base) = Position::of(&flat, extent, elem, unit);
        Ok(Segments {
            flat,
            extent,
            contiguous: size > 0 && self.is_contiguous(),
            base,
            at,
            idx,
            skip,
            pos: packed.start,
            end: packed.end,
        })
    }
}

impl Segments {
    /// Packed bytes before the next segment (where a resumed walk starts).
    ///
    /// See the example on [`Segments`].
    pub fn packed_position(&self) -> usize {
        self.pos
    }

    /// Packed bytes not yet walked.
    ///
    /// See the example on [`Segments`].
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// Like [`Iterator::next`], but yields at most `max` bytes (`max > 0`):
    /// the rest of a longer run comes next time. What a transport does
    /// when a packet boundary falls inside a run (or inside a basic element).
    pub(super) fn next_within(&mut self, max: usize) -> Option<Segment> {
        let end = self.end;
        self.end = end.min(self.pos.saturating_add(max));
        let seg = self.next();
        self.end = end;
        seg
    }

    /// Walks the next `max` packed bytes (fewer at the end) run by run,
    /// calling `f(offset, len, at)` with each run's offset from the buffer
    /// address, its length, and the packed bytes walked before it in this
    /// call; moves past them and returns how many. Adjacent runs are not
    /// merged: this is the copy loop of pack and unpack, kept tight.
    #[inline]
    pub(super) fn walk(&mut self, max: usize, mut f: impl FnMut(isize, usize, usize)) -> usize {
        let want = max.min(self.end - self.pos);
        if want == 0 {
            return 0;
        }
        if self.contiguous {
            f(self.flat.segs[0].disp + self.pos as isize, want, 0);
            self.pos += want;
            return want;
        }
        let flat = &*self.flat;
        let segs = &flat.segs[..];
        let (mut idx, mut skip, mut base) = (self.idx, self.skip, self.base);
        let mut done = 0;
        while done < want {
            let s = &segs[idx];
            let n = (s.len - skip).min(want - done);
            f(base + s.disp + skip as isize, n, done);
            done += n;
            skip += n;
            if skip == s.len {
                skip = 0;
                idx += 1;
                if idx == segs.len() {
                    idx = 0;
                    base = self.at.advance(flat, self.extent, base);
                }
            }
        }
        (self.idx, self.skip, self.base) = (idx, skip, base);
        self.pos += want;
        want
    }

    /// Offset of the next byte to yield (valid while `remaining() > 0`).
    fn offset(&self) -> isize {
        let s = &self.flat.segs[self.idx];
        self.base + s.disp + self.skip as isize
    }

    /// Yields the rest of the current run (up to `end`) and moves on.
    fn step(&mut self) -> Segment {
        let offset = self.offset();
        let s = self.flat.segs[self.idx];
        let len = (s.len - self.skip).min(self.end - self.pos);
        self.pos += len;
        self.skip += len;
        if self.skip == s.len {
            self.skip = 0;
            self.idx += 1;
            if self.idx == self.flat.segs.len() {
                self.idx = 0;
                self.base = self.at.advance(&self.flat, self.extent, self.base);
            }
        }
        Segment { offset, len }
    }
}

impl Iterator for Segments {
    type Item = Segment;

    fn next(&mut self) -> Option<Segment> {
        if self.pos >= self.end {
            return None;
        }
        if self.contiguous {
            // Element e's data is at e * size + disp: packed position p is
            // at disp + p.
            let seg = Segment {
                offset: self.flat.segs[0].disp + self.pos as isize,
                len: self.end - self.pos,
            };
            self.pos = self.end;
            return Some(seg);
        }
        let mut seg = self.step();
        while self.pos < self.end && self.offset() == seg.offset + seg.len as isize {
            seg.len += self.step().len;
        }
        Some(seg)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        ((self.pos < self.end) as usize, Some(self.end - self.pos))
    }
}

impl FusedIterator for Segments {}
