//! One wait for two wait objects. A rank with peers on its host and on
//! others can be woken by its shared-memory doorbell (a futex) or by the
//! fabric's completion descriptor (a file descriptor), and no system call
//! sleeps on both. So the rank sleeps on its doorbell only, and a watcher
//! thread sleeps on the fabric's descriptor while the rank sleeps, ringing
//! the rank's own doorbell when something arrives there. The watcher sleeps
//! only while the rank does (armed), so a rank that is busy pays nothing,
//! and it waits to be disarmed after ringing, so it never spins on a
//! descriptor that stays readable until the rank polls. When one thread's
//! poll takes a completion while another thread sleeps, the fabric link
//! wakes the watcher itself (see `FabricLink::sleep`), which rings.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::super::ofi::link::FabricLink;
use super::super::shm::ShmTransport;

/// Longest single sleep of the watcher (it re-checks that it is armed).
const WATCH_SLICE: Duration = Duration::from_millis(10);

#[derive(Default)]
struct Flags {
    /// Threads of the rank asleep on its doorbell.
    armed: u32,
    /// Wake-ups so far (a thread disarming): after ringing, the watcher
    /// waits for this to move, not for `armed` to reach 0, which a thread
    /// that wakes and sleeps again may never let it see.
    wakes: u64,
    /// The router is going away.
    closing: bool,
}

#[derive(Default)]
struct Shared {
    flags: Mutex<Flags>,
    changed: Condvar,
}

/// The watcher thread and its switch.
pub(super) struct Watcher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Starts the watcher of `fabric` for the rank whose doorbell is `shm`'s.
    pub(super) fn start(fabric: Arc<FabricLink>, shm: Arc<ShmTransport>) -> Watcher {
        let shared = Arc::new(Shared::default());
        let mine = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("oxmpi-fabric-watch".into())
            .spawn(move || watch(&mine, &fabric, &shm))
            .ok();
        Watcher { shared, thread }
    }

    /// Whether the thread runs (else the router naps in short steps).
    pub(super) fn running(&self) -> bool {
        self.thread.is_some()
    }

    /// A thread of the rank is about to sleep on its doorbell (`true`) or
    /// has woken (`false`).
    pub(super) fn set_armed(&self, armed: bool) {
        let mut f = self.shared.flags.lock().unwrap_or_else(|e| e.into_inner());
        let was = f.armed > 0;
        if armed {
            f.armed += 1;
        } else {
            f.armed = f.armed.saturating_sub(1);
            f.wakes += 1;
        }
        if was != (f.armed > 0) || !armed {
            self.shared.changed.notify_one();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        {
            let mut f = self.shared.flags.lock().unwrap_or_else(|e| e.into_inner());
            f.closing = true;
            self.shared.changed.notify_one();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch(shared: &Shared, fabric: &FabricLink, shm: &ShmTransport) {
    let mut f = shared.flags.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        while f.armed == 0 && !f.closing {
            f = shared.changed.wait(f).unwrap_or_else(|e| e.into_inner());
        }
        if f.closing {
            return;
        }
        drop(f);
        let arrived = fabric.sleep(fabric.generation(), WATCH_SLICE);
        f = shared.flags.lock().unwrap_or_else(|e| e.into_inner());
        if arrived && f.armed > 0 {
            shm.ring_own();
            // Until the rank has woken and polled, the descriptor may stay
            // readable: wait for a wake-up rather than ring again.
            let rung = f.wakes;
            while f.wakes == rung && f.armed > 0 && !f.closing {
                f = shared
                    .changed
                    .wait_timeout(f, WATCH_SLICE)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}
