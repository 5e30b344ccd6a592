//! Collective operations. Each call builds a schedule (see `sched.rs`) with
//! the algorithm [`select`] picks, and hands it to the progress engine: a
//! blocking call waits for it, a non-blocking one returns its [`Request`].
//! Traffic runs on the communicator's collective context with tags from
//! `tag.rs`.

pub mod algos;
mod allgatherv;
mod alltoall;
mod blocks;
pub mod calibrate;
pub(crate) mod ctx;
pub(crate) mod fold;
mod gather;
pub mod inter;
mod neighbor;
pub mod nodes;
pub mod persistent;
mod reduce_scatter;
pub(crate) mod run;
mod scan;
mod scatter;
pub(crate) mod sched;
mod scratch;
pub mod select;
#[cfg(test)]
pub(crate) mod sim;
pub(crate) mod tag;
mod view;
mod view_reduce;

use std::sync::atomic::Ordering;

use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::{ElemType, Op};
use crate::request::Request;
use algos::Args;
use ctx::Ctx;
use sched::{Buf, Schedule};
use select::Coll;

use blocks::same_len;
pub use blocks::Blocks;

/// The element layout of a reduction: `count` elements of `size` bytes,
/// of kernel type `ty` (`None` for types only user operations apply to).
///
/// ```no_run
/// use oxmpi::coll::Elems;
/// use oxmpi::ops::{ElemType, Op};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut v = [world.rank() as f64; 4];
/// // Four f64 the kernels know as F64; `ty: None` would allow only user ops.
/// let e = Elems { count: v.len(), size: 8, ty: Some(ElemType::F64) };
/// // SAFETY: in place (`send` is None); `v` outlives the request.
/// let r = unsafe { world.iallreduce_raw(None, v.as_mut_ptr().cast(), e, &Op::SUM) }?;
/// r.wait()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Elems {
    /// Number of elements.
    pub count: usize,
    /// Bytes per element.
    pub size: usize,
    /// Kernel type for built-in operations.
    pub ty: Option<ElemType>,
}

impl Elems {
    fn of<T: Scalar>(count: usize) -> Elems {
        Elems {
            count,
            size: std::mem::size_of::<T>(),
            ty: T::ELEM,
        }
    }
    fn bytes(&self) -> usize {
        self.count * self.size
    }
}

/// A collective call whose schedule is built but not started (the
/// `plan_*` methods of [`Comm`]): [`Planned::start`] hands it to the
/// progress engine and returns its request (the non-blocking call),
/// [`Planned::run`] runs it to completion on this thread (the blocking
/// call, with no request to allocate or look up). Its tags are taken when
/// it is built, so planned collectives must be started or run in the order
/// they were planned, like any collective call.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut buf = [world.rank() as u8; 4];
/// // SAFETY: `buf` outlives the call, which runs to completion here.
/// unsafe { world.plan_bcast(buf.as_mut_ptr(), buf.len(), 0) }?.run()?;
/// assert_eq!(buf, [0; 4]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[must_use = "a planned collective does nothing until it is started or run"]
pub struct Planned<'c> {
    comm: &'c Comm,
    sched: Schedule,
}

impl Planned<'_> {
    /// Starts the collective; the request completes with it.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut x = [1u32];
    /// // SAFETY: `x` outlives the request, waited on below.
    /// let r = unsafe { world.plan_bcast(x.as_mut_ptr().cast(), 4, 0) }?.start();
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn start(self) -> Request<'static> {
        let c = self.comm;
        let id = c
            .rt()
            .engine()
            .start_schedule(self.sched, c.inner.context + 1, c.rank());
        Request::pending(c.rt().clone(), id)
    }

    /// Runs the collective to completion on this thread.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.plan_barrier()?.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn run(self) -> Result<(), Error> {
        let c = self.comm;
        c.rt()
            .run_schedule(self.sched, c.inner.context + 1, c.rank())
    }
}

impl std::fmt::Debug for Planned<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Planned")
            .field("comm", self.comm)
            .field("steps", &self.sched.steps.len())
            .finish()
    }
}

fn user(ptr: *const u8, len: usize) -> Buf {
    Schedule::user(ptr as *mut u8, len)
}

