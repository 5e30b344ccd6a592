//! The typed entry points of the element-wise reductions (allreduce, scan,
//! exscan) share one path: check the slices, then the collective's raw
//! plan (`plan_allreduce`, `plan_scan`, `plan_exscan`), which holds all
//! of its logic.

use super::{Elems, Planned};
use crate::buffer::{bytes_of, bytes_of_mut, Scalar};
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::Op;

/// A raw plan of an element-wise reduction: `send` (`None`: in place),
/// `recv`, the elements and the operation.
pub(super) type RawPlan = for<'c> unsafe fn(
    &'c Comm,
    Option<*const u8>,
    *mut u8,
    Elems,
    &Op,
) -> Result<Planned<'c>, Error>;

impl Comm {
    /// Checks that `recv` (argument `recv_arg`) matches `send` and plans
    /// the reduction with `plan`.
    ///
    /// # Safety
    /// The slices outlive the planned collective (its run, or its request).
    pub(super) unsafe fn plan_elementwise<T: Scalar>(
        &self,
        plan: RawPlan,
        recv_arg: &'static str,
        send: &[T],
        recv: &mut [T],
        op: &Op,
    ) -> Result<Planned<'_>, Error> {
        super::blocks::same_len(recv_arg, send.len(), recv.len())?;
        let e = Elems::of::<T>(send.len());
        // SAFETY: the caller's contract.
        unsafe { plan(self, Some(bytes_of(send).0), bytes_of_mut(recv).0, e, op) }
    }

    /// Runs the reduction `plan` with `buf` as input and output
    /// (`MPI_IN_PLACE`).
    pub(super) fn run_in_place<T: Scalar>(
        &self,
        plan: RawPlan,
        buf: &mut [T],
        op: &Op,
    ) -> Result<(), Error> {
        let e = Elems::of::<T>(buf.len());
        // SAFETY: run to completion before `buf`'s borrow ends.
        unsafe { plan(self, None, bytes_of_mut(buf).0, e, op) }?.run()
    }
}
