//! A position in the packed stream of `count` elements at an address: the
//! resumable segment iterator driving pack and unpack piece by piece, at
//! any boundaries (inside a run, inside a basic element). What the
//! point-to-point engine uses to send from and receive into a
//! non-contiguous buffer without a temporary: each packet's bytes are
//! packed straight from, or unpacked straight into, the program's layout.

use super::{Datatype, Segments};
use crate::error::Error;

/// Packs or unpacks `count` elements of a committed type at a buffer
/// address, a piece at a time, remembering where it stopped.
///
/// Its methods work on raw addresses, like [`Datatype::pack_raw`]: the
/// caller vouches that the buffer holds the elements.
///
/// ```
/// use oxmpi::datatype::{BasicType, Cursor, Datatype};
/// let v = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Short))?; // shorts at 0, 4, 8
/// v.commit();
/// let src = [1i16, -1, 2, -1, 3];
/// let mut c = Cursor::new(&v, src.as_ptr().cast(), 1)?;
/// assert_eq!((c.len(), c.position()), (6, 0));
/// // Three bytes per "packet": the boundary splits the second short.
/// let (mut a, mut b) = ([0u8; 3], [0u8; 3]);
/// // SAFETY: `src` holds the element (bytes 0..10).
/// unsafe { assert_eq!((c.pack(&mut a), c.pack(&mut b)), (3, 3)) };
/// assert_eq!(c.remaining(), 0);
/// let mut dst = [0i16; 5];
/// let mut d = Cursor::new(&v, dst.as_mut_ptr().cast(), 1)?;
/// // SAFETY: `dst` holds the element and does not overlap `a` or `b`.
/// unsafe { d.unpack(&a) + d.unpack(&b) };
/// assert_eq!(dst, [1, 0, 2, 0, 3]);
/// d.seek(2)?; // back to the second short
/// // SAFETY: as above.
/// assert_eq!(unsafe { d.unpack(&[9, 0, 0, 0, 0, 0, 0]) }, 4); // 4 bytes were left
/// assert_eq!(dst, [1, 0, 9, 0, 0]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Cursor {
    dt: Datatype,
    base: usize,
    count: usize,
    len: usize,
    segs: Segments,
}

impl Cursor {
    /// The start of the packed stream of `count` elements of `dt` at
    /// `buf`. Fails when `dt` is not committed or the elements do not fit
    /// in the address space.
    ///
    /// See the example on [`Cursor`].
    pub fn new(dt: &Datatype, buf: *const u8, count: usize) -> Result<Cursor, Error> {
        let segs = dt.segments(count)?;
        Ok(Cursor {
            dt: dt.clone(),
            base: buf as usize,
            count,
            len: segs.remaining(),
            segs,
        })
    }

    /// Packed bytes of all the elements.
    ///
    /// See the example on [`Cursor`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the elements hold no data.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Cursor, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// assert!(Cursor::new(&int, std::ptr::null(), 0)?.is_empty());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Packed bytes before the next one to move.
    ///
    /// See the example on [`Cursor`].
    pub fn position(&self) -> usize {
        self.segs.packed_position()
    }

    /// Packed bytes not yet moved.
    ///
    /// See the example on [`Cursor`].
    pub fn remaining(&self) -> usize {
        self.segs.remaining()
    }

    /// Moves to packed position `pos` (one binary search); fails when it
    /// is past [`len`](Self::len).
    ///
    /// See the example on [`Cursor`].
    pub fn seek(&mut self, pos: usize) -> Result<(), Error> {
        self.segs = self.dt.segments_range(self.count, pos..self.len)?;
        Ok(())
    }

    /// The address and length of the next run of data, at most `max`
    /// bytes (the rest of a longer run comes next time), and moves past
    /// it; `None` at the end or when `max` is 0. For building the
    /// scatter/gather lists of a single-copy transfer.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Cursor, Datatype};
    /// let v = Datatype::vector(2, 2, 3, &Datatype::basic(BasicType::Byte))?; // bytes 0, 1, 3, 4
    /// v.commit();
    /// let buf = [0u8; 5];
    /// let at = buf.as_ptr() as usize;
    /// let mut c = Cursor::new(&v, buf.as_ptr(), 1)?;
    /// let mut runs = Vec::new();
    /// while let Some((p, n)) = c.next_run(3) {
    ///     runs.push((p as usize - at, n));
    /// }
    /// assert_eq!(runs, [(0, 2), (3, 2)]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn next_run(&mut self, max: usize) -> Option<(*mut u8, usize)> {
        if max == 0 {
            return None;
        }
        let s = self.segs.next_within(max)?;
        Some(((self.base as *mut u8).wrapping_offset(s.offset), s.len))
    }

    /// Packs the next packed bytes into `out`, as many as fit and remain;
    /// returns how many.
    ///
    /// # Safety
    /// The buffer holds the elements, and does not overlap `out`.
    ///
    /// See the example on [`Cursor`].
    pub unsafe fn pack(&mut self, out: &mut [u8]) -> usize {
        let base = self.base as *const u8;
        let to = out.as_mut_ptr();
        self.segs.walk(out.len(), |offset, n, at| {
            // SAFETY: the caller vouches for the source; the walk covers
            // at most `out.len()` bytes.
            unsafe { copy_run(base.wrapping_offset(offset), to.add(at), n) }
        })
    }

    /// Unpacks `input`, the next packed bytes, into the buffer, as many
    /// as remain; returns how many were used (bytes past the end are left:
    /// a truncated message).
    ///
    /// # Safety
    /// The buffer has room for the elements, and does not overlap `input`.
    ///
    /// See the example on [`Cursor`].
    pub unsafe fn unpack(&mut self, input: &[u8]) -> usize {
        let base = self.base as *mut u8;
        let from = input.as_ptr();
        self.segs.walk(input.len(), |offset, n, at| {
            // SAFETY: as in `pack`, with the roles swapped.
            unsafe { copy_run(from.add(at), base.wrapping_offset(offset), n) }
        })
    }
}

