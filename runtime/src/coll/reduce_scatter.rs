//! Reduce_scatter and reduce_scatter_block: a reduction whose result is
//! cut into per-rank blocks, block r ending on rank r.

use super::algos::reduce_scatter;
use super::blocks::{per_rank, same_len, Blocks};
use super::sched::Schedule;
use super::select::Coll;
use super::Elems;
use super::Planned;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::{ElemType, Op};
use crate::request::Request;

impl Comm {
    /// Starts a reduce_scatter (`MPI_Ireduce_scatter`): every rank's `send`
    /// holds `counts.iter().sum()` elements of `size` bytes (kernel type
    /// `ty`); block r (`counts[r]` elements, in rank order) of the reduction
    /// lands in rank r's `recv`. `send` is `None` for `MPI_IN_PLACE` (the
    /// input is in `recv`, whose start receives the result).
    ///
    /// # Safety
    /// `send` readable for the whole input and `recv` writable for
    /// `counts[rank]` elements (the whole input when in place) until the
    /// request completes.
    ///
    /// ```no_run
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![2usize; p]; // elements per rank
    /// let send = vec![1i32; 2 * p];
    /// let mut mine = [0i32; 2];
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (send.as_ptr().cast(), mine.as_mut_ptr().cast());
    /// let ty = Some(ElemType::I32); // 4-byte elements
    /// let r = unsafe { world.ireduce_scatter_raw(Some(sp), rp, &counts, 4, ty, &Op::SUM) }?;
    /// r.wait()?;
    /// assert_eq!(mine, [p as i32; 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ireduce_scatter_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        counts: &[usize],
        size: usize,
        ty: Option<ElemType>,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_reduce_scatter(send, recv, counts, size, ty, op)?
            .start())
    }

    /// Builds [`Comm::ireduce_scatter_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ireduce_scatter_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![2usize; p]; // elements per rank
    /// let send = vec![1i32; 2 * p];
    /// let mut mine = [0i32; 2];
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (send.as_ptr().cast(), mine.as_mut_ptr().cast());
    /// let ty = Some(ElemType::I32); // 4-byte elements
    /// let r = unsafe { world.plan_reduce_scatter(Some(sp), rp, &counts, 4, ty, &Op::SUM) }?;
    /// r.run()?;
    /// assert_eq!(mine, [p as i32; 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_reduce_scatter(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        counts: &[usize],
        size: usize,
        ty: Option<ElemType>,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let ours: Vec<usize> = counts.iter().map(|&c| c * size).collect();
            let total = ours.iter().sum();
            return self.inter_reduce_scatter(send, recv, total, &ours, ty, op);
        }
        self.check_counts(counts)?;
        self.reduce_scatter_common(Coll::ReduceScatter, send, recv, counts, size, ty, op)
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn reduce_scatter_common(
        &self,
        coll: Coll,
        send: Option<*const u8>,
        recv: *mut u8,
        counts: &[usize],
        size: usize,
        ty: Option<ElemType>,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        let f = op.reducer(ty)?;
        let (p, rank) = (self.size() as usize, self.rank() as usize);
        let (bytes, _) = Blocks::new(counts, &[]).bytes(size);
        let mut off = vec![0; p + 1];
        for r in 0..p {
            off[r + 1] = off[r] + bytes[r];
        }
        let n = off[p];
        let commutative = op.is_commutative();
        let algo = self.pick(coll, n, commutative);
        let out = Schedule::user(recv, bytes[rank]);
        // The area posts the whole input into this rank's slot before it
        // writes `out`, so the caller's buffers serve in place too.
        let seq = self.call_seq(algo, n);
        let direct = || super::area::Op::ReduceScatter {
            input: Schedule::user(send.unwrap_or(recv) as *mut u8, n),
            off: off.clone(),
            out,
            op: f.clone(),
        };
        if let Some(planned) = self.area_direct(seq, algo, n, direct) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
        let mut s = Schedule::new();
        // The algorithms read the input while writing `out`: in place, the
        // input moves to scratch first.
        let (input, after) = match send {
            Some(ptr) => (Schedule::user(ptr as *mut u8, n), vec![]),
            None => {
                let tmp = s.temp(n);
                let c = s.copy_some(Schedule::user(recv, n), tmp, &[]);
                (tmp, c.into_iter().collect())
            }
        };
        let call = reduce_scatter::Split {
            input,
            off: &off,
            out,
            op: &f,
            commutative,
        };
        reduce_scatter::build(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Reduces every rank's `send` with `op` and leaves block r of the
    /// result (`counts[r]` elements, blocks in rank order) in rank r's
    /// `recv` (`MPI_Reduce_scatter`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::ops::Op;
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r + 1).collect();
    /// let send = vec![1u64; counts.iter().sum()];
    /// let mut mine = vec![0u64; counts[world.rank() as usize]];
    /// world.reduce_scatter(&send, &mut mine, &counts, &Op::SUM)?;
    /// assert!(mine.iter().all(|&v| v == p as u64));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn reduce_scatter<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: &Op,
    ) -> Result<(), Error> {
        self.ireduce_scatter(send, recv, counts, op)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::reduce_scatter`].
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let send: Vec<u64> = (0..p as u64).collect();
    /// let mut mine = [0u64];
    /// let r = world.ireduce_scatter(&send, &mut mine, &counts, &Op::SUM)?;
    /// r.wait()?;
    /// assert_eq!(mine[0], world.rank() as u64 * p as u64);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ireduce_scatter<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        counts: &[usize],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        self.check_counts(counts)?;
        same_len("sendbuf", counts.iter().sum(), send.len())?;
        same_len("recvbuf", counts[self.rank() as usize], recv.len())?;
        let e = Elems::of::<T>(0);
        // SAFETY: the request borrows both slices.
        unsafe {
            self.ireduce_scatter_raw(
                Some(bytes_of(send).0),
                bytes_of_mut(recv).0,
                counts,
                e.size,
                e.ty,
                op,
            )
        }
    }

    /// [`Comm::reduce_scatter`] with the input in `buf` (all of it), whose
    /// first `counts[rank]` elements receive the result (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let mut buf = vec![1u32; p]; // the whole input; my result lands in buf[0]
    /// world.reduce_scatter_in_place(&mut buf, &counts, &Op::SUM)?;
    /// assert_eq!(buf[0], p as u32);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn reduce_scatter_in_place<T: Scalar>(
        &self,
        buf: &mut [T],
        counts: &[usize],
        op: &Op,
    ) -> Result<(), Error> {
        self.check_counts(counts)?;
        same_len("recvbuf", counts.iter().sum(), buf.len())?;
        let e = Elems::of::<T>(0);
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe { self.plan_reduce_scatter(None, bytes_of_mut(buf).0, counts, e.size, e.ty, op) }?
            .run()
    }

    fn check_counts(&self, counts: &[usize]) -> Result<(), Error> {
        let p = self.size() as usize;
        if counts.len() == p {
            return Ok(());
        }
        Err(Error::InvalidArgument {
            arg: "recvcounts",
            reason: format!(
                "has {} entries for a communicator of {p} ranks",
                counts.len()
            ),
        })
    }

    /// Starts a reduce_scatter_block (`MPI_Ireduce_scatter_block`): every
    /// rank's `send` holds `size * e.count` elements; block r of the
    /// reduction (`e.count` elements) lands in rank r's `recv`. `send` is
    /// `None` for `MPI_IN_PLACE` (the input is in `recv`).
    ///
    /// # Safety
    /// `send` readable for the whole input and `recv` writable for
    /// `e.bytes()` (the whole input when in place) until the request
    /// completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send = vec![2.0f32; 3 * p];
    /// let mut mine = [0.0f32; 3];
    /// let e = Elems { count: 3, size: 4, ty: Some(ElemType::F32) }; // per rank
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (send.as_ptr().cast(), mine.as_mut_ptr().cast());
    /// let r = unsafe { world.ireduce_scatter_block_raw(Some(sp), rp, e, &Op::PROD) }?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ireduce_scatter_block_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_reduce_scatter_block(send, recv, e, op)?.start())
    }

    /// Builds [`Comm::ireduce_scatter_block_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ireduce_scatter_block_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send = vec![2.0f32; 3 * p];
    /// let mut mine = [0.0f32; 3];
    /// let e = Elems { count: 3, size: 4, ty: Some(ElemType::F32) }; // per rank
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (send.as_ptr().cast(), mine.as_mut_ptr().cast());
    /// let r = unsafe { world.plan_reduce_scatter_block(Some(sp), rp, e, &Op::PROD) }?;
    /// r.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_reduce_scatter_block(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            // Both groups reduce vectors of size x count (MPI 4.0 6.11.2).
            let ours = vec![e.bytes(); self.size() as usize];
            let total = e.bytes() * self.size() as usize;
            return self.inter_reduce_scatter(send, recv, total, &ours, e.ty, op);
        }
        let counts = vec![e.count; self.size() as usize];
        self.reduce_scatter_common(
            Coll::ReduceScatterBlock,
            send,
            recv,
            &counts,
            e.size,
            e.ty,
            op,
        )
    }

    /// Reduces every rank's `send` with `op` and leaves block r of the
    /// result (`recv.len()` elements each) in rank r's `recv`
    /// (`MPI_Reduce_scatter_block`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send = vec![1i64; 4 * p]; // 4 elements for each rank
    /// let mut mine = [0i64; 4];
    /// world.reduce_scatter_block(&send, &mut mine, &Op::SUM)?;
    /// assert_eq!(mine, [p as i64; 4]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn reduce_scatter_block<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op,
    ) -> Result<(), Error> {
        self.ireduce_scatter_block(send, recv, op)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::reduce_scatter_block`].
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send: Vec<i32> = (0..p as i32).collect();
    /// let mut mine = [0i32];
    /// let r = world.ireduce_scatter_block(&send, &mut mine, &Op::MIN)?;
    /// r.wait()?;
    /// assert_eq!(mine[0], world.rank());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ireduce_scatter_block<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        same_len("sendbuf", recv.len() * self.size() as usize, send.len())?;
        let e = Elems::of::<T>(recv.len());
        // SAFETY: the request borrows both slices.
        unsafe {
            self.ireduce_scatter_block_raw(Some(bytes_of(send).0), bytes_of_mut(recv).0, e, op)
        }
    }

    /// [`Comm::reduce_scatter_block`] with the input in `buf`, whose first
    /// `buf.len() / size` elements receive the result (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let mut buf = vec![3u8; 2 * p]; // the whole input; my 2 results land in buf[..2]
    /// world.reduce_scatter_block_in_place(&mut buf, &Op::MAX)?;
    /// assert_eq!(buf[..2], [3, 3]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn reduce_scatter_block_in_place<T: Scalar>(
        &self,
        buf: &mut [T],
        op: &Op,
    ) -> Result<(), Error> {
        let n = per_rank("recvbuf", buf.len(), self.size() as usize)?;
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe { self.plan_reduce_scatter_block(None, bytes_of_mut(buf).0, Elems::of::<T>(n), op) }?
            .run()
    }
}
