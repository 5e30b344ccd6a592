//! Requests behind `MPI_Request` handles, and the completion calls
//! (`MPI_Wait*`, `MPI_Test*`, `MPI_Start*`, `MPI_Request_free`,
//! `MPI_Cancel`). Testing looks through an engine [`Sweep`] (one engine
//! lock and one poll for every request a call looks at); the wait and test
//! families are [`many`].
//!
//! [`crate::objects::pair`]: `MPI_Isendrecv`'s two operations as one request;
//! [`crate::objects::generalized`]: `MPI_Grequest_start`'s requests and their callbacks,
//! which run only once the state lock is released ([`Completion::settle`]).

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use oxmpi::request::{Sweep, Ticket};
use oxmpi::{Request, Status};

use crate::errors::{AbiError, Class, ErrObj};
use crate::handles::{self, empty_status, MPI_Comm, MPI_Request, REQUEST_COMPLETE, REQUEST_NULL};
use crate::objects::detached::Detached;
use crate::objects::generalized::{Callbacks, Grequest};
use crate::objects::launch::Launch;
use crate::objects::request::{Persistent, PersistentOp, ReqEntry, SendMode};
use crate::objects::stage::Staged;
use crate::state::{self, State};

mod many;

pub use many::{complete, test_all, Want};

/// Stores a new request and returns its handle.
pub fn insert(entry: ReqEntry) -> MPI_Request {
    let mut st = state::lock();
    handles::request_handle(insert_in(&mut st, entry))
}

/// Stores a new request; returns its slot.
fn insert_in(st: &mut State, entry: ReqEntry) -> usize {
    let slot = st.requests.insert(entry);
    // A temporary buffer of a datatype belongs to the slot's previous request.
    st.staged.clear(slot);
    if !st.idups.is_empty() {
        st.idups.remove(&slot);
    }
    slot
}

/// The handle of a non-blocking operation that started on `comm` with
/// runtime request `r`: the ticket itself when it has one and `comm` is
/// predefined ([`handles::ticket_handle`]: no table entry, no lock),
/// else a table entry's.
#[inline]
pub fn handle_of(r: Result<Ticket, Request<'static>>, comm: MPI_Comm) -> MPI_Request {
    match r {
        Ok(t) => match handles::ticket_handle(t, comm) {
            Some(h) => h,
            None => ticket_entry(t, comm),
        },
        Err(req) => insert(ReqEntry::Active {
            req: Some(req),
            comm,
        }),
    }
}

/// A table entry for a ticket that no handle can carry.
#[cold]
fn ticket_entry(t: Ticket, comm: MPI_Comm) -> MPI_Request {
    let req = state::predefined_comm(comm).and_then(|c| c.ticket_request(t));
    insert(ReqEntry::Active { req, comm })
}

/// The table slot of request handle `h`; `None` for `MPI_REQUEST_NULL`.
/// A handle carrying a ticket gets an entry the first time a call needs
/// one (it stays until the request completes or is freed, and the handle
/// keeps naming it). A caller holding an engine `sweep` passes it (the
/// entry's request is found through it).
pub fn slot_of(
    st: &mut State,
    h: MPI_Request,
    sweep: Option<&mut Sweep<'static>>,
) -> Result<Option<usize>, AbiError> {
    let Some((t, comm)) = handles::request_ticket(h) else {
        return handles::request_slot(h);
    };
    if let Some(&slot) = st.tickets.get(&h) {
        return Ok(Some(slot));
    }
    let req = match sweep {
        Some(sweep) => sweep.ticket_request(t),
        None => state::predefined_comm(comm).and_then(|c| c.ticket_request(t)),
    }
    .ok_or_else(|| bad_entry(h))?;
    let slot = insert_in(
        st,
        ReqEntry::Active {
            req: Some(req),
            comm,
        },
    );
    st.tickets.insert(h, slot);
    st.ticket_slots.insert(slot, h);
    Ok(Some(slot))
}

