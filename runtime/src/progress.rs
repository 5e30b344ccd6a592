//! The runtime core and the one progress loop every blocking call runs.
//!
//! Blocking calls are the non-blocking ones run to completion here: poll
//! the engine, and when nothing moves spin briefly, then yield, then sleep
//! on the transport's doorbell so oversubscribed ranks leave the CPU to the
//! ranks that have work.

use std::any::{Any, TypeId};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::p2p::engine::Engine;
use crate::p2p::request::ReqId;
use crate::status::Status;
use crate::transport::bridge::Bridged;
use crate::transport::Transport;
use oxmpi_sync::engine_lock::{EngineGuard, EngineLock};

/// Most polls a spinning wait makes per hold of the engine lock.
const POLLS_PER_LOCK: u32 = 16;
/// Longest a wait spins on while a fabric transfer is under way (a 4 MiB
/// message takes ~2 ms on a 20 Gb/s link; one that takes longer spins
/// this long, then waits as usual).
const STREAM_SPIN: Duration = Duration::from_millis(50);

/// How a rank waits when idle.
#[derive(Debug, Clone, Copy)]
pub struct WaitPolicy {
    /// Polls before starting to yield.
    pub spins: u32,
    /// Every this many polls of its spin phase, a rank asks the transport
    /// whether more of the host's ranks are awake than there are cores, and
    /// if so starts to yield; `spins` or more: never asked.
    pub crowded_spins: u32,
    /// Yields before sleeping on the doorbell.
    pub yields: u32,
    /// Longest single sleep (a safety net; wake-ups normally come sooner).
    pub max_sleep: Duration,
}

impl WaitPolicy {
    /// Defaults for `local_ranks` ranks sharing `cores` cores. When they
    /// outnumber the cores, a waiting rank spins briefly and then, if more
    /// ranks than cores are awake, yields: spinning would only keep the rank
    /// it waits for off the CPU. While the others sleep (say, six of eight
    /// ranks in a barrier while two exchange messages), it spins as long as
    /// a rank with a core of its own.
    pub fn for_load(local_ranks: usize, cores: usize) -> WaitPolicy {
        let oversubscribed = local_ranks > cores.max(1);
        WaitPolicy {
            spins: 4000,
            crowded_spins: if oversubscribed { 20 } else { u32::MAX },
            yields: if oversubscribed { 20 } else { 200 },
            max_sleep: Duration::from_millis(10),
        }
    }
}

/// Everything a rank's communication runs on.
pub struct Runtime {
    engine: EngineLock<Engine>,
    transport: Arc<dyn Transport>,
    policy: WaitPolicy,
    /// This process's world rank.
    pub world_rank: usize,
    /// Ranks in the world.
    pub world_size: usize,
    /// The collective layer's process-wide state (its algorithm selector).
    pub(crate) coll: Extension,
    /// The transport's bridges to other jobs (set at start by `init`).
    pub(crate) bridged: OnceLock<Arc<Bridged>>,
}

impl Runtime {
    /// A runtime over `engine`.
    pub fn new(
        engine: Engine,
        policy: WaitPolicy,
        world_rank: usize,
        world_size: usize,
        coll: Extension,
    ) -> Runtime {
        let transport = Arc::clone(engine.transport());
        Runtime {
            coll,
            engine: EngineLock::new(engine),
            transport,
            policy,
            world_rank,
            world_size,
            bridged: OnceLock::new(),
        }
    }

