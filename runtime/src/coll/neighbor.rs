//! Neighborhood collectives (`MPI_Neighbor_allgather(v)`,
//! `MPI_Neighbor_alltoall(v,w)`) on communicators with a topology: every
//! rank sends to each of its out-neighbors and receives from each of its
//! in-neighbors, in the order [`Comm::neighbors`] gives, in one schedule
//! step (all sends and receives at once).
//!
//! `PROC_NULL` neighbors (open grid edges) are skipped: their receive
//! blocks are left untouched.
//!
//! A neighbor may appear more than once (a periodic grid dimension of
//! extent 1 or 2, where the rank at -1 is also the rank at +1; repeated
//! graph edges). Then the messages between the two ranks pair up in
//! reverse: of the m messages rank a sends to rank b, the k-th fills b's
//! (m-1-k)-th block from a. On a grid this is the geometric meaning: what
//! a sends towards +1 arrives in b's block for -1, which is where b sees
//! a; and it is what MPICH does (it posts the receives in reverse order),
//! so programs get the same results on both. The step field of the tag
//! makes the pairing explicit (k-th message = step k), so it does not
//! depend on the order messages arrive in.

use super::blocks::{same_len, span, Blocks};
use super::sched::{Buf, Schedule};
use super::user;
use super::Planned;
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::fast_hash::FastMap;
use crate::request::Request;
use crate::status::PROC_NULL;
use crate::topo::Neighbors;

/// Checks per-neighbor blocks: one count and one displacement for each of
/// `degree` neighbors (`which`: "in" or "out").
fn check_blocks(
    b: &Blocks<'_>,
    degree: usize,
    which: &str,
    counts_arg: &'static str,
    displs_arg: &'static str,
) -> Result<(), Error> {
    for (arg, len) in [(counts_arg, b.counts.len()), (displs_arg, b.displs.len())] {
        if len != degree {
            return Err(Error::InvalidArgument {
                arg,
                reason: format!("has {len} entries for {degree} {which}-neighbors"),
            });
        }
    }
    Ok(())
}

/// How often each peer came up so far in a list of neighbors.
#[derive(Default)]
struct Occurrences(FastMap<i32, usize>);

impl Occurrences {
    /// The occurrence number of `peer` now (0 the first time).
    fn next(&mut self, peer: i32) -> usize {
        let k = self.0.entry(peer).or_insert(0);
        *k += 1;
        *k - 1
    }

    /// How often `peer` came up.
    fn count(&self, peer: i32) -> usize {
        self.0.get(&peer).copied().unwrap_or(0)
    }
}

/// `n` consecutive blocks of `block` bytes of `buf`.
fn cut(buf: Buf, block: usize, n: usize) -> Vec<Buf> {
    (0..n).map(|i| buf.slice(i * block, block)).collect()
}

/// The block size of a typed alltoall: `send` holds `outdeg` blocks and
/// `recv` `indeg` blocks of the same size.
fn uniform_block(send: usize, recv: usize, n: &Neighbors) -> Result<usize, Error> {
    let (outdeg, indeg) = (n.destinations.len(), n.sources.len());
    let block = match (outdeg, indeg) {
        (0, 0) => 0,
        (0, i) => recv / i,
        (o, _) => send / o,
    };
    if block * outdeg != send {
        return Err(Error::InvalidArgument {
            arg: "sendbuf",
            reason: format!("holds {send} elements, not a multiple of the {outdeg} out-neighbors"),
        });
    }
    same_len("recvbuf", block * indeg, recv)?;
    Ok(block)
}

