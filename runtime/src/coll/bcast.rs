//! Broadcast and barrier: their raw, planned and slice forms.

use super::sched::Schedule;
use super::select::Coll;
use super::{algos, Planned};
use crate::buffer::{bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::request::Request;

impl Comm {
    /// Starts a broadcast of `len` bytes at `buf` from `root` (`MPI_Ibcast`).
    ///
    /// # Safety
    /// `buf` must be writable for `len` bytes until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = if world.rank() == 0 { *b"config" } else { [0u8; 6] };
    /// // SAFETY: `buf` outlives the request, which is waited on below.
    /// unsafe { world.ibcast_raw(buf.as_mut_ptr(), buf.len(), 0) }?.wait()?;
    /// assert_eq!(&buf, b"config");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ibcast_raw(
        &self,
        buf: *mut u8,
        len: usize,
        root: i32,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_bcast(buf, len, root)?.start())
    }

    /// [`Comm::bcast`] of `len` bytes at `buf` (`MPI_Bcast`): what
    /// `plan_bcast(..)?.run()` does, without building the plan where the
    /// call goes straight onto the shared-memory area (small calls on one
    /// host).
    ///
    /// # Safety
    /// `buf` must be writable for `len` bytes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = if world.rank() == 0 { *b"config" } else { [0u8; 6] };
    /// // SAFETY: the call completes before it returns.
    /// unsafe { world.bcast_raw(buf.as_mut_ptr(), buf.len(), 0) }?;
    /// assert_eq!(&buf, b"config");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub unsafe fn bcast_raw(&self, buf: *mut u8, len: usize, root: i32) -> Result<(), Error> {
        if !self.is_inter() {
            if let Ok(root) = self.root(root) {
                let algo = self.pick(Coll::Bcast, len, true);
                let b = Schedule::user(buf, len);
                let op = || super::area::Op::Bcast { buf: b, root };
                if let Some(done) = self.run_on_area(algo, len, op) {
                    return done;
                }
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.plan_bcast(buf, len, root) }?.run()
    }

    /// Builds [`Comm::ibcast_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ibcast_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut buf = if world.rank() == 0 { *b"config" } else { [0u8; 6] };
    /// // SAFETY: `buf` outlives the request, which is waited on below.
    /// unsafe { world.plan_bcast(buf.as_mut_ptr(), buf.len(), 0) }?.run()?;
    /// assert_eq!(&buf, b"config");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub unsafe fn plan_bcast(
        &self,
        buf: *mut u8,
        len: usize,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            return self.inter_bcast(buf, len, root);
        }
        let root = self.root(root)?;
        let algo = self.pick(Coll::Bcast, len, true);
        if algo.name == algos::bcast::binomial::INFO.name && !crate::mem::cuda::is_device(buf) {
            // Its messages without a schedule: only the call's tags needed.
            let seq = self.take_coll_seq();
            let call = super::tree_direct::TreeBcast::new(seq, buf, len, root);
            return Ok(Planned::tree(self, call));
        }
        let b = Schedule::user(buf, len);
        let seq = self.call_seq(algo, len);
        let direct = || super::area::Op::Bcast { buf: b, root };
        if let Some(planned) = self.area_direct(seq, algo, len, direct) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
        let mut s = Schedule::new();
        let call = algos::bcast::Broadcast { buf: b, root };
        algos::bcast::build(algo, &ctx, &mut s, &call, &[]);
        Ok(self.plan(s))
    }

    /// Sends `buf` from `root` to every rank (`MPI_Bcast`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut params = [0.0f64; 3];
    /// if world.rank() == 0 {
    ///     params = [0.1, 100.0, 1e-6]; // read from a file, say
    /// }
    /// world.bcast(&mut params, 0)?;
    /// assert_eq!(params[1], 100.0);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn bcast<T: Scalar>(&self, buf: &mut [T], root: i32) -> Result<(), Error> {
        let (p, n) = bytes_of_mut(buf);
        // SAFETY: run to completion before the borrow ends.
        unsafe { self.bcast_raw(p, n, root) }
    }

    /// Non-blocking [`Comm::bcast`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut table = vec![0u32; 1 << 16];
    /// if world.rank() == 0 {
    ///     table.iter_mut().enumerate().for_each(|(i, x)| *x = i as u32);
    /// }
    /// let r = world.ibcast(&mut table, 0)?;
    /// r.wait()?;
    /// assert_eq!(table[12345], 12345);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ibcast<'a, T: Scalar>(&self, buf: &'a mut [T], root: i32) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_bcast_slices(buf, root) }?.start())
    }

    /// Checks the slices of [`Comm::ibcast`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_bcast_slices<T: Scalar>(
        &self,
        buf: &mut [T],
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let (p, n) = bytes_of_mut(buf);
        // SAFETY: the request borrows `buf`.
        unsafe { self.plan_bcast(p, n, root) }
    }

    /// Blocks until every rank of the communicator has called it
    /// (`MPI_Barrier`): through the communicator's shared-memory area when
    /// every rank is on this host, else as [`Comm::ibarrier`] does.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let t0 = oxmpi::wtime();
    /// world.barrier()?; // everyone has reached this point
    /// if world.rank() == 0 {
    ///     println!("slowest rank arrived {:.6}s after me", oxmpi::wtime() - t0);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn barrier(&self) -> Result<(), Error> {
        if !self.is_inter() {
            if let Some(done) = self.run_on_area_if(true, 0, || super::area::Op::Barrier) {
                return done;
            }
        }
        self.plan_barrier()?.run()
    }

    /// Starts a barrier (`MPI_Ibarrier`): through the communicator's
    /// shared-memory area when every rank is on this host, else
    /// dissemination, ceil(lg p) rounds.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut arrived = world.ibarrier()?;
    /// let mut polls = 0u64;
    /// while arrived.test()?.is_none() {
    ///     polls += 1; // useful work while the others catch up
    /// }
    /// println!("waited {polls} polls for the slowest rank");
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ibarrier(&self) -> Result<Request<'static>, Error> {
        Ok(self.plan_barrier()?.start())
    }

    /// Builds [`Comm::ibarrier`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.plan_barrier()?.run()?; // MPI_Barrier through the schedule
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn plan_barrier(&self) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            return Ok(self.inter_barrier());
        }
        let seq = self.seq_unless_area(true, 0);
        let barrier = || super::area::Op::Barrier;
        if let Some(planned) = self.area_direct_if(true, seq, 0, barrier) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
        let p = ctx.size;
        let mut s = Schedule::new();
        if let Some(area) = super::area::usable(&ctx, 0) {
            super::area::add(&ctx, &mut s, area, super::area::Op::Barrier, &[]);
            return Ok(self.plan(s));
        }
        let empty = Schedule::user(std::ptr::null_mut(), 0);
        let (mut dist, mut round, mut last) = (1, 0, Vec::new());
        while dist < p {
            let snd = s.send(
                ctx.world((ctx.rank + dist) % p),
                ctx.tag(round),
                empty,
                &last,
            );
            let rcv = s.recv(
                ((ctx.rank + p - dist) % p) as i32,
                ctx.tag(round),
                empty,
                &last,
            );
            last = vec![snd, rcv];
            dist *= 2;
            round += 1;
        }
        Ok(self.plan(s))
    }
}