    /// Locks the engine (see [`EngineLock`]).
    #[inline(always)]
    pub fn engine(&self) -> EngineGuard<'_, Engine> {
        self.engine.lock()
    }

    /// Runs progress until `check` returns a value.
    pub fn wait_until<T>(&self, check: impl FnMut(&mut Engine) -> Option<T>) -> T {
        self.wait_with(self.policy, check)
    }

    /// The rank's wait policy.
    pub fn policy(&self) -> WaitPolicy {
        self.policy
    }

    /// [`Runtime::wait_until`] under `policy` (a helper thread of the
    /// rank, which should sleep rather than spin on a core the rank needs).
    pub fn wait_with<T>(
        &self,
        policy: WaitPolicy,
        mut check: impl FnMut(&mut Engine) -> Option<T>,
    ) -> T {
        // Polls since something last moved.
        let mut idle = 0u32;
        let mut next_crowd_check = policy.crowded_spins;
        // Since when this wait has found a fabric transfer under way at the
        // end of its spin phase with nothing else moving (see below).
        let mut streaming_since: Option<Instant> = None;
        loop {
            // Spin and yield without touching the doorbell (peers write it);
            // take its token only right before a last look and a sleep.
            let sleepy = idle >= policy.spins + policy.yields;
            let token = sleepy.then(|| self.transport.wait_token());
            {
                let mut engine = self.engine();
                // A spinning rank keeps the lock for a few polls: a poll
                // without the lock round trip is shorter, so an arrival is
                // seen sooner (other threads wait at most these few polls).
                let polls = if idle < policy.spins {
                    POLLS_PER_LOCK.min(next_crowd_check.max(idle + 1) - idle)
                } else {
                    1
                };
                for _ in 0..polls {
                    let moved = engine.progress();
                    if let Some(v) = check(&mut engine) {
                        return v;
                    }
                    if moved {
                        idle = 0;
                        next_crowd_check = policy.crowded_spins;
                        streaming_since = None;
                        break;
                    }
                    idle = idle.saturating_add(1);
                }
                if idle == 0 {
                    continue;
                }
                // A transfer that the fabric moves only while polled is
                // under way (its completion alone counts as movement):
                // spin on through it, not yield or sleep, for up to
                // STREAM_SPIN without a completion (a peer that stops
                // polling mid-transfer should not keep this rank on the
                // CPU for long). Not a helper's wait (no spin phase): the
                // rank's own drives the transfer.
                if idle >= policy.spins && policy.spins > 0 && engine.streaming() {
                    let since = *streaming_since.get_or_insert_with(Instant::now);
                    if since.elapsed() < STREAM_SPIN {
                        idle = 0;
                        continue;
                    }
                }
            }
            match token {
                Some(token) => self.transport.wait(token, policy.max_sleep),
                // Too many ranks want the cores: stop spinning now. Asked
                // again every `crowded_spins` polls, since a peer that wakes
                // up may need the core this rank spins on.
                None if idle < policy.spins && idle >= next_crowd_check => {
                    next_crowd_check = idle.saturating_add(policy.crowded_spins);
                    if self.transport.crowded() {
                        idle = policy.spins;
                        std::thread::yield_now();
                    }
                }
                // No PAUSE: it costs more than a poll here, and the
                // spin phase is bounded by `spins`.
                None if idle < policy.spins => {}
                None => std::thread::yield_now(),
            }
        }
    }

    /// Waits for engine request `id` and takes its outcome (a truncated
    /// receive is an error). If the wait unwinds (a user callback of a
    /// collective panicked), the request is still waited for on the way
    /// out: its buffer belongs to the caller's frame.
    pub fn wait_request(&self, id: ReqId) -> Result<Status, Error> {
        struct Finish<'a>(&'a Runtime, Option<ReqId>);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                if let Some(id) = self.1 {
                    let _ = self.0.wait_until(|e| e.reqs.take_finished(id));
                }
            }
        }
        let mut guard = Finish(self, Some(id));
        let outcome = self.wait_until(|e| e.reqs.take_finished(id));
        guard.1 = None;
        outcome.and_then(Status::check)
    }

    /// [`Runtime::wait_request`] for a request just started under
    /// `engine`: one that completed as it started (a receive that matched
    /// an unexpected message) is taken without a round of progress, one
    /// that one round completes without the wait loop (and the poll stops
    /// at its message, see [`Transport::stop_poll`]).
    pub fn wait_request_from(
        &self,
        mut engine: EngineGuard<'_, Engine>,
        id: ReqId,
    ) -> Result<Status, Error> {
        if let Some(outcome) = engine.reqs.take_finished(id) {
            return outcome.and_then(Status::check);
        }
        engine.awaited = Some(id);
        // One poll under the lock already held: a message already there (a
        // sender running ahead) completes it without the wait loop.
        engine.progress();
        if let Some(outcome) = engine.reqs.take_finished(id) {
            return outcome.and_then(Status::check);
        }
        drop(engine);
        self.wait_request(id)
    }

    /// The transport (for what may be asked without the engine lock).
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// One round of progress (for `test` calls).
    pub fn poke(&self) {
        self.engine().progress();
    }
}

/// Shared handle.
pub type Rt = Arc<Runtime>;

/// State a higher layer keeps in an object of a lower one without the
/// lower layer naming its type: the collective layer's selector in the
/// [`Runtime`], its caches in each communicator. The layer that fills a
/// slot is the one that reads it, always with the same type.
#[derive(Default)]
pub(crate) struct Extension(OnceLock<(TypeId, Box<dyn Any + Send + Sync>)>);

impl Extension {
    /// A slot holding `value`.
    pub(crate) fn holding<T: Any + Send + Sync>(value: T) -> Extension {
        Extension(OnceLock::from((
            TypeId::of::<T>(),
            Box::new(value) as Box<dyn Any + Send + Sync>,
        )))
    }

    /// The value, made by `init` at the first call.
    #[inline]
    pub(crate) fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> &T {
        let (id, value) = self.0.get_or_init(|| (TypeId::of::<T>(), Box::new(init())));
        // The type recorded when the slot was filled, not the value's own
        // (a call through its vtable, on every collective call).
        assert!(
            *id == TypeId::of::<T>(),
            "an extension slot is read with the type it holds"
        );
        // SAFETY: the box holds a `T`: the slot was filled with this type id.
        unsafe { &*std::ptr::from_ref::<dyn Any + Send + Sync>(&**value).cast::<T>() }
    }
}