impl Comm {
    /// The schedule of every neighborhood collective: `sends[j]` to
    /// out-neighbor j and `recvs[i]` from in-neighbor i, all at once.
    fn neighbor_exchange(
        &self,
        n: &Neighbors,
        sends: &[Buf],
        recvs: &[Buf],
    ) -> Result<Planned<'_>, Error> {
        let ctx = self.coll_ctx();
        let mut s = Schedule::new();
        let mut sent = Occurrences::default();
        for (&d, &b) in n.destinations.iter().zip(sends) {
            if d != PROC_NULL {
                s.send(ctx.world(d as usize), ctx.tag(sent.next(d)), b, &[]);
            }
        }
        let mut total = Occurrences::default();
        for &src in &n.sources {
            total.next(src);
        }
        let mut received = Occurrences::default();
        for (&src, &b) in n.sources.iter().zip(recvs) {
            if src != PROC_NULL {
                let k = received.next(src);
                s.recv(src, ctx.tag(total.count(src) - 1 - k), b, &[]);
            }
        }
        Ok(self.plan(s))
    }

    /// Starts a neighbor allgather (`MPI_Ineighbor_allgather`) on bytes:
    /// `len` bytes at `send` go to every out-neighbor; in-neighbor i's
    /// `block` bytes land at `recv + i*block`.
    ///
    /// # Safety
    /// `send` readable for `len` bytes and `recv` writable for
    /// `indegree*block` bytes until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let mine = [ring.rank() as u8];
    /// let mut got = [0u8; 2]; // a byte from the left neighbor, then one from the right
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.ineighbor_allgather_raw(mine.as_ptr(), 1, got.as_mut_ptr(), 1) }?.wait()?;
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got, [left as u8, right as u8]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ineighbor_allgather_raw(
        &self,
        send: *const u8,
        len: usize,
        recv: *mut u8,
        block: usize,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_neighbor_allgather(send, len, recv, block)?
            .start())
    }

    /// Builds [`Comm::ineighbor_allgather_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ineighbor_allgather_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let mine = [ring.rank() as u8];
    /// let mut got = [0u8; 2]; // a byte from the left neighbor, then one from the right
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.plan_neighbor_allgather(mine.as_ptr(), 1, got.as_mut_ptr(), 1) }?.run()?;
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got, [left as u8, right as u8]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_neighbor_allgather(
        &self,
        send: *const u8,
        len: usize,
        recv: *mut u8,
        block: usize,
    ) -> Result<Planned<'_>, Error> {
        let n = self.neighbors()?;
        let indeg = n.sources.len();
        let sends = vec![user(send, len); n.destinations.len()];
        let recvs = cut(Schedule::user(recv, indeg * block), block, indeg);
        self.neighbor_exchange(&n, &sends, &recvs)
    }

    /// Starts a neighbor allgatherv (`MPI_Ineighbor_allgatherv`) on bytes:
    /// `len` bytes at `send` go to every out-neighbor; in-neighbor i's data
    /// lands in block i of `rblocks` (one block per in-neighbor).
    ///
    /// # Safety
    /// `send` readable for `len` bytes and every block of `recv` writable
    /// until the request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// let mine = vec![ring.rank() as u8; ring.rank() as usize + 1]; // rank r sends r + 1 bytes
    /// let counts = [left as usize + 1, right as usize + 1];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut got = vec![0u8; counts[0] + counts[1]];
    /// let rblocks = Blocks::new(&counts, &displs);
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.ineighbor_allgatherv_raw(mine.as_ptr(), mine.len(), got.as_mut_ptr(), rblocks) }?
    ///     .wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ineighbor_allgatherv_raw(
        &self,
        send: *const u8,
        len: usize,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_neighbor_allgatherv(send, len, recv, rblocks)?
            .start())
    }

    /// Builds [`Comm::ineighbor_allgatherv_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ineighbor_allgatherv_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// let mine = vec![ring.rank() as u8; ring.rank() as usize + 1]; // rank r sends r + 1 bytes
    /// let counts = [left as usize + 1, right as usize + 1];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut got = vec![0u8; counts[0] + counts[1]];
    /// let rblocks = Blocks::new(&counts, &displs);
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.plan_neighbor_allgatherv(mine.as_ptr(), mine.len(), got.as_mut_ptr(), rblocks) }?
    ///     .run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_neighbor_allgatherv(
        &self,
        send: *const u8,
        len: usize,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        let n = self.neighbors()?;
        check_blocks(&rblocks, n.sources.len(), "in", "recvcounts", "displs")?;
        let sends = vec![user(send, len); n.destinations.len()];
        self.neighbor_exchange(&n, &sends, &rblocks.parts(span(recv, &rblocks)))
    }

    /// Starts a neighbor alltoall (`MPI_Ineighbor_alltoall`) on bytes:
    /// block j of `send` (`sblock` bytes each) goes to out-neighbor j;
    /// in-neighbor i's `rblock` bytes land at `recv + i*rblock`.
    ///
    /// # Safety
    /// `send` readable for `outdegree*sblock` bytes and `recv` writable for
    /// `indegree*rblock` bytes until the request completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let send = [0u8, 1]; // 0 to the left neighbor, 1 to the right one
    /// let mut got = [0u8; 2];
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.ineighbor_alltoall_raw(send.as_ptr(), 1, got.as_mut_ptr(), 1) }?.wait()?;
    /// assert_eq!(got, [1, 0]); // the left neighbor sent rightwards, the right one leftwards
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ineighbor_alltoall_raw(
        &self,
        send: *const u8,
        sblock: usize,
        recv: *mut u8,
        rblock: usize,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_neighbor_alltoall(send, sblock, recv, rblock)?
            .start())
    }

    /// Builds [`Comm::ineighbor_alltoall_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ineighbor_alltoall_raw`], until the collective completes.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let send = [0u8, 1]; // 0 to the left neighbor, 1 to the right one
    /// let mut got = [0u8; 2];
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.plan_neighbor_alltoall(send.as_ptr(), 1, got.as_mut_ptr(), 1) }?.run()?;
    /// assert_eq!(got, [1, 0]); // the left neighbor sent rightwards, the right one leftwards
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_neighbor_alltoall(
        &self,
        send: *const u8,
        sblock: usize,
        recv: *mut u8,
        rblock: usize,
    ) -> Result<Planned<'_>, Error> {
        let n = self.neighbors()?;
        let (outdeg, indeg) = (n.destinations.len(), n.sources.len());
        let sends = cut(user(send, outdeg * sblock), sblock, outdeg);
        let recvs = cut(Schedule::user(recv, indeg * rblock), rblock, indeg);
        self.neighbor_exchange(&n, &sends, &recvs)
    }

    /// Starts a neighbor alltoallv (`MPI_Ineighbor_alltoallv`, and
    /// `MPI_Ineighbor_alltoallw` once every block is bytes) on bytes:
    /// block j of `sblocks` goes to out-neighbor j; in-neighbor i's data
    /// lands in block i of `rblocks`.
    ///
    /// # Safety
    /// Every block of `send` readable and of `recv` writable until the
    /// request completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// // One byte to the right neighbor (none to the left), so one from the left.
    /// let (scounts, rcounts, displs) = ([0usize, 1], [1usize, 0], [0usize, 0]);
    /// let send = [ring.rank() as u8];
    /// let mut got = [0u8; 1];
    /// let (sb, rb) = (Blocks::new(&scounts, &displs), Blocks::new(&rcounts, &displs));
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.ineighbor_alltoallv_raw(send.as_ptr(), sb, got.as_mut_ptr(), rb) }?.wait()?;
    /// let (left, _) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got[0], left as u8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn ineighbor_alltoallv_raw(
        &self,
        send: *const u8,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Request<'static>, Error> {
        Ok(self
            .plan_neighbor_alltoallv(send, sblocks, recv, rblocks)?
            .start())
    }

    /// Builds [`Comm::ineighbor_alltoallv_raw`] without starting it: [`Planned::start`]
    /// makes it that call, [`Planned::run`] the blocking one, run to
    /// completion on this thread.
    ///
    /// # Safety
    /// As for [`Comm::ineighbor_alltoallv_raw`], until the collective completes.
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// // One byte to the right neighbor (none to the left), so one from the left.
    /// let (scounts, rcounts, displs) = ([0usize, 1], [1usize, 0], [0usize, 0]);
    /// let send = [ring.rank() as u8];
    /// let mut got = [0u8; 1];
    /// let (sb, rb) = (Blocks::new(&scounts, &displs), Blocks::new(&rcounts, &displs));
    /// // SAFETY: both buffers outlive the request, waited on at once.
    /// unsafe { ring.plan_neighbor_alltoallv(send.as_ptr(), sb, got.as_mut_ptr(), rb) }?.run()?;
    /// let (left, _) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got[0], left as u8);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub unsafe fn plan_neighbor_alltoallv(
        &self,
        send: *const u8,
        sblocks: Blocks<'_>,
        recv: *mut u8,
        rblocks: Blocks<'_>,
    ) -> Result<Planned<'_>, Error> {
        let n = self.neighbors()?;
        check_blocks(
            &sblocks,
            n.destinations.len(),
            "out",
            "sendcounts",
            "sdispls",
        )?;
        check_blocks(&rblocks, n.sources.len(), "in", "recvcounts", "rdispls")?;
        let sends = sblocks.parts(span(send.cast_mut(), &sblocks));
        self.neighbor_exchange(&n, &sends, &rblocks.parts(span(recv, &rblocks)))
    }

    /// Sends `send` to every out-neighbor and receives each in-neighbor's
    /// into consecutive blocks of `recv` (`MPI_Neighbor_allgather`);
    /// `recv` holds `indegree * send.len()` elements.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let mut got = [0i32; 2];
    /// ring.neighbor_allgather(&[ring.rank()], &mut got)?; // [left, right]
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbor_allgather<T: Scalar>(&self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_neighbor_allgather_slices(send, recv) }?.run()
    }

    /// Non-blocking [`Comm::neighbor_allgather`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let mine = [ring.rank()];
    /// let mut got = [0i32; 2];
    /// let req = ring.ineighbor_allgather(&mine, &mut got)?;
    /// // ... work that touches neither buffer ...
    /// req.wait()?;
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got, [left, right]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ineighbor_allgather<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_neighbor_allgather_slices(send, recv) }?.start())
    }

    /// Checks the slices of [`Comm::ineighbor_allgather`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_neighbor_allgather_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
    ) -> Result<Planned<'_>, Error> {
        let indeg = self.neighbors()?.sources.len();
        same_len("recvbuf", indeg * send.len(), recv.len())?;
        let (sp, block) = bytes_of(send);
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_neighbor_allgather(sp, block, bytes_of_mut(recv).0, block) }
    }

    /// [`Comm::neighbor_allgather`] with a block of its own size per
    /// in-neighbor: in-neighbor i's data lands in block i of `rblocks`
    /// (element counts and displacements in `recv`)
    /// (`MPI_Neighbor_allgatherv`).
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// let mine = vec![ring.rank(); ring.rank() as usize + 1]; // rank r sends r + 1 copies of r
    /// let counts = [left as usize + 1, right as usize + 1];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut got = vec![0i32; counts[0] + counts[1]];
    /// ring.neighbor_allgatherv(&mine, &mut got, Blocks::new(&counts, &displs))?;
    /// assert_eq!((got[0], got[got.len() - 1]), (left, right));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbor_allgatherv<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        rblocks: Blocks<'_>,
    ) -> Result<(), Error> {
        self.ineighbor_allgatherv(send, recv, rblocks)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::neighbor_allgatherv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let (left, right) = ring.cart_shift(0, 1)?;
    /// let mine = vec![ring.rank(); ring.rank() as usize + 1]; // rank r sends r + 1 copies of r
    /// let counts = [left as usize + 1, right as usize + 1];
    /// let displs = Blocks::packed_displs(&counts);
    /// let mut got = vec![0i32; counts[0] + counts[1]];
    /// let req = ring.ineighbor_allgatherv(&mine, &mut got, Blocks::new(&counts, &displs))?;
    /// req.wait()?;
    /// assert_eq!((got[0], got[got.len() - 1]), (left, right));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ineighbor_allgatherv<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
        rblocks: Blocks<'_>,
    ) -> Result<Request<'a>, Error> {
        let n = self.neighbors()?;
        check_blocks(&rblocks, n.sources.len(), "in", "recvcounts", "displs")?;
        rblocks.check_within(recv.len(), "recvbuf")?;
        let (rc, rd) = rblocks.bytes(std::mem::size_of::<T>());
        let (sp, len) = bytes_of(send);
        // SAFETY: the request borrows both slices; blocks were checked to lie inside `recv`.
        unsafe {
            self.ineighbor_allgatherv_raw(sp, len, bytes_of_mut(recv).0, Blocks::new(&rc, &rd))
        }
    }

    /// Sends block j of `send` to out-neighbor j and receives in-neighbor
    /// i's block into block i of `recv` (`MPI_Neighbor_alltoall`): `send`
    /// holds `outdegree` and `recv` `indegree` blocks of one size.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let me = ring.rank();
    /// let mut got = [0i32; 2];
    /// ring.neighbor_alltoall(&[me * 10, me * 10 + 1], &mut got)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbor_alltoall<T: Scalar>(&self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        // SAFETY: run to completion before the borrows end.
        unsafe { self.plan_neighbor_alltoall_slices(send, recv) }?.run()
    }

    /// Non-blocking [`Comm::neighbor_alltoall`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let send = [0i32, 1]; // 0 to the left neighbor, 1 to the right one
    /// let mut got = [0i32; 2];
    /// let req = ring.ineighbor_alltoall(&send, &mut got)?;
    /// req.wait()?;
    /// assert_eq!(got, [1, 0]); // the left neighbor sent rightwards, the right one leftwards
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ineighbor_alltoall<'a, T: Scalar>(
        &self,
        send: &'a [T],
        recv: &'a mut [T],
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the request borrows the buffers.
        Ok(unsafe { self.plan_neighbor_alltoall_slices(send, recv) }?.start())
    }

    /// Checks the slices of [`Comm::ineighbor_alltoall`] and plans it.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    unsafe fn plan_neighbor_alltoall_slices<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
    ) -> Result<Planned<'_>, Error> {
        let n = self.neighbors()?;
        let block = uniform_block(send.len(), recv.len(), &n)? * std::mem::size_of::<T>();
        // SAFETY: the request borrows both slices.
        unsafe { self.plan_neighbor_alltoall(bytes_of(send).0, block, bytes_of_mut(recv).0, block) }
    }

    /// Sends block j of `send` (`sblocks`, one per out-neighbor) to
    /// out-neighbor j and receives in-neighbor i's data into block i of
    /// `recv` (`rblocks`, one per in-neighbor) (`MPI_Neighbor_alltoallv`;
    /// element counts and displacements).
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// // Two values to the right neighbor (none to the left), so two from the left.
    /// let (scounts, rcounts, displs) = ([0usize, 2], [2usize, 0], [0usize, 0]);
    /// let send = [ring.rank(); 2];
    /// let mut got = [0i32; 2];
    /// let (sb, rb) = (Blocks::new(&scounts, &displs), Blocks::new(&rcounts, &displs));
    /// ring.neighbor_alltoallv(&send, sb, &mut got, rb)?;
    /// let (left, _) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got, [left; 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbor_alltoallv<T: Scalar>(
        &self,
        send: &[T],
        sblocks: Blocks<'_>,
        recv: &mut [T],
        rblocks: Blocks<'_>,
    ) -> Result<(), Error> {
        self.ineighbor_alltoallv(send, sblocks, recv, rblocks)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::neighbor_alltoallv`].
    ///
    /// ```no_run
    /// use oxmpi::coll::Blocks;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// // Two values to the right neighbor (none to the left), so two from the left.
    /// let (scounts, rcounts, displs) = ([0usize, 2], [2usize, 0], [0usize, 0]);
    /// let send = [ring.rank(); 2];
    /// let mut got = [0i32; 2];
    /// let (sb, rb) = (Blocks::new(&scounts, &displs), Blocks::new(&rcounts, &displs));
    /// let req = ring.ineighbor_alltoallv(&send, sb, &mut got, rb)?;
    /// req.wait()?;
    /// let (left, _) = ring.cart_shift(0, 1)?;
    /// assert_eq!(got, [left; 2]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ineighbor_alltoallv<'a, T: Scalar>(
        &self,
        send: &'a [T],
        sblocks: Blocks<'_>,
        recv: &'a mut [T],
        rblocks: Blocks<'_>,
    ) -> Result<Request<'a>, Error> {
        let n = self.neighbors()?;
        check_blocks(
            &sblocks,
            n.destinations.len(),
            "out",
            "sendcounts",
            "sdispls",
        )?;
        check_blocks(&rblocks, n.sources.len(), "in", "recvcounts", "rdispls")?;
        sblocks.check_within(send.len(), "sendbuf")?;
        rblocks.check_within(recv.len(), "recvbuf")?;
        let size = std::mem::size_of::<T>();
        let ((sc, sd), (rc, rd)) = (sblocks.bytes(size), rblocks.bytes(size));
        // SAFETY: the request borrows both slices; blocks were checked to lie inside them.
        unsafe {
            self.ineighbor_alltoallv_raw(
                bytes_of(send).0,
                Blocks::new(&sc, &sd),
                bytes_of_mut(recv).0,
                Blocks::new(&rc, &rd),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_checks_name_the_argument() {
        let (c, d) = ([1, 2], [0, 1]);
        let b = Blocks::new(&c, &d);
        assert!(check_blocks(&b, 2, "in", "recvcounts", "displs").is_ok());
        let e = check_blocks(&b, 3, "in", "recvcounts", "displs").unwrap_err();
        assert!(
            e.to_string()
                .contains("`recvcounts`: has 2 entries for 3 in-neighbors"),
            "{e}"
        );
        let n = Neighbors {
            sources: vec![1, 2, 3],
            destinations: vec![4, 5],
        };
        assert_eq!(uniform_block(4, 6, &n).unwrap(), 2);
        assert!(uniform_block(5, 6, &n).is_err());
        assert!(uniform_block(4, 5, &n).is_err());
        let none = Neighbors {
            sources: vec![],
            destinations: vec![],
        };
        assert_eq!(uniform_block(0, 0, &none).unwrap(), 0);
    }
}