/// Copies `n` bytes; the sizes of basic elements without a library call
/// (vectors of single doubles are common and their runs are 8 bytes).
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`].
#[inline(always)]
pub(super) unsafe fn copy_run(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        match n {
            8 => dst
                .cast::<u64>()
                .write_unaligned(src.cast::<u64>().read_unaligned()),
            4 => dst
                .cast::<u32>()
                .write_unaligned(src.cast::<u32>().read_unaligned()),
            16 => dst
                .cast::<u128>()
                .write_unaligned(src.cast::<u128>().read_unaligned()),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::BasicType;

    fn committed(t: Datatype) -> Datatype {
        t.commit();
        t
    }

    /// A struct of a byte, a double and two ints, resized, over 3 elements:
    /// runs of different lengths with gaps.
    fn mixed() -> Datatype {
        let t = Datatype::create_struct(
            &[1, 1, 2],
            &[0, 3, 16],
            &[
                Datatype::basic(BasicType::Byte),
                Datatype::basic(BasicType::Double),
                Datatype::basic(BasicType::Int),
            ],
        )
        .unwrap();
        committed(Datatype::resized(&t, 0, 32).unwrap())
    }

    #[test]
    fn any_packet_boundaries_pack_and_unpack_like_the_whole() {
        for (dt, count) in [
            (mixed(), 3),
            (
                committed(Datatype::vector(7, 1, 2, &Datatype::basic(BasicType::Double)).unwrap()),
                2,
            ),
            (
                committed(
                    Datatype::indexed(&[2, 1, 3], &[5, 0, 9], &Datatype::basic(BasicType::Int))
                        .unwrap(),
                ),
                2,
            ),
        ] {
            let span = dt.data_span(count).unwrap().unwrap();
            assert!(span.start >= 0);
            let src: Vec<u8> = (0..span.end as usize).map(|i| (i * 7 + 1) as u8).collect();
            let mut whole = vec![0u8; dt.pack_size(count).unwrap()];
            // SAFETY: `src` covers the data span.
            unsafe { dt.pack_raw(src.as_ptr(), count, 0, &mut whole).unwrap() };
            for piece in [1usize, 2, 3, 5, 7, 8, 13, 64] {
                let mut c = Cursor::new(&dt, src.as_ptr(), count).unwrap();
                let mut got = Vec::new();
                let mut buf = vec![0u8; piece];
                loop {
                    // SAFETY: as above.
                    let n = unsafe { c.pack(&mut buf) };
                    got.extend_from_slice(&buf[..n]);
                    if n < piece {
                        break;
                    }
                }
                assert_eq!(got, whole, "pack in pieces of {piece}");
                let mut dst = vec![0u8; src.len()];
                let mut d = Cursor::new(&dt, dst.as_mut_ptr(), count).unwrap();
                for chunk in whole.chunks(piece) {
                    // SAFETY: `dst` covers the data span.
                    assert_eq!(unsafe { d.unpack(chunk) }, chunk.len());
                }
                let mut want = vec![0u8; src.len()];
                // SAFETY: as above.
                unsafe { dt.unpack_raw(want.as_mut_ptr(), count, 0, &whole).unwrap() };
                assert_eq!(dst, want, "unpack in pieces of {piece}");
            }
        }
    }

    #[test]
    fn a_truncated_stream_stops_at_the_end() {
        let dt = committed(Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Int)).unwrap());
        let mut dst = [0i32; 3];
        let mut c = Cursor::new(&dt, dst.as_mut_ptr().cast(), 1).unwrap();
        let input: Vec<u8> = [5i32, 6, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
        // SAFETY: `dst` holds the element.
        assert_eq!(unsafe { c.unpack(&input) }, 8);
        assert_eq!(dst, [5, 0, 6]);
        assert!(c.seek(9).is_err());
        assert!(c.next_run(4).is_none());
        let uncommitted = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Int)).unwrap();
        assert!(Cursor::new(&uncommitted, dst.as_ptr().cast(), 1).is_err());
    }
}
