//! Putting packets on the wire: straight into the peer's ring when it has
//! room and nothing is queued before them, else into the per-peer queue
//! (in a [`BufPool`](super::BufPool) buffer) that keeps their order.

use super::Engine;

impl Engine {
    /// Sends the packet gathered from `parts` to `peer`.
    pub(super) fn push(&mut self, peer: usize, parts: &[&[u8]]) {
        if peer == self.me {
            let packet = self.bufs.concat(parts);
            self.handle(peer, &packet);
            self.bufs.give(packet);
            return;
        }
        let queue = &mut self.outq[peer];
        // SAFETY: `&mut self` (see the engine module docs).
        if queue.is_empty() && unsafe { self.transport.try_send(peer, parts) } {
            self.transport.wake(peer);
            return;
        }
        if queue.is_empty() {
            self.queued_peers.push(peer);
        }
        queue.push_back(self.bufs.concat(parts));
    }

    /// Sends a packet of `len` bytes that `fill` writes: in place in the
    /// peer's ring when it can go now, else into a pooled buffer that
    /// waits in the queue. `fill` runs exactly once.
    ///
    /// Inlined into the send paths (the in-place case is the latency path:
    /// left to the optimiser, it inlined differently into the C ABI's
    /// library and into programs, and the library's copy was slower);
    /// the rest is [`Engine::push_pooled`].
    #[inline(always)]
    pub(super) fn push_with(&mut self, peer: usize, len: usize, fill: &mut dyn FnMut(&mut [u8])) {
        if peer != self.me && self.outq[peer].is_empty() {
            // SAFETY: `&mut self` (see the engine module docs).
            if unsafe { self.transport.try_send_with(peer, len, fill) } {
                self.transport.wake(peer);
                return;
            }
        }
        self.push_pooled(peer, len, fill);
    }

    /// [`Engine::push_with`]'s packet that cannot go in place now (or goes
    /// to this rank itself): filled into a pooled buffer that is handled
    /// at once (to self) or waits in the peer's queue.
    #[inline(never)]
    fn push_pooled(&mut self, peer: usize, len: usize, fill: &mut dyn FnMut(&mut [u8])) {
        let mut packet = self.bufs.take(len);
        packet.resize(len, 0);
        fill(&mut packet);
        if peer == self.me {
            self.handle(peer, &packet);
            self.bufs.give(packet);
            return;
        }
        if self.outq[peer].is_empty() {
            self.queued_peers.push(peer);
        }
        self.outq[peer].push_back(packet);
    }

    /// Moves queued packets into rings with room; returns whether any moved.
    pub(super) fn flush_outq(&mut self) -> bool {
        if self.queued_peers.is_empty() {
            return false;
        }
        let mut moved = false;
        let transport = &self.transport;
        let outq = &mut self.outq;
        let bufs = &mut self.bufs;
        self.queued_peers.retain(|&peer| {
            let queue = &mut outq[peer];
            let mut sent = false;
            while let Some(packet) = queue.front() {
                // SAFETY: inside `&mut self` (see the engine module docs).
                if !unsafe { transport.try_send(peer, &[packet]) } {
                    break;
                }
                if let Some(packet) = queue.pop_front() {
                    bufs.give(packet);
                }
                sent = true;
            }
            if sent {
                transport.wake(peer);
                moved = true;
            }
            !queue.is_empty()
        });
        moved
    }
}
