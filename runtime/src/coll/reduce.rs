//! Allreduce and reduce: their raw, planned and slice forms.

use super::blocks::same_len;
use super::sched::Schedule;
use super::select::Coll;
use super::{algos, area, user, Elems, Planned};
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::Op;
use crate::request::Request;

impl Comm {
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
    #[inline(always)]
    pub unsafe fn plan_allreduce(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            return self.inter_allreduce(send, recv, e, op);
        }
        let f = op.reducer(e.ty)?;
        let n = e.bytes();
        let buf = Schedule::user(recv, n);
        let commutative = op.is_commutative();
        let algo = self.pick(Coll::Allreduce, n, commutative);
        let input = user(send.unwrap_or(recv), n);
        let seq = self.call_seq(algo, n);
        let direct = || area::Op::Reduce {
            input,
            buf,
            root: None,
            op: f.clone(),
        };
        if let Some(planned) = self.area_direct(seq, algo, n, direct) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
        let mut s = Schedule::new();
        let after: Vec<usize> = match send {
            Some(p) if !std::ptr::eq(p, recv) => vec![s.copy(user(p, n), buf, &[])],
            _ => vec![],
        };
        let r = algos::allreduce::Reduction {
            buf,
            count: e.count,
            elem: e.size,
            op: &f,
            commutative,
        };
        algos::allreduce::build(algo, &ctx, &mut s, &r, &after);
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
    #[inline(always)]
    pub unsafe fn plan_reduce(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            return self.inter_reduce(send, recv, e, op, root);
        }
        let root = self.root(root)?;
        let f = op.reducer(e.ty)?;
        let n = e.bytes();
        let commutative = op.is_commutative();
        let algo = self.pick(Coll::Reduce, n, commutative);
        let seq = self.call_seq(algo, n);
        let direct = || area::Op::Reduce {
            input: user(send.unwrap_or(recv), n),
            buf: Schedule::user(recv, n),
            root: Some(root),
            op: f.clone(),
        };
        if let Some(planned) = self.area_direct(seq, algo, n, direct) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
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
        let call = algos::reduce::ToRoot {
            buf: acc,
            root,
            op: &f,
            commutative,
        };
        algos::reduce::build(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// `MPI_Allreduce` of the elements `e` at `send` (`None`:
    /// `MPI_IN_PLACE`) into `recv`: what `plan_allreduce(..)?.run()`
    /// does, without building the plan where the call goes straight onto
    /// the shared-memory area (small calls on one host).
    ///
    /// # Safety
    /// As for [`Comm::iallreduce_raw`], until the call returns.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut x = [world.rank() as f32];
    /// let e = Elems { count: 1, size: 4, ty: Some(ElemType::F32) };
    /// // SAFETY: the call completes before it returns.
    /// unsafe { world.allreduce_raw(None, x.as_mut_ptr().cast(), e, &Op::MAX) }?;
    /// assert_eq!(x[0], (world.size() - 1) as f32);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub unsafe fn allreduce_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
    ) -> Result<(), Error> {
        if !self.is_inter() {
            let on_area = self.reduction_on_area(Coll::Allreduce, send, recv, e, op, None);
            if let Some(done) = on_area {
                return done;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.plan_allreduce(send, recv, e, op) }?.run()
    }

    /// `MPI_Reduce` to `root`, as [`Comm::allreduce_raw`] is
    /// `MPI_Allreduce` (`recv` matters at the root only).
    ///
    /// # Safety
    /// As for [`Comm::ireduce_raw`], until the call returns.
    ///
    /// ```no_run
    /// use oxmpi::coll::Elems;
    /// use oxmpi::ops::{ElemType, Op};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (x, mut sum) = ([1u64], [0u64]);
    /// let e = Elems { count: 1, size: 8, ty: Some(ElemType::U64) };
    /// let (sp, rp) = (x.as_ptr().cast(), sum.as_mut_ptr().cast());
    /// // SAFETY: the call completes before it returns.
    /// unsafe { world.reduce_raw(Some(sp), rp, e, &Op::SUM, 0) }?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub unsafe fn reduce_raw(
        &self,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
        root: i32,
    ) -> Result<(), Error> {
        if let (false, Ok(root)) = (self.is_inter(), self.root(root)) {
            let on_area = self.reduction_on_area(Coll::Reduce, send, recv, e, op, Some(root));
            if let Some(done) = on_area {
                return done;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.plan_reduce(send, recv, e, op, root) }?.run()
    }

    /// [`Comm::run_on_area`] for a reduction to `root` (`None`: to every
    /// rank) of the elements `e` at `send` into `recv`; `None` where the
    /// call does not go straight onto the area (or the operation does not
    /// apply: `plan_*` reports that).
    #[inline(always)]
    fn reduction_on_area(
        &self,
        coll: Coll,
        send: Option<*const u8>,
        recv: *mut u8,
        e: Elems,
        op: &Op,
        root: Option<usize>,
    ) -> Option<Result<(), Error>> {
        let f = op.reducer(e.ty).ok()?;
        let n = e.bytes();
        let algo = self.pick(coll, n, op.is_commutative());
        let call = || area::Op::Reduce {
            input: user(send.unwrap_or(recv), n),
            buf: Schedule::user(recv, n),
            root,
            op: f,
        };
        self.run_on_area(algo, n, call)
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
        unsafe { self.plan_elementwise(Comm::plan_allreduce, "recv", send, recv, op) }?.run()
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
        Ok(unsafe { self.plan_elementwise(Comm::plan_allreduce, "recv", send, recv, op) }?.start())
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
        self.run_in_place(Comm::plan_allreduce, buf, op)
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
        let at_root = self.is_root(root)?;
        let rp = match recv {
            Some(r) => {
                same_len("recv", send.len(), r.len())?;
                bytes_of_mut(r).0
            }
            None if at_root => {
                return Err(Error::InvalidArgument {
                    arg: "recv",
                    reason: "the root needs a receive buffer".into(),
                })
            }
            None => std::ptr::null_mut(),
        };
        // SAFETY: run to completion before the borrows end.
        unsafe {
            self.reduce_raw(
                Some(bytes_of(send).0),
                rp,
                Elems::of::<T>(send.len()),
                op,
                root,
            )
        }
    }
}
