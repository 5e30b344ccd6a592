//! Scan and exscan: prefix reductions in rank order.

use super::algos::scan;
use super::sched::Schedule;
use super::select::Coll;
use super::Elems;
use super::Planned;
use crate::buffer::Scalar;
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
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [1u32];
    /// let mut upto = [0u32];
    /// let e = Elems { count: 1, size: 4, ty: Some(ElemType::U32) };
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (mine.as_ptr().cast(), upto.as_mut_ptr().cast());
    /// let r = unsafe { world.iscan_raw(Some(sp), rp, e, &Op::SUM) }?;
    /// r.wait()?;
    /// assert_eq!(upto[0], world.rank() as u32 + 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iscan_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_scan(send, recv, e, op)?.start())
    }

    /// Builds [`Comm::iscan_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iscan_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [1u32];
    /// let mut upto = [0u32];
    /// let e = Elems { count: 1, size: 4, ty: Some(ElemType::U32) };
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (mine.as_ptr().cast(), upto.as_mut_ptr().cast());
    /// let r = unsafe { world.plan_scan(Some(sp), rp, e, &Op::SUM) }?;
    /// r.run()?;
    /// assert_eq!(upto[0], world.rank() as u32 + 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_scan(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        self.check_intra("MPI_Scan")?;
        self.scan_common(Coll::Scan, send, recv, e, op)
    }

    /// Starts an exclusive scan (`MPI_Iexscan`): rank r > 0's `recv` gets
    /// `send_0 op ... op send_{r-1}`; rank 0's `recv` is left untouched
    /// (MPI leaves it undefined). `send` is `None` for `MPI_IN_PLACE`.
    ///
    /// # Safety
    /// As for [`Comm::iscan_raw`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut offset = [10u64]; // in place: my count in, the counts before me out
    /// let e = Elems { count: 1, size: 8, ty: Some(ElemType::U64) };
    /// // SAFETY: `offset` outlives the request, which is waited on below.
    /// unsafe { world.iexscan_raw(None, offset.as_mut_ptr().cast(), e, &Op::SUM) }?.wait()?;
    /// if world.rank() > 0 {
    ///     assert_eq!(offset[0], 10 * world.rank() as u64);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iexscan_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_exscan(send, recv, e, op)?.start())
    }

    /// Builds [`Comm::iexscan_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iexscan_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut offset = [10u64]; // in place: my count in, the counts before me out
    /// let e = Elems { count: 1, size: 8, ty: Some(ElemType::U64) };
    /// // SAFETY: `offset` outlives the request, which is waited on below.
    /// unsafe { world.plan_exscan(None, offset.as_mut_ptr().cast(), e, &Op::SUM) }?.run()?;
    /// if world.rank() > 0 {
    ///     assert_eq!(offset[0], 10 * world.rank() as u64);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_exscan(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        self.check_intra("MPI_Exscan")?;
        self.scan_common(Coll::Exscan, send, recv, e, op)
    }

    unsafe fn scan_common(
        &self,
        coll: Coll,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
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
        let algo = self.pick(coll, n, commutative);
        let call = scan::Prefix {
            input,
            out,
            op: &f,
            commutative,
            exclusive,
        };
        scan::build(algo, &ctx, &mut s, &call, &[]);
        Ok(self.plan(s))
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
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_elementwise(Comm::plan_scan, "recvbuf", send, recv, op) }?.run()
    }

    /// Non-blocking [`Comm::scan`].
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut upto = [0i32];
    /// let r = world.iscan(&[2], &mut upto, &Op::SUM)?;
    /// r.wait()?;
    /// assert_eq!(upto[0], 2 * (world.rank() + 1));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iscan<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_elementwise(Comm::plan_scan, "recvbuf", send, recv, op) }?.start())
    }

    /// [`Comm::scan`] with the input in `buf`, replaced by the result (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut running_max = [world.size() - world.rank()];
    /// world.scan_in_place(&mut running_max, &Op::MAX)?;
    /// assert_eq!(running_max[0], world.size()); // rank 0's value is the largest
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scan_in_place<T: Scalar>(&self, buf: &mut [T], op: &Op) -> Result<(), Error> {
        self.run_in_place(Comm::plan_scan, buf, op)
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
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_elementwise(Comm::plan_exscan, "recvbuf", send, recv, op) }?.run()
    }

    /// Non-blocking [`Comm::exscan`].
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Where my 3 items start in a global numbering.
    /// let mut start = [0u64];
    /// let r = world.iexscan(&[3u64], &mut start, &Op::SUM)?;
    /// r.wait()?;
    /// if world.rank() > 0 {
    ///     assert_eq!(start[0], 3 * world.rank() as u64);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iexscan<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_elementwise(Comm::plan_exscan, "recvbuf", send, recv, op) }?.start())
    }

    /// [`Comm::exscan`] with the input in `buf`, replaced by the result on
    /// every rank but 0 (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = [1u32];
    /// world.exscan_in_place(&mut buf, &Op::SUM)?;
    /// let before_me = if world.rank() == 0 { 0 } else { buf[0] }; // rank 0's is not written
    /// assert_eq!(before_me, world.rank() as u32);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn exscan_in_place<T: Scalar>(&self, buf: &mut [T], op: &Op) -> Result<(), Error> {
        self.run_in_place(Comm::plan_exscan, buf, op)
    }
}
