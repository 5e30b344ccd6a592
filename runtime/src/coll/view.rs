//! Collectives with derived datatypes (Rust API): broadcast, gather,
//! scatter, allgather and alltoall of [`View`] / [`ViewMut`]s. Each buffer
//! is staged with [`CollStage`] (the mechanism the C ABI uses too): a
//! contiguous type is used in place, any other is packed into a temporary
//! before the operation starts and unpacked from one when it completes;
//! the byte-level collective moves the packed bytes in between. A view
//! that holds one block per rank holds a multiple of `size` elements;
//! blocks match by their packed bytes, so the send and receive sides may
//! use different types with the same signature (a column against a row).
//! The reductions are in `view_reduce.rs`.

use super::blocks::{per_rank, root_needs};
use crate::comm::Comm;
use crate::datatype::stage::{CollStage, Dir};
use crate::datatype::{View, ViewMut};
use crate::error::Error;
use crate::request::Request;

/// Checks that buffer `arg` packs to `want` bytes.
pub(super) fn packs_to(arg: &'static str, want: Option<usize>, got: usize) -> Result<(), Error> {
    match want {
        Some(w) if w == got => Ok(()),
        _ => Err(Error::InvalidArgument {
            arg,
            reason: match want {
                Some(w) => format!(
                    "packs to {got} bytes where {w} are needed (the type signatures must match)"
                ),
                None => format!("packs to {got} bytes, too many for this communicator"),
            },
        }),
    }
}

