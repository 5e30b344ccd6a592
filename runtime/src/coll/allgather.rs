//! Allgather: its raw, planned and slice forms.

use super::blocks::same_len;
use super::sched::Schedule;
use super::select::Coll;
use super::{algos, user, Planned};
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::request::Request;

impl Comm {
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
    #[inline(always)]
    pub unsafe fn plan_allgather(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let m = self.peer_count() as usize;
            let p = send.ok_or_else(|| super::intercomm::no_in_place("sendbuf"))?;
            let sparts = vec![super::user(p, block); m];
            let rparts: Vec<_> = (0..m)
                .map(|j| Schedule::user(recv, m * block).slice(j * block, block))
                .collect();
            return self.inter_exchange(&sparts, &rparts);
        }
        let p = self.size() as usize;
        let buf = Schedule::user(recv, p * block);
        let mine = buf.slice(self.rank() as usize * block, block);
        let algo = self.pick(Coll::Allgather, block, true);
        let input = send.map_or(mine, |ptr| user(ptr, block));
        let seq = self.call_seq(algo, block);
        let direct = || super::area::Op::Allgather { input, buf, block };
        if let Some(planned) = self.area_direct(seq, algo, block, direct) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
        let mut s = Schedule::new();
        let after: Vec<usize> = match send {
            Some(ptr) if !std::ptr::eq(ptr, recv.add(self.rank() as usize * block)) => {
                vec![s.copy(user(ptr, block), mine, &[])]
            }
            _ => vec![],
        };
        let call = algos::allgather::Gathered { buf, block };
        algos::allgather::build(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
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
        same_len("recv", send.len() * self.peer_count() as usize, recv.len())?;
        let (sp, n) = bytes_of(send);
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_allgather(Some(sp), n, bytes_of_mut(recv).0) }
    }
}
