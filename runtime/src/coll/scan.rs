//! Scan and exscan: prefix reductions in rank order.

use super::algos::scan::{linear, recursive_doubling};
use super::blocks::same_len;
use super::sched::Schedule;
use super::select::Coll;
use super::Elems;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::Op;
use crate::request::Request;

impl Comm {
    /// Starts an inclusive scan (`MPI_Iscan`): rank r's `recv` gets
    /// `send_0 op send_1 op ... op send_r`. `send` is `None` for
    /// `MPI_IN_PLACE` (the input is in `recv`).
    ///
    /// # Safety
    /// `send` readable and `recv` writable for `e.bytes()` bytes until the
    /// request completes.
    pub unsafe fn iscan_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        self.scan_common(Coll::Scan, send, recv, e, op)
    }

    /// Starts an exclusive scan (`MPI_Iexscan`): rank r > 0's `recv` gets
    /// `send_0 op ... op send_{r-1}`; rank 0's `recv` is left untouched
    /// (MPI leaves it undefined). `send` is `None` for `MPI_IN_PLACE`.
    ///
    /// # Safety
    /// As for [`Comm::iscan_raw`].
    pub unsafe fn iexscan_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        self.scan_common(Coll::Exscan, send, recv, e, op)
    }

    unsafe fn scan_common(
        &self,
        coll: Coll,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        let f = op.reducer(e.ty)?;
        let n = e.bytes();
        let mut s = Schedule::new();
        let out = Schedule::user(recv, n);
        let input = send
            .filter(|&p| !std::ptr::eq(p, recv))
            .map(|p| Schedule::user(p as *mut u8, n));
        let exclusive = coll == Coll::Exscan;
        let ctx = self.coll_ctx();
        let commutative = op.is_commutative();
        match self.pick(coll, n, commutative).name {
            "linear" => linear::build(&ctx, &mut s, input, out, &f, exclusive, &[]),
            _ => {
                recursive_doubling::build(&ctx, &mut s, input, out, &f, commutative, exclusive, &[])
            }
        };
        Ok(self.start(s))
    }

    /// Inclusive prefix reduction in rank order (`MPI_Scan`): rank r's
    /// `recv` gets `send_0 op send_1 op ... op send_r`. Non-commutative
    /// operations are combined in rank order.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::ops::Op;
    /// let mut upto = [0u64];
    /// world.scan(&[1u64], &mut upto, &Op::SUM)?;
    /// assert_eq!(upto[0], world.rank() as u64 + 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scan<T: Scalar>(&self, send: &[T], recv: &mut [T], op: &Op) -> Result<(), Error> {
        self.iscan(send, recv, op)?.wait().map(|_| ())
    }

    /// Non-blocking [`Comm::scan`].
    pub fn iscan<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        same_len("recvbuf", send.len(), recv.len())?;
        let e = Elems::of::<T>(send.len());
        // SAFETY: the request borrows both slices.
        unsafe { self.iscan_raw(Some(bytes_of(send).0), bytes_of_mut(recv).0, e, op) }
    }

    /// [`Comm::scan`] with the input in `buf`, replaced by the result (`MPI_IN_PLACE`).
    pub fn scan_in_place<T: Scalar>(&self, buf: &mut [T], op: &Op) -> Result<(), Error> {
        let e = Elems::of::<T>(buf.len());
        // SAFETY: waited on before `buf`'s borrow ends.
        unsafe { self.iscan_raw(None, bytes_of_mut(buf).0, e, op) }?
            .wait()
            .map(|_| ())
    }

    /// Exclusive prefix reduction in rank order (`MPI_Exscan`): rank r > 0's
    /// `recv` gets `send_0 op ... op send_{r-1}`; rank 0's is not written.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::ops::Op;
    /// let mut before = [0u64];
    /// world.exscan(&[1u64], &mut before, &Op::SUM)?;
    /// assert_eq!(before[0], world.rank() as u64);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn exscan<T: Scalar>(&self, send: &[T], recv: &mut [T], op: &Op) -> Result<(), Error> {
        self.iexscan(send, recv, op)?.wait().map(|_| ())
    }

    /// Non-blocking [`Comm::exscan`].
    pub fn iexscan<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        same_len("recvbuf", send.len(), recv.len())?;
        let e = Elems::of::<T>(send.len());
        // SAFETY: the request borrows both slices.
        unsafe { self.iexscan_raw(Some(bytes_of(send).0), bytes_of_mut(recv).0, e, op) }
    }

    /// [`Comm::exscan`] with the input in `buf`, replaced by the result on
    /// every rank but 0 (`MPI_IN_PLACE`).
    pub fn exscan_in_place<T: Scalar>(&self, buf: &mut [T], op: &Op) -> Result<(), Error> {
        let e = Elems::of::<T>(buf.len());
        // SAFETY: waited on before `buf`'s borrow ends.
        unsafe { self.iexscan_raw(None, bytes_of_mut(buf).0, e, op) }?
            .wait()
            .map(|_| ())
    }
}
