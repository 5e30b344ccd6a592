//! Gather and gatherv: every rank's block collected at the root.

use super::algos::gather;
use super::blocks::{in_place_not_root, per_rank, root_needs, same_len, span, Blocks};
use super::sched::Schedule;
use super::select::Coll;
use super::Planned;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::request::Request;

impl Comm {
    /// Starts a gather of `block` bytes per rank to `root` (`MPI_Igather`):
    /// rank r's `send` lands at `recv + r*block` on the root. `send` is
    /// `None` for `MPI_IN_PLACE`, valid at the root only (its block is
    /// already in place); `recv` matters at the root only.
    ///
    /// # Safety
    /// `send` readable for `block` bytes and, at the root, `recv` writable
    /// for `size*block` bytes until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [world.rank() as u8; 4];
    /// let mut all = vec![0u8; 4 * world.size() as usize]; // read at the root only
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// unsafe { world.igather_raw(Some(mine.as_ptr()), 4, all.as_mut_ptr(), 0) }?.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn igather_raw(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
        root: i32,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_gather(send, block, recv, root)?.start())
    }

    /// Builds [`Comm::igather_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::igather_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mine = [world.rank() as u8; 4];
    /// let mut all = vec![0u8; 4 * world.size() as usize]; // read at the root only
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// unsafe { world.plan_gather(Some(mine.as_ptr()), 4, all.as_mut_ptr(), 0) }?.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_gather(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let m = self.peer_count() as usize;
            let counts = vec![block; m];
            let displs: Vec<usize> = (0..m).map(|j| j * block).collect();
            return self.inter_gatherv(send, block, recv, Blocks::new(&counts, &displs), root);
        }
        let root = self.root(root)?;
        let (p, rank) = (self.size() as usize, self.rank() as usize);
        if send.is_none() && rank != root {
            return Err(in_place_not_root("sendbuf"));
        }
        let mut s = Schedule::new();
        let all = Schedule::user(recv, p * block);
        let slot = all.slice(root * block, block);
        let mine = send.map_or(slot, |ptr| Schedule::user(ptr as *mut u8, block));
        let after: Vec<usize> = match send {
            Some(ptr) if rank == root && !std::ptr::eq(ptr, recv.add(root * block)) => {
                s.copy_some(mine, slot, &[]).into_iter().collect()
            }
            _ => vec![],
        };
        let ctx = self.coll_ctx();
        let algo = self.pick(Coll::Gather, block, true);
        let call = gather::Even {
            mine,
            all,
            block,
            root,
        };
        gather::build(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Collects every rank's `send` at `root` (`MPI_Gather`): rank r's block
    /// lands at `recv[r*send.len()..]`. `recv` is required at the root and
    /// ignored elsewhere.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut all = vec![0i32; world.size() as usize];
    /// let recv = (world.rank() == 0).then_some(&mut all[..]);
    /// world.gather(&[world.rank()], recv, 0)?;
    /// if world.rank() == 0 {
    ///     assert!(all.iter().enumerate().all(|(r, &v)| v == r as i32));
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn gather<T: Scalar>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        root: i32,
    ) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_gather_slices(send, recv, root) }?.run()
    }

    /// Non-blocking [`Comm::gather`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut all = vec![0.0f32; world.size() as usize];
    /// let recv = (world.rank() == 0).then_some(&mut all[..]);
    /// let mine = [world.rank() as f32];
    /// let r = world.igather(&mine, recv, 0)?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn igather<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: Option<&'a mut [T]>,
        root: i32,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_gather_slices(send, recv, root) }?.start())
    }

    /// Checks the slices of [`Comm::igather`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_gather_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let at_root = self.is_root(root)?;
        let rp = match recv {
            Some(r) if at_root => {
                same_len("recvbuf", send.len() * self.peer_count() as usize, r.len())?;
                bytes_of_mut(r).0
            }
            None if at_root => return Err(root_needs("recvbuf")),
            _ => std::ptr::null_mut(),
        };
        let (sp, n) = bytes_of(send);
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_gather(Some(sp), n, rp, root) }
    }

    /// [`Comm::gather`] at the root with its own block already in place in
    /// `recv` (`MPI_IN_PLACE`); the other ranks call [`Comm::gather`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// if world.rank() == 0 {
    ///     let mut all = vec![0u32; p];
    ///     all[0] = 100; // the root's own block, already in place
    ///     world.gather_in_place(&mut all, 0)?;
    /// } else {
    ///     world.gather(&[100 + world.rank() as u32], None, 0)?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn gather_in_place<T: Scalar>(&self, recv: &mut [T], root: i32) -> Result<(), Error> {
        let n = per_rank("recvbuf", recv.len(), self.size() as usize)?;
        let (rp, _) = bytes_of_mut(recv);
        // SAFETY: run to completion before `recv`'s borrow ends.
        unsafe { self.plan_gather(None, n * std::mem::size_of::<T>(), rp, root) }?.run()
    }

    /// Starts a gatherv to `root` (`MPI_Igatherv`): rank r's `send_bytes`
    /// bytes land in block r of `recv` (`blocks` in bytes, significant at
    /// the root only). `send` is `None` for `MPI_IN_PLACE` at the root.
    ///
    /// # Safety
    /// `send` readable for `send_bytes` bytes and, at the root, every block
    /// of `recv` writable until the request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let mine = vec![1u8; world.rank() as usize]; // rank r sends r bytes
    /// let counts: Vec<usize> = (0..p).collect();
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut all = vec![0u8; counts.iter().sum()];
    /// let blocks = Blocks::new(&counts, &displs); // bytes, read at the root only
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (mine.as_ptr(), all.as_mut_ptr());
    /// let r = unsafe { world.igatherv_raw(Some(sp), mine.len(), rp, blocks, 0) }?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn igatherv_raw(
        &self,
        send: Option<*const u8>,
        send_bytes: usize,
        recv: *mut u8,
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_gatherv(send, send_bytes, recv, blocks, root)?
            .start())
    }

    /// Builds [`Comm::igatherv_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::igatherv_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let mine = vec![1u8; world.rank() as usize]; // rank r sends r bytes
    /// let counts: Vec<usize> = (0..p).collect();
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut all = vec![0u8; counts.iter().sum()];
    /// let blocks = Blocks::new(&counts, &displs); // bytes, read at the root only
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (mine.as_ptr(), all.as_mut_ptr());
    /// let r = unsafe { world.plan_gatherv(Some(sp), mine.len(), rp, blocks, 0) }?;
    /// r.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_gatherv(
        &self,
        send: Option<*const u8>,
        send_bytes: usize,
        recv: *mut u8,
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            return self.inter_gatherv(send, send_bytes, recv, blocks, root);
        }
        let root = self.root(root)?;
        let (p, rank) = (self.size() as usize, self.rank() as usize);
        let mut s = Schedule::new();
        let mut after = vec![];
        let (mine, parts) = if rank == root {
            blocks.check(p, "recvcounts", "displs")?;
            let parts = blocks.parts(span(recv, &blocks));
            let slot = parts[root];
            match send {
                None => (slot, parts),
                Some(ptr) => {
                    if send_bytes != slot.len {
                        return Err(Error::InvalidArgument {
                            arg: "sendcount",
                            reason: format!(
                                "the root sends {send_bytes} bytes but its recvcounts entry is {} bytes",
                                slot.len
                            ),
                        });
                    }
                    let mine = Schedule::user(ptr as *mut u8, send_bytes);
                    if !std::ptr::eq(ptr, recv.add(blocks.displs[root])) {
                        after.extend(s.copy_some(mine, slot, &[]));
                    }
                    (mine, parts)
                }
            }
        } else {
            let ptr = send.ok_or_else(|| in_place_not_root("sendbuf"))?;
            (Schedule::user(ptr as *mut u8, send_bytes), vec![])
        };
        let ctx = self.coll_ctx();
        let algo = self.pick(Coll::Gatherv, send_bytes, true);
        let call = gather::Parts {
            mine,
            parts: &parts,
            root,
        };
        gather::build_v(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Collects every rank's `send` (any length, zero included) at `root`
    /// into the blocks of `recv` (`MPI_Gatherv`); `recv` and `blocks`
    /// (element counts and displacements) are significant at the root only.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::coll::Blocks;
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).collect(); // rank r sends r elements
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut all = vec![0u8; counts.iter().sum()];
    /// let mine = vec![world.rank() as u8; world.rank() as usize];
    /// let root = world.rank() == 0;
    /// world.gatherv(&mine, root.then_some(&mut all[..]), Blocks::new(&counts, &displs), 0)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn gatherv<T: Scalar>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<(), Error> {
        self.igatherv(send, recv, blocks, root)?.wait().map(|_| ())
    }

    /// Non-blocking [`Comm::gatherv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![2usize; p];
    /// let displs: Vec<usize> = (0..p).map(|r| 3 * r).collect(); // a gap after each block
    /// let mut all = vec![-1i32; 3 * p];
    /// let root = world.rank() == 0;
    /// let mine = [world.rank(); 2];
    /// let blocks = Blocks::new(&counts, &displs);
    /// let r = world.igatherv(&mine, root.then_some(&mut all[..]), blocks, 0)?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn igatherv<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: Option<&'a mut [T]>,
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<Request<'a>, Error> {
        let at_root = self.is_root(root)?;
        let size = std::mem::size_of::<T>();
        let (rp, counts, displs) = match recv {
            Some(r) if at_root => {
                blocks.check(self.peer_count() as usize, "recvcounts", "displs")?;
                blocks.check_within(r.len(), "recvbuf")?;
                let (c, d) = blocks.bytes(size);
                (bytes_of_mut(r).0, c, d)
            }
            None if at_root => return Err(root_needs("recvbuf")),
            _ => (std::ptr::null_mut(), vec![], vec![]),
        };
        let (sp, n) = bytes_of(send);
        // SAFETY: the request borrows both slices; blocks were checked to lie inside `recv`.
        unsafe { self.igatherv_raw(Some(sp), n, rp, Blocks::new(&counts, &displs), root) }
    }

    /// [`Comm::gatherv`] at the root with its own block already in place
    /// (`MPI_IN_PLACE`); the other ranks call [`Comm::gatherv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r + 1).collect();
    /// let displs = Blocks::packed_displs(&counts);
    /// let mine = vec![world.rank(); world.rank() as usize + 1];
    /// if world.rank() == 0 {
    ///     let mut all = vec![0i32; counts.iter().sum()];
    ///     all[0] = 0; // the root's block is in place already
    ///     world.gatherv_in_place(&mut all, Blocks::new(&counts, &displs), 0)?;
    /// } else {
    ///     world.gatherv(&mine, None, Blocks::NONE, 0)?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn gatherv_in_place<T: Scalar>(
        &self,
        recv: &mut [T],
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<(), Error> {
        blocks.check(self.size() as usize, "recvcounts", "displs")?;
        blocks.check_within(recv.len(), "recvbuf")?;
        let (c, d) = blocks.bytes(std::mem::size_of::<T>());
        let (rp, _) = bytes_of_mut(recv);
        // SAFETY: run to completion before `recv`'s borrow ends.
        unsafe { self.plan_gatherv(None, 0, rp, Blocks::new(&c, &d), root) }?.run()
    }
}
