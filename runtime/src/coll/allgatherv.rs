//! Allgatherv: every rank's block (any size) gathered on every rank.

use super::algos::allgatherv;
use super::blocks::{span, Blocks};
use super::sched::Schedule;
use super::select::Coll;
use super::Planned;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::request::Request;

impl Comm {
    /// Starts an allgatherv (`MPI_Iallgatherv`): this rank's `send_bytes`
    /// bytes land in its block of `recv` on every rank (`blocks` in bytes,
    /// the same on every rank). `send` is `None` for `MPI_IN_PLACE` (the
    /// block is already in place).
    ///
    /// # Safety
    /// `send` readable for `send_bytes` bytes and every block of `recv`
    /// writable until the request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r + 1).collect(); // bytes
    /// let displs = Blocks::packed_displs(&counts);
    /// let mine = vec![world.rank() as u8; world.rank() as usize + 1];
    /// let mut all = vec![0u8; counts.iter().sum()];
    /// let blocks = Blocks::new(&counts, &displs);
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (mine.as_ptr(), all.as_mut_ptr());
    /// let r = unsafe { world.iallgatherv_raw(Some(sp), mine.len(), rp, blocks) }?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn iallgatherv_raw(
        &self,
        send: Option<*const u8>,
        send_bytes: usize,
        recv: *mut u8,
        blocks: Blocks<'_>,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_allgatherv(send, send_bytes, recv, blocks)?
            .start())
    }

    /// Builds [`Comm::iallgatherv_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::iallgatherv_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r + 1).collect(); // bytes
    /// let displs = Blocks::packed_displs(&counts);
    /// let mine = vec![world.rank() as u8; world.rank() as usize + 1];
    /// let mut all = vec![0u8; counts.iter().sum()];
    /// let blocks = Blocks::new(&counts, &displs);
    /// // SAFETY: both buffers outlive the request, which is waited on below.
    /// let (sp, rp) = (mine.as_ptr(), all.as_mut_ptr());
    /// let r = unsafe { world.plan_allgatherv(Some(sp), mine.len(), rp, blocks) }?;
    /// r.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_allgatherv(
        &self,
        send: Option<*const u8>,
        send_bytes: usize,
        recv: *mut u8,
        blocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let m = self.peer_count() as usize;
            blocks.check(m, "recvcounts", "displs")?;
            let p = send.ok_or_else(|| super::intercomm::no_in_place("sendbuf"))?;
            let sparts = vec![super::user(p, send_bytes); m];
            let rparts = blocks.parts(span(recv, &blocks));
            return self.inter_exchange(&sparts, &rparts);
        }
        let (p, rank) = (self.size() as usize, self.rank() as usize);
        blocks.check(p, "recvcounts", "displs")?;
        let parts = blocks.parts(span(recv, &blocks));
        let mut s = Schedule::new();
        let mut after = vec![];
        if let Some(ptr) = send {
            if send_bytes != parts[rank].len {
                return Err(Error::InvalidArgument {
                    arg: "sendcount",
                    reason: format!(
                        "rank {rank} sends {send_bytes} bytes but its recvcounts entry is {} bytes",
                        parts[rank].len
                    ),
                });
            }
            if !std::ptr::eq(ptr, recv.add(blocks.displs[rank])) {
                let mine = Schedule::user(ptr as *mut u8, send_bytes);
                after.extend(s.copy_some(mine, parts[rank], &[]));
            }
        }
        let ctx = self.coll_ctx();
        let algo = self.pick(Coll::Allgatherv, blocks.total() / p, true);
        allgatherv::build(algo, &ctx, &mut s, &parts, &after);
        Ok(self.plan(s))
    }

    /// Gathers every rank's `send` (any length, zero included) into the
    /// blocks of `recv` on every rank (`MPI_Allgatherv`); `blocks` holds
    /// element counts and displacements, the same on every rank.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::coll::Blocks;
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| r % 3).collect();
    /// let displs = Blocks::packed_displs(&counts);
    /// let mine = vec![world.rank(); counts[world.rank() as usize]];
    /// let mut all = vec![0i32; counts.iter().sum()];
    /// world.allgatherv(&mine, &mut all, Blocks::new(&counts, &displs))?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allgatherv<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        blocks: Blocks<'_>,
    ) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_allgatherv_slices(send, recv, blocks) }?.run()
    }

    /// Non-blocking [`Comm::allgatherv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts: Vec<usize> = (0..p).map(|r| 1 + r % 2).collect();
    /// let displs = Blocks::packed_displs(&counts);
    /// let mine = vec![world.rank() as f64; counts[world.rank() as usize]];
    /// let mut all = vec![0.0f64; counts.iter().sum()];
    /// let r = world.iallgatherv(&mine, &mut all, Blocks::new(&counts, &displs))?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iallgatherv<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        blocks: Blocks<'_>,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_allgatherv_slices(send, recv, blocks) }?.start())
    }

    /// Checks the slices of [`Comm::iallgatherv`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_allgatherv_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        blocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        blocks.check(self.peer_count() as usize, "recvcounts", "displs")?;
        blocks.check_within(recv.len(), "recvbuf")?;
        let (c, d) = blocks.bytes(std::mem::size_of::<T>());
        let (sp, n) = bytes_of(send);
        // SAFETY: the request borrows both slices; blocks were checked to lie inside `recv`.
        unsafe { self.plan_allgatherv(Some(sp), n, bytes_of_mut(recv).0, Blocks::new(&c, &d)) }
    }

    /// [`Comm::allgatherv`] with this rank's block already in place in
    /// `recv` (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut all = vec![0i32; p];
    /// all[world.rank() as usize] = world.rank() * 10; // my block, in place
    /// world.allgatherv_in_place(&mut all, Blocks::new(&counts, &displs))?;
    /// assert_eq!(all[p - 1], (p as i32 - 1) * 10);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allgatherv_in_place<T: Scalar>(
        &self,
        recv: &mut [T],
        blocks: Blocks<'_>,
    ) -> Result<(), Error> {
        blocks.check(self.size() as usize, "recvcounts", "displs")?;
        blocks.check_within(recv.len(), "recvbuf")?;
        let (c, d) = blocks.bytes(std::mem::size_of::<T>());
        // SAFETY: run to completion before `recv`'s borrow ends.
        unsafe { self.plan_allgatherv(None, 0, bytes_of_mut(recv).0, Blocks::new(&c, &d)) }?.run()
    }
}
