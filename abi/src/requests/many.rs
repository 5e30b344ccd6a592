//! The wait and test families (`MPI_Waitall`, `Waitany`, `Waitsome`, their
//! `Test` forms, and `MPI_Wait` as a `Waitall` of one). Each pass looks at
//! every handle still to complete under one state lock and one engine
//! [`Sweep`] (one poll), completing all that have finished. A blocking call
//! then takes the rest's runtime requests out of the table, waits for them
//! in the runtime without the state lock (spinning, then sleeping on the
//! doorbell, as every wait), puts them back holding their outcomes, and
//! passes again, which completes them without another engine round trip.
//! Requests with nothing to wait on in the runtime (generalized requests,
//! partitioned sends whose partitions are not all ready, a request another
//! thread waits on) are polled between yields instead.

use oxmpi::request::{settle_all, settle_some, Sweep, Ticket};
use oxmpi::{Request, Status};

use super::{test_one, Completion, Outcome, Plain};
use crate::errors::AbiError;
use crate::handles::{self, empty_status, MPI_Request};
use crate::objects::detached::Detached;
use crate::objects::generalized::Callbacks;
use crate::objects::pair::Side;
use crate::objects::request::ReqEntry;
use crate::state::{self, State};

/// Which completions a call makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Every request (`MPI_Waitall`, `MPI_Wait`); inactive ones are
    /// reported with an empty status.
    All,
    /// The first finished one in array order (`MPI_Waitany`, `MPI_Testany`).
    One,
    /// Every finished one, at least one when blocking (`MPI_Waitsome`,
    /// `MPI_Testsome`).
    Some,
}

/// What the passes of one call have seen.
#[derive(Default)]
struct Seen {
    /// Some request was active (not null, not inactive).
    active: bool,
    /// Completions so far.
    got: usize,
    /// Generalized requests' completions: their callbacks run without the
    /// state lock, after the pass.
    deferred: Vec<(usize, Callbacks)>,
}

/// Looks at handle `i`: completes it if finished, reporting it; returns
/// whether it is still pending.
#[inline(always)]
fn visit<F>(
    st: &mut State,
    sweep: &mut Sweep<'static>,
    (i, h): (usize, &mut MPI_Request),
    want: Want,
    seen: &mut Seen,
    report: &mut F,
) -> Result<bool, AbiError>
where
    F: FnMut(usize, Status, Option<AbiError>),
{
    match super::plain(st, sweep, h) {
        Plain::Done(s) => {
            seen.active = true;
            seen.got += 1;
            report(i, s, None);
            return Ok(false);
        }
        Plain::Pending => {
            seen.active = true;
            return Ok(true);
        }
        Plain::Other => {}
    }
    match test_one(st, sweep, h)? {
        Outcome::Inactive => {
            if want == Want::All {
                report(i, empty_status(), None);
            }
            Ok(false)
        }
        Outcome::Pending => {
            seen.active = true;
            Ok(true)
        }
        Outcome::Done(c) => {
            seen.active = true;
            seen.got += 1;
            match c {
                Completion::Ready(s, e) => report(i, s, e),
                Completion::Callbacks(cb) => seen.deferred.push((i, cb)),
            }
            Ok(false)
        }
    }
}

