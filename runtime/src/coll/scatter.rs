//! Scatter and scatterv: the root's blocks handed out, one per rank.

use super::algos::scatter;
use super::blocks::{in_place_not_root, per_rank, root_needs, same_len, span, Blocks};
use super::sched::Schedule;
use super::select::Coll;
use super::Planned;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::request::Request;

impl Comm {
    /// Starts a scatter of `block` bytes per rank from `root`
    /// (`MPI_Iscatter`): `send + r*block` (read at the root only) lands in
    /// rank r's `recv`. `recv` is `None` for `MPI_IN_PLACE`, valid at the
    /// root only (its block stays in `send`).
    ///
    /// # Safety
    /// At the root `send` readable for `size*block` bytes; `recv` writable
    /// for `block` bytes, until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let all: Vec<u8> = (0..p).flat_map(|r| [r as u8; 8]).collect(); // read at the root only
    /// let mut mine = [0u8; 8];
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// unsafe { world.iscatter_raw(all.as_ptr(), 8, Some(mine.as_mut_ptr()), 0) }?.wait()?;
    /// assert_eq!(mine, [world.rank() as u8; 8]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iscatter_raw(
        &self,
        send: *const u8,
        block: usize,
        recv: Option<*mut u8>,
        root: i32,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_scatter(send, block, recv, root)?.start())
    }

    /// Builds [`Comm::iscatter_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iscatter_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let all: Vec<u8> = (0..p).flat_map(|r| [r as u8; 8]).collect(); // read at the root only
    /// let mut mine = [0u8; 8];
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// unsafe { world.plan_scatter(all.as_ptr(), 8, Some(mine.as_mut_ptr()), 0) }?.run()?;
    /// assert_eq!(mine, [world.rank() as u8; 8]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_scatter(
        &self,
        send: *const u8,
        block: usize,
        recv: Option<*mut u8>,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let m = self.peer_count() as usize;
            let counts = vec![block; m];
            let displs: Vec<usize> = (0..m).map(|j| j * block).collect();
            return self.inter_scatterv(send, Blocks::new(&counts, &displs), recv, block, root);
        }
        let root = self.root(root)?;
        let (p, rank) = (self.size() as usize, self.rank() as usize);
        if recv.is_none() && rank != root {
            return Err(in_place_not_root("recvbuf"));
        }
        let mut s = Schedule::new();
        let all = Schedule::user(send as *mut u8, p * block);
        let slot = all.slice(root * block, block);
        let mine = recv.map_or(slot, |ptr| Schedule::user(ptr, block));
        let after: Vec<usize> = match recv {
            Some(ptr) if rank == root && !std::ptr::eq(ptr, send.add(root * block)) => {
                s.copy_some(slot, mine, &[]).into_iter().collect()
            }
            _ => vec![],
        };
        let ctx = self.coll_ctx();
        let algo = self.pick(Coll::Scatter, block, true);
        let call = scatter::Even {
            mine,
            all,
            block,
            root,
        };
        scatter::build(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Hands block r of the root's `send` to rank r's `recv`
    /// (`MPI_Scatter`); `send` is required at the root and ignored elsewhere.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all: Vec<i32> = (0..world.size()).map(|r| r * 10).collect();
    /// let send = (world.rank() == 0).then_some(&all[..]);
    /// let mut mine = [0i32];
    /// world.scatter(send, &mut mine, 0)?;
    /// assert_eq!(mine[0], world.rank() * 10);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scatter<T: Scalar>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        root: i32,
    ) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_scatter_slices(send, recv, root) }?.run()
    }

    /// Non-blocking [`Comm::scatter`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let work: Vec<u64> = (0..world.size() as u64 * 2).collect();
    /// let send = (world.rank() == 0).then_some(&work[..]);
    /// let mut mine = [0u64; 2];
    /// let r = world.iscatter(send, &mut mine, 0)?;
    /// r.wait()?;
    /// assert_eq!(mine[0], 2 * world.rank() as u64);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iscatter<'a, T: Scalar>(
        &self,
        send: Option<&'a [T]>,
        recv: &'a mut [T],
        root: i32,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_scatter_slices(send, recv, root) }?.start())
    }

    /// Checks the slices of [`Comm::iscatter`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_scatter_slices<T: Scalar>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        let at_root = self.is_root(root)?;
        let sp = match send {
            Some(s) if at_root => {
                same_len("sendbuf", recv.len() * self.peer_count() as usize, s.len())?;
                bytes_of(s).0
            }
            None if at_root => return Err(root_needs("sendbuf")),
            _ => std::ptr::null(),
        };
        let (rp, n) = bytes_of_mut(recv);
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_scatter(sp, n, Some(rp), root) }
    }

    /// [`Comm::scatter`] at the root, which keeps its own block in `send`
    /// (`MPI_IN_PLACE`); the other ranks call [`Comm::scatter`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size();
    /// if world.rank() == 0 {
    ///     let work: Vec<i32> = (0..p).collect();
    ///     world.scatter_in_place(&work, 0)?; // rank 0 keeps work[0] where it is
    /// } else {
    ///     let mut mine = [0i32];
    ///     world.scatter(None, &mut mine, 0)?;
    ///     assert_eq!(mine[0], world.rank());
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scatter_in_place<T: Scalar>(&self, send: &[T], root: i32) -> Result<(), Error> {
        let n = per_rank("sendbuf", send.len(), self.size() as usize)?;
        let (sp, _) = bytes_of(send);
        // SAFETY: run to completion before `send`'s borrow ends.
        unsafe { self.plan_scatter(sp, n * std::mem::size_of::<T>(), None, root) }?.run()
    }

    /// Starts a scatterv from `root` (`MPI_Iscatterv`): block r of `send`
    /// (`blocks` in bytes, significant at the root only) lands in rank r's
    /// `recv` of `recv_bytes` bytes. `recv` is `None` for `MPI_IN_PLACE`
    /// at the root.
    ///
    /// # Safety
    /// At the root every block of `send` readable; `recv` writable for
    /// `recv_bytes` bytes, until the request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r + 1).collect(); // bytes
    /// let displs = Blocks::packed_displs(&counts);
    /// let all = vec![9u8; counts.iter().sum()];
    /// let mut mine = vec![0u8; world.rank() as usize + 1];
    /// let blocks = Blocks::new(&counts, &displs);
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (all.as_ptr(), mine.as_mut_ptr());
    /// let r = unsafe { world.iscatterv_raw(sp, blocks, Some(rp), mine.len(), 0) }?;
    /// r.wait()?;
    /// assert!(mine.iter().all(|&b| b == 9));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iscatterv_raw(
        &self,
        send: *const u8,
        blocks: Blocks<'_>,
        recv: Option<*mut u8>,
        recv_bytes: usize,
        root: i32,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_scatterv(send, blocks, recv, recv_bytes, root)?
            .start())
    }

    /// Builds [`Comm::iscatterv_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iscatterv_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r + 1).collect(); // bytes
    /// let displs = Blocks::packed_displs(&counts);
    /// let all = vec![9u8; counts.iter().sum()];
    /// let mut mine = vec![0u8; world.rank() as usize + 1];
    /// let blocks = Blocks::new(&counts, &displs);
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (all.as_ptr(), mine.as_mut_ptr());
    /// let r = unsafe { world.plan_scatterv(sp, blocks, Some(rp), mine.len(), 0) }?;
    /// r.run()?;
    /// assert!(mine.iter().all(|&b| b == 9));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_scatterv(
        &self,
        send: *const u8,
        blocks: Blocks<'_>,
        recv: Option<*mut u8>,
        recv_bytes: usize,
        root: i32,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            return self.inter_scatterv(send, blocks, recv, recv_bytes, root);
        }
        let root = self.root(root)?;
        let (p, rank) = (self.size() as usize, self.rank() as usize);
        let mut s = Schedule::new();
        let mut after = vec![];
        let (parts, mine) = if rank == root {
            blocks.check(p, "sendcounts", "displs")?;
            let parts = blocks.parts(span(send as *mut u8, &blocks));
            let slot = parts[root];
            match recv {
                None => (parts, slot),
                Some(ptr) => {
                    if recv_bytes != slot.len {
                        return Err(Error::InvalidArgument {
                            arg: "recvcount",
                            reason: format!(
                                "the root receives {recv_bytes} bytes but its sendcounts entry is {} bytes",
                                slot.len
                            ),
                        });
                    }
                    let mine = Schedule::user(ptr, recv_bytes);
                    if !std::ptr::eq(ptr, send.add(blocks.displs[root])) {
                        after.extend(s.copy_some(slot, mine, &[]));
                    }
                    (parts, mine)
                }
            }
        } else {
            let ptr = recv.ok_or_else(|| in_place_not_root("recvbuf"))?;
            (vec![], Schedule::user(ptr, recv_bytes))
        };
        let ctx = self.coll_ctx();
        let algo = self.pick(Coll::Scatterv, recv_bytes, true);
        let call = scatter::Parts {
            mine,
            parts: &parts,
            root,
        };
        scatter::build_v(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Hands block r of the root's `send` (any length, zero included) to
    /// rank r's `recv` (`MPI_Scatterv`); `send` and `blocks` (element
    /// counts and displacements) are significant at the root only.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// // Uneven shares of 10 items: the first ranks get one more.
    /// let counts: Vec<usize> = (0..p).map(|r| 10 / p + usize::from(r < 10 % p)).collect();
    /// let displs = Blocks::packed_displs(&counts);
    /// let items: Vec<u32> = (0..10).collect();
    /// let mut mine = vec![0u32; counts[world.rank() as usize]];
    /// let send = (world.rank() == 0).then_some(&items[..]);
    /// world.scatterv(send, Blocks::new(&counts, &displs), &mut mine, 0)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scatterv<T: Scalar>(
        &self,
        send: Option<&[T]>,
        blocks: Blocks<'_>,
        recv: &mut [T],
        root: i32,
    ) -> Result<(), Error> {
        self.iscatterv(send, blocks, recv, root)?.wait().map(|_| ())
    }

    /// Non-blocking [`Comm::scatterv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let displs: Vec<usize> = (0..p).rev().collect(); // rank r gets item p-1-r
    /// let items: Vec<i32> = (0..p as i32).collect();
    /// let mut mine = [0i32];
    /// let send = (world.rank() == 0).then_some(&items[..]);
    /// let r = world.iscatterv(send, Blocks::new(&counts, &displs), &mut mine, 0)?;
    /// r.wait()?;
    /// assert_eq!(mine[0], p as i32 - 1 - world.rank());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iscatterv<'a, T: Scalar>(
        &self,
        send: Option<&'a [T]>,
        blocks: Blocks<'_>,
        recv: &'a mut [T],
        root: i32,
    ) -> Result<Request<'a>, Error> {
        let at_root = self.is_root(root)?;
        let size = std::mem::size_of::<T>();
        let (sp, counts, displs) = match send {
            Some(sb) if at_root => {
                blocks.check(self.peer_count() as usize, "sendcounts", "displs")?;
                blocks.check_within(sb.len(), "sendbuf")?;
                let (c, d) = blocks.bytes(size);
                (bytes_of(sb).0, c, d)
            }
            None if at_root => return Err(root_needs("sendbuf")),
            _ => (std::ptr::null(), vec![], vec![]),
        };
        let (rp, n) = bytes_of_mut(recv);
        // SAFETY: the request borrows both slices; blocks were checked to lie inside `send`.
        unsafe { self.iscatterv_raw(sp, Blocks::new(&counts, &displs), Some(rp), n, root) }
    }

    /// [`Comm::scatterv`] at the root, which keeps its own block in `send`
    /// (`MPI_IN_PLACE`); the other ranks call [`Comm::scatterv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![2usize; p];
    /// let displs = Blocks::packed_displs(&counts);
    /// if world.rank() == 0 {
    ///     let items = vec![7u8; 2 * p];
    ///     world.scatterv_in_place(&items, Blocks::new(&counts, &displs), 0)?;
    /// } else {
    ///     let mut mine = [0u8; 2];
    ///     world.scatterv(None, Blocks::NONE, &mut mine, 0)?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scatterv_in_place<T: Scalar>(
        &self,
        send: &[T],
        blocks: Blocks<'_>,
        root: i32,
    ) -> Result<(), Error> {
        blocks.check(self.size() as usize, "sendcounts", "displs")?;
        blocks.check_within(send.len(), "sendbuf")?;
        let (c, d) = blocks.bytes(std::mem::size_of::<T>());
        let (sp, _) = bytes_of(send);
        // SAFETY: run to completion before `send`'s borrow ends.
        unsafe { self.plan_scatterv(sp, Blocks::new(&c, &d), None, 0, root) }?.run()
    }
}
