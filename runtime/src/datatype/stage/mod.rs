//! Staging: how `count` elements of a datatype at an address move through
//! the runtime's byte-level entry points, shared by the Rust API's views
//! ([`View`](super::View), [`ViewMut`](super::ViewMut)) and the C ABI.
//!
//! A contiguous type (one run of data per element, no gaps) moves in
//! place: [`Plan::Bytes`], the buffer address plus the type's true lower
//! bound. Any other type is packed into a temporary before a send and
//! received into a temporary that is unpacked into the buffer once the
//! receive completes ([`Plan::Packed`]). What travels is always the packed
//! bytes (`count * size`), so status counts are in packed bytes and
//! [`Datatype::get_count`] / [`Datatype::get_elements`] read them.
//!
//! Everything here works on raw addresses: the caller vouches that the
//! buffer holds the elements (the views check it once, when built).
//! Collectives stage several buffers at once with [`CollStage`].
//!
//! ```
//! use oxmpi::datatype::stage::Plan;
//! use oxmpi::datatype::{BasicType, Datatype};
//! let int = Datatype::basic(BasicType::Int);
//! let pair = Datatype::contiguous(2, &int)?;
//! pair.commit();
//! let buf = [1i32, 2, 3, 4];
//! // Contiguous: the bytes in place, no copy.
//! let Plan::Bytes { ptr, len } = Plan::new(&pair, buf.as_ptr().cast(), 2)? else { panic!() };
//! assert_eq!((ptr.cast_const(), len), (buf.as_ptr().cast::<u8>(), 16));
//! let every_other = Datatype::vector(2, 1, 2, &int)?;
//! every_other.commit();
//! // Not contiguous: packed through a temporary.
//! assert!(matches!(Plan::new(&every_other, buf.as_ptr().cast(), 1)?, Plan::Packed(_)));
//! # Ok::<(), oxmpi::Error>(())
//! ```

mod coll;

pub use coll::{CollStage, Dir};

use super::Datatype;
use crate::error::Error;
use crate::status::Status;

/// `count` elements of a committed type at a raw address (which may be
/// `MPI_BOTTOM`, with absolute displacements): what a non-contiguous
/// buffer is packed from and unpacked into.
///
/// ```
/// use oxmpi::datatype::stage::Placed;
/// use oxmpi::datatype::{BasicType, Datatype};
/// let v = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Byte))?;
/// v.commit();
/// let mut buf = *b"a-b-c";
/// let p = Placed::new(&v, buf.as_mut_ptr(), 1)?;
/// // SAFETY: `buf` holds the element (bytes 0..5).
/// let packed = unsafe { p.pack() }?;
/// assert_eq!(packed, b"abc");
/// // SAFETY: as above; `buf` is not borrowed elsewhere.
/// unsafe { p.unpack(b"xyz", 2) }?; // a short message fills the first bytes only
/// assert_eq!(&buf, b"x-y-c");
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Placed {
    /// The (committed) type.
    pub dt: Datatype,
    /// The buffer address.
    pub buf: usize,
    /// Elements.
    pub count: usize,
    /// Packed bytes (`count * dt.size()`).
    pub len: usize,
}

impl Placed {
    /// `count` elements of `dt` at `buf`; fails when `dt` is not committed
    /// or the packed size overflows.
    ///
    /// See the example on [`Placed`].
    pub fn new(dt: &Datatype, buf: *const u8, count: usize) -> Result<Placed, Error> {
        dt.committed_flat("datatype")?;
        Ok(Placed {
            dt: dt.clone(),
            buf: buf as usize,
            count,
            len: dt.pack_size(count)?,
        })
    }

    /// Packs the elements into a new buffer of [`len`](Self::len) bytes.
    ///
    /// # Safety
    /// The buffer holds the elements.
    ///
    /// See the example on [`Placed`].
    pub unsafe fn pack(&self) -> Result<Vec<u8>, Error> {
        let mut out = vec![0u8; self.len];
        // SAFETY: the caller's contract.
        unsafe { self.pack_into(&mut out) }?;
        Ok(out)
    }