/// Completes requests of `hs` as `want` says, blocking until that is met
/// when `block`; `report(index, status, error)` is called for each
/// completion. Returns whether any request was active. A handle that names
/// no request fails the call at once (requests completed before it stay
/// completed and reported).
pub fn complete<F>(
    hs: &mut [MPI_Request],
    want: Want,
    block: bool,
    mut report: F,
) -> Result<bool, AbiError>
where
    F: FnMut(usize, Status, Option<AbiError>),
{
    if want == Want::All {
        if let Some(active) = all_done_at_start(hs, &mut report) {
            return Ok(active);
        }
    }
    let mut seen = Seen::default();
    // Indices still pending after the first pass (which looks at all).
    let mut pending: Vec<usize> = Vec::new();
    let mut first = true;
    loop {
        // Generalized requests' poll functions may complete them.
        super::poll_generalized(hs)?;
        let (taken, done) = {
            let mut st = state::lock();
            let mut sweep = state::sweep();
            st.reap_detached_in(&mut sweep);
            let stop = |seen: &Seen| want == Want::One && seen.got > 0;
            if first {
                for (i, h) in hs.iter_mut().enumerate() {
                    if stop(&seen) {
                        break;
                    }
                    if visit(&mut st, &mut sweep, (i, h), want, &mut seen, &mut report)? {
                        pending.push(i);
                    }
                }
                first = false;
            } else {
                let mut keep = 0;
                for k in 0..pending.len() {
                    let i = pending[k];
                    let still = stop(&seen)
                        || visit(
                            &mut st,
                            &mut sweep,
                            (i, &mut hs[i]),
                            want,
                            &mut seen,
                            &mut report,
                        )?;
                    if still {
                        pending[keep] = i;
                        keep += 1;
                    }
                }
                pending.truncate(keep);
            }
            let done = pending.is_empty() || (want != Want::All && seen.got > 0) || !block;
            drop(sweep);
            let taken = if done {
                Taken::default()
            } else {
                take_pending(&mut st, hs, &pending, want == Want::All)
            };
            (taken, done)
        };
        for (i, cb) in seen.deferred.drain(..) {
            let (s, e) = cb.complete();
            report(i, s, e);
        }
        if done {
            return Ok(seen.active);
        }
        if taken.reqs.is_empty() && taken.tickets.is_empty() {
            std::thread::yield_now();
            continue;
        }
        wait_taken(taken, want);
    }
}

/// [`complete`] of every request when each handle is a send that completed
/// as it started ([`handles::REQUEST_COMPLETE`]) or null (the sender's
/// `MPI_Waitall` after a window of eager `MPI_Isend`s): reported as the
/// passes would, without the state lock, the engine or a look at
/// generalized requests. Returns whether any was active; `None` (nothing
/// done) when some handle is another request.
fn all_done_at_start<F>(hs: &mut [MPI_Request], report: &mut F) -> Option<bool>
where
    F: FnMut(usize, Status, Option<AbiError>),
{
    let done = |h: &MPI_Request| *h == handles::REQUEST_COMPLETE || *h == handles::REQUEST_NULL;
    if !hs.iter().all(done) {
        return None;
    }
    let mut active = false;
    for (i, h) in hs.iter_mut().enumerate() {
        if *h == handles::REQUEST_COMPLETE {
            *h = handles::REQUEST_NULL;
            active = true;
            report(i, Status::empty(), None);
        } else {
            report(i, empty_status(), None);
        }
    }
    Some(active)
}

/// Waits in the runtime (without the state lock) for `taken`: every one
/// for [`Want::All`], else the first; then puts the table's back, holding
/// whatever outcomes they got (a ticket's stays in the engine).
fn wait_taken(taken: Taken, want: Want) {
    let (places, mut reqs): (Vec<_>, Vec<_>) = taken
        .reqs
        .into_iter()
        .map(|t| ((t.slot, t.part), t.req))
        .unzip();
    let all = want == Want::All;
    match state::predefined_comm(handles::COMM_WORLD) {
        Some(world) if !taken.tickets.is_empty() => {
            world.settle_with_tickets(&mut reqs, &taken.tickets, all)
        }
        _ if all => settle_all(&mut reqs),
        _ => settle_some(&mut reqs),
    }
    let mut st = state::lock();
    for ((slot, part), req) in places.into_iter().zip(reqs) {
        put_back(&mut st, TakenReq { slot, part, req });
    }
}

