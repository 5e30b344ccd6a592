//! Safe typed-buffer views: `count` elements of a derived datatype laid
//! over a borrowed slice, checked once so that no operation can read or
//! write outside the slice.

use std::marker::PhantomData;

use super::stage::{Placed, Plan};
use super::Datatype;
use crate::buffer::Scalar;
use crate::error::Error;

/// `count` elements of a committed [`Datatype`] over a borrowed slice, to
/// send: what `MPI_Send(buf, count, datatype, ...)` names, made safe.
///
/// The buffer address is the slice's start; every byte the elements touch
/// (`true_lb .. (count-1)*extent + true_lb + true_extent`, whichever way a
/// negative lower bound or extent points) must lie inside the slice, which
/// [`View::new`] checks. Build one with any [`Scalar`] slice (`u8`, `f64`,
/// or a `#[repr(C)]` type of your own with no padding).
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype, View};
/// // A column of a 3x4 row-major matrix of f64.
/// let col = Datatype::vector(3, 1, 4, &Datatype::basic(BasicType::Double))?;
/// col.commit();
/// let m = [0.0f64; 12];
/// let v = View::new(&m[1..], &col, 1)?; // the column starting at m[1]
/// assert_eq!((v.count(), v.packed_len()), (1, 24));
/// assert!(View::new(&m[2..], &col, 2).is_err()); // two columns from m[2] run past the end
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct View<'a> {
    ptr: *const u8,
    dt: Datatype,
    count: usize,
    packed: usize,
    _buf: PhantomData<&'a [u8]>,
}

/// `count` elements of a committed [`Datatype`] over a mutably borrowed
/// slice, to receive into. Checked like [`View`]: no receive can write
/// outside the slice.
///
/// ```
/// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
/// let int = Datatype::basic(BasicType::Int);
/// let every_other = Datatype::vector(4, 1, 2, &int)?;
/// every_other.commit();
/// let mut buf = [0i32; 8];
/// let mut v = ViewMut::new(&mut buf, &every_other, 1)?;
/// assert_eq!(v.packed_len(), 16);
/// let again = v.reborrow(); // e.g. for a non-blocking receive, then reuse `v`
/// assert_eq!(again.count(), 1);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug)]
pub struct ViewMut<'a> {
    ptr: *mut u8,
    dt: Datatype,
    count: usize,
    packed: usize,
    _buf: PhantomData<&'a mut [u8]>,
}

// SAFETY: a View is a shared borrow of Scalar data (Send + Sync) plus a
// Datatype (immutable, behind an Arc).
unsafe impl Send for View<'_> {}
// SAFETY: as above.
unsafe impl Sync for View<'_> {}
// SAFETY: a ViewMut is an exclusive borrow of Scalar data.
unsafe impl Send for ViewMut<'_> {}
// SAFETY: shared access to a ViewMut reads nothing through the pointer.
unsafe impl Sync for ViewMut<'_> {}

/// Checks that `count` elements of `dt` at byte `origin` of a buffer of
/// `len` bytes stay inside it: committed, packed size and span
/// representable, every data byte inside. Returns the packed size.
fn check(dt: &Datatype, len: usize, origin: usize, count: usize) -> Result<usize, Error> {
    dt.committed_flat("datatype")?;
    let packed = dt.pack_size(count)?;
    if origin > len {
        return Err(Error::InvalidArgument {
            arg: "origin",
            reason: format!("byte {origin} is past the end of the {len}-byte buffer"),
        });
    }
    if let Some(span) = dt.data_span(count)? {
        let lo = origin as i128 + span.start as i128;
        let hi = origin as i128 + span.end as i128;
        if lo < 0 || hi > len as i128 {
            return Err(Error::InvalidArgument {
                arg: "buf",
                reason: format!(
                    "{count} elements of {dt:?} from byte {origin} touch bytes {lo}..{hi} \
                     of the buffer, which has {len} bytes"
                ),
            });
        }
    }
    Ok(packed)
}

impl<'a> View<'a> {
    /// `count` elements of `datatype` over `buf` (the buffer address is
    /// `buf`'s start). Fails with [`Error::InvalidDatatype`] when the type
    /// is not committed and [`Error::InvalidArgument`] (naming `buf` or
    /// `count`) when the elements do not fit in `buf`.
    ///
    /// See the example on [`View`].
    pub fn new<T: Scalar>(buf: &'a [T], datatype: &Datatype, count: usize) -> Result<Self, Error> {
        Self::with_origin(buf, 0, datatype, count)
    }