impl Comm {
    /// The next collective sequence number on this communicator; never 0
    /// in its low bits (sequence 0 is the internal barrier's, see tag.rs).
    fn next_coll_seq(&self) -> u32 {
        let mut seq = self
            .inner
            .coll_seq
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1);
        if seq & ((1 << tag::SEQ_BITS) - 1) == 0 {
            seq = self
                .inner
                .coll_seq
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_add(1);
        }
        seq
    }

    /// Starts a new collective call: its tag sequence (the next one, or a
    /// persistent collective's own, see [`persistent`]) and the rank view.
    fn coll_ctx(&self) -> Ctx<'_> {
        let seq =
            persistent::take_pinned(self.inner.context).unwrap_or_else(|| self.next_coll_seq());
        Ctx {
            rank: self.rank() as usize,
            size: self.size() as usize,
            world_of: std::borrow::Cow::Borrowed(&self.inner.world_of),
            seq,
        }
    }

    fn plan(&self, sched: Schedule) -> Planned<'_> {
        Planned { comm: self, sched }
    }

    fn root(&self, root: i32) -> Result<usize, Error> {
        usize::try_from(root)
            .ok()
            .filter(|&r| r < self.size() as usize)
            .ok_or(Error::InvalidRank {
                arg: "root",
                value: root,
                size: self.size(),
            })
    }

    /// The selection facts of a call on this communicator.
    fn args(&self, bytes: usize, commutative: bool) -> Args {
        Args::new(self.size() as usize, bytes, commutative).on(self.coll_nodes().layout)
    }

    fn pick(&self, coll: Coll, bytes: usize, commutative: bool) -> &'static algos::AlgoInfo {
        self.inner.coll_picks.get_or(coll, bytes, commutative, || {
            self.rt()
                .selector
                .pick(self.inner.context, coll, &self.args(bytes, commutative))
        })
    }

    /// Starts an allreduce on raw memory (`MPI_Iallreduce`). `send` is
    /// `None` for `MPI_IN_PLACE` (the input is in `recv`).
    ///
    /// # Safety
    /// `send` must be readable and `recv` writable for `e.bytes()` bytes
    /// until the request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let send = [1i32, 2, 3];
    /// let mut recv = [0i32; 3];
    /// let e = Elems { count: 3, size: 4, ty: Some(ElemType::I32) };
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (send.as_ptr().cast(), recv.as_mut_ptr().cast());
    /// let r = unsafe { world.iallreduce_raw(Some(sp), rp, e, &Op::MAX) }?;
    /// r.wait()?;
    /// assert_eq!(recv, [1, 2, 3]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iallreduce_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_allreduce(send, recv, e, op)?.start())
    }

    /// Builds [`Comm::iallreduce_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iallreduce_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let send = [1i32, 2, 3];
    /// let mut recv = [0i32; 3];
    /// let e = Elems { count: 3, size: 4, ty: Some(ElemType::I32) };
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (send.as_ptr().cast(), recv.as_mut_ptr().cast());
    /// let r = unsafe { world.plan_allreduce(Some(sp), rp, e, &Op::MAX) }?;
    /// r.run()?;
    /// assert_eq!(recv, [1, 2, 3]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_allreduce(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        let f = op.reducer(e.ty)?;
        let n = e.bytes();
        let mut s = Schedule::new();
        let buf = Schedule::user(recv, n);
        let after: Vec<usize> = match send {
            Some(p) if !std::ptr::eq(p, recv) => vec![s.copy(user(p, n), buf, &[])],
            _ => vec![],
        };
        let ctx = self.coll_ctx();
        let commutative = op.is_commutative();
        let r = algos::allreduce::Reduction {
            buf,
            count: e.count,
            elem: e.size,
            op: &f,
            commutative,
        };
        use algos::allreduce::{build, hierarchical};
        match self.pick(Coll::Allreduce, n, commutative).name {
            "hierarchical" => {
                let plan =
                    hierarchical::plan(self.rt().selector.model(), &self.args(n, commutative));
                hierarchical::build(&ctx, self.coll_nodes(), &plan, &mut s, &r, &after)
            }
            name => build(name, &ctx, &mut s, &r, &after),
        };
        Ok(self.plan(s))
    }

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
    pub unsafe fn plan_bcast(
        &self,
        buf: *mut u8,
        len: usize,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let root = self.root(root)?;
        let mut s = Schedule::new();
        let b = Schedule::user(buf, len);
        let ctx = self.coll_ctx();
        use algos::bcast::{build, hierarchical};
        match self.pick(Coll::Bcast, len, true).name {
            "hierarchical" => {
                let plan = hierarchical::plan(self.rt().selector.model(), &self.args(len, true));
                hierarchical::build(&ctx, self.coll_nodes(), &plan, &mut s, b, root, &[])
            }
            name => build(name, &ctx, &mut s, b, root, &[]),
        };
        Ok(self.plan(s))
    }

    /// Starts a reduce to `root` (`MPI_Ireduce`). `send` is `None` for
    /// `MPI_IN_PLACE` at the root; `recv` matters only at the root.
    ///
    /// # Safety
    /// `send` readable and (at the root) `recv` writable for `e.bytes()`
    /// bytes until the request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [1u64];
    /// let mut total = [0u64];
    /// let e = Elems { count: 1, size: 8, ty: Some(ElemType::U64) };
    /// // SAFETY: both buffers outlive the request; `total` matters at rank 0 only.
    /// let (sp, rp) = (mine.as_ptr().cast(), total.as_mut_ptr().cast());
    /// let r = unsafe { world.ireduce_raw(Some(sp), rp, e, &Op::SUM, 0) }?;
    /// r.wait()?;
    /// if world.rank() == 0 {
    ///     assert_eq!(total[0], world.size() as u64);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ireduce_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
        root: i32,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_reduce(send, recv, e, op, root)?.start())
    }

    /// Builds [`Comm::ireduce_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ireduce_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [1u64];
    /// let mut total = [0u64];
    /// let e = Elems { count: 1, size: 8, ty: Some(ElemType::U64) };
    /// // SAFETY: both buffers outlive the request; `total` matters at rank 0 only.
    /// let (sp, rp) = (mine.as_ptr().cast(), total.as_mut_ptr().cast());
    /// let r = unsafe { world.plan_reduce(Some(sp), rp, e, &Op::SUM, 0) }?;
    /// r.run()?;
    /// if world.rank() == 0 {
    ///     assert_eq!(total[0], world.size() as u64);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_reduce(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let root = self.root(root)?;
        let f = op.reducer(e.ty)?;
        let n = e.bytes();
        let mut s = Schedule::new();
        let at_root = self.rank() as usize == root;
        let (acc, after) = match (at_root, send) {
            (true, None) => (Schedule::user(recv, n), vec![]),
            (true, Some(p)) => {
                let acc = Schedule::user(recv, n);
                let c = if std::ptr::eq(p, recv) {
                    vec![]
                } else {
                    vec![s.copy(user(p, n), acc, &[])]
                };
                (acc, c)
            }
            (false, p) => {
                // Partial results must not overwrite the caller's input.
                let acc = s.temp(n);
                let src = p.unwrap_or(recv as *const u8);
                let c = s.copy(user(src, n), acc, &[]);
                (acc, vec![c])
            }
        };
        let ctx = self.coll_ctx();
        let _ = self.pick(Coll::Reduce, n, op.is_commutative());
        algos::reduce::binomial::build_in_place(
            &ctx,
            &mut s,
            acc,
            root,
            &f,
            op.is_commutative(),
            &after,
        );
        Ok(self.plan(s))
    }

    /// Starts an allgather of `block` bytes per rank (`MPI_Iallgather`):
    /// `send` (or `None` for `MPI_IN_PLACE`, the block already at
    /// `recv + rank*block`) lands at `recv + rank*block` on every rank.
    ///
    /// # Safety
    /// `send` readable for `block` bytes and `recv` writable for
    /// `size*block` bytes until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let mine = (world.rank() as u16).to_ne_bytes();
    /// let mut all = vec![0u8; 2 * p];
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// unsafe { world.iallgather_raw(Some(mine.as_ptr()), 2, all.as_mut_ptr()) }?.wait()?;
    /// assert_eq!(all[2 * (p - 1)..], ((p - 1) as u16).to_ne_bytes());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iallgather_raw(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_allgather(send, block, recv)?.start())
    }

    /// Builds [`Comm::iallgather_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iallgather_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let mine = (world.rank() as u16).to_ne_bytes();
    /// let mut all = vec![0u8; 2 * p];
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// unsafe { world.plan_allgather(Some(mine.as_ptr()), 2, all.as_mut_ptr()) }?.run()?;
    /// assert_eq!(all[2 * (p - 1)..], ((p - 1) as u16).to_ne_bytes());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_allgather(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
    ) -> Result<Planned<'_>, Error> {
        let p = self.size() as usize;
        let mut s = Schedule::new();
        let buf = Schedule::user(recv, p * block);
        let mine = buf.slice(self.rank() as usize * block, block);
        let after: Vec<usize> = match send {
            Some(ptr) if !std::ptr::eq(ptr, recv.add(self.rank() as usize * block)) => {
                vec![s.copy(user(ptr, block), mine, &[])]
            }
            _ => vec![],
        };
        let ctx = self.coll_ctx();
        use algos::allgather::*;
        match self.pick(Coll::Allgather, block, true).name {
            "recursive_doubling" => recursive_doubling::build(&ctx, &mut s, buf, block, &after),
            "bruck" => bruck::build(&ctx, &mut s, buf, block, &after),
            _ => ring::build(&ctx, &mut s, buf, block, &after),
        };
        Ok(self.plan(s))
    }

    /// Starts a barrier (`MPI_Ibarrier`): dissemination, ceil(lg p) rounds.
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
        let ctx = self.coll_ctx();
        let p = ctx.size;
        let mut s = Schedule::new();
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

    /// Combines every rank's `send` with `op` into `recv` on every rank (`MPI_Allreduce`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::ops::Op;
    /// let mut total = [0u64];
    /// world.allreduce(&[world.rank() as u64], &mut total, &Op::SUM)?;
    /// let n = world.size() as u64;
    /// assert_eq!(total[0], n * (n - 1) / 2);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allreduce<T: Scalar>(&self, send: &[T], recv: &mut [T], op: &Op) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_allreduce_slices(send, recv, op) }?.run()
    }

    /// Non-blocking [`Comm::allreduce`].
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let local = [world.rank() as f64, 1.0];
    /// let mut global = [0.0f64; 2];
    /// let r = world.iallreduce(&local, &mut global, &Op::SUM)?;
    /// // ... work that touches neither buffer ...
    /// r.wait()?;
    /// assert_eq!(global[1], world.size() as f64);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iallreduce<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_allreduce_slices(send, recv, op) }?.start())
    }

    /// Checks the slices of [`Comm::iallreduce`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_allreduce_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        same_len("recv", send.len(), recv.len())?;
        let (sp, _) = bytes_of(send);
        let (rp, _) = bytes_of_mut(recv);
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_allreduce(Some(sp), rp, Elems::of::<T>(send.len()), op) }
    }

    /// Allreduce with `buf` as input and output (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut residual = [0.25f64 * world.rank() as f64];
    /// world.allreduce_in_place(&mut residual, &Op::MAX)?;
    /// assert_eq!(residual[0], 0.25 * (world.size() - 1) as f64);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allreduce_in_place<T: Scalar>(&self, buf: &mut [T], op: &Op) -> Result<(), Error> {
        let n = buf.len();
        let (p, _) = bytes_of_mut(buf);
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe { self.plan_allreduce(None, p, Elems::of::<T>(n), op) }?.run()
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
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_bcast_slices(buf, root) }?.run()
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

    /// Combines every rank's `send` into `recv` at `root` (`MPI_Reduce`);
    /// `recv` is required at the root and ignored elsewhere.
    ///
    /// ```no_run
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut total = [0i64];
    /// let recv = (world.rank() == 0).then_some(&mut total[..]); // only the root receives
    /// world.reduce(&[world.rank() as i64], recv, &Op::SUM, 0)?;
    /// if world.rank() == 0 {
    ///     let n = world.size() as i64;
    ///     assert_eq!(total[0], n * (n - 1) / 2);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn reduce<T: Scalar>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        op: &Op,
        root: i32,
    ) -> Result<(), Error> {
        let root_rank = self.root(root)? as i32;
        let rp = match recv {
            Some(r) => {
                same_len("recv", send.len(), r.len())?;
                bytes_of_mut(r).0
            }
            None if self.rank() == root_rank => {
                return Err(Error::InvalidArgument {
                    arg: "recv",
                    reason: "the root needs a receive buffer".into(),
                })
            }
            None => std::ptr::null_mut(),
        };
        // SAFETY: run to completion before the borrows end.
        unsafe {
            self.plan_reduce(
                Some(bytes_of(send).0),
                rp,
                Elems::of::<T>(send.len()),
                op,
                root,
            )
        }?
        .run()
    }

    /// Gathers every rank's `send` into `recv` (rank r's at `r*send.len()`) on every rank (`MPI_Allgather`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut ranks = vec![0i32; world.size() as usize];
    /// world.allgather(&[world.rank()], &mut ranks)?;
    /// assert!(ranks.iter().enumerate().all(|(r, &v)| v == r as i32));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allgather<T: Scalar>(&self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_allgather_slices(send, recv) }?.run()
    }

    /// Non-blocking [`Comm::allgather`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [world.rank() as u8; 2];
    /// let mut all = vec![0u8; 2 * world.size() as usize];
    /// let r = world.iallgather(&mine, &mut all)?;
    /// r.wait()?;
    /// assert_eq!(all[..2], [0, 0]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iallgather<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_allgather_slices(send, recv) }?.start())
    }

    /// Checks the slices of [`Comm::iallgather`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_allgather_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
    ) -> Result<Planned<'_>, Error> {
        same_len("recv", send.len() * self.size() as usize, recv.len())?;
        let (sp, n) = bytes_of(send);
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_allgather(Some(sp), n, bytes_of_mut(recv).0) }
    }
}