/// `MPI_Testall`: completes every request of `hs` if all have finished
/// (reporting each as [`complete`] does), none otherwise; returns whether
/// they were completed.
pub fn test_all<F>(hs: &mut [MPI_Request], mut report: F) -> Result<bool, AbiError>
where
    F: FnMut(usize, Status, Option<AbiError>),
{
    super::poll_generalized(hs)?;
    let mut deferred = Vec::new();
    {
        let mut st = state::lock();
        let mut sweep = state::sweep();
        st.reap_detached_in(&mut sweep);
        for &h in hs.iter().filter(|&&h| h != handles::REQUEST_COMPLETE) {
            if let Some(t) = super::bare_ticket(&st, h) {
                if !sweep.ticket_finished(t) {
                    return Ok(false);
                }
                continue;
            }
            let Some(slot) = super::slot_of(&mut st, h, Some(&mut sweep))? else {
                continue;
            };
            let settled = match st.requests.get_mut(slot) {
                Some(e) => e.settled(&mut sweep),
                None => true, // test_one reports it
            };
            if !settled {
                return Ok(false);
            }
        }
        for (i, h) in hs.iter_mut().enumerate() {
            match test_one(&mut st, &mut sweep, h)? {
                Outcome::Done(Completion::Ready(s, e)) => report(i, s, e),
                Outcome::Done(Completion::Callbacks(cb)) => deferred.push((i, cb)),
                _ => report(i, empty_status(), None),
            }
        }
    }
    for (i, cb) in deferred {
        let (s, e) = cb.complete();
        report(i, s, e);
    }
    Ok(true)
}

/// What part of a request a taken runtime request is.
#[derive(Clone, Copy)]
enum Part {
    /// The request's only operation.
    Whole,
    /// One half of an `MPI_Isendrecv`.
    Half(Side),
}

/// A runtime request taken out of the table to be waited on.
struct TakenReq {
    slot: usize,
    part: Part,
    req: Request<'static>,
}

/// What a blocking pass waits for in the runtime.
#[derive(Default)]
struct Taken {
    /// Runtime requests taken out of the table.
    reqs: Vec<TakenReq>,
    /// Requests named by their handles' tickets (no table entry).
    tickets: Vec<Ticket>,
}

/// Takes out the runtime request of each pending handle `hs[i]`, `i` in
/// `at` (a handle carrying a ticket gives the ticket). When one has none
/// to wait on (held elsewhere, generalized, a partitioned send not yet
/// ready), takes what it can if `partial`, else nothing.
fn take_pending(st: &mut State, hs: &[MPI_Request], at: &[usize], partial: bool) -> Taken {
    let mut out = Taken::default();
    let mut blocked = false;
    for &i in at {
        if let Some(t) = super::bare_ticket(st, hs[i]) {
            out.tickets.push(t);
            continue;
        }
        let Ok(Some(slot)) = super::slot_of(st, hs[i], None) else {
            continue;
        };
        let whole = match st.requests.get_mut(slot) {
            Some(ReqEntry::Active { req, .. }) => req.take(),
            Some(ReqEntry::Persistent { p, .. }) if p.started => p.active.take(),
            Some(ReqEntry::Pair { pair, .. }) => {
                blocked |= pair.held_elsewhere();
                for (side, req) in pair.take_running() {
                    let part = Part::Half(side);
                    out.reqs.push(TakenReq { slot, part, req });
                }
                continue;
            }
            Some(ReqEntry::Generalized(_)) => {
                blocked = true;
                continue;
            }
            _ => continue,
        };
        match whole {
            Some(req) => out.reqs.push(TakenReq {
                slot,
                part: Part::Whole,
                req,
            }),
            None => blocked = true,
        }
    }
    if blocked && !partial {
        for t in out.reqs.drain(..) {
            put_back(st, t);
        }
        out.tickets.clear();
    }
    out
}

/// Puts back a request taken out by [`take_pending`].
fn put_back(st: &mut State, t: TakenReq) {
    match (st.requests.get_mut(t.slot), t.part) {
        (Some(ReqEntry::Active { req, .. }), Part::Whole) => *req = Some(t.req),
        (Some(ReqEntry::Persistent { p, .. }), Part::Whole) => p.active = Some(t.req),
        (Some(ReqEntry::Pair { pair, .. }), Part::Half(side)) => pair.put_back(side, t.req),
        // The handle was freed meanwhile: let the operation finish detached.
        _ => st.detached.push(Detached {
            req: t.req,
            data: None,
        }),
    }
}
