//! Completing many requests at once with the least engine work (the C
//! front end's wait and test families): a [`Sweep`] looks at any number of
//! requests under one hold of the engine lock and one poll, and
//! [`settle_all`] / [`settle_some`] block for outcomes without completing
//! the requests. An outcome taken from the engine stays in its [`Request`]
//! until a test or wait completes it, which then needs no engine at all.

use super::{Request, Ticket};
use crate::error::Error;
use crate::p2p::engine::Engine;
use crate::progress::{Rt, Runtime};
use crate::status::Status;
use oxmpi_sync::engine_lock::EngineGuard;

/// One look at many requests: the first request that needs the engine
/// locks it and polls once; later ones reuse that hold. While a sweep
/// holds the lock, requests must be tested through it ([`Sweep::test`]):
/// a request's own [`Request::test`] or a drop of a running request would
/// wait for the lock this thread holds.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let me = world.rank();
/// let mut reqs = vec![world.isend(&[1u8], me, 0)?, world.isend(&[2u8], me, 0)?];
/// world.recv(&mut [0u8], me, 0)?;
/// world.recv(&mut [0u8], me, 0)?;
/// let mut sweep = world.sweep();
/// for r in &mut reqs {
///     while sweep.test(r)?.is_none() {
///         sweep = world.sweep(); // a new pass: polls again
///     }
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Sweep<'a> {
    rt: Option<&'a Rt>,
    engine: Option<EngineGuard<'a, Engine>>,
}

/// The engine, locked, after one poll: a sweep's first look.
#[inline(never)]
fn lock_and_poll(rt: &Rt) -> EngineGuard<'_, Engine> {
    let mut e = rt.engine();
    e.progress();
    e
}

/// Settles a request of another runtime than the sweep's: a poll and a
/// look of its own.
#[cold]
#[inline(never)]
fn settle_alone(r: &mut Request<'_>) -> bool {
    let rt = r.rt.clone();
    rt.poke();
    let done = r.collect(&mut rt.engine());
    done
}

impl<'a> Sweep<'a> {
    pub(crate) fn new(rt: &'a Rt) -> Sweep<'a> {
        Sweep {
            rt: Some(rt),
            engine: None,
        }
    }

    /// A sweep bound to no runtime: each request is looked at under its
    /// own runtime's lock, after a poll of its own (for callers that have
    /// no communicator at hand).
    pub fn each() -> Sweep<'static> {
        Sweep {
            rt: None,
            engine: None,
        }
    }

    /// Takes `r`'s outcome from the engine into it if its operation has
    /// finished; returns whether `r` now has its outcome (or is null), so
    /// that completing it needs no engine.
    #[inline]
    pub fn settle(&mut self, r: &mut Request<'_>) -> bool {
        if r.id.is_none() {
            return true;
        }
        let ours = self
            .rt
            .is_some_and(|rt| std::ptr::eq::<Runtime>(&*r.rt, &**rt));
        if !ours {
            // Not this sweep's runtime (there is one runtime a process).
            return settle_alone(r);
        }
        self.engine().is_none_or(|engine| r.collect(engine))
    }

    /// The engine, locked and polled at the sweep's first need; `None`
    /// for a sweep bound to no runtime.
    #[inline]
    fn engine(&mut self) -> Option<&mut EngineGuard<'a, Engine>> {
        let rt = self.rt?;
        Some(match &mut self.engine {
            Some(e) => e,
            // Out of line: the poll inlined here would make every call
            // save and restore registers it needs only once a sweep.
            none => none.insert(lock_and_poll(rt)),
        })
    }

    /// Completes `r` if its operation finished with a status that is no
    /// error (the common case, with nothing to convert); `None` leaves
    /// `r` to [`Sweep::test`], its outcome kept if it has one.
    #[inline]
    pub fn take_ok(&mut self, r: &mut Request<'_>) -> Option<Status> {
        if !self.settle(r) {
            return None;
        }
        match r.ready {
            Some(s) if s.truncated_from.is_none() => r.ready.take(),
            _ => None,
        }
    }

    /// [`Sweep::settle`] and [`Sweep::take_ok`] in one look, for the
    /// completion calls' common case: `None` while the operation runs;
    /// `Some(Some(status))` when it finished without error (the request is
    /// complete; without a stage the status goes from the engine straight
    /// out, not kept in the request first); `Some(None)` when it finished
    /// with an error or truncated, its outcome kept for [`Sweep::test`].
    #[inline]
    pub fn complete_ok(&mut self, r: &mut Request<'_>) -> Option<Option<Status>> {
        let Some(id) = r.id else {
            return Some(self.take_ok(r));
        };
        let engine = match (self.rt, &mut self.engine) {
            (Some(rt), Some(e)) if std::ptr::eq::<Runtime>(&*r.rt, &**rt) => e,
            _ => {
                return self.settle(r).then(|| self.take_ok(r));
            }
        };
        if r.stage.is_none() {
            if let Some(s) = engine.reqs.take_ok(id) {
                r.id = None;
                if s.truncated_from.is_none() {
                    return Some(Some(s));
                }
                r.ready = Some(s);
                return Some(None);
            }
        }
        if !r.collect(engine) {
            return None;
        }
        // Finished otherwise (a stage unpacked now, an error, a truncation):
        // an error-free status kept by the stage's unpacking still
        // completes here.
        Some(match r.ready {
            Some(s) if s.truncated_from.is_none() => r.ready.take(),
            _ => None,
        })
    }

    /// [`Sweep::complete_ok`] of a request named by a [`Ticket`] (the C
    /// front end's handles of its predefined communicators' requests):
    /// `None` while it runs; `Some(Some(status))` when it finished without
    /// error (it is complete); `Some(None)` when it finished otherwise or
    /// names no request: complete it through
    /// [`Comm::ticket_request`](crate::Comm::ticket_request).
    #[inline]
    pub fn complete_ticket(&mut self, t: Ticket) -> Option<Option<Status>> {
        let Some(engine) = self.engine() else {
            return Some(None);
        };
        let Some(id) = engine.reqs.resolve(t) else {
            return Some(None);
        };
        match engine.reqs.take_clean(id) {
            Ok(s) => Some(Some(s)),
            Err(true) => Some(None),
            Err(false) => None,
        }
    }

    /// Whether the request a [`Ticket`] names has finished (or there is
    /// none), without completing it.
    pub fn ticket_finished(&mut self, t: Ticket) -> bool {
        self.engine().is_none_or(|e| e.reqs.ticket_finished(t))
    }

    /// Completes `r` if its operation has finished (`MPI_Test` on it):
    /// `Ok(None)` while it runs; a null request gives an empty status.
    #[inline]
    pub fn test(&mut self, r: &mut Request<'_>) -> Result<Option<Status>, Error> {
        if !self.settle(r) {
            return Ok(None);
        }
        r.take_kept().transpose()
    }
}

