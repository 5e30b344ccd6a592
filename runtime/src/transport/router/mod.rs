//! The per-peer transport router: each peer of a job that spans hosts gets
//! the endpoint its locality calls for, decided once at start-up from the
//! launcher's placement (never from what happens to be reachable): shared
//! memory for ranks of this host, the fabric for ranks of other hosts. The
//! engine sees one [`Transport`]; every call goes to the peer's endpoint.
//! (Messages to self never reach a transport: the engine handles them.)

use std::sync::Arc;
use std::time::Duration;

use super::ofi::link::FabricLink;
use super::shm::ShmTransport;
use super::{Caps, RemoteBuf, Transport};
use crate::error::Error;

mod pace;
mod watch;

/// Longest single sleep on one wait object when no watcher thread could
/// be started: the rank then takes turns between the two.
const SPLIT_SLEEP: Duration = Duration::from_micros(200);

/// Which endpoint reaches a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// This rank itself (handled inside the engine).
    Myself,
    /// Shared memory: same host.
    Shm,
    /// libfabric: another host.
    Fabric,
}

impl Route {
    /// The name logged and reported.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Route::Myself => "self",
            Route::Shm => "shm",
            Route::Fabric => "ofi",
        }
    }
}

/// Shared memory and the fabric behind one [`Transport`].
pub(crate) struct Router {
    routes: Vec<Route>,
    /// Declared first: dropping it stops the thread that uses the two
    /// endpoints below.
    watcher: Option<watch::Watcher>,
    shm: Arc<ShmTransport>,
    fabric: Arc<FabricLink>,
    /// Whether any peer is on this host (else the doorbell never rings).
    local_peers: bool,
    /// How often the fabric is polled when shared memory is polled too.
    pace: pace::Pace,
    /// Without a watcher, alternate between the two waits: the next sleep
    /// is on the fabric.
    fabric_turn: std::sync::atomic::AtomicBool,
}

