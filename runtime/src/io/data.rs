//! The memory side of an access: a program's buffer (address, count,
//! datatype) as the byte stream a view reads or writes, in the view's data
//! representation. A contiguous buffer in the native representation is
//! used in place; anything else goes through a packed temporary
//! (external32 converts each basic element on the way).

use std::borrow::Cow;

use crate::datatype::Datatype;
use crate::error::Error;
use crate::status::{Status, ANY_SOURCE, ANY_TAG};

use super::view::Datarep;

/// A program's buffer: `count` elements of `dt` at `addr`.
#[derive(Debug, Clone)]
pub struct Buf {
    /// The buffer's address (as `MPI_File_read`'s `buf`).
    pub addr: usize,
    /// How many elements.
    pub count: usize,
    /// Their committed type.
    pub dt: Datatype,
}

impl Buf {
    /// Bytes of the stream the buffer is, in representation `rep`.
    pub fn stream_len(&self, rep: Datarep) -> Result<usize, Error> {
        match rep {
            Datarep::External32 => self.dt.external32_size(self.count),
            _ => self.dt.pack_size(self.count),
        }
    }

    fn in_place(&self, rep: Datarep) -> bool {
        rep != Datarep::External32 && self.dt.is_contiguous()
    }

    fn start(&self) -> *mut u8 {
        (self.addr as *mut u8).wrapping_offset(self.dt.true_lb())
    }

    /// The bytes to write.
    ///
    /// # Safety
    /// The buffer holds `count` elements of its type, readable, and is not
    /// written while the result lives.
    pub unsafe fn outgoing(&self, rep: Datarep) -> Result<Cow<'_, [u8]>, Error> {
        let n = self.stream_len(rep)?;
        if n == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        if self.in_place(rep) {
            // SAFETY: the caller's contract; a contiguous type's data is
            // the `n` bytes from its true lower bound.
            return Ok(Cow::Borrowed(unsafe {
                std::slice::from_raw_parts(self.start(), n)
            }));
        }
        let mut out = vec![0u8; n];
        let src = self.addr as *const u8;
        // SAFETY: the caller's contract.
        unsafe {
            match rep {
                Datarep::External32 => self.dt.pack_external32_raw(src, self.count, &mut out)?,
                _ => self.dt.pack_raw(src, self.count, 0, &mut out)?,
            }
        }
        Ok(Cow::Owned(out))
    }

    /// Runs `read` on the place the stream is read into (the program's
    /// memory itself when possible), then stores what it read into the
    /// buffer. `read` returns the bytes it filled, from the start; the
    /// result is a status counting them in native bytes.
    ///
    /// # Safety
    /// The buffer holds `count` elements of its type, writable.
    pub unsafe fn incoming(
        &self,
        rep: Datarep,
        read: impl FnOnce(&mut [u8]) -> Result<usize, Error>,
    ) -> Result<Status, Error> {
        let n = self.stream_len(rep)?;
        if n == 0 {
            // Still called: a collective read takes part with nothing to read.
            read(&mut [])?;
            return Ok(file_status(0));
        }
        if self.in_place(rep) {
            // SAFETY: the caller's contract, as in `outgoing`.
            let dst = unsafe { std::slice::from_raw_parts_mut(self.start(), n) };
            return Ok(file_status(read(dst)?));
        }
        let mut tmp = vec![0u8; n];
        let got = read(&mut tmp)?;
        let dst = self.addr as *mut u8;
        let native = match rep {
            Datarep::External32 => {
                // Whole elements only: external32 converts element by element.
                let per = self.dt.external32_size(1)?;
                let whole = got.checked_div(per).unwrap_or(0);
                // SAFETY: the caller's contract.
                unsafe {
                    self.dt
                        .unpack_external32_raw(dst, whole, &tmp[..whole * per])?
                };
                whole * self.dt.size()
            }
            _ => {
                // SAFETY: the caller's contract.
                unsafe { self.dt.unpack_raw(dst, self.count, 0, &tmp[..got])? };
                got
            }
        };
        Ok(file_status(native))
    }
}

/// The status of a file access that moved `bytes` bytes.
pub fn file_status(bytes: usize) -> Status {
    Status {
        source: ANY_SOURCE,
        tag: ANY_TAG,
        count: bytes,
        cancelled: false,
        truncated_from: None,
    }
}
