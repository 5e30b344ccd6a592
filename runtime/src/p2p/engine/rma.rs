//! Rendezvous by RMA read, between hosts: the sender's transport exposes
//! its buffer (a registration) and the Rts carries its address and key
//! (`FLAG_RMA`); the receiver reads it into its own buffer over the
//! network and answers Fin. A Fin or a Cts (the receiver chose another
//! path) ends the exposure. A read that fails falls back to a stream.

use super::Engine;
use crate::p2p::protocol::{self, Kind, MsgHeader};
use crate::p2p::request::ReqId;
use crate::transport::RemoteBuf;

impl Engine {
    /// Exposes send `id`'s buffer to `peer` when the transport offers
    /// reads to it; the description for the Rts, or None (a plain Rts).
    pub(super) fn expose(
        &mut self,
        peer: usize,
        buf: *const u8,
        len: usize,
        id: ReqId,
    ) -> Option<RemoteBuf> {
        if !self.transport.offers_read(peer) {
            return None;
        }
        // SAFETY: `&mut self`; the send's buffer stays readable until the
        // request completes, and it completes only on a Fin or after a
        // Cts, both of which conceal it first.
        let remote = unsafe { self.transport.expose(peer, buf, len, id.0) }.ok()?;
        self.exposed.push(id);
        Some(remote)
    }

    /// Ends the exposure of send `id`'s buffer, if it has one.
    pub(super) fn conceal(&mut self, peer: usize, id: ReqId) {
        if self.exposed.is_empty() {
            return;
        }
        if let Some(i) = self.exposed.iter().position(|&e| e == id) {
            self.exposed.swap_remove(i);
            // SAFETY: `&mut self`; the receiver reads it no more (Fin) or
            // never (Cts).
            unsafe { self.transport.conceal(peer, id.0) };
        }
    }

    /// Reads the first `n` bytes of an Rts flagged `FLAG_RMA` into receive
    /// `req`'s contiguous buffer `buf`; false when the read could not be
    /// started (the caller takes another path).
    pub(super) fn read_rma(
        &mut self,
        req: ReqId,
        peer: usize,
        h: &MsgHeader,
        desc: &[u8],
        buf: *mut u8,
        n: usize,
    ) -> bool {
        let Some(remote) = protocol::decode_rma_desc(desc) else {
            return false;
        };
        if n == 0 {
            // A receive with no room: nothing to read.
            self.push(peer, &[&protocol::ctrl(Kind::Fin, h.send_id, 0)]);
            self.finish_recv(req);
            return true;
        }
        // SAFETY: `&mut self`; the receive's buffer holds `cap` >= `n`
        // bytes and stays writable until the request completes, which only
        // the read's completion does.
        if unsafe { self.transport.post_read(peer, buf, n, remote, req.0) }.is_err() {
            return false;
        }
        self.directs += 1;
        self.reads.push((req, peer, h.send_id));
        true
    }

    /// A finished read for receive `id`, if it was one: Fin when it
    /// succeeded (the caller completes the receive), a Cts otherwise (the
    /// sender streams instead, from offset 0). Returns whether `id` was a
    /// read and whether it failed.
    pub(super) fn read_done(&mut self, id: ReqId, failed: bool) -> Option<bool> {
        let i = self.reads.iter().position(|r| r.0 == id)?;
        let (_, peer, send_id) = self.reads.swap_remove(i);
        if failed {
            self.push(peer, &[&protocol::ctrl(Kind::Cts, send_id, id.0)]);
        } else {
            self.push(peer, &[&protocol::ctrl(Kind::Fin, send_id, 0)]);
        }
        Some(failed)
    }
}
