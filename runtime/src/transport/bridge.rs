//! Peers of other jobs (spawned children, their parents, jobs connected
//! through a port): [`Bridged`] wraps the job's own transport and reaches
//! peer indices past the world through fabric links of their own, one per
//! connection ("bridge"). A bridge's link numbers its members by their
//! position in the connection (accepting or parent group first, then the
//! other), which both jobs agree on, so the rank in a packet's tag means
//! the same on both sides; the bridge maps positions to this process's
//! peer indices. Peers of the world go straight to the wrapped transport.
//!
//! Bridge peers take the packet path only (no direct transfers, no reads):
//! large messages stream through packets. A rank asleep on the wrapped
//! transport's doorbell is not woken by a bridge's traffic, so its sleeps
//! are cut short while bridges exist.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::ofi::link::FabricLink;
use super::{Caps, RemoteBuf, Transport};
use crate::error::Error;

/// Longest sleep on the doorbell while bridges exist.
const BRIDGED_SLEEP: Duration = Duration::from_micros(500);

/// One connection's fabric link.
pub(crate) struct Bridge {
    link: FabricLink,
    /// Peer index of each position (`usize::MAX`: this group's own members).
    peer_of: Vec<usize>,
}

#[derive(Default)]
struct Bridges {
    links: Vec<Arc<Bridge>>,
    /// For peer `world + i`: (index into `links`, position).
    route: Vec<(usize, usize)>,
}

/// The job's transport plus the bridges to other jobs.
pub(crate) struct Bridged {
    base: Arc<dyn Transport>,
    world: usize,
    any: AtomicBool,
    bridges: RwLock<Bridges>,
}

impl Bridged {
    /// `base` reaches world ranks `0..world`.
    pub(crate) fn new(base: Arc<dyn Transport>, world: usize) -> Bridged {
        Bridged {
            base,
            world,
            any: AtomicBool::new(false),
            bridges: RwLock::new(Bridges::default()),
        }
    }

    /// Adds a connection's `link`, whose other members sit at `positions`;
    /// returns the peer index each gets (in order). The caller holds the
    /// engine lock and grows the engine to the new peer count.
    pub(crate) fn add_bridge(
        &self,
        link: FabricLink,
        size: usize,
        positions: &[usize],
    ) -> Vec<usize> {
        let mut b = self.bridges.write().unwrap_or_else(|e| e.into_inner());
        let index = b.links.len();
        let mut peer_of = vec![usize::MAX; size];
        let mut peers = Vec::with_capacity(positions.len());
        for &pos in positions {
            let peer = self.world + b.route.len();
            b.route.push((index, pos));
            peer_of[pos] = peer;
            peers.push(peer);
        }
        b.links.push(Arc::new(Bridge { link, peer_of }));
        self.any.store(true, Ordering::Release);
        peers
    }

    /// The link and position of bridge peer `peer`.
    fn bridge(&self, peer: usize) -> Option<(Arc<Bridge>, usize)> {
        let b = self.bridges.read().unwrap_or_else(|e| e.into_inner());
        let &(i, pos) = b.route.get(peer.checked_sub(self.world)?)?;
        Some((Arc::clone(&b.links[i]), pos))
    }

    /// Runs `f` on the link of bridge peer `peer`.
    pub(crate) fn with_link<T>(
        &self,
        peer: usize,
        f: impl FnOnce(&FabricLink, usize) -> T,
    ) -> Option<T> {
        self.bridge(peer).map(|(b, pos)| f(&b.link, pos))
    }

    /// Peers reachable now (the world and every bridge peer).
    pub(crate) fn peer_count(&self) -> usize {
        self.world
            + self
                .bridges
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .route
                .len()
    }

    fn links(&self) -> Vec<Arc<Bridge>> {
        if !self.any.load(Ordering::Acquire) {
            return Vec::new();
        }
        self.bridges
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .links
            .clone()
    }
}

