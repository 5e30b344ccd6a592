//! Sends from and receives into non-contiguous datatype layouts without
//! a temporary copy: a [`Cursor`] walks the layout's segments in packed
//! order, and every packet's payload is packed straight from the
//! program's buffer into the ring cell (eager cells, streamed Data
//! packets), or unpacked straight from the cell (or from an unexpected
//! message's buffer) into the program's buffer at its packed offset.
//! Packets of one message arrive in order, so the receive's cursor only
//! moves forward; it is kept in the request with the bytes received.
//!
//! What travels is the packed bytes, as for a staged copy: a typed send
//! matches any receive with the same type signature, and statuses count
//! packed bytes. Rendezvous: see `rndv.rs` (a typed receive reads with
//! CMA through iovecs; a typed sender flags its Rts and streams).

use super::Engine;
use crate::datatype::Cursor;
use crate::p2p::matching::Pattern;
use crate::p2p::protocol::{self, Kind, MsgHeader, SendPath, FLAG_PACKED, FLAG_SYNC};
use crate::p2p::request::{Pending, ReqId, ReqState, SendState};

use super::MessageHandle;

/// Unpacks `bytes`, the packed bytes of a message from `offset` on, into a
/// typed receive's layout. Packets arrive in order, so `offset` is where
/// the cursor stands; another offset (a stream that starts over after a
/// failed read) moves it first.
pub(super) fn unpack_at(dst: &mut Cursor, offset: usize, bytes: &[u8]) {
    if dst.position() != offset && dst.seek(offset).is_err() {
        return;
    }
    // SAFETY: the receive's owner keeps the layout writable until the
    // request completes; `bytes` is a ring cell or an engine buffer.
    unsafe { dst.unpack(bytes) };
}

impl Engine {
    /// Starts a send of the packed bytes of a non-contiguous layout (`src`,
    /// at its start) to world rank `peer`, as [`start_send`](Self::start_send)
    /// does for a contiguous buffer. Eager: each cell's payload is packed
    /// straight from the layout (a packet that must wait for room is
    /// packed into a pooled buffer). Rendezvous: an Rts flagged
    /// [`FLAG_PACKED`], then Data packets packed straight from the layout.
    ///
    /// # Safety
    /// The layout `src` walks must stay readable until the returned
    /// request completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn start_send_typed(
        &mut self,
        peer: usize,
        context: u32,
        source: i32,
        tag: i32,
        mut src: Cursor,
        sync: bool,
    ) -> Option<ReqId> {
        let len = src.remaining();
        let path = self.send_path(peer, len);
        let mut header = MsgHeader {
            kind: Kind::Eager,
            flags: if sync { FLAG_SYNC } else { 0 },
            context,
            source,
            tag,
            total_len: len as u64,
            send_id: 0,
            addr: 0,
            pid: self.pid,
        };
        let send = |state, typed| Pending::Send {
            peer,
            buf: std::ptr::null(),
            len,
            state,
            typed,
        };
        match path {
            SendPath::Eager => {
                let id = sync.then(|| {
                    let pending = send(SendState::AwaitAck, None);
                    self.reqs.insert(ReqState::Pending(pending))
                });
                header.send_id = id.map_or(0, |id| id.0);
                let head = header.len();
                let first = self.first_packet_bytes(peer, head, len);
                self.push_with(peer, head + first, &mut |out| {
                    let (h, payload) = out.split_at_mut(head);
                    header.write(h);
                    // SAFETY: the caller's contract; `payload` is a cell or
                    // an engine buffer.
                    unsafe { src.pack(payload) };
                });
                let cont_cap = self.transport.max_packet(peer) - protocol::CONT_HEADER;
                while src.remaining() > 0 {
                    let n = src.remaining().min(cont_cap);
                    self.push_with(peer, protocol::CONT_HEADER + n, &mut |out| {
                        let (h, payload) = out.split_at_mut(protocol::CONT_HEADER);
                        h.copy_from_slice(&protocol::cont_header());
                        // SAFETY: as above.
                        unsafe { src.pack(payload) };
                    });
                }
                id
            }
            SendPath::Rendezvous => {
                let pending = send(SendState::AwaitFin, Some(Box::new(src)));
                let id = self.reqs.insert(ReqState::Pending(pending));
                header.kind = Kind::Rts;
                header.flags |= FLAG_PACKED;
                header.send_id = id.0;
                self.push(peer, &[&header.encode()[..header.len()]]);
                Some(id)
            }
        }
    }

    /// Posts a receive into a non-contiguous layout (`dst`, at its start;
    /// its packed length is the capacity), as
    /// [`start_recv`](Self::start_recv) does into contiguous bytes.
    ///
    /// # Safety
    /// The layout `dst` walks must stay writable until the returned
    /// request completes.
    pub unsafe fn start_recv_typed(&mut self, pattern: Pattern, dst: Cursor) -> ReqId {
        let cap = dst.len();
        self.post_recv(pattern, std::ptr::null_mut(), cap, Some(Box::new(dst)))
    }

    /// Receives a message removed by a matched probe into a
    /// non-contiguous layout.
    ///
    /// # Safety
    /// As [`start_recv_typed`](Self::start_recv_typed).
    pub unsafe fn start_mrecv_typed(&mut self, msg: MessageHandle, dst: Cursor) -> ReqId {
        let cap = dst.len();
        let id = self.new_recv(std::ptr::null_mut(), cap, Some(Box::new(dst)));
        self.deliver_unexpected(id, msg.0);
        id
    }
}
