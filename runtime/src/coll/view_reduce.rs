//! Reductions with derived datatypes (Rust API): reduce and allreduce of
//! [`View`] / [`ViewMut`]s whose type signature is one basic type (a
//! vector or subarray of `f64`, say). The buffers are staged as in
//! `view.rs`; the operation combines the packed basic elements, so a
//! built-in operation applies when it is defined for that basic type and
//! a user operation sees packed elements of it.

use super::view::packs_to;
use super::Elems;
use crate::comm::Comm;
use crate::datatype::stage::{CollStage, Dir};
use crate::datatype::{Datatype, ElementKind, View, ViewMut};
use crate::error::Error;
use crate::ops::Op;
use crate::request::Request;

/// The packed elements a reduction combines for `count` elements of `dt`
/// (buffer argument `arg`), and their kind.
fn reduced(dt: &Datatype, count: usize, arg: &'static str) -> Result<(Elems, ElementKind), Error> {
    let sig = dt.signature();
    let Some(b) = sig.uniform() else {
        return Err(Error::InvalidDatatype(format!(
            "`{arg}`: a reduction needs a datatype made of one basic type; {dt:?} has \
             signature {:?}",
            sig.runs().take(8).collect::<Vec<_>>()
        )));
    };
    let count = count
        .checked_mul(sig.len())
        .ok_or_else(|| Error::InvalidArgument {
            arg: "count",
            reason: format!("{count} elements of {dt:?} overflow the address space"),
        })?;
    let e = Elems {
        count,
        size: b.size(),
        ty: b.elem_type(),
    };
    Ok((e, b.kind()))
}

/// The elements of `send`, checked against those of `recv` (argument `arg`).
fn matched(send: &View<'_>, recv: &ViewMut<'_>, arg: &'static str) -> Result<Elems, Error> {
    let (e, kind) = reduced(send.datatype(), send.count(), "sendbuf")?;
    let (r, rkind) = reduced(recv.datatype(), recv.count(), arg)?;
    if rkind != kind {
        return Err(Error::InvalidArgument {
            arg,
            reason: format!("holds {rkind:?} elements where the send buffer has {kind:?}"),
        });
    }
    packs_to(arg, Some(e.count * e.size), r.count * r.size)?;
    Ok(e)
}

impl Comm {
    /// Non-blocking [`Comm::allreduce_view`].
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let d = Datatype::basic(BasicType::Double);
    /// let mine = [1.0f64, 2.0];
    /// let mut sum = [0.0f64; 2];
    /// let r = world.iallreduce_view(&View::new(&mine, &d, 2)?, ViewMut::new(&mut sum, &d, 2)?, &Op::SUM)?;
    /// r.wait()?;
    /// assert_eq!(sum[1], 2.0 * world.size() as f64);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn iallreduce_view<'a>(
        &self,
        send: &View<'a>,
        recv: ViewMut<'a>,
        op: &Op,
    ) -> Result<Request<'a>, Error> {
        let e = matched(send, &recv, "recvbuf")?;
        let mut st = CollStage::default();
        let sp = st.stage(send.placed(), Dir::In);
        let rp = st.stage(recv.placed(), Dir::Out);
        // SAFETY: the buffers are the views' slices, borrowed for 'a, or
        // temporaries the request keeps; distinct borrows cannot overlap.
        self.start_staged(st, || unsafe {
            self.iallreduce_raw(Some(sp.cast_const()), rp, e, op)
        })
    }

    /// Combines every rank's `send` with `op` into `recv` on every rank
    /// (`MPI_Allreduce` with datatypes); both signatures must be the same
    /// number of elements of one basic type.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Sum column 0 of every rank's 3x3 matrix into a contiguous array.
    /// let d = Datatype::basic(BasicType::Double);
    /// let col = Datatype::vector(3, 1, 3, &d)?;
    /// col.commit();
    /// let m = [1.0f64; 9];
    /// let mut sum = [0.0f64; 3];
    /// world.allreduce_view(&View::new(&m, &col, 1)?, &mut ViewMut::new(&mut sum, &d, 3)?, &Op::SUM)?;
    /// assert_eq!(sum, [world.size() as f64; 3]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn allreduce_view(
        &self,
        send: &View<'_>,
        recv: &mut ViewMut<'_>,
        op: &Op,
    ) -> Result<(), Error> {
        self.iallreduce_view(send, recv.reborrow(), op)?
            .wait()
            .map(|_| ())
    }

    /// Non-blocking [`Comm::reduce_view`].
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let int = Datatype::basic(BasicType::Int);
    /// let mine = [world.rank()];
    /// let mut max = [0i32];
    /// let recv = ViewMut::new(&mut max, &int, 1)?;
    /// let recv = (world.rank() == 0).then_some(recv);
    /// world.ireduce_view(&View::new(&mine, &int, 1)?, recv, &Op::MAX, 0)?.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn ireduce_view<'a>(
        &self,
        send: &View<'a>,
        recv: Option<ViewMut<'a>>,
        op: &Op,
        root: i32,
    ) -> Result<Request<'a>, Error> {
        let at_root = self.rank() as usize == self.root(root)?;
        let mut st = CollStage::default();
        let (e, rp) = match recv {
            Some(r) if at_root => {
                let e = matched(send, &r, "recvbuf")?;
                (e, st.stage(r.placed(), Dir::Out))
            }
            None if at_root => return Err(super::blocks::root_needs("recvbuf")),
            _ => {
                let (e, _) = reduced(send.datatype(), send.count(), "sendbuf")?;
                (e, std::ptr::null_mut())
            }
        };
        let sp = st.stage(send.placed(), Dir::In);
        // SAFETY: as in `iallreduce_view`.
        self.start_staged(st, || unsafe {
            self.ireduce_raw(Some(sp.cast_const()), rp, e, op, root)
        })
    }

    /// Combines every rank's `send` with `op` into `recv` at `root`
    /// (`MPI_Reduce` with datatypes); `recv` is required at the root and
    /// ignored elsewhere.
    ///
    /// ```no_run
    /// use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    /// use oxmpi::ops::Op;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // The element-wise minimum of every rank's every-other element.
    /// let d = Datatype::basic(BasicType::Double);
    /// let every_other = Datatype::vector(2, 1, 2, &d)?;
    /// every_other.commit();
    /// let mine = [world.rank() as f64, -1.0, 10.0, -1.0];
    /// let mut min = [0.0f64; 3];
    /// let mut recv = ViewMut::new(&mut min, &every_other, 1)?;
    /// let recv = (world.rank() == 0).then_some(&mut recv);
    /// world.reduce_view(&View::new(&mine, &every_other, 1)?, recv, &Op::MIN, 0)?;
    /// if world.rank() == 0 {
    ///     assert_eq!(min, [0.0, 0.0, 10.0]);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn reduce_view(
        &self,
        send: &View<'_>,
        recv: Option<&mut ViewMut<'_>>,
        op: &Op,
        root: i32,
    ) -> Result<(), Error> {
        let recv = recv.map(ViewMut::reborrow);
        self.ireduce_view(send, recv, op, root)?.wait().map(|_| ())
    }
}