impl Transport for Bridged {
    fn name(&self) -> &'static str {
        self.base.name()
    }

    fn caps(&self) -> Caps {
        self.base.caps()
    }

    fn reaches(&self, peer: usize) -> bool {
        if peer < self.world {
            return self.base.reaches(peer);
        }
        self.bridge(peer).is_some()
    }

    fn max_packet(&self, peer: usize) -> usize {
        if peer < self.world {
            return self.base.max_packet(peer);
        }
        self.with_link(peer, |l, pos| l.max_packet(pos))
            .unwrap_or_else(|| self.base.max_packet(0))
    }

    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool {
        if peer < self.world {
            // SAFETY: the caller's contract.
            return unsafe { self.base.try_send(peer, parts) };
        }
        // SAFETY: the caller's contract covers every endpoint.
        self.with_link(peer, |l, pos| unsafe { l.try_send(pos, parts) })
            .unwrap_or(false)
    }

    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        if peer < self.world {
            // SAFETY: the caller's contract.
            return unsafe { self.base.try_send_with(peer, len, fill) };
        }
        // SAFETY: the caller's contract covers every endpoint.
        self.with_link(peer, |l, pos| unsafe { l.try_send_with(pos, len, fill) })
            .unwrap_or(false)
    }

    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        // SAFETY: the caller's contract.
        let mut n = unsafe { self.base.poll(sink) };
        if !self.any.load(Ordering::Acquire) {
            // No bridge (the common case): not even an empty list to drop.
            return n;
        }
        for b in self.links() {
            let mut map = |pos: usize, bytes: &[u8]| {
                if let Some(&peer) = b.peer_of.get(pos).filter(|&&p| p != usize::MAX) {
                    sink(peer, bytes);
                }
            };
            // SAFETY: as above.
            n += unsafe { b.link.poll(&mut map) };
        }
        n
    }

    fn stop_poll(&self) {
        self.base.stop_poll();
    }

    fn can_read_remote(&self, peer: usize) -> bool {
        peer < self.world && self.base.can_read_remote(peer)
    }

    fn read_remote(&self, peer: usize, pid: u32, addr: u64, dst: &mut [u8]) -> Result<(), Error> {
        self.base.read_remote(peer, pid, addr, dst)
    }

    unsafe fn read_remote_scatter(
        &self,
        peer: usize,
        pid: u32,
        addr: u64,
        local: &[(usize, usize)],
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.base.read_remote_scatter(peer, pid, addr, local) }
    }

    fn write_remote(&self, peer: usize, pid: u32, addr: u64, src: &[u8]) -> Result<(), Error> {
        self.base.write_remote(peer, pid, addr, src)
    }

    fn packet_limit(&self, peer: usize) -> Option<usize> {
        if peer < self.world {
            return self.base.packet_limit(peer);
        }
        self.with_link(peer, |l, pos| l.packet_limit(pos)).flatten()
    }

    fn same_host(&self, peer: usize) -> bool {
        peer < self.world && self.base.same_host(peer)
    }

    fn direct(&self, peer: usize) -> bool {
        peer < self.world && self.base.direct(peer)
    }

    unsafe fn post_direct_recv(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<u64, Error> {
        // SAFETY: the caller's contract (never a bridge peer: `direct` is false).
        unsafe { self.base.post_direct_recv(peer, buf, len, token) }
    }

    unsafe fn post_direct_send(
        &self,
        peer: usize,
        key: u64,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: as above.
        unsafe { self.base.post_direct_send(peer, key, buf, len, token) }
    }

    fn offers_read(&self, peer: usize) -> bool {
        peer < self.world && self.base.offers_read(peer)
    }

    unsafe fn expose(
        &self,
        peer: usize,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<RemoteBuf, Error> {
        // SAFETY: as above (`offers_read` is false for bridge peers).
        unsafe { self.base.expose(peer, buf, len, token) }
    }

    unsafe fn conceal(&self, peer: usize, token: u64) {
        // SAFETY: as above.
        unsafe { self.base.conceal(peer, token) }
    }

    unsafe fn post_read(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        remote: RemoteBuf,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: as above.
        unsafe { self.base.post_read(peer, buf, len, remote, token) }
    }

    unsafe fn take_direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        // SAFETY: the caller's contract.
        unsafe { self.base.take_direct_done(done) }
    }

    unsafe fn busy(&self) -> bool {
        // SAFETY: the caller's contract.
        unsafe { self.base.busy() || self.links().iter().any(|b| b.link.busy()) }
    }

    fn parallel_peers(&self) -> bool {
        self.base.parallel_peers()
    }

    fn crowded(&self) -> bool {
        self.base.crowded()
    }

    fn wait_token(&self) -> u32 {
        self.base.wait_token()
    }

    fn wait(&self, token: u32, timeout: Duration) {
        let timeout = if self.any.load(Ordering::Acquire) {
            timeout.min(BRIDGED_SLEEP)
        } else {
            timeout
        };
        self.base.wait(token, timeout)
    }

    fn wake(&self, peer: usize) {
        if peer < self.world {
            self.base.wake(peer)
        }
    }
}
