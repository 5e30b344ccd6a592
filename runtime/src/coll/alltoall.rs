//! Alltoall, alltoallv and alltoallw: every rank sends a block to every rank.

use super::algos::alltoall;
use super::blocks::{per_rank, same_len, span, Blocks};
use super::sched::Schedule;
use super::select::Coll;
use super::Planned;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::request::Request;

impl Comm {
    /// Starts an alltoall of `block` bytes per pair (`MPI_Ialltoall`):
    /// `send + j*block` goes to rank j, rank j's block lands at
    /// `recv + j*block`. `send` is `None` for `MPI_IN_PLACE` (the data to
    /// send is in `recv`, replaced by what arrives).
    ///
    /// # Safety
    /// `send` readable and `recv` writable for `size*block` bytes until the
    /// request completes; they must not overlap.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send = vec![world.rank() as u8; 4 * p]; // 4 bytes for each peer
    /// let mut recv = vec![0u8; 4 * p];
    /// // SAFETY: both buffers outlive the request and do not overlap.
    /// unsafe { world.ialltoall_raw(Some(send.as_ptr()), 4, recv.as_mut_ptr()) }?.wait()?;
    /// assert_eq!(recv[4 * (p - 1)], (p - 1) as u8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ialltoall_raw(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_alltoall(send, block, recv)?.start())
    }

    /// Builds [`Comm::ialltoall_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ialltoall_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send = vec![world.rank() as u8; 4 * p]; // 4 bytes for each peer
    /// let mut recv = vec![0u8; 4 * p];
    /// // SAFETY: both buffers outlive the request and do not overlap.
    /// unsafe { world.plan_alltoall(Some(send.as_ptr()), 4, recv.as_mut_ptr()) }?.run()?;
    /// assert_eq!(recv[4 * (p - 1)], (p - 1) as u8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub unsafe fn plan_alltoall(
        &self,
        send: Option<*const u8>,
        block: usize,
        recv: *mut u8,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let m = self.peer_count() as usize;
            let p = send.ok_or_else(|| super::intercomm::no_in_place("sendbuf"))?;
            let sb = super::user(p, m * block);
            let rb = Schedule::user(recv, m * block);
            let sparts: Vec<_> = (0..m).map(|j| sb.slice(j * block, block)).collect();
            let rparts: Vec<_> = (0..m).map(|j| rb.slice(j * block, block)).collect();
            return self.inter_exchange(&sparts, &rparts);
        }
        let p = self.size() as usize;
        let rbuf = Schedule::user(recv, p * block);
        let algo = self.pick(Coll::Alltoall, block, true);
        // In place too: a rank posts its whole input before it writes any
        // of its output.
        let sbuf = send.map_or(rbuf, |ptr| Schedule::user(ptr as *mut u8, p * block));
        let seq = self.call_seq(algo, p * block);
        let direct = || super::area::Op::Alltoall {
            send: sbuf,
            recv: rbuf,
            block,
        };
        if let Some(planned) = self.area_direct(seq, algo, p * block, direct) {
            return Ok(planned);
        }
        let ctx = self.coll_ctx_at(seq);
        let mut s = Schedule::new();
        let (sbuf, after) = match send {
            Some(ptr) => (Schedule::user(ptr as *mut u8, p * block), vec![]),
            None => {
                let tmp = s.temp(p * block);
                let c = s.copy_some(rbuf, tmp, &[]);
                (tmp, c.into_iter().collect())
            }
        };
        let call = alltoall::Even {
            send: sbuf,
            recv: rbuf,
            block,
        };
        alltoall::build(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Sends block j of `send` to rank j and receives rank j's block into
    /// block j of `recv` (`MPI_Alltoall`); blocks are `send.len() / size`
    /// elements.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank(), world.size());
    /// let send: Vec<i32> = (0..p).map(|j| me * 100 + j).collect();
    /// let mut recv = vec![0i32; p as usize];
    /// world.alltoall(&send, &mut recv)?;
    /// assert!(recv.iter().enumerate().all(|(j, &v)| v == j as i32 * 100 + me));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoall<T: Scalar>(&self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_alltoall_slices(send, recv) }?.run()
    }

    /// Non-blocking [`Comm::alltoall`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let send: Vec<u32> = (0..p as u32).collect(); // element j goes to rank j
    /// let mut recv = vec![0u32; p];
    /// let r = world.ialltoall(&send, &mut recv)?;
    /// r.wait()?;
    /// assert!(recv.iter().all(|&v| v == world.rank() as u32));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ialltoall<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_alltoall_slices(send, recv) }?.start())
    }

    /// Checks the slices of [`Comm::ialltoall`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_alltoall_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
    ) -> Result<Planned<'_>, Error> {
        let n = per_rank("sendbuf", send.len(), self.peer_count() as usize)?;
        same_len("recvbuf", send.len(), recv.len())?;
        let block = n * std::mem::size_of::<T>();
        // SAFETY: the request borrows both slices (distinct borrows cannot overlap).
        unsafe { self.plan_alltoall(Some(bytes_of(send).0), block, bytes_of_mut(recv).0) }
    }

    /// [`Comm::alltoall`] with the data to send in `buf`, replaced by the
    /// data received (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size();
    /// let mut buf: Vec<i32> = (0..p).map(|j| world.rank() * 100 + j).collect();
    /// world.alltoall_in_place(&mut buf)?; // block j now comes from rank j
    /// assert!(buf.iter().enumerate().all(|(j, &v)| v == j as i32 * 100 + world.rank()));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoall_in_place<T: Scalar>(&self, buf: &mut [T]) -> Result<(), Error> {
        let n = per_rank("recvbuf", buf.len(), self.size() as usize)?;
        let block = n * std::mem::size_of::<T>();
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe { self.plan_alltoall(None, block, bytes_of_mut(buf).0) }?.run()
    }

    /// Starts an alltoallv (`MPI_Ialltoallv`) on bytes: block j of `send`
    /// (`sblocks`) goes to rank j, rank j's block lands in block j of
    /// `recv` (`rblocks`). `send` is `None` for `MPI_IN_PLACE` (the data
    /// to send is in `recv`, laid out by `rblocks`; `sblocks` is ignored).
    ///
    /// # Safety
    /// Every block of `send` readable and of `recv` writable until the
    /// request completes; `send` and `recv` must not overlap.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![3usize; p]; // 3 bytes to and from every rank
    /// let displs = Blocks::packed_displs(&counts);
    /// let send = vec![world.rank() as u8; 3 * p];
    /// let mut recv = vec![0u8; 3 * p];
    /// let (sb, rb) = (Blocks::new(&counts, &displs), Blocks::new(&counts, &displs));
    /// // SAFETY: both buffers outlive the request and do not overlap.
    /// unsafe { world.ialltoallv_raw(Some(send.as_ptr()), sb, recv.as_mut_ptr(), rb) }?.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ialltoallv_raw(
        &self,
        send: Option<*const u8>,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_alltoallv(send, sblocks, recv, rblocks)?.start())
    }

    /// Builds [`Comm::ialltoallv_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ialltoallv_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![3usize; p]; // 3 bytes to and from every rank
    /// let displs = Blocks::packed_displs(&counts);
    /// let send = vec![world.rank() as u8; 3 * p];
    /// let mut recv = vec![0u8; 3 * p];
    /// let (sb, rb) = (Blocks::new(&counts, &displs), Blocks::new(&counts, &displs));
    /// // SAFETY: both buffers outlive the request and do not overlap.
    /// unsafe { world.plan_alltoallv(Some(send.as_ptr()), sb, recv.as_mut_ptr(), rb) }?.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_alltoallv(
        &self,
        send: Option<*const u8>,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        self.alltoallv_common(Coll::Alltoallv, send, sblocks, recv, rblocks)
    }

    /// Starts an alltoallw (`MPI_Ialltoallw`) with per-peer byte counts
    /// and byte displacements (per-peer datatypes come with the datatype
    /// engine; until then every block is bytes). Same arguments as
    /// [`Comm::ialltoallv_raw`].
    ///
    /// # Safety
    /// As for [`Comm::ialltoallv_raw`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let displs: Vec<usize> = (0..p).map(|j| 8 * j).collect(); // one byte per 8-byte slot
    /// let send = vec![world.rank() as u8; 8 * p];
    /// let mut recv = vec![0u8; 8 * p];
    /// let (sb, rb) = (Blocks::new(&counts, &displs), Blocks::new(&counts, &displs));
    /// // SAFETY: both buffers outlive the request and do not overlap.
    /// unsafe { world.ialltoallw_raw(Some(send.as_ptr()), sb, recv.as_mut_ptr(), rb) }?.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ialltoallw_raw(
        &self,
        send: Option<*const u8>,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Request<'static>, Error> {
        Ok(self.plan_alltoallw(send, sblocks, recv, rblocks)?.start())
    }

    /// Builds [`Comm::ialltoallw_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ialltoallw_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let displs: Vec<usize> = (0..p).map(|j| 8 * j).collect(); // one byte per 8-byte slot
    /// let send = vec![world.rank() as u8; 8 * p];
    /// let mut recv = vec![0u8; 8 * p];
    /// let (sb, rb) = (Blocks::new(&counts, &displs), Blocks::new(&counts, &displs));
    /// // SAFETY: both buffers outlive the request and do not overlap.
    /// unsafe { world.plan_alltoallw(Some(send.as_ptr()), sb, recv.as_mut_ptr(), rb) }?.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_alltoallw(
        &self,
        send: Option<*const u8>,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        self.alltoallv_common(Coll::Alltoallw, send, sblocks, recv, rblocks)
    }

    unsafe fn alltoallv_common(
        &self,
        coll: Coll,
        send: Option<*const u8>,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        if self.is_inter() {
            let m = self.peer_count() as usize;
            let p = send.ok_or_else(|| super::intercomm::no_in_place("sendbuf"))?;
            sblocks.check(m, "sendcounts", "sdispls")?;
            rblocks.check(m, "recvcounts", "rdispls")?;
            let sparts = sblocks.parts(span(p as *mut u8, &sblocks));
            let rparts = rblocks.parts(span(recv, &rblocks));
            return self.inter_exchange(&sparts, &rparts);
        }
        let p = self.size() as usize;
        rblocks.check(p, "recvcounts", "rdispls")?;
        let mut s = Schedule::new();
        let rspan = span(recv, &rblocks);
        let rparts = rblocks.parts(rspan);
        let (sparts, after, avg) = match send {
            Some(ptr) => {
                sblocks.check(p, "sendcounts", "sdispls")?;
                let sparts = sblocks.parts(span(ptr as *mut u8, &sblocks));
                (sparts, vec![], sblocks.total() / p)
            }
            None => {
                let tmp = s.temp(rspan.len);
                let c = s.copy_some(rspan, tmp, &[]);
                (
                    rblocks.parts(tmp),
                    c.into_iter().collect(),
                    rblocks.total() / p,
                )
            }
        };
        let ctx = self.coll_ctx();
        let algo = self.pick(coll, avg, true);
        let call = alltoall::Parts {
            send: &sparts,
            recv: &rparts,
        };
        alltoall::build_v(algo, &ctx, &mut s, &call, &after);
        Ok(self.plan(s))
    }

    /// Sends block j of `send` (`sblocks`: element counts and
    /// displacements, any sizes) to rank j and receives rank j's block
    /// into block j of `recv` (`rblocks`) (`MPI_Alltoallv`). Rank i's
    /// `sblocks.counts[j]` must equal rank j's `rblocks.counts[i]`.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// use oxmpi::coll::Blocks;
    /// let (me, p) = (world.rank() as usize, world.size() as usize);
    /// // Rank i sends i+1 elements to everyone.
    /// let scounts = vec![me + 1; p];
    /// let rcounts: Vec<usize> = (0..p).map(|j| j + 1).collect();
    /// let (sd, rd) = (Blocks::packed_displs(&scounts), Blocks::packed_displs(&rcounts));
    /// let send = vec![me as u32; (me + 1) * p];
    /// let mut recv = vec![0u32; rcounts.iter().sum()];
    /// world.alltoallv(&send, Blocks::new(&scounts, &sd), &mut recv, Blocks::new(&rcounts, &rd))?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoallv<T: Scalar>(
        &self,
        send: &[T],
        sblocks: Blocks<'_>,
        recv: &mut [T],
        rblocks: Blocks<'_>,
    ) -> Result<(), Error> {
        self.ialltoallv(send, sblocks, recv, rblocks)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::alltoallv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (me, p) = (world.rank() as usize, world.size() as usize);
    /// let scounts: Vec<usize> = (0..p).map(|j| j + 1).collect(); // j+1 items to rank j
    /// let rcounts = vec![me + 1; p]; // so everyone sends me me+1 items
    /// let (sd, rd) = (Blocks::packed_displs(&scounts), Blocks::packed_displs(&rcounts));
    /// let send = vec![me as i64; scounts.iter().sum()];
    /// let mut recv = vec![0i64; rcounts.iter().sum()];
    /// let (sb, rb) = (Blocks::new(&scounts, &sd), Blocks::new(&rcounts, &rd));
    /// let r = world.ialltoallv(&send, sb, &mut recv, rb)?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ialltoallv<'a, T: Scalar>(
        &self,
        send: &'a [T],
        sblocks: Blocks<'_>,
        recv: &'a mut [T],
        rblocks: Blocks<'_>,
    ) -> Result<Request<'a>, Error> {
        let p = self.peer_count() as usize;
        sblocks.check(p, "sendcounts", "sdispls")?;
        rblocks.check(p, "recvcounts", "rdispls")?;
        sblocks.check_within(send.len(), "sendbuf")?;
        rblocks.check_within(recv.len(), "recvbuf")?;
        let size = std::mem::size_of::<T>();
        let (sc, sd) = sblocks.bytes(size);
        let (rc, rd) = rblocks.bytes(size);
        // SAFETY: the request borrows both slices; blocks were checked to lie inside them.
        unsafe {
            self.ialltoallv_raw(
                Some(bytes_of(send).0),
                Blocks::new(&sc, &sd),
                bytes_of_mut(recv).0,
                Blocks::new(&rc, &rd),
            )
        }
    }

    /// [`Comm::alltoallv`] with the data to send in `buf`, laid out by
    /// `blocks`, replaced by the data received (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![2usize; p];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut buf = vec![world.rank() as u16; 2 * p];
    /// world.alltoallv_in_place(&mut buf, Blocks::new(&counts, &displs))?;
    /// assert_eq!(buf[2 * (p - 1)], (p - 1) as u16);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoallv_in_place<T: Scalar>(
        &self,
        buf: &mut [T],
        blocks: Blocks<'_>,
    ) -> Result<(), Error> {
        blocks.check(self.size() as usize, "recvcounts", "rdispls")?;
        blocks.check_within(buf.len(), "recvbuf")?;
        let (c, d) = blocks.bytes(std::mem::size_of::<T>());
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe {
            self.plan_alltoallv(None, Blocks::NONE, bytes_of_mut(buf).0, Blocks::new(&c, &d))
        }?
        .run()
    }

    /// [`Comm::alltoallv`] with byte counts and byte displacements per peer
    /// (`MPI_Alltoallw` where every datatype is `MPI_BYTE`).
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// // Byte counts and byte displacements per peer: a u32 to each rank.
    /// let counts = vec![4usize; p];
    /// let displs = Blocks::packed_displs(&counts);
    /// let send: Vec<u8> = (0..p as u32).flat_map(|j| j.to_ne_bytes()).collect();
    /// let mut recv = vec![0u8; 4 * p];
    /// let blocks = Blocks::new(&counts, &displs); // the same on both sides here
    /// world.alltoallw(&send, blocks, &mut recv, blocks)?;
    /// assert_eq!(recv[..4], (world.rank() as u32).to_ne_bytes());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoallw(
        &self,
        send: &[u8],
        sblocks: Blocks<'_>,
        recv: &mut [u8],
        rblocks: Blocks<'_>,
    ) -> Result<(), Error> {
        self.ialltoallw(send, sblocks, recv, rblocks)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::alltoallw`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let displs = Blocks::packed_displs(&counts);
    /// let send = vec![world.rank() as u8; p];
    /// let mut recv = vec![0u8; p];
    /// let blocks = Blocks::new(&counts, &displs);
    /// let r = world.ialltoallw(&send, blocks, &mut recv, blocks)?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ialltoallw<'a>(
        &self,
        send: &'a [u8],
        sblocks: Blocks<'_>,
        recv: &'a mut [u8],
        rblocks: Blocks<'_>,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_alltoallw_slices(send, sblocks, recv, rblocks) }?.start())
    }

    /// Checks the slices of [`Comm::ialltoallw`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_alltoallw_slices(
        &self,
        send: &[u8],
        sblocks: Blocks<'_>,
        recv: &mut [u8],
        rblocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        let p = self.peer_count() as usize;
        sblocks.check(p, "sendcounts", "sdispls")?;
        rblocks.check(p, "recvcounts", "rdispls")?;
        sblocks.check_within(send.len(), "sendbuf")?;
        rblocks.check_within(recv.len(), "recvbuf")?;
        // SAFETY: the request borrows both slices; blocks were checked to lie inside them.
        unsafe { self.plan_alltoallw(Some(send.as_ptr()), sblocks, recv.as_mut_ptr(), rblocks) }
    }

    /// [`Comm::alltoallw`] with the data to send in `buf`, replaced by the
    /// data received (`MPI_IN_PLACE`).
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let p = world.size() as usize;
    /// let counts = vec![1usize; p];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut buf = vec![world.rank() as u8; p];
    /// world.alltoallw_in_place(&mut buf, Blocks::new(&counts, &displs))?;
    /// assert_eq!(buf[p - 1], (p - 1) as u8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoallw_in_place(&self, buf: &mut [u8], blocks: Blocks<'_>) -> Result<(), Error> {
        blocks.check(self.size() as usize, "recvcounts", "rdispls")?;
        blocks.check_within(buf.len(), "recvbuf")?;
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe { self.plan_alltoallw(None, Blocks::NONE, buf.as_mut_ptr(), blocks) }?.run()
    }
}