impl Comm {
    /// Packs what `st` stages, starts the operation, and keeps the
    /// temporaries with its request (unpacked when it completes).
    pub(super) fn start_staged<'a>(
        &self,
        mut st: CollStage,
        start: impl FnOnce() -> Result<Request<'static>, Error>,
    ) -> Result<Request<'a>, Error> {
        // SAFETY: the staged buffers are views' slices, checked to hold
        // their elements and borrowed for 'a by the caller.
        unsafe { st.pack() }?;
        let r = start()?;
        Ok(r.with_stage((!st.is_empty()).then_some(st)))
    }

    fn at_root(&self, root: i32) -> Result<bool, Error> {
        Ok(self.rank() as usize == self.root(root)?)
    }

    /// Non-blocking [`Comm::bcast_view`]; the request holds the view.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let diag = Datatype::vector(3, 1, 4, &Datatype::basic(BasicType::Double))?;
    /// diag.commit(); // the diagonal of a 3x3 matrix
    /// let mut m = [0.0f64; 9];
    /// if world.rank() == 0 {
    ///     (m[0], m[4], m[8]) = (1.0, 2.0, 3.0);
    /// }
    /// let r = world.ibcast_view(ViewMut::new(&mut m, &diag, 1)?, 0)?;
    /// r.wait()?;
    /// assert_eq!((m[0], m[4], m[8], m[1]), (1.0, 2.0, 3.0, 0.0));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ibcast_view<'a>(&self, buf: ViewMut<'a>, root: i32) -> Result<Request<'a>, Error> {
        let dir = if self.at_root(root)? {
            Dir::In
        } else {
            Dir::Out
        };
        let mut st = CollStage::default();
        let p = st.stage(buf.placed(), dir);
        let len = buf.packed_len();
        // SAFETY: `p` is the view's slice, borrowed for 'a, or a
        // temporary the request keeps.
        self.start_staged(st, || unsafe { self.ibcast_raw(p, len, root) })
    }

    /// Sends the view's elements from `root` to every rank (`MPI_Bcast`
    /// with a datatype).
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let col = Datatype::vector(2, 1, 2, &Datatype::basic(BasicType::Int))?;
    /// col.commit();
    /// let mut m = if world.rank() == 0 { [1, 0, 2, 0] } else { [0i32; 4] };
    /// world.bcast_view(&mut ViewMut::new(&mut m, &col, 1)?, 0)?;
    /// assert_eq!((m[0], m[2]), (1, 2));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn bcast_view(&self, buf: &mut ViewMut<'_>, root: i32) -> Result<(), Error> {
        self.ibcast_view(buf.reborrow(), root)?.wait().map(|_| ())
    }

    /// Non-blocking [`Comm::gather_view`].
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let int = Datatype::basic(BasicType::Int);
    /// let p = world.size() as usize;
    /// let mine = [world.rank(); 2];
    /// let mut all = vec![0i32; 2 * p];
    /// let recv = ViewMut::new(&mut all, &int, 2 * p)?;
    /// let recv = (world.rank() == 0).then_some(recv); // the root's only
    /// let r = world.igather_view(&View::new(&mine, &int, 2)?, recv, 0)?;
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn igather_view<'a>(
        &self,
        send: &View<'a>,
        recv: Option<ViewMut<'a>>,
        root: i32,
    ) -> Result<Request<'a>, Error> {
        let at_root = self.at_root(root)?;
        let block = send.packed_len();
        let mut st = CollStage::default();
        let rp = match recv {
            Some(r) if at_root => {
                per_rank("recvbuf", r.count(), self.size() as usize)?;
                let want = block.checked_mul(self.size() as usize);
                packs_to("recvbuf", want, r.packed_len())?;
                st.stage(r.placed(), Dir::Out)
            }
            None if at_root => return Err(root_needs("recvbuf")),
            _ => std::ptr::null_mut(),
        };
        let sp = st.stage(send.placed(), Dir::In);
        // SAFETY: the buffers are the views' slices, borrowed for 'a, or
        // temporaries the request keeps.
        self.start_staged(st, || unsafe {
            self.igather_raw(Some(sp), block, rp, root)
        })
    }

    /// Collects every rank's `send` at `root` (`MPI_Gather` with
    /// datatypes): `recv` holds `size * k` elements and rank r's packed
    /// bytes land as its elements `r*k .. (r+1)*k`, which must pack to as
    /// many bytes as every `send`. `recv` is required at the root and
    /// ignored elsewhere.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Every rank's row becomes a column of the root's p x p matrix.
    /// let p = world.size() as usize;
    /// let d = Datatype::basic(BasicType::Double);
    /// let col = Datatype::resized(&Datatype::vector(p as isize, 1, p as isize, &d)?, 0, 8)?;
    /// col.commit();
    /// let row = vec![world.rank() as f64; p];
    /// let mut m = vec![0.0f64; p * p];
    /// let mut recv = ViewMut::new(&mut m, &col, p)?;
    /// let recv = (world.rank() == 0).then_some(&mut recv);
    /// world.gather_view(&View::new(&row, &d, p)?, recv, 0)?;
    /// if world.rank() == 0 {
    ///     assert_eq!(m[p - 1], (p - 1) as f64); // row 0 holds every rank's number
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn gather_view(
        &self,
        send: &View<'_>,
        recv: Option<&mut ViewMut<'_>>,
        root: i32,
    ) -> Result<(), Error> {
        let recv = recv.map(ViewMut::reborrow);
        self.igather_view(send, recv, root)?.wait().map(|_| ())
    }

    /// Non-blocking [`Comm::scatter_view`].
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let int = Datatype::basic(BasicType::Int);
    /// let p = world.size() as usize;
    /// let all: Vec<i32> = (0..p as i32).collect();
    /// let send = View::new(&all, &int, p)?;
    /// let mut mine = [0i32];
    /// let send = (world.rank() == 0).then_some(&send);
    /// world.iscatter_view(send, ViewMut::new(&mut mine, &int, 1)?, 0)?.wait()?;
    /// assert_eq!(mine[0], world.rank());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iscatter_view<'a>(
        &self,
        send: Option<&View<'a>>,
        recv: ViewMut<'a>,
        root: i32,
    ) -> Result<Request<'a>, Error> {
        let at_root = self.at_root(root)?;
        let block = recv.packed_len();
        let mut st = CollStage::default();
        let sp = match send {
            Some(s) if at_root => {
                per_rank("sendbuf", s.count(), self.size() as usize)?;
                let want = block.checked_mul(self.size() as usize);
                packs_to("sendbuf", want, s.packed_len())?;
                st.stage(s.placed(), Dir::In).cast_const()
            }
            None if at_root => return Err(root_needs("sendbuf")),
            _ => std::ptr::null(),
        };
        let rp = st.stage(recv.placed(), Dir::Out);
        // SAFETY: as in `igather_view`.
        self.start_staged(st, || unsafe {
            self.iscatter_raw(sp, block, Some(rp), root)
        })
    }

    /// Hands consecutive blocks of the root's `send` out, one per rank, in
    /// rank order (`MPI_Scatter` with datatypes): `send` holds `size * k`
    /// elements, and elements `r*k .. (r+1)*k` go to rank r's `recv`,
    /// which must pack to as many bytes. `send` is required at the root
    /// and ignored elsewhere.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Column r of the root's 2 x p matrix goes to rank r.
    /// let p = world.size() as usize;
    /// let int = Datatype::basic(BasicType::Int);
    /// let col = Datatype::resized(&Datatype::vector(2, 1, p as isize, &int)?, 0, 4)?;
    /// col.commit();
    /// let m: Vec<i32> = (0..2 * p as i32).collect();
    /// let send = View::new(&m, &col, p)?;
    /// let mut mine = [0i32; 2];
    /// let send = (world.rank() == 0).then_some(&send);
    /// world.scatter_view(send, &mut ViewMut::new(&mut mine, &int, 2)?, 0)?;
    /// assert_eq!(mine, [world.rank(), world.rank() + p as i32]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn scatter_view(
        &self,
        send: Option<&View<'_>>,
        recv: &mut ViewMut<'_>,
        root: i32,
    ) -> Result<(), Error> {
        self.iscatter_view(send, recv.reborrow(), root)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::allgather_view`].
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let int = Datatype::basic(BasicType::Int);
    /// let p = world.size() as usize;
    /// let mut all = vec![0i32; p];
    /// let mine = [world.rank()];
    /// let r = world.iallgather_view(&View::new(&mine, &int, 1)?, ViewMut::new(&mut all, &int, p)?)?;
    /// r.wait()?;
    /// assert_eq!(all[p - 1], p as i32 - 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iallgather_view<'a>(
        &self,
        send: &View<'a>,
        recv: ViewMut<'a>,
    ) -> Result<Request<'a>, Error> {
        let block = send.packed_len();
        per_rank("recvbuf", recv.count(), self.size() as usize)?;
        let want = block.checked_mul(self.size() as usize);
        packs_to("recvbuf", want, recv.packed_len())?;
        let mut st = CollStage::default();
        let sp = st.stage(send.placed(), Dir::In);
        let rp = st.stage(recv.placed(), Dir::Out);
        // SAFETY: as in `igather_view`.
        self.start_staged(st, || unsafe { self.iallgather_raw(Some(sp), block, rp) })
    }

    /// Gathers every rank's `send` into `recv` on every rank
    /// (`MPI_Allgather` with datatypes): `recv` holds `size * k` elements
    /// and rank r's packed bytes are its elements `r*k .. (r+1)*k`.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Each rank contributes a column of a 2 x p matrix.
    /// let p = world.size() as usize;
    /// let int = Datatype::basic(BasicType::Int);
    /// let col = Datatype::resized(&Datatype::vector(2, 1, p as isize, &int)?, 0, 4)?;
    /// col.commit();
    /// let mine = [world.rank(), -world.rank()];
    /// let mut m = vec![0i32; 2 * p];
    /// world.allgather_view(&View::new(&mine, &int, 2)?, &mut ViewMut::new(&mut m, &col, p)?)?;
    /// assert_eq!((m[p - 1], m[2 * p - 1]), (p as i32 - 1, 1 - p as i32));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allgather_view(&self, send: &View<'_>, recv: &mut ViewMut<'_>) -> Result<(), Error> {
        self.iallgather_view(send, recv.reborrow())?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::alltoall_view`].
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let int = Datatype::basic(BasicType::Int);
    /// let p = world.size() as usize;
    /// let send: Vec<i32> = (0..p as i32).collect(); // element j goes to rank j
    /// let mut recv = vec![0i32; p];
    /// let r = world.ialltoall_view(&View::new(&send, &int, p)?, ViewMut::new(&mut recv, &int, p)?)?;
    /// r.wait()?;
    /// assert!(recv.iter().all(|&v| v == world.rank()));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ialltoall_view<'a>(
        &self,
        send: &View<'a>,
        recv: ViewMut<'a>,
    ) -> Result<Request<'a>, Error> {
        let p = self.size() as usize;
        let total = send.packed_len();
        per_rank("sendbuf", send.count(), p)?;
        per_rank("recvbuf", recv.count(), p)?;
        packs_to("recvbuf", Some(total), recv.packed_len())?;
        let mut st = CollStage::default();
        let sp = st.stage(send.placed(), Dir::In);
        let rp = st.stage(recv.placed(), Dir::Out);
        // SAFETY: as in `igather_view`; distinct borrows cannot overlap.
        self.start_staged(st, || unsafe {
            self.ialltoall_raw(Some(sp), total / p, rp)
        })
    }

    /// Sends block j of `send` to rank j and receives rank j's block into
    /// block j of `recv` (`MPI_Alltoall` with datatypes); blocks are a
    /// `size`-th of each view's elements, and the two views must pack to
    /// the same number of bytes.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Transpose a distributed matrix: rank r owns row r; element j of
    /// // it goes to rank j, which stores rank r's into row r of column 0.
    /// let (me, p) = (world.rank(), world.size() as usize);
    /// let int = Datatype::basic(BasicType::Int);
    /// let down = Datatype::resized(&int, 0, 4 * p as isize)?; // one int per row
    /// down.commit();
    /// let row: Vec<i32> = (0..p as i32).map(|j| me * 100 + j).collect();
    /// let mut t = vec![0i32; p * p];
    /// world.alltoall_view(&View::new(&row, &int, p)?, &mut ViewMut::new(&mut t, &down, p)?)?;
    /// assert!((0..p).all(|r| t[r * p] == r as i32 * 100 + me)); // column 0
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn alltoall_view(&self, send: &View<'_>, recv: &mut ViewMut<'_>) -> Result<(), Error> {
        self.ialltoall_view(send, recv.reborrow())?
            .wait()
            .map(|_| ())
    }
}
