//! A blocking call on the area without a schedule: [`Direct`]. Once the
//! channel's area is mapped here (its first call, which carries the
//! set-up, is behind this rank), a call whose buffers are all the
//! caller's runs the protocol on the calling thread: no schedule, no step
//! vectors, no boxed step, no engine lock when its flags are already
//! there. Only when it must wait does it enter the runtime's wait loop
//! (which progresses the engine and sleeps on the doorbell).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::ops::UserMem;
use super::{AreaState, AreaStep, Call, Op};
use crate::coll::sched::Schedule;
use crate::error::Error;
use crate::progress::Runtime;

/// A call on the area, planned and not yet run.
pub(crate) struct Direct<'a> {
    area: &'a Arc<AreaState>,
    call: Call,
}

// SAFETY: its buffers are the caller's, alive until the call completes
// (run here, or as a schedule whose request borrows them).
unsafe impl Send for Direct<'_> {}

/// `op` as a [`Direct`] call `seq` at rank `me` on `area`, the area of a
/// communicator whose ranks are `world_of` in the world, if the area is
/// mapped here and the call's channel has had its first (set-up) call;
/// `None` leaves the call to [`super::add`]. `op` refers only to the
/// caller's buffers. The caller checked [`super::serves`].
#[inline(always)]
pub(crate) fn direct_at<'a>(
    seq: u32,
    me: usize,
    world_of: &[usize],
    area: &'a Arc<AreaState>,
    op: Op,
) -> Option<Direct<'a>> {
    let ready = area.set_up(seq) && area.mapped.get().is_some() && area.broken.get().is_none();
    ready.then(|| Direct {
        area,
        call: Call::planned(seq, me, world_of, area, op),
    })
}

impl Direct<'_> {
    /// Runs the call to completion on this thread.
    #[inline(always)]
    pub(crate) fn run(&mut self, rt: &Runtime) -> Result<(), Error> {
        let transport = rt.transport();
        let wake = |w: usize| transport.wake(w);
        let area: &AreaState = self.area;
        match self.call.advance(area, &mut UserMem, &wake) {
            Ok(false) => {}
            done => return done.map(drop),
        }
        rt.wait_until(|_| match self.call.advance(area, &mut UserMem, &wake) {
            Ok(false) => None,
            done => Some(done.map(drop)),
        })
    }

    /// Moves the call on as far as it goes now, on this thread (the
    /// non-blocking call's start): `Ok(None)` once it is done (a bcast's
    /// root, a reader whose data is there), else the call to hand to the
    /// engine. A user operation that panics fails the call, as it fails
    /// the request when the engine runs it: a non-blocking call does not
    /// unwind.
    pub(crate) fn start_now(mut self, rt: &Runtime) -> Result<Option<Self>, Error> {
        let transport = rt.transport();
        let wake = |w: usize| transport.wake(w);
        let area: &AreaState = self.area;
        let call = &mut self.call;
        let done = catch_unwind(AssertUnwindSafe(|| call.advance(area, &mut UserMem, &wake)))
            .map_err(|panic| crate::error::user_op_panicked(panic.as_ref()))??;
        Ok((!done).then_some(self))
    }

    /// The call as a schedule of one step, for the engine to run (the
    /// non-blocking call).
    pub(crate) fn into_schedule(self) -> Schedule {
        let mut s = Schedule::new();
        let step = AreaStep {
            area: Arc::clone(self.area),
            setup: None,
            call: self.call,
        };
        s.poll_step(Box::new(step), &[]);
        s
    }
}