/// The ticket handle `h` carries, while it has no table entry (the waits
/// and tests then complete it straight from the engine).
#[inline]
pub fn bare_ticket(st: &State, h: MPI_Request) -> Option<Ticket> {
    let (t, _) = handles::request_ticket(h)?;
    (st.tickets.is_empty() || !st.tickets.contains_key(&h)).then_some(t)
}

/// Forgets that a ticket-carrying handle names table slot `slot` (its
/// request completed or was freed).
#[inline]
pub fn unmap_ticket(st: &mut State, slot: usize) {
    if !st.ticket_slots.is_empty() {
        if let Some(h) = st.ticket_slots.remove(&slot) {
            st.tickets.remove(&h);
        }
    }
}

/// A runtime completion as (status to report, error to raise).
#[inline]
pub fn split(r: Result<Status, oxmpi::Error>, comm: MPI_Comm) -> (Status, Option<AbiError>) {
    match r {
        Ok(s) => (s, None),
        Err(e) => split_err(e, comm),
    }
}

#[cold]
fn split_err(e: oxmpi::Error, comm: MPI_Comm) -> (Status, Option<AbiError>) {
    match e {
        oxmpi::Error::Truncated { status, .. } => {
            let e = oxmpi::Error::Truncated {
                message_len: status.truncated_from.unwrap_or(status.count),
                buffer_len: status.count,
                status,
            };
            (status, Some(AbiError::from(e).on(ErrObj::Comm(comm))))
        }
        e => (
            empty_status(),
            Some(AbiError::from(e).on(ErrObj::Comm(comm))),
        ),
    }
}

/// The result of testing one request handle.
pub enum Outcome {
    /// `MPI_REQUEST_NULL` or an inactive persistent request.
    Inactive,
    /// Still running.
    Pending,
    /// Completed now (the handle was updated).
    Done(Completion),
}

/// What a completion reports.
pub enum Completion {
    /// Its status and error.
    Ready(Status, Option<AbiError>),
    /// A generalized request's: its `query_fn` and `free_fn` are still to
    /// run, without the state lock ([`Completion::settle`]).
    Callbacks(Callbacks),
}

impl Completion {
    /// The status and error, running a generalized request's callbacks.
    /// Call without holding the state lock.
    pub fn settle(self) -> (Status, Option<AbiError>) {
        match self {
            Completion::Ready(s, e) => (s, e),
            Completion::Callbacks(cb) => cb.complete(),
        }
    }
}

/// A completion with this status and error.
fn completed(s: Status, e: Option<AbiError>) -> Outcome {
    Outcome::Done(Completion::Ready(s, e))
}

/// The error for a handle with no live request behind it.
pub fn bad_entry(h: MPI_Request) -> AbiError {
    AbiError::new(
        Class::REQUEST,
        format!("request {h:#010x} does not exist (already completed or freed)"),
    )
}

