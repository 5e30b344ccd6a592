//! Point-to-point with derived datatypes (Rust API): sends and receives
//! of [`View`] / [`ViewMut`]s. A contiguous type moves straight from and
//! into the borrowed slice; any other is packed in flight, straight from
//! the slice into the transport, and unpacked straight from the transport
//! into the slice, with no temporary (the typed paths of
//! [`Comm::isend_plan`] / [`Comm::irecv_plan`], shared with the C ABI).
//! What travels is the packed bytes, so a view matches any buffer with the
//! same type signature on the other side (a column against a contiguous
//! array of the same length, say), and [`Status::count_in`] /
//! [`Status::elements_in`] read the receive's status against a datatype.

use super::Comm;
use crate::datatype::{View, ViewMut};
use crate::error::Error;
use crate::request::Request;
use crate::status::Status;

impl Comm {
    /// Blocking send of a view (`MPI_Send` with a datatype).
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Column 0 of a 4x4 row-major matrix, to a contiguous array.
    /// let col = Datatype::vector(4, 1, 4, &Datatype::basic(BasicType::Double))?;
    /// col.commit();
    /// let me = world.rank();
    /// let m: Vec<f64> = (0..16).map(f64::from).collect();
    /// world.send_view(&View::new(&m, &col, 1)?, me, 0)?; // to itself: eager
    /// let mut got = [0.0f64; 4];
    /// world.recv(&mut got, me, 0)?;
    /// assert_eq!(got, [0.0, 4.0, 8.0, 12.0]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn send_view(&self, buf: &View<'_>, dest: i32, tag: i32) -> Result<(), Error> {
        // SAFETY: the view's slice holds every byte of its elements
        // (checked when it was built) and is borrowed for the whole call.
        unsafe { self.send_plan(&buf.plan()?, dest, tag, false) }
    }

    /// Blocking synchronous send of a view (`MPI_Ssend` with a datatype):
    /// returns once the receiver matched it.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let pairs = Datatype::contiguous(2, &Datatype::basic(BasicType::Int))?;
    /// pairs.commit();
    /// if world.rank() == 0 && world.size() > 1 {
    ///     world.ssend_view(&View::new(&[1i32, 2, 3, 4], &pairs, 2)?, 1, 0)?;
    /// } else if world.rank() == 1 {
    ///     let mut buf = [0i32; 4];
    ///     world.recv_view(&mut ViewMut::new(&mut buf, &pairs, 2)?, 0, 0)?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ssend_view(&self, buf: &View<'_>, dest: i32, tag: i32) -> Result<(), Error> {
        // SAFETY: as in `send_view`.
        unsafe { self.send_plan(&buf.plan()?, dest, tag, true) }
    }

    /// Blocking receive into a view (`MPI_Recv` with a datatype). The
    /// status counts packed bytes: read it with [`Status::count_in`]. A
    /// longer message gives [`Error::Truncated`], with what fitted
    /// stored.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let d = Datatype::basic(BasicType::Double);
    /// let col = Datatype::vector(3, 1, 3, &d)?; // a column of a 3x3 matrix
    /// col.commit();
    /// let me = world.rank();
    /// world.send(&[1.0f64, 2.0, 3.0], me, 0)?;
    /// let mut m = [0.0f64; 9];
    /// let st = world.recv_view(&mut ViewMut::new(&mut m[2..], &col, 1)?, me, 0)?; // last column
    /// assert_eq!((m[2], m[5], m[8]), (1.0, 2.0, 3.0));
    /// assert_eq!((st.count_in(&col), st.elements_in(&col)), (Some(1), Some(3)));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn recv_view(&self, buf: &mut ViewMut<'_>, source: i32, tag: i32) -> Result<Status, Error> {
        // SAFETY: the view's slice holds every byte of its elements
        // (checked when it was built) and is borrowed for the whole call.
        unsafe { self.recv_plan(&buf.plan()?, source, tag) }
    }

    /// Non-blocking send of a view (`MPI_Isend` with a datatype): the
    /// request borrows the view's slice until it completes (a
    /// non-contiguous type is packed from it as the data goes out).
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let every_other = Datatype::vector(4, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// every_other.commit();
    /// let me = world.rank();
    /// let data = [1i32, 0, 2, 0, 3, 0, 4, 0];
    /// let send = world.isend_view(&View::new(&data, &every_other, 1)?, me, 0)?;
    /// let mut got = [0i32; 4];
    /// world.recv(&mut got, me, 0)?;
    /// send.wait()?;
    /// assert_eq!(got, [1, 2, 3, 4]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn isend_view<'a>(
        &self,
        buf: &View<'a>,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>, Error> {
        self.start_send_view(buf, dest, tag, false)
    }

    /// Non-blocking synchronous send of a view (`MPI_Issend` with a
    /// datatype): completes once matched.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let d = Datatype::basic(BasicType::Int);
    /// let me = world.rank();
    /// let data = [me; 2];
    /// let req = world.issend_view(&View::new(&data, &d, 2)?, me, 0)?;
    /// world.recv(&mut [0i32; 2], me, 0)?;
    /// req.wait()?; // matched
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn issend_view<'a>(
        &self,
        buf: &View<'a>,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>, Error> {
        self.start_send_view(buf, dest, tag, true)
    }

    fn start_send_view<'a>(
        &self,
        buf: &View<'a>,
        dest: i32,
        tag: i32,
        sync: bool,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the view's slice holds its elements and is borrowed for
        // 'a, the request's lifetime.
        unsafe { self.isend_plan(&buf.plan()?, dest, tag, sync) }
    }

    /// Non-blocking receive into a view (`MPI_Irecv` with a datatype): the
    /// request holds the view (pass [`ViewMut::reborrow`] to keep it); a
    /// non-contiguous type is unpacked into it as the data arrives.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let every_other = Datatype::vector(3, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// every_other.commit();
    /// let me = world.rank();
    /// let mut buf = [0i32; 5];
    /// let mut v = ViewMut::new(&mut buf, &every_other, 1)?;
    /// let r = world.irecv_view(v.reborrow(), me, 0)?;
    /// world.send(&[7i32, 8, 9], me, 0)?;
    /// assert_eq!(r.wait()?.count_in(&every_other), Some(1));
    /// assert_eq!(buf, [7, 0, 8, 0, 9]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn irecv_view<'a>(
        &self,
        buf: ViewMut<'a>,
        source: i32,
        tag: i32,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the view's slice holds its elements and is borrowed
        // mutably for 'a, the request's lifetime.
        unsafe { self.irecv_plan(&buf.plan()?, source, tag) }
    }

    /// Sends one view and receives into another in one call
    /// (`MPI_Sendrecv` with datatypes), deadlock-free.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// let int = Datatype::basic(BasicType::Int);
    /// let col = Datatype::vector(2, 1, 2, &int)?; // a column of a 2x2 matrix
    /// col.commit();
    /// let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    /// let mut m = [me, -1, me, -1];
    /// let out = [me, me];
    /// let mut into = ViewMut::new(&mut m[1..], &col, 1)?; // column 1
    /// world.sendrecv_view(&View::new(&out, &int, 2)?, right, 0, &mut into, left, 0)?;
    /// assert_eq!((m[1], m[3]), (left, left));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv_view(
        &self,
        send: &View<'_>,
        dest: i32,
        sendtag: i32,
        recv: &mut ViewMut<'_>,
        source: i32,
        recvtag: i32,
    ) -> Result<Status, Error> {
        let r = self.irecv_view(recv.reborrow(), source, recvtag)?;
        let s = match self.isend_view(send, dest, sendtag) {
            Ok(s) => s,
            Err(e) => {
                // Nothing will be sent: do not wait for a reply forever.
                r.cancel();
                drop(r);
                return Err(e);
            }
        };
        let sent = s.wait();
        let received = r.wait();
        sent.and(received)
    }
}
