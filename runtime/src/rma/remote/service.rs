//! The target's side: a thread per window with ranks on other hosts that
//! serves their requests on this process's window memory. It waits in a
//! matched probe (the runtime's wait loop without its spin phase: a few
//! polls, then asleep on the rank's doorbell, which fabric arrivals ring),
//! so it takes no CPU while nobody asks, and it needs nothing of the
//! application's thread.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use super::super::control::EXCLUSIVE;
use super::super::ops::accumulate_reducer;
use super::super::sync::LockType;
use super::super::{Flavor, Inner, Win};
use super::wire::{self, Kind, Request, Status, REQUEST_TAG};
use crate::comm::{Comm, Message};
use crate::error::Error;
use crate::ops::Op;
use crate::progress::WaitPolicy;
use crate::status::ANY_SOURCE;

/// Serves requests until a `Stop`, or until the window is gone.
pub(super) fn run(comm: &Comm, win: &Weak<Inner>) {
    if let Err(e) = serve_all(comm, win) {
        // The job is failing (a peer or the link went away); the launcher
        // ends it. Say why this rank stopped serving.
        eprintln!(
            "oxmpi: rank {}: the window service stopped: {e}",
            comm.rank()
        );
    }
}

fn serve_all(comm: &Comm, win: &Weak<Inner>) -> Result<(), Error> {
    let rt = comm.rt();
    // A few polls and yields, then asleep on the rank's doorbell (which
    // the fabric's arrivals ring too): never a spinning core.
    let policy = WaitPolicy {
        spins: 0,
        crowded_spins: u32::MAX,
        yields: 8,
        ..rt.policy()
    };
    let pattern = comm.pattern(ANY_SOURCE, REQUEST_TAG);
    loop {
        let (handle, st) = rt.wait_with(policy, |e| e.mprobe(&pattern));
        let msg = Message::new(comm.clone(), handle);
        let mut bytes = vec![0u8; st.count];
        msg.recv(&mut bytes)?;
        let req = match wire::parse(&bytes) {
            Ok(req) => req,
            Err(e) => {
                eprintln!("oxmpi: rank {}: {e} from rank {}", comm.rank(), st.source);
                continue;
            }
        };
        if req.kind == Kind::Stop {
            return Ok(());
        }
        let Some(inner) = win.upgrade() else {
            return Ok(());
        };
        let reply = serve(&Win { inner }, &req);
        let reply = match reply {
            Ok((status, payload)) => wire::reply(status, &payload),
            Err(e) => {
                let status = if e.class() == crate::error::ErrorClass::RmaRange {
                    Status::Range
                } else {
                    Status::Failed
                };
                wire::reply(status, e.to_string().as_bytes())
            }
        };
        comm.send(&reply, st.source, req.reply_tag)?;
    }
}