/// Tests one request without blocking, through `sweep`; completes it
/// (updating `*h`) if done.
pub fn test_one(
    st: &mut State,
    sweep: &mut Sweep<'static>,
    h: &mut MPI_Request,
) -> Result<Outcome, AbiError> {
    if *h == REQUEST_COMPLETE {
        *h = REQUEST_NULL;
        return Ok(completed(Status::empty(), None));
    }
    if let Some(t) = bare_ticket(st, *h) {
        match sweep.complete_ticket(t) {
            Some(Some(s)) => {
                *h = REQUEST_NULL;
                return Ok(completed(s, None));
            }
            None => return Ok(Outcome::Pending),
            // An error, a truncation or no such request: through an entry.
            Some(None) => {}
        }
    }
    let Some(slot) = slot_of(st, *h, Some(sweep))? else {
        return Ok(Outcome::Inactive);
    };
    let entry = st.requests.get_mut(slot).ok_or_else(|| bad_entry(*h))?;
    let comm = entry.comm();
    let result = match entry {
        ReqEntry::Message { .. } => {
            return Err(AbiError::new(
                Class::REQUEST,
                format!("handle {:#010x} is a message, not a request", *h),
            ))
        }
        ReqEntry::Ready { status, .. } => Ok(*status),
        ReqEntry::Generalized(g) if g.freed => return Err(bad_entry(*h)),
        ReqEntry::Generalized(g) => {
            if !g.complete {
                return Ok(Outcome::Pending);
            }
            let cb = g.callbacks;
            st.requests.remove(slot);
            *h = REQUEST_NULL;
            return Ok(Outcome::Done(Completion::Callbacks(cb)));
        }
        ReqEntry::Pair { pair, .. } => match pair.test(sweep) {
            None => return Ok(Outcome::Pending),
            Some(r) => r,
        },
        ReqEntry::Active { req: None, .. } => return Ok(Outcome::Pending),
        ReqEntry::Active { req: Some(r), .. } => match sweep.test(r) {
            Ok(None) => return Ok(Outcome::Pending),
            Ok(Some(s)) => Ok(s),
            Err(e) => Err(e),
        },
        ReqEntry::Persistent { p, .. } => {
            if !p.started {
                return Ok(Outcome::Inactive);
            }
            let Some(r) = p.active.as_mut() else {
                return Ok(Outcome::Pending);
            };
            let out = match sweep.test(r) {
                Ok(None) => return Ok(Outcome::Pending),
                Ok(Some(s)) => Ok(s),
                Err(e) => Err(e),
            };
            p.active = None;
            p.started = false;
            let out = st.complete_request(slot, out);
            let (s, e) = split(out, comm);
            return Ok(completed(s, e));
        }
    };
    st.requests.remove(slot);
    unmap_ticket(st, slot);
    *h = REQUEST_NULL;
    let result = st.complete_request(slot, result);
    let (s, e) = split(result, comm);
    Ok(completed(s, e))
}

/// Where a request stands, as [`plain`] sees it.
pub enum Plain {
    /// Completed now with this status (the handle is null).
    Done(Status),
    /// Its runtime request is still running.
    Pending,
    /// Anything else: for [`test_one`].
    Other,
}

/// The common completion without the general path's plumbing: a send
/// complete as it started ([`REQUEST_COMPLETE`]), a request with no stage that is complete already (an eager send's) or whose
/// runtime request finished without error (a receive's) is completed
/// here, freeing its slot in place.
#[inline(always)]
pub fn plain(st: &mut State, sweep: &mut Sweep<'_>, h: &mut MPI_Request) -> Plain {
    if *h == REQUEST_COMPLETE {
        *h = REQUEST_NULL;
        return Plain::Done(Status::empty());
    }
    if let Some(t) = bare_ticket(st, *h) {
        return match sweep.complete_ticket(t) {
            Some(Some(s)) => {
                *h = REQUEST_NULL;
                Plain::Done(s)
            }
            Some(None) => Plain::Other,
            None => Plain::Pending,
        };
    }
    let Ok(Some(slot)) = handles::request_slot(*h) else {
        return Plain::Other;
    };
    if st.staged.has(slot) || (!st.idups.is_empty() && st.idups.contains_key(&slot)) {
        return Plain::Other;
    }
    let (status, inert) = match st.requests.get_mut(slot) {
        Some(ReqEntry::Ready { status, .. }) => (*status, true),
        Some(ReqEntry::Active { req: Some(r), .. }) => match sweep.complete_ok(r) {
            Some(Some(s)) => (s, r.owns_nothing()),
            Some(None) => return Plain::Other,
            None => return Plain::Pending,
        },
        _ => return Plain::Other,
    };
    if inert {
        st.requests.vacate(slot);
    } else {
        st.requests.discard(slot);
    }
    *h = REQUEST_NULL;
    Plain::Done(status)
}

/// Whether a generalized request with a `poll_fn` (`MPIX_Grequest_start`)
/// was ever started: until then [`poll_generalized`] has nothing to do.
static POLL_FNS: AtomicBool = AtomicBool::new(false);