impl Router {
    /// Routes every peer of `me` by node: `node_of_rank[peer] == node_of_rank[me]`
    /// goes to `shm`, every other peer to `fabric`, which a poll looks at
    /// at least once every `cold_polls` polls (see pace.rs).
    pub(crate) fn new(
        me: usize,
        node_of_rank: &[usize],
        shm: ShmTransport,
        fabric: FabricLink,
        cold_polls: u32,
    ) -> Router {
        let routes: Vec<Route> = node_of_rank
            .iter()
            .enumerate()
            .map(|(r, &n)| match r {
                _ if r == me => Route::Myself,
                _ if n == node_of_rank[me] => Route::Shm,
                _ => Route::Fabric,
            })
            .collect();
        let local_peers = routes.contains(&Route::Shm);
        let (shm, fabric) = (Arc::new(shm), Arc::new(fabric));
        // A rank with peers both here and elsewhere sleeps on its doorbell,
        // which the watcher rings when the fabric delivers.
        let watcher = local_peers
            .then(|| watch::Watcher::start(Arc::clone(&fabric), Arc::clone(&shm)))
            .filter(watch::Watcher::running);
        Router {
            routes,
            watcher,
            shm,
            fabric,
            local_peers,
            pace: pace::Pace::new(cold_polls),
            fabric_turn: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The route of every world rank (index = rank).
    pub(crate) fn routes(&self) -> &[Route] {
        &self.routes
    }

    fn route(&self, peer: usize) -> Route {
        self.routes.get(peer).copied().unwrap_or(Route::Myself)
    }

    fn endpoint(&self, peer: usize) -> Option<&dyn Transport> {
        match self.route(peer) {
            Route::Shm => Some(&*self.shm),
            Route::Fabric => Some(&*self.fabric),
            Route::Myself => None,
        }
    }
}

impl Transport for Router {
    fn name(&self) -> &'static str {
        "router"
    }

    fn caps(&self) -> Caps {
        self.shm.caps() | self.fabric.caps()
    }

    fn reaches(&self, peer: usize) -> bool {
        self.endpoint(peer).is_some_and(|t| t.reaches(peer))
    }

    fn max_packet(&self, peer: usize) -> usize {
        match self.endpoint(peer) {
            Some(t) => t.max_packet(peer),
            None => self.shm.max_packet(peer),
        }
    }

    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool {
        // SAFETY (both arms): the caller's contract covers both endpoints.
        match self.route(peer) {
            Route::Shm => unsafe { self.shm.try_send(peer, parts) },
            Route::Fabric => {
                self.pace.traffic();
                unsafe { self.fabric.try_send(peer, parts) }
            }
            Route::Myself => false,
        }
    }

    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        // SAFETY (both arms): the caller's contract covers both endpoints.
        match self.route(peer) {
            Route::Shm => unsafe { self.shm.try_send_with(peer, len, fill) },
            Route::Fabric => {
                self.pace.traffic();
                unsafe { self.fabric.try_send_with(peer, len, fill) }
            }
            Route::Myself => false,
        }
    }

    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        if !self.local_peers {
            // SAFETY: the caller's contract.
            return unsafe { self.fabric.poll(sink) };
        }
        // SAFETY: the caller's contract covers both endpoints.
        let near = unsafe { self.shm.poll(sink) };
        // SAFETY: as above.
        if !self.pace.due(|| unsafe { self.fabric.in_flight() }) {
            return near;
        }
        let before = self.fabric.generation();
        // SAFETY: as above.
        let far = unsafe { self.fabric.poll(sink) };
        if self.fabric.generation() != before {
            self.pace.traffic();
            // Another thread of this rank may be about to sleep on the
            // doorbell for what this poll took: move its token on.
            self.shm.ring_own();
        }
        near + far
    }

    fn stop_poll(&self) {
        self.shm.stop_poll();
    }

    fn same_host(&self, peer: usize) -> bool {
        self.route(peer) == Route::Shm
    }

    fn can_read_remote(&self, peer: usize) -> bool {
        self.route(peer) == Route::Shm && self.shm.can_read_remote(peer)
    }

    fn read_remote(&self, peer: usize, pid: u32, addr: u64, dst: &mut [u8]) -> Result<(), Error> {
        match self.endpoint(peer) {
            Some(t) => t.read_remote(peer, pid, addr, dst),
            None => Err(Error::Unsupported(format!(
                "no remote read from rank {peer}"
            ))),
        }
    }

    unsafe fn read_remote_scatter(
        &self,
        peer: usize,
        pid: u32,
        addr: u64,
        local: &[(usize, usize)],
    ) -> Result<(), Error> {
        match self.endpoint(peer) {
            // SAFETY: the caller's contract.
            Some(t) => unsafe { t.read_remote_scatter(peer, pid, addr, local) },
            None => Err(Error::Unsupported(format!(
                "no remote read from rank {peer}"
            ))),
        }
    }

    fn write_remote(&self, peer: usize, pid: u32, addr: u64, src: &[u8]) -> Result<(), Error> {
        match self.endpoint(peer) {
            Some(t) => t.write_remote(peer, pid, addr, src),
            None => Err(Error::Unsupported(format!(
                "no remote write to rank {peer}"
            ))),
        }
    }

    fn packet_limit(&self, peer: usize) -> Option<usize> {
        self.endpoint(peer).and_then(|t| t.packet_limit(peer))
    }

    fn direct(&self, peer: usize) -> bool {
        self.endpoint(peer).is_some_and(|t| t.direct(peer))
    }

    unsafe fn post_direct_recv(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<u64, Error> {
        match self.endpoint(peer) {
            // SAFETY: the caller's contract.
            Some(t) => unsafe { t.post_direct_recv(peer, buf, len, token) },
            None => Err(Error::Unsupported(format!(
                "no direct transfers with rank {peer}"
            ))),
        }
    }

    unsafe fn post_direct_send(
        &self,
        peer: usize,
        key: u64,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<(), Error> {
        match self.endpoint(peer) {
            // SAFETY: the caller's contract.
            Some(t) => unsafe { t.post_direct_send(peer, key, buf, len, token) },
            None => Err(Error::Unsupported(format!(
                "no direct transfers with rank {peer}"
            ))),
        }
    }

    fn offers_read(&self, peer: usize) -> bool {
        self.route(peer) == Route::Fabric && self.fabric.offers_read(peer)
    }

    unsafe fn expose(
        &self,
        peer: usize,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<RemoteBuf, Error> {
        // SAFETY: the caller's contract; only the fabric exposes buffers.
        unsafe { self.fabric.expose(peer, buf, len, token) }
    }

    unsafe fn conceal(&self, peer: usize, token: u64) {
        if self.route(peer) == Route::Fabric {
            // SAFETY: the caller's contract.
            unsafe { self.fabric.conceal(peer, token) }
        }
    }

    unsafe fn post_read(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        remote: RemoteBuf,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract; only the fabric reads remotely.
        unsafe { self.fabric.post_read(peer, buf, len, remote, token) }
    }

    unsafe fn take_direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        // SAFETY: the caller's contract; only the fabric makes direct transfers.
        unsafe { self.fabric.take_direct_done(done) }
    }

    unsafe fn busy(&self) -> bool {
        // SAFETY: the caller's contract.
        unsafe { self.fabric.busy() }
    }

    fn parallel_peers(&self) -> bool {
        self.shm.parallel_peers()
    }

    fn crowded(&self) -> bool {
        self.shm.crowded()
    }

    fn wait_token(&self) -> u32 {
        if self.local_peers {
            let token = self.shm.wait_token();
            // The poll after the token, the last before a sleep, looks at
            // the fabric whatever the pacing says.
            self.pace.force();
            token
        } else {
            self.fabric.generation()
        }
    }

    fn wait(&self, token: u32, timeout: Duration) {
        use std::sync::atomic::Ordering::Relaxed;
        if !self.local_peers {
            self.fabric.sleep(token, timeout);
            return;
        }
        if let Some(w) = &self.watcher {
            w.set_armed(true);
            self.shm.wait(token, timeout);
            w.set_armed(false);
            return;
        }
        // Both may deliver and nothing watches the fabric: short sleeps,
        // taking turns.
        let fabric = self.fabric_turn.fetch_xor(true, Relaxed);
        if fabric {
            self.fabric
                .sleep(self.fabric.generation(), timeout.min(SPLIT_SLEEP));
        } else {
            self.shm.wait(token, timeout.min(SPLIT_SLEEP));
        }
    }

    fn wake(&self, peer: usize) {
        if let Some(t) = self.endpoint(peer) {
            t.wake(peer);
        }
    }
}
