//! Targets on other hosts. Within a host an origin reaches a target's
//! memory and control block directly (mapped, or CMA); across hosts it
//! asks the target's window service instead: a thread of the target
//! process, started when a window with ranks on another host is made,
//! that waits (asleep, like any blocking call) for requests on the
//! window's private communicator and applies them to its own memory and
//! its host's control block: the same lock words and accumulate lock as
//! the within-host path, so both stay atomic with respect to each other,
//! and the target's application never has to call MPI for them.
//!
//! A put returns once its request is sent; flush, unlock, fence and
//! complete wait for the acknowledgements of the puts before them
//! ([`Link::settle`]). Every other operation waits for its reply, so, as
//! within a host, it is complete when its call returns. Locks are tried by the service and retried by the
//! origin while they are busy; post and complete are messages counted by
//! the receiving side, beside the control block's counters.

mod ops;
mod service;
mod wire;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use super::sync::LockType;
use super::{Inner, Win};
use crate::comm::Comm;
use crate::error::Error;
use wire::{Kind, DONE_TAG, POST_TAG, REPLY_BASE, REPLY_SPAN, REQUEST_TAG};

/// A window's link to the ranks on other hosts: the communicator its
/// requests travel on, what arrived of their posts and completions, and
/// this process's service.
pub(super) struct Link {
    comm: Comm,
    next_reply: AtomicU32,
    /// Posts received, per target rank.
    posts_in: Mutex<Vec<u32>>,
    /// Completions received, per origin rank.
    dones_in: Mutex<Vec<u32>>,
    service: Arc<Service>,
    /// Whether puts return before their acknowledgement (not on dynamic
    /// windows, whose range only the target can check).
    defer_puts: bool,
    /// Puts whose acknowledgement is still due: (target, reply tag).
    unacked: Mutex<Vec<(usize, i32)>>,
}

/// A window's service thread, stopped once: by `MPI_Win_free`, or by
/// `MPI_Finalize` for a window never freed ([`stop_services`]).
struct Service {
    /// The window's private communicator (a Stop request goes to itself).
    comm: Comm,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The services started and perhaps not stopped yet.
static RUNNING: Mutex<Vec<Arc<Service>>> = Mutex::new(Vec::new());

impl Service {
    fn is_running(&self) -> bool {
        crate::comm::lock(&self.thread).is_some()
    }

    /// Sends the thread a Stop request and waits for it to end.
    fn stop(&self) -> Result<(), Error> {
        let Some(handle) = crate::comm::lock(&self.thread).take() else {
            return Ok(());
        };
        let stop = wire::request(Kind::Stop, None, None, false, 0, &[], &[]);
        self.comm.send(&stop, self.comm.rank(), REQUEST_TAG)?;
        handle
            .join()
            .map_err(|_| Error::Service("the window service thread panicked".into()))
    }
}

/// Stops the service of every window not freed (or dropped without
/// `MPI_Win_free`): `MPI_Finalize` calls it after its barrier, when no
/// request can come any more, so no thread is left waiting in a matched
/// probe on a runtime that is going away.
pub(crate) fn stop_services() {
    let running = std::mem::take(&mut *crate::comm::lock(&RUNNING));
    for service in running {
        if let Err(e) = service.stop() {
            eprintln!("oxmpi: stopping a window service at finalize: {e}");
        }
    }
}

impl Link {
    /// Starts this process's service for the window `win` (whose `Inner`
    /// is being made: the service upgrades `win` only for a request, and
    /// requests come once every rank has the window).
    pub(super) fn start(comm: &Comm, win: Weak<Inner>, defer_puts: bool) -> Result<Link, Error> {
        let n = comm.size() as usize;
        let service_comm = comm.clone();
        let handle = std::thread::Builder::new()
            .name("oxmpi-rma-service".into())
            .spawn(move || service::run(&service_comm, &win))
            .map_err(|e| Error::Os {
                call: "pthread_create",
                source: e,
            })?;
        let service = Arc::new(Service {
            comm: comm.clone(),
            thread: Mutex::new(Some(handle)),
        });
        {
            let mut running = crate::comm::lock(&RUNNING);
            running.retain(|s| s.is_running());
            running.push(Arc::clone(&service));
        }
        Ok(Link {
            comm: comm.clone(),
            next_reply: AtomicU32::new(0),
            posts_in: Mutex::new(vec![0; n]),
            dones_in: Mutex::new(vec![0; n]),
            service,
            defer_puts,
            unacked: Mutex::new(Vec::new()),
        })
    }

    /// Ends this process's service (after the collective part of
    /// `MPI_Win_free`: no origin sends requests any more).
    pub(super) fn stop(&self) -> Result<(), Error> {
        self.service.stop()
    }

    /// A fresh reply tag.
    fn reply_tag(&self) -> i32 {
        let k = self.next_reply.fetch_add(1, Ordering::Relaxed) % REPLY_SPAN;
        REPLY_BASE + k as i32
    }

    /// Sends `request` (made for a fresh reply tag) to `target`'s
    /// service; returns the tag its reply will come with.
    fn send_request(
        &self,
        target: usize,
        request: impl FnOnce(i32) -> Vec<u8>,
    ) -> Result<i32, Error> {
        let tag = self.reply_tag();
        self.comm.send(&request(tag), target as i32, REQUEST_TAG)?;
        Ok(tag)
    }

    /// Receives the reply with `tag` from `target`.
    fn reply(&self, target: usize, tag: i32) -> Result<Vec<u8>, Error> {
        let (msg, st) = self.comm.mprobe(target as i32, tag)?;
        let mut reply = vec![0u8; st.count];
        msg.recv(&mut reply)?;
        Ok(reply)
    }