/// Notes that a generalized request with a `poll_fn` exists.
pub fn note_poll_fn() {
    POLL_FNS.store(true, Ordering::Relaxed);
}

/// Runs the poll functions of the generalized requests among `hs` that
/// have one (`MPIX_Grequest_start`) and are not complete: they may
/// complete them. Without the state lock (they call MPI).
pub fn poll_generalized(hs: &[MPI_Request]) -> Result<(), AbiError> {
    if !POLL_FNS.load(Ordering::Relaxed) {
        return Ok(());
    }
    let polls: Vec<Callbacks> = {
        let st = state::lock();
        hs.iter()
            .filter_map(|&h| handles::request_slot(h).ok().flatten())
            .filter_map(|slot| match st.requests.get(slot) {
                Some(ReqEntry::Generalized(g))
                    if !g.complete && !g.freed && g.callbacks.poll_fn.is_some() =>
                {
                    Some(g.callbacks)
                }
                _ => None,
            })
            .collect()
    };
    polls.iter().try_for_each(Callbacks::poll)
}

/// Blocks until the request completes (`MPI_Wait`).
pub fn wait(h: &mut MPI_Request) -> Result<(Status, Option<AbiError>), AbiError> {
    let mut out = (empty_status(), None);
    complete(std::slice::from_mut(h), Want::All, true, |_, s, e| {
        out = (s, e)
    })?;
    Ok(out)
}

/// The outcome of request `h` if it has completed, without completing it
/// (`MPI_Request_get_status`): `None` while it runs. Runs a complete
/// generalized request's `query_fn` (without the state lock).
pub fn peek(h: MPI_Request) -> Result<Option<Result<Status, AbiError>>, AbiError> {
    if h == REQUEST_COMPLETE {
        return Ok(Some(Ok(Status::empty())));
    }
    let mut st = state::lock();
    let Some(slot) = slot_of(&mut st, h, None)? else {
        return Ok(Some(Ok(empty_status())));
    };
    st.reap_detached();
    let peek = |r: &mut Request<'static>| {
        r.peek()
            .map(|o| o.map_err(|e| AbiError::new(Class(e.class() as c_int), e.to_string())))
    };
    Ok(
        match st.requests.get_mut(slot).ok_or_else(|| bad_entry(h))? {
            ReqEntry::Active { req: Some(r), .. } => peek(r),
            ReqEntry::Active { req: None, .. } => None,
            ReqEntry::Ready { status, .. } => Some(Ok(*status)),
            ReqEntry::Persistent { p, .. } if !p.started => Some(Ok(empty_status())),
            ReqEntry::Persistent { p, .. } => p.active.as_mut().and_then(peek),
            ReqEntry::Pair { pair, .. } => pair.peek(&mut Sweep::each()),
            ReqEntry::Generalized(g) if g.freed => return Err(bad_entry(h)),
            ReqEntry::Generalized(g) if !g.complete => None,
            ReqEntry::Generalized(g) => {
                let cb = g.callbacks;
                drop(st);
                let (s, e) = cb.query();
                Some(e.map_or(Ok(s), Err))
            }
            ReqEntry::Message { .. } => {
                return Err(AbiError::new(
                    Class::REQUEST,
                    format!("handle {h:#010x} is a message, not a request"),
                ))
            }
        },
    )
}

