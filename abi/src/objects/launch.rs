//! A decoded collective, ready to start (now, or at each `MPI_Start` of a
//! persistent request).

use oxmpi::coll::persistent::PersistentSeq;
use oxmpi::coll::Planned;
use oxmpi::{Comm, Request};

use crate::errors::AbiError;

/// The runtime call that plans a decoded collective.
type PlanFn = dyn for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error>;

/// A collective whose arguments were decoded and checked, ready to start
/// in the runtime: once for a blocking or non-blocking call, at every
/// `MPI_Start` for a persistent one (whose tags were reserved at
/// initialization, [`Launch::persistent`]).
pub struct Launch {
    /// The communicator.
    comm: Comm,
    /// Plans the runtime's collective on `comm`.
    plan: Box<PlanFn>,
    /// A persistent collective's tags.
    seq: Option<PersistentSeq>,
}

// SAFETY: besides the communicator and the operation (both shareable
// between threads), the start function holds addresses of the program's
// buffers, which MPI lets any thread use; only the thread that starts a
// persistent request (one at a time: `Persistent::started`) calls it.
unsafe impl Send for Launch {}
// SAFETY: as above; calling the function does not mutate what it holds.
unsafe impl Sync for Launch {}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("comm", &self.comm)
            .field("seq", &self.seq)
            .finish()
    }
}

impl Launch {
    /// The collective that `plan` plans on `comm`.
    pub fn new(
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Launch {
        Launch {
            comm: comm.clone(),
            plan: Box::new(plan),
            seq: None,
        }
    }

    /// The collective's communicator.
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// Makes this a persistent collective: reserves its tags now
    /// (`MPI_<Coll>_init` is ordered like any collective call; its starts
    /// need not be).
    pub fn persistent(mut self) -> Launch {
        self.seq = Some(self.comm.persistent_coll_seq());
        self
    }

    /// Starts the collective.
    ///
    /// # Safety
    /// The program's buffers named when the call was decoded are valid (as
    /// MPI requires until the operation completes), and the temporaries of
    /// its `Stager` (`api::coll::buffers`) hold the packed data.
    pub unsafe fn start(&self) -> Result<Request<'static>, AbiError> {
        let start = || (self.plan)(&self.comm).map(Planned::start);
        let r = match self.seq {
            Some(seq) => self.comm.start_persistent(seq, start),
            None => start(),
        };
        Ok(r?)
    }
}