    /// Waits for the acknowledgements of the puts to `target` (`None`:
    /// to every rank) and returns the first error among them.
    pub(super) fn settle(&self, target: Option<usize>) -> Result<(), Error> {
        let due: Vec<(usize, i32)> = {
            let mut unacked = crate::comm::lock(&self.unacked);
            let (due, rest) = unacked
                .drain(..)
                .partition(|&(t, _)| target.is_none_or(|x| x == t));
            *unacked = rest;
            due
        };
        let mut first = Ok(());
        for (t, tag) in due {
            let got = self
                .reply(t, tag)
                .and_then(|r| wire::outcome(&r, t).map(|_| ()));
            if first.is_ok() {
                first = got;
            }
        }
        first
    }

    /// Sends `request` (made for a reply tag) to `target`'s service and
    /// returns its reply's payload (`None`: a busy lock).
    fn call(
        &self,
        target: usize,
        request: impl FnOnce(i32) -> Vec<u8>,
        mut take: impl FnMut(Option<&[u8]>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let tag = self.send_request(target, request)?;
        let reply = self.reply(target, tag)?;
        take(wire::outcome(&reply, target)?)
    }

    /// [`Link::call`] again while the target answers busy (its
    /// accumulate lock held across a long double accumulate's round trips).
    fn call_until_done(
        &self,
        target: usize,
        request: impl Fn(i32) -> Vec<u8>,
        mut take: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut pause = Duration::from_micros(2);
        loop {
            let mut busy = false;
            self.call(target, &request, |got| match got {
                Some(b) => take(b),
                None => {
                    busy = true;
                    Ok(())
                }
            })?;
            if !busy {
                return Ok(());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// One try at `target`'s lock: whether it was taken.
    pub(super) fn try_lock(&self, target: usize, kind: LockType) -> Result<bool, Error> {
        let exclusive = kind == LockType::Exclusive;
        let mut taken = false;
        self.call(
            target,
            |tag| wire::request(Kind::Lock, None, None, exclusive, tag, &[], &[]),
            |r| {
                taken = r.is_some();
                Ok(())
            },
        )?;
        Ok(taken)
    }

    /// Takes `target`'s lock, retrying while it is held (with growing
    /// pauses up to 1 ms: the holder is another origin, which may take long).
    pub(super) fn lock(&self, target: usize, kind: LockType) -> Result<(), Error> {
        let mut pause = Duration::from_micros(5);
        while !self.try_lock(target, kind)? {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Releases `target`'s lock (after the reply: the release is done).
    pub(super) fn unlock(&self, target: usize, kind: LockType) -> Result<(), Error> {
        let exclusive = kind == LockType::Exclusive;
        self.call(
            target,
            |tag| wire::request(Kind::Unlock, None, None, exclusive, tag, &[], &[]),
            |_| Ok(()),
        )
    }

    /// Counts the messages with `tag` from `rank` that have arrived into
    /// `counts[rank]` and returns it.
    fn drain(&self, counts: &Mutex<Vec<u32>>, rank: usize, tag: i32) -> Result<u32, Error> {
        let mut counts = crate::comm::lock(counts);
        while self.comm.iprobe(rank as i32, tag)?.is_some() {
            self.comm.recv(&mut [0u8; 0], rank as i32, tag)?;
            counts[rank] = counts[rank].wrapping_add(1);
        }
        Ok(counts[rank])
    }
}

impl Win {
    /// Waits for the acknowledgements of this rank's puts to `target`
    /// on other hosts (`None`: to every rank): remote completion.
    pub(super) fn settle(&self, target: Option<usize>) -> Result<(), Error> {
        match &self.inner.remote {
            Some(link) => link.settle(target),
            None => Ok(()),
        }
    }

    /// The link to `rank` if it is on another host.
    pub(super) fn remote(&self, rank: usize) -> Option<&Link> {
        self.inner
            .remote
            .as_ref()
            .filter(|_| self.inner.targets[rank].is_remote())
    }

    /// How many times `target` has posted an exposure epoch to this rank.
    pub(super) fn posts_from(&self, target: usize) -> Result<u32, Error> {
        let me = self.inner.me;
        match self.remote(target) {
            Some(link) => link.drain(&link.posts_in, target, POST_TAG),
            None => Ok(self.inner.control.posts(target, me).load(Ordering::Acquire)),
        }
    }

    /// How many times `origin` has completed an access epoch to this rank.
    pub(super) fn dones_from(&self, origin: usize) -> Result<u32, Error> {
        let me = self.inner.me;
        match self.remote(origin) {
            Some(link) => link.drain(&link.dones_in, origin, DONE_TAG),
            None => Ok(self.inner.control.dones(me, origin).load(Ordering::Acquire)),
        }
    }

    /// `MPI_Win_post`'s word to `origin`.
    pub(super) fn signal_post(&self, origin: usize) -> Result<(), Error> {
        let me = self.inner.me;
        match self.remote(origin) {
            Some(link) => link.comm.send(&[0u8; 0], origin as i32, POST_TAG),
            None => {
                self.inner
                    .control
                    .posts(me, origin)
                    .fetch_add(1, Ordering::Release);
                Ok(())
            }
        }
    }

    /// `MPI_Win_complete`'s word to `target` (every operation to it has
    /// completed: each waited for its reply).
    pub(super) fn signal_done(&self, target: usize) -> Result<(), Error> {
        let me = self.inner.me;
        match self.remote(target) {
            Some(link) => link.comm.send(&[0u8; 0], target as i32, DONE_TAG),
            None => {
                self.inner
                    .control
                    .dones(target, me)
                    .fetch_add(1, Ordering::Release);
                Ok(())
            }
        }
    }
}