/// Starts an inactive persistent request (`MPI_Start`). A partitioned send
/// only arms its partitions: its transfer starts with the last
/// `MPI_Pready*` (at once if it has no partitions).
pub fn start(h: MPI_Request) -> Result<(), AbiError> {
    let mut guard = state::lock();
    let st = &mut *guard;
    let slot = slot_of(st, h, None)?
        .ok_or_else(|| AbiError::new(Class::REQUEST, "MPI_REQUEST_NULL cannot be started"))?;
    let Some(ReqEntry::Persistent { p, comm }) = st.requests.get_mut(slot) else {
        return Err(AbiError::new(
            Class::REQUEST,
            format!("request {h:#010x} is not a persistent request"),
        ));
    };
    if p.started {
        return Err(AbiError::new(
            Class::REQUEST,
            format!("persistent request {h:#010x} is already active"),
        ));
    }
    let comm_h = *comm;
    if let PersistentOp::Coll(l) = &p.op {
        let l = Arc::clone(l);
        // A collective's non-contiguous buffers are packed now.
        st.staged
            .start(slot)
            .map_err(|e| e.on(ErrObj::Comm(comm_h)))?;
        p.started = true;
        drop(guard);
        return start_coll(slot, &l, comm_h);
    }
    let now = match &mut p.op {
        PersistentOp::PartitionedSend { ready, left, .. } => {
            ready.fill(false);
            *left = ready.len();
            *left == 0
        }
        _ => true,
    };
    if now {
        launch(p, &mut st.staged, slot, comm_h)?;
    }
    p.started = true;
    Ok(())
}

/// Starts the transfer of persistent request `p` (in `slot`, on
/// communicator `comm_h`): packs a non-contiguous send's data, then posts
/// the operation.
pub fn launch(
    p: &mut Persistent,
    staged: &mut Staged,
    slot: usize,
    comm_h: MPI_Comm,
) -> Result<(), AbiError> {
    staged.start(slot).map_err(|e| e.on(ErrObj::Comm(comm_h)))?;
    // SAFETY: the buffer was given to MPI_*_init and stays the program's
    // promise until the request is freed (MPI's rule for persistent requests).
    let r = unsafe {
        match &p.op {
            PersistentOp::Send {
                plan,
                dest,
                tag,
                mode,
            } => p
                .comm
                .isend_plan(plan, *dest, *tag, *mode == SendMode::Synchronous),
            PersistentOp::Recv { plan, source, tag } => p.comm.irecv_plan(plan, *source, *tag),
            PersistentOp::PartitionedSend {
                buf, len, channel, ..
            } => p.comm.psend_raw(channel, *buf as *const u8, *len),
            PersistentOp::PartitionedRecv {
                buf, cap, channel, ..
            } => p.comm.precv_raw(channel, *buf as *mut u8, *cap),
            PersistentOp::Coll(_) => {
                return Err(AbiError::new(
                    Class::INTERN,
                    "persistent collectives are launched by MPI_Start, not here",
                ))
            }
        }
    }
    .map_err(|e| AbiError::from(e).on(ErrObj::Comm(comm_h)))?;
    p.active = Some(r);
    Ok(())
}

/// The error for freeing or cancelling an active partitioned request.
fn active_partitioned(h: MPI_Request, what: &str) -> AbiError {
    AbiError::new(
        Class::REQUEST,
        format!(
            "request {h:#010x} is an active partitioned request: {what} it before it completes \
             is erroneous (MPI 4.0, section 4.2.1)"
        ),
    )
}

/// Starts the persistent collective in `slot` (marked started): without
/// the state lock, since a collective may run the program's reduction
/// function as it starts, which may call MPI.
fn start_coll(slot: usize, l: &Launch, comm: MPI_Comm) -> Result<(), AbiError> {
    // SAFETY: MPI's rule for persistent requests: the buffers given to
    // MPI_<Coll>_init are valid whenever the request is started (and were
    // just packed).
    let r = unsafe { l.start() };
    let mut st = state::lock();
    match (st.requests.get_mut(slot), r) {
        (Some(ReqEntry::Persistent { p, .. }), Ok(req)) => p.active = Some(req),
        (Some(ReqEntry::Persistent { p, .. }), Err(e)) => {
            p.started = false;
            return Err(e.on(ErrObj::Comm(comm)));
        }
        // Freed meanwhile (erroneous): let the operation finish detached.
        (_, Ok(req)) => st.detached.push(Detached { req, data: None }),
        (_, Err(e)) => return Err(e.on(ErrObj::Comm(comm))),
    }
    Ok(())
}