    /// Packs the elements into `out` (of [`len`](Self::len) bytes).
    ///
    /// # Safety
    /// The buffer holds the elements and does not overlap `out`.
    ///
    /// See the example on [`CollStage`].
    pub unsafe fn pack_into(&self, out: &mut [u8]) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.dt.pack_raw(self.buf as *const u8, self.count, 0, out) }
    }

    /// Unpacks the first `bytes` packed bytes of `tmp` into the buffer (a
    /// short message fills the leading elements only).
    ///
    /// # Safety
    /// The buffer has room for the elements and does not overlap `tmp`.
    ///
    /// See the example on [`Placed`].
    pub unsafe fn unpack(&self, tmp: &[u8], bytes: usize) -> Result<(), Error> {
        let n = bytes.min(tmp.len()).min(self.len);
        // SAFETY: the caller's contract.
        unsafe {
            self.dt
                .unpack_raw(self.buf as *mut u8, self.count, 0, &tmp[..n])
        }
    }
}

/// How `count` elements of a type at an address move.
///
/// See the example on the [module](self).
#[derive(Debug)]
pub enum Plan {
    /// One run of `len` bytes at `ptr`: the data in place.
    Bytes {
        /// First byte (the buffer address plus the type's true lower bound).
        ptr: *mut u8,
        /// Bytes.
        len: usize,
    },
    /// Packed through a temporary buffer.
    Packed(Placed),
}

impl Plan {
    /// The plan for `count` elements of `dt` at `buf`: in place when the
    /// type is contiguous, packed otherwise. Fails when `dt` is not
    /// committed or the packed size overflows.
    ///
    /// See the example on the [module](self).
    pub fn new(dt: &Datatype, buf: *const u8, count: usize) -> Result<Plan, Error> {
        let placed = Placed::new(dt, buf, count)?;
        if !dt.is_contiguous() {
            return Ok(Plan::Packed(placed));
        }
        let ptr = if placed.len == 0 {
            buf
        } else {
            buf.wrapping_offset(dt.true_lb())
        };
        Ok(Plan::Bytes {
            ptr: ptr.cast_mut(),
            len: placed.len,
        })
    }

    /// The bytes to send (packing if needed).
    ///
    /// # Safety
    /// The buffer holds the elements.
    ///
    /// ```
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Short))?;
    /// v.commit();
    /// let buf = [7i16, -1, 8];
    /// // SAFETY: `buf` holds one element (bytes 0..6).
    /// let d = unsafe { Plan::new(&v, buf.as_ptr().cast(), 1)?.send_data() }?;
    /// assert_eq!(d.len, 4);
    /// assert_eq!(d.owned.as_deref(), Some(&[7, 0, 8, 0][..])); // the packed copy
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub unsafe fn send_data(self) -> Result<SendData, Error> {
        Ok(match self {
            Plan::Bytes { ptr, len } => SendData {
                ptr: ptr.cast_const(),
                len,
                owned: None,
            },
            Plan::Packed(p) => {
                // SAFETY: the caller's contract.
                let v = unsafe { p.pack() }?;
                SendData {
                    ptr: v.as_ptr(),
                    len: v.len(),
                    owned: Some(v),
                }
            }
        })
    }

    /// Where to receive: the buffer in place, or a temporary to unpack.
    ///
    /// ```
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Byte))?;
    /// v.commit();
    /// let mut buf = *b"...";
    /// let t = Plan::new(&v, buf.as_mut_ptr(), 1)?.recv_target();
    /// assert_eq!(t.cap, 2);
    /// // SAFETY: `t.ptr` is the temporary's, of `t.cap` bytes; as a transport would.
    /// unsafe { std::ptr::copy_nonoverlapping(b"ab".as_ptr(), t.ptr, 2) };
    /// let done = oxmpi::Status { source: 0, tag: 0, count: 2, cancelled: false, truncated_from: None };
    /// // SAFETY: `buf` holds the element and is not borrowed elsewhere.
    /// unsafe { t.finish(Ok(done)) }?;
    /// assert_eq!(&buf, b"a.b");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub fn recv_target(self) -> RecvTarget {
        match self {
            Plan::Bytes { ptr, len } => RecvTarget {
                ptr,
                cap: len,
                unpack: None,
            },
            Plan::Packed(p) => {
                let mut tmp = vec![0u8; p.len];
                RecvTarget {
                    ptr: tmp.as_mut_ptr(),
                    cap: tmp.len(),
                    unpack: Some(Unpack { placed: p, tmp }),
                }
            }
        }
    }
}

