//! A collective built but not started: [`Planned`].

use super::area::Direct;
use super::sched::Schedule;
use super::tree_direct::TreeBcast;
use crate::comm::Comm;
use crate::error::Error;
use crate::request::{Request, RtRef};
use crate::status::Status;

/// A collective call whose schedule is built but not started (the
/// `plan_*` methods of [`Comm`]): [`Planned::start`] hands it to the
/// progress engine and returns its request (the non-blocking call),
/// [`Planned::run`] runs it to completion on this thread (the blocking
/// call, with no request to allocate or look up). Its tags are taken when
/// it is built, so planned collectives must be started or run in the order
/// they were planned, like any collective call.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut buf = [world.rank() as u8; 4];
/// // SAFETY: `buf` outlives the call, which runs to completion here.
/// unsafe { world.plan_bcast(buf.as_mut_ptr(), buf.len(), 0) }?.run()?;
/// assert_eq!(buf, [0; 4]);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[must_use = "a planned collective does nothing until it is started or run"]
pub struct Planned<'c> {
    comm: &'c Comm,
    body: Body<'c>,
}

/// What a planned collective runs.
enum Body<'c> {
    /// Steps for the engine (boxed: a `Planned` is moved a few times a
    /// call, and the area's calls, the common small ones, are smaller).
    Sched(Box<Schedule>),
    /// A call on the communicator's shared-memory area that needs no
    /// schedule when run on this thread.
    Area(Direct<'c>),
    Tree(TreeBcast),
}

impl<'c> Planned<'c> {
    pub(super) fn new(comm: &'c Comm, sched: Schedule) -> Planned<'c> {
        Planned {
            comm,
            body: Body::Sched(Box::new(sched)),
        }
    }

    #[inline(always)]
    pub(super) fn direct(comm: &'c Comm, call: Direct<'c>) -> Planned<'c> {
        Planned {
            comm,
            body: Body::Area(call),
        }
    }

    /// A blocking binomial broadcast run without a schedule.
    pub(super) fn tree(comm: &'c Comm, call: TreeBcast) -> Planned<'c> {
        Planned {
            comm,
            body: Body::Tree(call),
        }
    }

    /// Starts the collective; the request completes with it.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut x = [1u32];
    /// // SAFETY: `x` outlives the request, waited on below.
    /// let r = unsafe { world.plan_bcast(x.as_mut_ptr().cast(), 4, 0) }?.start();
    /// r.wait()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn start(self) -> Request<'static> {
        let rt = RtRef::Counted(self.comm.rt().clone());
        self.start_on(rt)
    }

    /// Starts the collective with its request referring to `rt`, the
    /// communicator's runtime.
    #[inline]
    fn start_on(self, rt: RtRef) -> Request<'static> {
        let c = self.comm;
        let sched = match self.body {
            Body::Sched(s) => *s,
            // A call done as it starts needs no engine request.
            Body::Area(call) => match call.start_now(c.rt()) {
                Ok(Some(call)) => call.into_schedule(),
                Ok(None) => return Request::finished_on(rt, Status::empty()),
                Err(e) => return Request::failed_on(rt, e),
            },
            Body::Tree(call) => return call.start(c, rt),
        };
        let id = rt
            .engine()
            .start_schedule(sched, c.inner.context + 1, c.rank());
        Request::pending_on(rt, id)
    }

    /// Runs the collective to completion on this thread.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// world.plan_barrier()?.run()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline(always)]
    pub fn run(mut self) -> Result<(), Error> {
        let c = self.comm;
        match self.body {
            Body::Sched(s) => c.rt().run_schedule(*s, c.inner.context + 1, c.rank()),
            // Run where it lies: a move would copy the call.
            Body::Area(ref mut call) => call.run(c.rt()),
            Body::Tree(call) => call.run(c),
        }
    }
}

impl Planned<'static> {
    /// [`Planned::start`] on a communicator that is never dropped (the C
    /// front end's predefined ones): the request refers to the runtime
    /// without a reference count, as `Comm::irecv_raw_static`'s does.
    pub fn start_static(self) -> Request<'static> {
        let comm: &'static Comm = self.comm;
        let rt = RtRef::Static(comm.rt());
        self.start_on(rt)
    }
}

impl std::fmt::Debug for Planned<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Planned")
            .field("comm", self.comm)
            .field(
                "steps",
                &match &self.body {
                    Body::Sched(s) => s.steps.len(),
                    Body::Area(_) | Body::Tree(_) => 1,
                },
            )
            .finish()
    }
}