/// Frees a request handle (`MPI_Request_free`); a running operation
/// finishes in the background. A generalized request runs its `free_fn`
/// (now if it is complete, else in `MPI_Grequest_complete`).
pub fn free(h: &mut MPI_Request) -> Result<(), AbiError> {
    if *h == REQUEST_COMPLETE {
        *h = REQUEST_NULL;
        return Ok(());
    }
    let mut st = state::lock();
    let slot = slot_of(&mut st, *h, None)?
        .ok_or_else(|| AbiError::new(Class::REQUEST, "MPI_REQUEST_NULL cannot be freed"))?;
    let entry = st.requests.remove(slot).ok_or_else(|| bad_entry(*h))?;
    let running = match entry {
        ReqEntry::Active { req, .. } => {
            unmap_ticket(&mut st, slot);
            req
        }
        ReqEntry::Persistent { p, comm } if p.started && p.op.is_partitioned() => {
            st.requests.put(slot, ReqEntry::Persistent { p, comm });
            return Err(active_partitioned(*h, "freeing"));
        }
        ReqEntry::Persistent { p, .. } => p.active,
        ReqEntry::Ready { .. } => None,
        ReqEntry::Pair { pair, .. } => {
            st.detached.extend(pair.detach());
            *h = REQUEST_NULL;
            return Ok(());
        }
        ReqEntry::Generalized(g) if g.freed => {
            st.requests.put(slot, ReqEntry::Generalized(g));
            return Err(bad_entry(*h));
        }
        ReqEntry::Generalized(g) => {
            *h = REQUEST_NULL;
            if g.complete {
                drop(st);
                return g.callbacks.free();
            }
            let freed = Grequest { freed: true, ..g };
            st.requests.put(slot, ReqEntry::Generalized(freed));
            return Ok(());
        }
        ReqEntry::Message { msg, comm } => {
            st.requests.put(slot, ReqEntry::Message { msg, comm });
            return Err(AbiError::new(
                Class::REQUEST,
                format!("handle {:#010x} is a message, not a request", *h),
            ));
        }
    };
    // A datatype's temporary buffer stays until the operation completes.
    let data = st.staged.free(slot, running.is_some());
    // A freed MPI_Comm_idup's communicator is never made.
    st.idups.remove(&slot);
    if let Some(req) = running {
        st.detached.push(Detached { req, data });
    }
    *h = REQUEST_NULL;
    Ok(())
}

/// Asks for a pending operation to be cancelled (`MPI_Cancel`): receives
/// that have not matched are; a generalized request runs its `cancel_fn`.
pub fn cancel(h: MPI_Request) -> Result<(), AbiError> {
    if h == REQUEST_COMPLETE {
        return Ok(()); // a send: never cancelled
    }
    let mut st = state::lock();
    let slot = slot_of(&mut st, h, None)?
        .ok_or_else(|| AbiError::new(Class::REQUEST, "MPI_REQUEST_NULL cannot be cancelled"))?;
    match st.requests.get(slot).ok_or_else(|| bad_entry(h))? {
        ReqEntry::Active { req: Some(r), .. } => r.cancel(),
        ReqEntry::Persistent { p, .. } if p.started && p.op.is_partitioned() => {
            return Err(active_partitioned(h, "cancelling"));
        }
        ReqEntry::Persistent { p, .. } => {
            if let Some(r) = &p.active {
                r.cancel();
            }
        }
        ReqEntry::Pair { pair, .. } => pair.cancel(),
        ReqEntry::Generalized(g) if g.freed => return Err(bad_entry(h)),
        ReqEntry::Generalized(g) => {
            let (cb, complete) = (g.callbacks, g.complete);
            drop(st);
            return cb.cancel(complete);
        }
        ReqEntry::Message { .. } => {
            return Err(AbiError::new(
                Class::REQUEST,
                format!("handle {h:#010x} is a message, not a request"),
            ))
        }
        _ => {}
    }
    Ok(())
}