/// Applies one request to this rank's window memory.
fn serve(win: &Win, req: &Request<'_>) -> Result<(Status, Vec<u8>), Error> {
    let inner: &Arc<Inner> = &win.inner;
    let me = inner.me;
    let t = inner.targets[me];
    if !req.runs.is_empty() {
        check_runs(win, &req.runs)?;
    }
    let want: usize = req.runs.iter().map(|r| r.1).sum();
    let short = |what: &str, have: usize| {
        Error::Service(format!(
            "a window request carried {have} bytes of {what} for {want} bytes of target"
        ))
    };
    let done = |v: Vec<u8>| Ok((Status::Done, v));
    match req.kind {
        Kind::Put => {
            if req.payload.len() != want {
                return Err(short("data", req.payload.len()));
            }
            // SAFETY: the runs were checked against this rank's window.
            unsafe { t.write(&req.runs, req.payload)? };
            done(Vec::new())
        }
        Kind::Get => {
            let mut v = vec![0u8; want];
            // SAFETY: as above.
            unsafe { t.read(&req.runs, &mut v)? };
            done(v)
        }
        Kind::Accumulate => {
            let op = Op::Builtin(req.op.ok_or_else(|| short("operation", 0))?);
            let reduce = accumulate_reducer(&op, req.elem)?;
            let no_op = matches!(op, Op::Builtin(crate::ops::BuiltinOp::NoOp));
            if !no_op && req.payload.len() != want {
                return Err(short("data", req.payload.len()));
            }
            let mut old = Vec::new();
            let applied = try_acc_lock(win, || -> Result<(), Error> {
                let mut current = vec![0u8; want];
                // SAFETY: as above.
                unsafe {
                    if req.flag || reduce.is_some() {
                        t.read(&req.runs, &mut current)?;
                    }
                    if req.flag {
                        old.clone_from(&current);
                    }
                    if let Some(f) = &reduce {
                        f(req.payload, &mut current)?;
                        t.write(&req.runs, &current)?;
                    } else if !no_op {
                        t.write(&req.runs, req.payload)?;
                    }
                }
                Ok(())
            });
            match applied {
                Some(r) => r.map(|_| (Status::Done, old)),
                None => busy(),
            }
        }
        Kind::CompareSwap => {
            if req.payload.len() != 2 * want {
                return Err(short("values", req.payload.len()));
            }
            let (new, expected) = req.payload.split_at(want);
            let mut current = vec![0u8; want];
            let applied = try_acc_lock(win, || -> Result<(), Error> {
                // SAFETY: as above.
                unsafe {
                    t.read(&req.runs, &mut current)?;
                    if current == expected {
                        t.write(&req.runs, new)?;
                    }
                }
                Ok(())
            });
            match applied {
                Some(r) => r.map(|_| (Status::Done, current)),
                None => busy(),
            }
        }
        Kind::Lock => {
            let word = inner.control.lock_word(me);
            let taken = if req.flag {
                word.compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            } else {
                win.try_take_shared(me)
            };
            Ok((if taken { Status::Done } else { Status::Busy }, Vec::new()))
        }
        Kind::AccLock => {
            // Held until the origin's AccUnlock.
            let word = inner.control.acc_lock(me);
            let taken = word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed);
            Ok((
                if taken.is_ok() {
                    Status::Done
                } else {
                    Status::Busy
                },
                Vec::new(),
            ))
        }
        Kind::AccUnlock => {
            inner.control.acc_lock(me).store(0, Ordering::Release);
            done(Vec::new())
        }
        Kind::Unlock => {
            let kind = if req.flag {
                LockType::Exclusive
            } else {
                LockType::Shared
            };
            win.release_lock(me, kind)?;
            done(Vec::new())
        }
        Kind::Stop => done(Vec::new()),
    }
}

fn busy() -> Result<(Status, Vec<u8>), Error> {
    Ok((Status::Busy, Vec::new()))
}

/// Runs `f` holding this rank's accumulate lock if it is free: the
/// service never waits for it, since the holder may be an origin whose
/// release is a request this service has yet to serve.
fn try_acc_lock<R>(win: &Win, f: impl FnOnce() -> R) -> Option<R> {
    let word = win.inner.control.acc_lock(win.inner.me);
    word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .ok()?;
    let r = f();
    word.store(0, Ordering::Release);
    Some(r)
}

/// Fails with `MPI_ERR_RMA_RANGE` unless every run is window memory of
/// this rank (dynamic windows: inside one attached region).
fn check_runs(win: &Win, runs: &[(usize, usize)]) -> Result<(), Error> {
    let inner = &win.inner;
    let t = inner.targets[inner.me];
    let regions = if inner.flavor == Flavor::Dynamic {
        inner.control.regions(inner.me)
    } else {
        vec![(0, t.size)]
    };
    for &(off, len) in runs {
        let inside = off.checked_add(len).is_some_and(|end| {
            regions
                .iter()
                .any(|&(b, l)| off >= b && end <= b.saturating_add(l))
        });
        if !inside {
            return Err(super::super::rma_error(
                crate::error::ErrorClass::RmaRange,
                format!(
                    "the access to bytes {off}..{} of target rank {}'s window is outside its \
                     memory",
                    off as u128 + len as u128,
                    inner.me
                ),
            ));
        }
    }
    Ok(())
}