    /// Like [`View::new`] with the buffer address `origin` bytes into
    /// `buf`, for types whose data lies before their address (a negative
    /// lower bound or extent). Fails naming `origin` when it is past the
    /// end of `buf`.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, View};
    /// let int = Datatype::basic(BasicType::Int);
    /// let backwards = Datatype::vector(3, 1, -1, &int)?; // ints at 0, -4, -8
    /// backwards.commit();
    /// let data = [3i32, 2, 1];
    /// assert!(View::new(&data, &backwards, 1).is_err()); // would read before `data`
    /// let v = View::with_origin(&data, 8, &backwards, 1)?; // address at data[2]
    /// assert_eq!(v.packed_len(), 12);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn with_origin<T: Scalar>(
        buf: &'a [T],
        origin: usize,
        datatype: &Datatype,
        count: usize,
    ) -> Result<Self, Error> {
        let packed = check(datatype, std::mem::size_of_val(buf), origin, count)?;
        Ok(View {
            // In bounds: `check` proved origin <= len.
            ptr: buf.as_ptr().cast::<u8>().wrapping_add(origin),
            dt: datatype.clone(),
            count,
            packed,
            _buf: PhantomData,
        })
    }

    /// The datatype.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, View};
    /// let d = Datatype::basic(BasicType::Float);
    /// let data = [1.0f32; 3];
    /// let v = View::new(&data, &d, 3)?;
    /// assert!(v.datatype().same(&d));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn datatype(&self) -> &Datatype {
        &self.dt
    }

    /// Number of elements of the datatype.
    ///
    /// See the example on [`View`].
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes that travel: `count * datatype.size()`.
    ///
    /// See the example on [`View`].
    pub fn packed_len(&self) -> usize {
        self.packed
    }

    /// How the elements move (cannot fail for a checked view, but says
    /// why if it did).
    pub(crate) fn plan(&self) -> Result<Plan, Error> {
        Plan::new(&self.dt, self.ptr, self.count)
    }

    /// The elements as a [`Placed`] (for collectives).
    pub(crate) fn placed(&self) -> Placed {
        Placed {
            dt: self.dt.clone(),
            buf: self.ptr as usize,
            count: self.count,
            len: self.packed,
        }
    }
}

impl<'a> ViewMut<'a> {
    /// `count` elements of `datatype` over `buf`, checked as in
    /// [`View::new`].
    ///
    /// See the example on [`ViewMut`].
    pub fn new<T: Scalar>(
        buf: &'a mut [T],
        datatype: &Datatype,
        count: usize,
    ) -> Result<Self, Error> {
        Self::with_origin(buf, 0, datatype, count)
    }

    /// [`ViewMut::new`] with the buffer address `origin` bytes into `buf`,
    /// checked as in [`View::with_origin`].
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
    /// let int = Datatype::basic(BasicType::Int);
    /// let before = Datatype::hindexed(&[1], &[-4], &int)?; // one int just before the address
    /// before.commit();
    /// let mut data = [0i32; 2];
    /// assert!(ViewMut::with_origin(&mut data, 0, &before, 1).is_err());
    /// assert!(ViewMut::with_origin(&mut data, 4, &before, 1).is_ok()); // writes data[0]
    /// assert!(ViewMut::with_origin(&mut data, 12, &before, 1).is_err()); // origin past the end
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn with_origin<T: Scalar>(
        buf: &'a mut [T],
        origin: usize,
        datatype: &Datatype,
        count: usize,
    ) -> Result<Self, Error> {
        let packed = check(datatype, std::mem::size_of_val(buf), origin, count)?;
        Ok(ViewMut {
            // In bounds: `check` proved origin <= len.
            ptr: buf.as_mut_ptr().cast::<u8>().wrapping_add(origin),
            dt: datatype.clone(),
            count,
            packed,
            _buf: PhantomData,
        })
    }

    /// The same elements, borrowed from this view for a shorter time (hand
    /// it to a non-blocking receive and use `self` again afterwards).
    ///
    /// See the example on [`ViewMut`].
    pub fn reborrow(&mut self) -> ViewMut<'_> {
        ViewMut {
            ptr: self.ptr,
            dt: self.dt.clone(),
            count: self.count,
            packed: self.packed,
            _buf: PhantomData,
        }
    }

    /// The same elements as a read-only view (to send from them).
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
    /// let d = Datatype::basic(BasicType::Int);
    /// let mut data = [1i32, 2];
    /// let v = ViewMut::new(&mut data, &d, 2)?;
    /// assert_eq!(v.as_view().packed_len(), 8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn as_view(&self) -> View<'_> {
        View {
            ptr: self.ptr,
            dt: self.dt.clone(),
            count: self.count,
            packed: self.packed,
            _buf: PhantomData,
        }
    }

    /// The datatype.
    ///
    /// See the example on [`View::datatype`].
    pub fn datatype(&self) -> &Datatype {
        &self.dt
    }

    /// Number of elements of the datatype.
    ///
    /// See the example on [`ViewMut`].
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes that travel: `count * datatype.size()`.
    ///
    /// See the example on [`ViewMut`].
    pub fn packed_len(&self) -> usize {
        self.packed
    }

    /// How the elements move.
    pub(crate) fn plan(&self) -> Result<Plan, Error> {
        Plan::new(&self.dt, self.ptr, self.count)
    }

    /// The elements as a [`Placed`] (for collectives).
    pub(crate) fn placed(&self) -> Placed {
        self.as_view().placed()
    }
}

#[cfg(test)]
mod tests;