/// Data ready to send: `len` bytes at `ptr`, owned by `owned` if packed.
///
/// See the example on [`Plan::send_data`].
pub struct SendData {
    /// First byte.
    pub ptr: *const u8,
    /// Bytes.
    pub len: usize,
    /// The packed copy `ptr` points into (keep it until the send completes).
    pub owned: Option<Vec<u8>>,
}

/// Where a receive lands.
///
/// See the example on [`Plan::recv_target`].
pub struct RecvTarget {
    /// First byte.
    pub ptr: *mut u8,
    /// Capacity in bytes.
    pub cap: usize,
    /// For packed types: the temporary `ptr` points into, and where to
    /// unpack it.
    pub unpack: Option<Unpack>,
}

impl RecvTarget {
    /// Completes a receive into this target: unpacks a staged one, keeping
    /// the receive's outcome.
    ///
    /// # Safety
    /// The receive has completed and the buffer has room for the elements.
    ///
    /// See the example on [`Plan::recv_target`].
    #[inline]
    pub unsafe fn finish(&self, r: Result<Status, Error>) -> Result<Status, Error> {
        match &self.unpack {
            // SAFETY: the caller's contract.
            Some(u) => unsafe { u.finish(r) },
            None => r,
        }
    }
}

/// A receive's temporary buffer and where it goes.
///
/// See the example on [`Plan::recv_target`].
pub struct Unpack {
    /// The program's buffer.
    pub placed: Placed,
    /// The temporary (its heap block never moves).
    pub tmp: Vec<u8>,
}

impl Unpack {
    /// Unpacks what a completed receive stored (the status's byte count,
    /// also on truncation), keeping its outcome.
    ///
    /// # Safety
    /// The buffer has room for the elements.
    ///
    /// See the example on [`Plan::recv_target`].
    pub unsafe fn finish(&self, r: Result<Status, Error>) -> Result<Status, Error> {
        let got = match &r {
            Ok(s) | Err(Error::Truncated { status: s, .. }) => s.count,
            Err(_) => 0,
        };
        if got > 0 {
            // SAFETY: the caller's contract.
            unsafe { self.placed.unpack(&self.tmp, got) }?;
        }
        r
    }
}

/// The temporaries of one non-blocking operation, kept with its request
/// and released when it completes.
///
/// ```
/// use oxmpi::datatype::stage::{Plan, Staging};
/// use oxmpi::datatype::{BasicType, Datatype};
/// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Byte))?;
/// v.commit();
/// let mut buf = *b"...";
/// let t = Plan::new(&v, buf.as_mut_ptr(), 1)?.recv_target();
/// // SAFETY: as a transport would: the temporary has `t.cap` bytes.
/// unsafe { std::ptr::copy_nonoverlapping(b"xy".as_ptr(), t.ptr, 2) };
/// let stage = Staging::Recv(t.unpack.expect("not contiguous"));
/// let done = oxmpi::Status { source: 0, tag: 0, count: 2, cancelled: false, truncated_from: None };
/// // SAFETY: the receive completed; `buf` has room for the element.
/// assert_eq!(unsafe { stage.finish(Ok(done)) }?.count, 2);
/// assert_eq!(&buf, b"x.y");
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub enum Staging {
    /// A send's packed copy.
    Send(Vec<u8>),
    /// A receive, unpacked at completion.
    Recv(Unpack),
    /// A collective's temporaries, unpacked at completion.
    Coll(CollStage),
}

// SAFETY: the raw addresses in a stage are the program's buffers, which
// the operation owns until it completes; MPI lets any thread complete it.
unsafe impl Send for Staging {}

impl Staging {
    /// The operation completed with `r`: unpacks what it received and
    /// returns its outcome (an unpacking error if one occurs).
    ///
    /// # Safety
    /// The program's buffers are still there, and not borrowed elsewhere.
    ///
    /// See the example on [`Staging`].
    pub unsafe fn finish(&self, r: Result<Status, Error>) -> Result<Status, Error> {
        match self {
            Staging::Send(_) => r,
            // SAFETY: the caller's contract.
            Staging::Recv(u) => unsafe { u.finish(r) },
            // SAFETY: the caller's contract.
            Staging::Coll(c) => unsafe { c.complete(r) },
        }
    }
}
