//! Staging: how `count` elements of a datatype at an address move through
//! the runtime's entry points, shared by the Rust API's views
//! ([`View`](super::View), [`ViewMut`](super::ViewMut)) and the C ABI.
//!
//! A contiguous type (one run of data per element, no gaps) moves in
//! place: [`Plan::Bytes`], the buffer address plus the type's true lower
//! bound. Any other type is [`Plan::Typed`]: point-to-point moves it
//! without a temporary (the engine packs each packet straight from the
//! layout and unpacks each arriving one straight into it, with a
//! [`Cursor`](super::Cursor); see `Comm::isend_plan` / `Comm::irecv_plan`).
//! Collectives, which run on bytes, pack such buffers into temporaries
//! before they start and unpack them when they complete ([`CollStage`]).
//! What travels is always the packed bytes (`count * size`), so status
//! counts are in packed bytes and [`Datatype::get_count`] /
//! [`Datatype::get_elements`] read them.
//!
//! Everything here works on raw addresses: the caller vouches that the
//! buffer holds the elements (the views check it once, when built).
//! [`staged_bytes`] counts what went through temporaries, so tests can
//! tell which paths copied.
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
//! // Not contiguous: moved through its layout.
//! let Plan::Typed(p) = Plan::new(&every_other, buf.as_ptr().cast(), 1)? else { panic!() };
//! assert_eq!(p.len, 8);
//! # Ok::<(), oxmpi::Error>(())
//! ```

mod coll;
mod device;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub use coll::{CollStage, Dir};

use super::Datatype;
use crate::error::Error;

/// Bytes packed into or unpacked from temporaries by this process.
static STAGED: AtomicU64 = AtomicU64::new(0);

/// Bytes this process has packed into or unpacked from staging
/// temporaries so far ([`Placed::pack_into`], [`Placed::unpack`]: the
/// collectives' [`CollStage`], buffered sends' copies). Point-to-point
/// with a non-contiguous type adds nothing: it packs and unpacks in
/// flight. For tests and diagnostics.
///
/// ```
/// use oxmpi::datatype::stage::{staged_bytes, Placed};
/// use oxmpi::datatype::{BasicType, Datatype};
/// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Byte))?;
/// v.commit();
/// let before = staged_bytes();
/// // SAFETY: the buffer holds the element.
/// let packed = unsafe { Placed::new(&v, b"a-b".as_ptr(), 1)?.pack() }?;
/// assert_eq!(packed, b"ab");
/// assert!(staged_bytes() >= before + 2); // other threads may stage too
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn staged_bytes() -> u64 {
    STAGED.load(Relaxed)
}

fn count_staged(n: usize) {
    STAGED.fetch_add(n as u64, Relaxed);
}

/// `count` elements of a committed type at a raw address (which may be
/// `MPI_BOTTOM`, with absolute displacements): a non-contiguous buffer,
/// moved through its layout or packed from and unpacked into.
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

    /// Whether the elements are in CUDA device memory (false at once when
    /// no driver is active).
    ///
    /// ```
    /// use oxmpi::datatype::stage::Placed;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let x = [0u8; 4];
    /// let p = Placed::new(&Datatype::basic(BasicType::Byte), x.as_ptr(), 4)?;
    /// assert!(!p.on_device());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub fn on_device(&self) -> bool {
        device::on_device(self)
    }

    /// Runs `f` with a host address laid out as the buffer, for CPU code
    /// over the type's layout (external32 conversion): the buffer itself,
    /// or for device memory a host copy of the bytes the elements touch,
    /// copied back afterwards (gaps as they were read) when `write_back`.
    ///
    /// # Safety
    /// The buffer holds the elements; `f` stays inside the bytes they touch.
    ///
    /// ```
    /// use oxmpi::datatype::stage::Placed;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let x = [5u8; 4];
    /// let p = Placed::new(&Datatype::basic(BasicType::Byte), x.as_ptr(), 4)?;
    /// // SAFETY: `x` holds the elements; `f` only compares the address.
    /// let same = unsafe { p.on_host(false, |base| Ok(base.cast_const() == x.as_ptr())) }?;
    /// assert!(same); // host memory: no copy
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn on_host<R>(
        &self,
        write_back: bool,
        f: impl FnOnce(*mut u8) -> Result<R, Error>,
    ) -> Result<R, Error> {
        if device::on_device(self) {
            // SAFETY: the caller's contract.
            return unsafe { device::through_shadow(self, write_back, f) };
        }
        f(self.buf as *mut u8)
    }

    /// A [`Cursor`](super::Cursor) at the start of the elements' packed
    /// stream (what point-to-point moves a typed buffer with).
    ///
    /// ```
    /// use oxmpi::datatype::stage::Placed;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Byte))?;
    /// v.commit();
    /// let src = *b"a-b";
    /// let mut c = Placed::new(&v, src.as_ptr(), 1)?.cursor()?;
    /// let mut out = [0u8; 2];
    /// // SAFETY: `src` holds the element.
    /// assert_eq!(unsafe { c.pack(&mut out) }, 2);
    /// assert_eq!(&out, b"ab");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn cursor(&self) -> Result<super::Cursor, Error> {
        super::Cursor::new(&self.dt, self.buf as *const u8, self.count)
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
        count_staged(out.len());
        if device::on_device(self) {
            // SAFETY: the caller's contract.
            return unsafe { device::pack_into(self, out) };
        }
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
        count_staged(n);
        if device::on_device(self) {
            // SAFETY: the caller's contract.
            return unsafe { device::unpack(self, &tmp[..n]) };
        }
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
#[derive(Debug, Clone)]
pub enum Plan {
    /// One run of `len` bytes at `ptr`: the data in place.
    Bytes {
        /// First byte (the buffer address plus the type's true lower bound).
        ptr: *mut u8,
        /// Bytes.
        len: usize,
    },
    /// Not contiguous: moved through its layout (point-to-point) or
    /// through temporaries ([`CollStage`]).
    Typed(Placed),
}

// SAFETY: a plan is addresses and a datatype (immutable, shared through
// an Arc); only `unsafe` code whose callers vouch for the buffer ever
// dereferences the addresses, from whichever thread runs the operation.
unsafe impl Send for Plan {}
// SAFETY: as above; nothing in a plan is written through `&Plan`.
unsafe impl Sync for Plan {}

impl Plan {
    /// The plan for `count` elements of `dt` at `buf`: in place when the
    /// type is contiguous, typed otherwise. Fails when `dt` is not
    /// committed or the packed size overflows.
    ///
    /// See the example on the [module](self).
    pub fn new(dt: &Datatype, buf: *const u8, count: usize) -> Result<Plan, Error> {
        let placed = Placed::new(dt, buf, count)?;
        if !dt.is_contiguous() {
            return Ok(Plan::Typed(placed));
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

    /// Packed bytes the elements hold.
    ///
    /// ```
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let v = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Short))?;
    /// v.commit();
    /// assert_eq!(Plan::new(&v, [0i16; 5].as_ptr().cast(), 1)?.len(), 6);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Plan::Bytes { len, .. } => *len,
            Plan::Typed(p) => p.len,
        }
    }

    /// Whether the elements hold no data.
    ///
    /// ```
    /// use oxmpi::datatype::stage::Plan;
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// let d = Datatype::basic(BasicType::Double);
    /// assert!(Plan::new(&d, std::ptr::null(), 0)?.is_empty());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
