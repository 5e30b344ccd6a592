//! `MPI_Comm_idup`: a dup whose context-id agreement runs in the engine
//! while the program goes on. The attributes are copied when the call is
//! made (copy callbacks run in the caller's thread, without any lock); the
//! communicator is built once the agreement's request has completed.

use std::sync::Arc;

use super::agreement::{self, Outcome};
use super::attr::Attr;
use super::{Comm, Shared};
use crate::error::Error;
use crate::request::Request;
use crate::topo::Topology;

/// The communicator an [`Comm::idup`] is making, to be taken once its
/// request has completed.
pub struct PendingComm {
    parent: Comm,
    outcome: Arc<Outcome>,
    attrs: Vec<Attr>,
    topology: Topology,
    taken: bool,
}

impl Comm {
    /// Starts duplicating the communicator (`MPI_Comm_idup`): returns the
    /// request that completes when every rank has agreed on the new
    /// communicator's context ids, and the [`PendingComm`] that gives the
    /// communicator after it. Collective and non-blocking: ranks may start
    /// idups of different communicators in different orders, or wait for
    /// point-to-point traffic before completing them. Attributes are copied
    /// now; a copy callback's error is returned (the agreement still runs,
    /// so the other ranks' idups complete).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let (req, pending) = world.idup()?;
    /// // ... other work, including communication ...
    /// req.wait()?;
    /// let dup = pending.into_comm()?;
    /// assert_eq!(dup.compare(&world), oxmpi::Comparison::Congruent);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn idup(&self) -> Result<(Request<'static>, PendingComm), Error> {
        self.check_live()?;
        let copied = self.copied_attrs();
        let rt = self.rt();
        let mut engine = rt.engine();
        let (req, outcome) = agreement::start(
            &mut engine,
            self.inner.shared.clone(),
            self.agreement_plan(true),
        );
        match copied {
            Ok(attrs) => {
                drop(engine);
                let pending = PendingComm {
                    parent: self.clone(),
                    outcome,
                    attrs,
                    topology: self.inner.topology.clone(),
                    taken: false,
                };
                Ok((Request::pending(rt.clone(), req), pending))
            }
            Err(e) => {
                // Nobody waits for this agreement: it ends on its own.
                outcome.orphan(&self.inner.shared);
                if engine.reqs.take_finished(req).is_none() {
                    outcome.forget_request();
                }
                Err(e)
            }
        }
    }
}

impl PendingComm {
    /// The new communicator; call once the request from [`Comm::idup`]
    /// has completed successfully.
    ///
    /// Errors: the request has not completed (or failed).
    ///
    /// See the example on [`Comm::idup`].
    pub fn into_comm(mut self) -> Result<Comm, Error> {
        let context = self.outcome.take().ok_or_else(|| {
            Error::State(
                "the communicator of MPI_Comm_idup is taken before its request completed".into(),
            )
        })?;
        self.taken = true;
        let p = &self.parent;
        let new = p.same_groups(
            context,
            std::mem::replace(&mut self.topology, Topology::None),
        );
        new.put_attrs(std::mem::take(&mut self.attrs));
        Ok(new)
    }

    fn shared(&self) -> &Shared {
        &self.parent.inner.shared
    }
}

impl Drop for PendingComm {
    /// Never taken: the id goes back to the pool (now, or when agreed).
    fn drop(&mut self) {
        if !self.taken {
            self.outcome.orphan(self.shared());
        }
    }
}
