//! `MPI_Pack` / `MPI_Unpack` / `MPI_Pack_size`, over byte slices (checked)
//! or raw addresses (for the transports), whole or from any packed position.

use super::cursor::copy_run;
use super::Datatype;
use crate::error::Error;
use std::ops::Range;

impl Datatype {
    /// `MPI_Pack_size`: bytes that `count` elements occupy when packed.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(2, 3, 4, &Datatype::basic(BasicType::Int))?;
    /// assert_eq!(v.pack_size(10)?, 240);
    /// assert!(v.pack_size(usize::MAX).is_err());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn pack_size(&self, count: usize) -> Result<usize, Error> {
        count
            .checked_mul(self.size())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| Error::InvalidArgument {
                arg: "count",
                reason: format!("{count} elements of {self:?} do not fit in memory"),
            })
    }

    /// Byte offsets, relative to the buffer address, of the first and just
    /// past the last data byte of `count` elements; `None` when there is no
    /// data. A buffer must cover this range.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let int = Datatype::basic(BasicType::Int);
    /// let t = Datatype::resized(&int, -4, 12)?; // data at 0..4, elements 12 bytes apart
    /// assert_eq!(t.data_span(3)?, Some(0..28));
    /// assert_eq!(t.data_span(0)?, None);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn data_span(&self, count: usize) -> Result<Option<Range<isize>>, Error> {
        if count == 0 || self.size() == 0 {
            return Ok(None);
        }
        let shift = (count as i128 - 1) * self.extent() as i128;
        let lo = self.true_lb() as i128 + shift.min(0);
        let hi = self.true_lb() as i128 + self.true_extent() as i128 + shift.max(0);
        match (isize::try_from(lo), isize::try_from(hi)) {
            (Ok(lo), Ok(hi)) => Ok(Some(lo..hi)),
            _ => Err(Error::InvalidArgument {
                arg: "count",
                reason: format!(
                    "{count} elements of {self:?} span bytes {lo}..{hi}, beyond the address space"
                ),
            }),
        }
    }

    /// Checks that `count` elements laid out from the start of a buffer of
    /// `len` bytes stay inside it.
    pub(super) fn check_buffer(
        &self,
        arg: &'static str,
        len: usize,
        count: usize,
    ) -> Result<(), Error> {
        match self.data_span(count)? {
            Some(r) if r.start < 0 || r.end as usize > len => Err(Error::InvalidArgument {
                arg,
                reason: format!(
                    "{count} elements of {self:?} touch bytes {}..{} of the buffer, which has {len} bytes",
                    r.start, r.end
                ),
            }),
            _ => Ok(()),
        }
    }

    /// `MPI_Pack`: appends `count` elements read from `inbuf` (the buffer
    /// address is `inbuf`'s start) to `outbuf` at `*position`, and advances
    /// `*position`. Types whose data lies before their address (negative
    /// true lower bound) need [`pack_raw`](Self::pack_raw).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let byte = Datatype::basic(BasicType::Byte);
    /// let every_other = Datatype::vector(3, 1, 2, &byte)?;
    /// every_other.commit();
    /// let (mut out, mut pos) = ([0u8; 4], 0);
    /// every_other.pack(b"a-b-c", 1, &mut out, &mut pos)?;
    /// assert_eq!((&out[..pos], pos), (&b"abc"[..], 3));
    /// let mut back = *b".....";
    /// every_other.unpack(&out, &mut 0, &mut back, 1)?;
    /// assert_eq!(&back, b"a.b.c");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn pack(
        &self,
        inbuf: &[u8],
        count: usize,
        outbuf: &mut [u8],
        position: &mut usize,
    ) -> Result<(), Error> {
        self.check_buffer("inbuf", inbuf.len(), count)?;
        let n = self.pack_size(count)?;
        check_room(outbuf.len(), *position, n, "outsize", || {
            format!("packing {count} elements of {self:?}")
        })?;
        let out = &mut outbuf[*position..*position + n];
        // SAFETY: check_buffer proved every byte of the `count` elements
        // lies inside `inbuf`.
        unsafe { self.pack_raw(inbuf.as_ptr(), count, 0, out)? };
        *position += n;
        Ok(())
    }

    /// `MPI_Unpack`: reads `count` elements from `inbuf` at `*position`
    /// into `outbuf` (the buffer address is `outbuf`'s start), and advances
    /// `*position`.
    ///
    /// See the example on [`Datatype::pack`].
    pub fn unpack(
        &self,
        inbuf: &[u8],
        position: &mut usize,
        outbuf: &mut [u8],
        count: usize,
    ) -> Result<(), Error> {
        self.check_buffer("outbuf", outbuf.len(), count)?;
        let n = self.pack_size(count)?;
        check_room(inbuf.len(), *position, n, "insize", || {
            format!("unpacking {count} elements of {self:?}")
        })?;
        let input = &inbuf[*position..*position + n];
        // SAFETY: check_buffer proved every byte of the `count` elements
        // lies inside `outbuf`, which cannot overlap `inbuf`.
        unsafe { self.unpack_raw(outbuf.as_mut_ptr(), count, 0, input)? };
        *position += n;
        Ok(())
    }

    /// Copies packed bytes `from .. from + out.len()` of `count` elements
    /// at `inbuf` into `out`.
    ///
    /// # Safety
    /// For every segment of `count` elements (see
    /// [`data_span`](Self::data_span)), `inbuf + offset` must be valid for
    /// reads of its length and not overlap `out`. `inbuf` itself need not
    /// point into the buffer (e.g. `MPI_BOTTOM` with absolute displacements).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Int))?; // int, gap, int
    /// v.commit();
    /// let src = [1i32, -1, 2];
    /// let mut packed = [0u8; 8];
    /// // SAFETY: the data (bytes 0..12) is inside `src`, which does not overlap `packed`.
    /// unsafe { v.pack_raw(src.as_ptr().cast(), 1, 0, &mut packed) }?;
    /// let mut second = [0u8; 4];
    /// // SAFETY: as above; packed bytes 4..8 only.
    /// unsafe { v.pack_raw(src.as_ptr().cast(), 1, 4, &mut second) }?;
    /// assert_eq!(i32::from_ne_bytes(second), 2);
    /// let mut dst = [0i32; 3];
    /// // SAFETY: the data (bytes 0..12) is inside `dst`, which does not overlap `packed`.
    /// unsafe { v.unpack_raw(dst.as_mut_ptr().cast(), 1, 0, &packed) }?;
    /// assert_eq!(dst, [1, 0, 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn pack_raw(
        &self,
        inbuf: *const u8,
        count: usize,
        from: usize,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let to = out.as_mut_ptr();
        let mut segs = self.segments_range(count, from..from.saturating_add(out.len()))?;
        segs.walk(out.len(), |offset, n, at| {
            // SAFETY: the caller vouches for the source; the segments cover
            // exactly `out.len()` bytes.
            unsafe { copy_run(inbuf.wrapping_offset(offset), to.add(at), n) }
        });
        Ok(())
    }

    /// Scatters `input`, the packed bytes `from .. from + input.len()` of
    /// `count` elements, into the buffer at `outbuf`.
    ///
    /// # Safety
    /// For every segment of `count` elements (see
    /// [`data_span`](Self::data_span)), `outbuf + offset` must be valid for
    /// writes of its length and not overlap `input`. `outbuf` itself need
    /// not point into the buffer.
    ///
    /// See the example on [`Datatype::pack_raw`].
    pub unsafe fn unpack_raw(
        &self,
        outbuf: *mut u8,
        count: usize,
        from: usize,
        input: &[u8],
    ) -> Result<(), Error> {
        let from_ptr = input.as_ptr();
        let mut segs = self.segments_range(count, from..from.saturating_add(input.len()))?;
        segs.walk(input.len(), |offset, n, at| {
            // SAFETY: as above, with the roles swapped.
            unsafe { copy_run(from_ptr.add(at), outbuf.wrapping_offset(offset), n) }
        });
        Ok(())
    }
}

/// Checks that `n` bytes fit at `position` in a buffer of `len` bytes.
pub(super) fn check_room(
    len: usize,
    position: usize,
    n: usize,
    arg: &'static str,
    what: impl FnOnce() -> String,
) -> Result<(), Error> {
    if position.checked_add(n).is_some_and(|end| end <= len) {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        arg,
        reason: format!(
            "{} needs {n} bytes at position {position}, but the buffer has {len} bytes",
            what()
        ),
    })
}