/// Waits until every request's operation has finished, keeping each
/// outcome in its request: a test or wait then completes it at once. One
/// wait for the lot; each pass of the engine takes every outcome that is
/// there, in order, from where the last pass stopped.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let me = world.rank();
/// let mut reqs = vec![world.isend(&[7u8], me, 0)?];
/// world.recv(&mut [0u8], me, 0)?;
/// oxmpi::request::settle_all(&mut reqs);
/// assert!(reqs[0].test()?.is_some()); // finished: completes without waiting
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn settle_all(requests: &mut [Request<'_>]) {
    let Some(rt) = super::many::any_rt(requests) else {
        return;
    };
    let mut next = 0;
    rt.wait_until(|e| {
        while let Some(r) = requests.get_mut(next) {
            if !r.collect(e) {
                return None;
            }
            next += 1;
        }
        Some(())
    });
}

/// Waits until at least one request's operation has finished (returns at
/// once if every request is null), keeping the outcome of each that has
/// in its request, as [`settle_all`].
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let me = world.rank();
/// let (mut a, mut b) = ([0u8], [0u8]);
/// let mut reqs = vec![world.irecv(&mut a, me, 1)?, world.irecv(&mut b, me, 2)?];
/// world.send(&[2u8], me, 2)?;
/// oxmpi::request::settle_some(&mut reqs);
/// assert!(reqs[1].test()?.is_some());
/// # reqs[0].cancel();
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn settle_some(requests: &mut [Request<'_>]) {
    let Some(rt) = super::many::any_rt(requests) else {
        return;
    };
    rt.wait_until(|e| {
        let mut any = false;
        for r in requests.iter_mut().filter(|r| !r.is_null()) {
            any |= r.collect(e);
        }
        any.then_some(())
    });
}

impl Sweep<'static> {
    /// [`Comm::ticket_request`](crate::Comm::ticket_request) through this
    /// sweep's hold of the engine (which that call would wait for).
    pub fn ticket_request(&mut self, t: Ticket) -> Option<Request<'static>> {
        let rt = self.rt?;
        let id = self.engine()?.reqs.resolve(t)?;
        Some(Request::pending_static(rt, id))
    }
}

/// [`settle_all`] (`all`) or [`settle_some`] of `requests` and of the
/// requests `tickets` name together, on runtime `rt`: a ticket's outcome
/// stays in the engine (a ticket naming no request counts as finished:
/// its completion reports it). See
/// [`Comm::settle_with_tickets`](crate::Comm::settle_with_tickets).
pub(crate) fn settle_with_tickets(
    rt: &Rt,
    requests: &mut [Request<'_>],
    tickets: &[Ticket],
    all: bool,
) {
    if all {
        settle_all(requests);
        let mut next = 0;
        rt.wait_until(|e| {
            while let Some(t) = tickets.get(next) {
                if !e.reqs.ticket_finished(*t) {
                    return None;
                }
                next += 1;
            }
            Some(())
        });
        return;
    }
    rt.wait_until(|e| {
        let mut any = false;
        for r in requests.iter_mut().filter(|r| !r.is_null()) {
            any |= r.collect(e);
        }
        any |= tickets.iter().any(|t| e.reqs.ticket_finished(*t));
        any.then_some(())
    });
}

impl Request<'_> {
    /// The outcome a sweep or settle kept in the request, completing it
    /// (`None` while it is still in the engine).
    fn take_kept(&mut self) -> Option<Result<Status, Error>> {
        if let Some(s) = self.ready.take() {
            return Some(s.check());
        }
        if let Some(e) = self.failed.take() {
            return Some(Err(*e));
        }
        self.id.is_none().then(|| Ok(Status::empty()))
    }
}
