//! Arriving packets: eager messages and Rts matched to posted receives
//! or kept as unexpected (with their eager bytes in a pooled buffer),
//! continuation cells assembled, control packets dispatched, and bytes
//! written into receives (copied, or unpacked into a typed layout).

use super::{typed, Engine, UnexpId};
use crate::p2p::matching::Envelope;
use crate::p2p::protocol::{
    self, Kind, MsgHeader, Packet, FLAG_DIRECT, FLAG_IPC, FLAG_RMA, FLAG_SYNC,
};
use crate::p2p::request::{Pending, ReqId, ReqState, SendState};
use crate::p2p::small_copy::copy_bytes;
use crate::status::Status;

/// A message that arrived before its receive was posted.
#[derive(Debug)]
pub(super) struct Unexpected {
    pub(super) header: MsgHeader,
    pub(super) peer: usize,
    /// Eager bytes received so far (for an Rts: its CUDA IPC or RMA description, if any).
    pub(super) data: Vec<u8>,
    /// All eager bytes are here.
    pub(super) complete: bool,
    /// A receive matched it (MPI_Mrecv or post) before all bytes arrived.
    pub(super) claimed: Option<ReqId>,
}

/// Where the continuation bytes of a peer's current eager message go.
#[derive(Debug, Clone, Copy)]
pub(super) enum Assembly {
    Request {
        req: ReqId,
        offset: usize,
        remaining: usize,
    },
    Unexpected {
        id: UnexpId,
        remaining: usize,
    },
}

/// Stores an unexpected message in a free slot of `table` (or a new one).
fn alloc_unexpected(
    table: &mut Vec<Option<Unexpected>>,
    free: &mut Vec<UnexpId>,
    u: Unexpected,
) -> UnexpId {
    match free.pop() {
        Some(i) => {
            table[i] = Some(u);
            i
        }
        None => {
            table.push(Some(u));
            table.len() - 1
        }
    }
}

impl Engine {
    pub(super) fn free_unexpected(&mut self, id: UnexpId) -> Option<Unexpected> {
        let u = self.unexpected.get_mut(id)?.take();
        if u.is_some() {
            self.free_unexpected.push(id);
        }
        u
    }

    pub(super) fn handle(&mut self, peer: usize, bytes: &[u8]) {
        match protocol::decode(bytes) {
            Some(Packet::Msg(h, payload)) => self.on_message(peer, h, payload),
            Some(Packet::Cont(payload)) => self.on_cont(peer, payload),
            Some(Packet::Ctrl {
                kind,
                flags,
                send_id,
                recv_id,
            }) => self.on_ctrl(peer, kind, flags, send_id, recv_id),
            Some(Packet::Split(req)) => self.on_split(peer, req),
            Some(Packet::Data { recv_id, bytes }) => self.on_data(ReqId(recv_id), bytes),
            None => eprintln!(
                "oxmpi: rank {}: dropped a corrupt packet from rank {peer}",
                self.me
            ),
        }
    }

    pub(super) fn on_message(&mut self, peer: usize, h: MsgHeader, payload: &[u8]) {
        let env = Envelope {
            context: h.context,
            source: h.source,
            tag: h.tag,
        };
        let complete = h.kind == Kind::Rts || payload.len() as u64 >= h.total_len;
        // The unexpected entry is made only if no posted receive matches.
        let (unexpected, free) = (&mut self.unexpected, &mut self.free_unexpected);
        let mut queued = None;
        let matched = self.matcher.arrive_with(env, || {
            let uid = alloc_unexpected(
                unexpected,
                free,
                Unexpected {
                    header: h,
                    peer,
                    data: Vec::new(),
                    complete,
                    claimed: None,
                },
            );
            queued = Some(uid);
            uid
        });
        match matched {
            Some(req) => {
                if h.kind == Kind::Rts {
                    self.set_matched(req, &h);
                    self.rendezvous_read(req, peer, &h, payload);
                    return;
                }
                if h.flags & FLAG_SYNC != 0 {
                    self.push(peer, &[&protocol::ctrl(Kind::Ack, h.send_id, 0)]);
                }
                self.eager_matched(peer, h.total_len);
                if complete {
                    self.deliver_whole(req, &h, payload);
                } else {
                    self.set_matched(req, &h);
                    self.write_recv(req, 0, payload);
                    self.assembling[peer] = Some(Assembly::Request {
                        req,
                        offset: payload.len(),
                        remaining: h.total_len as usize - payload.len(),
                    });
                }
            }
            None => {
                let Some(uid) = queued else { return };
                if let Some(Some(u)) = self.unexpected.get_mut(uid) {
                    if h.kind == Kind::Rts && h.flags & (FLAG_IPC | FLAG_RMA) != 0 {
                        // The IPC or RMA description, for the receive that matches later.
                        u.data = payload.to_vec();
                    }
                    if h.kind == Kind::Eager {
                        u.data = self.bufs.take(h.total_len as usize);
                        u.data.extend_from_slice(payload);
                        let remaining = h.total_len as usize - payload.len();
                        if remaining > 0 {
                            self.assembling[peer] =
                                Some(Assembly::Unexpected { id: uid, remaining });
                        }
                    }
                }
            }
        }
    }

    pub(super) fn on_cont(&mut self, peer: usize, payload: &[u8]) {
        let Some(asm) = self.assembling.get_mut(peer).and_then(Option::as_mut) else {
            eprintln!(
                "oxmpi: rank {}: continuation from rank {peer} without a message",
                self.me
            );
            return;
        };
        match *asm {
            Assembly::Request {
                req,
                offset,
                remaining,
            } => {
                let n = payload.len().min(remaining);
                *asm = Assembly::Request {
                    req,
                    offset: offset + n,
                    remaining: remaining - n,
                };
                let done = remaining == n;
                if done {
                    self.assembling[peer] = None;
                }
                self.write_recv(req, offset, &payload[..n]);
                if done {
                    self.finish_recv(req);
                }
            }
            Assembly::Unexpected { id, remaining } => {
                let n = payload.len().min(remaining);
                *asm = Assembly::Unexpected {
                    id,
                    remaining: remaining - n,
                };
                let done = remaining == n;
                if done {
                    self.assembling[peer] = None;
                }
                let mut claimed = None;
                if let Some(Some(u)) = self.unexpected.get_mut(id) {
                    u.data.extend_from_slice(&payload[..n]);
                    if done {
                        u.complete = true;
                        claimed = u.claimed;
                    }
                }
                if let Some(req) = claimed {
                    self.copy_out_unexpected(req, id);
                }
            }
        }
    }

    pub(super) fn on_ctrl(
        &mut self,
        peer: usize,
        kind: Kind,
        flags: u8,
        send_id: u64,
        recv_id: u64,
    ) {
        let id = ReqId(send_id);
        match kind {
            Kind::Ack => self.reqs.complete(id, Status::empty()),
            Kind::Fin => {
                self.conceal(peer, id);
                self.reqs.complete(id, Status::empty());
            }
            Kind::Cts if flags & FLAG_DIRECT != 0 => {
                self.conceal(peer, id);
                if let Some(ReqState::Pending(Pending::Send {
                    buf, len, state, ..
                })) = self.reqs.get_mut(id)
                {
                    *state = SendState::Direct;
                    let (buf, len) = (*buf, *len);
                    // SAFETY: `&mut self`; the send's buffer stays readable
                    // until its request completes, which only the direct
                    // transfer's completion does.
                    let posted = unsafe {
                        self.transport
                            .post_direct_send(peer, recv_id, buf, len, send_id)
                    };
                    match posted {
                        Ok(()) => self.directs += 1,
                        Err(e) => self.reqs.fail(id, e),
                    }
                }
            }
            Kind::Cts => {
                self.conceal(peer, id);
                if let Some(ReqState::Pending(Pending::Send { state, .. })) = self.reqs.get_mut(id)
                {
                    *state = SendState::Streaming { recv_id, offset: 0 };
                    self.streams.push(id);
                }
                self.pump_streams();
            }
            Kind::Wrote => self.on_wrote(peer, flags != 0, send_id, ReqId(recv_id)),
            Kind::Credit => self.on_credit(peer, send_id),
            _ => {}
        }
    }

    /// A whole eager message for receive `req`: copied and completed with
    /// one look at the request (the small-message path).
    fn deliver_whole(&mut self, req: ReqId, h: &MsgHeader, payload: &[u8]) {
        let Some(state) = self.reqs.get_mut(req) else {
            return;
        };
        if let ReqState::Pending(Pending::Recv {
            buf,
            cap,
            typed: None,
            ..
        }) = *state
        {
            // SAFETY: the receive buffer is valid for `cap` bytes until completion.
            unsafe { copy_bytes(payload.as_ptr(), buf, payload.len().min(cap)) };
            let done = ReqState::Done(received_status(h.source, h.tag, h.total_len as usize, cap));
            // The old state owns nothing (no typed cursor): skip its drop glue.
            std::mem::forget(std::mem::replace(state, done));
            self.stop_if_awaited(req);
            return;
        }
        self.set_matched(req, h);
        self.write_recv(req, 0, payload);
        self.finish_recv(req);
    }

    pub(super) fn set_matched(&mut self, req: ReqId, h: &MsgHeader) {
        if let Some(ReqState::Pending(Pending::Recv { matched, .. })) = self.reqs.get_mut(req) {
            *matched = Some((h.source, h.tag, h.total_len as usize));
        }
    }

    /// Copies message bytes at `offset` into the receive buffer, or
    /// unpacks them into a typed one's layout (bytes past its capacity
    /// are discarded: truncation).
    pub(super) fn write_recv(&mut self, req: ReqId, offset: usize, bytes: &[u8]) {
        if let Some(ReqState::Pending(Pending::Recv {
            buf,
            cap,
            received,
            typed,
            ..
        })) = self.reqs.get_mut(req)
        {
            if offset < *cap {
                let n = bytes.len().min(*cap - offset);
                match typed {
                    // SAFETY: the receive buffer is valid for `cap` bytes until completion.
                    None => unsafe {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.add(offset), n)
                    },
                    Some(dst) => typed::unpack_at(dst, offset, &bytes[..n]),
                }
            }
            *received = offset + bytes.len();
        }
    }

    pub(super) fn finish_recv(&mut self, req: ReqId) {
        if !self.device_alias.is_empty() {
            self.device_alias.remove(&req.0);
        }
        if let Some(ReqState::Pending(Pending::Recv {
            cap,
            matched: Some((source, tag, total)),
            ..
        })) = self.reqs.get(req)
        {
            let status = received_status(*source, *tag, *total, *cap);
            self.reqs.complete(req, status);
        }
        self.stop_if_awaited(req);
    }

    /// Receive `req` completed: if a blocking call waits for it, the
    /// transport's poll may return now.
    #[inline]
    fn stop_if_awaited(&mut self, req: ReqId) {
        if self.awaited == Some(req) {
            self.awaited = None;
            self.transport.stop_poll();
        }
    }

    pub(super) fn deliver_unexpected(&mut self, req: ReqId, uid: UnexpId) {
        let Some(Some(u)) = self.unexpected.get_mut(uid) else {
            return;
        };
        let h = u.header;
        let peer = u.peer;
        self.set_matched(req, &h);
        if h.kind == Kind::Rts {
            let desc = self
                .free_unexpected(uid)
                .map(|u| u.data)
                .unwrap_or_default();
            self.rendezvous_read(req, peer, &h, &desc);
            return;
        }
        if h.flags & FLAG_SYNC != 0 {
            self.push(peer, &[&protocol::ctrl(Kind::Ack, h.send_id, 0)]);
        }
        self.eager_matched(peer, h.total_len);
        let complete = self.unexpected[uid].as_ref().is_some_and(|u| u.complete);
        if complete {
            self.copy_out_unexpected(req, uid);
        } else if let Some(Some(u)) = self.unexpected.get_mut(uid) {
            u.claimed = Some(req);
        }
    }

    pub(super) fn copy_out_unexpected(&mut self, req: ReqId, uid: UnexpId) {
        if let Some(u) = self.free_unexpected(uid) {
            self.write_recv(req, 0, &u.data);
            self.bufs.give(u.data);
            self.finish_recv(req);
        }
    }
}

/// The status of a receive of capacity `cap` that matched a message of
/// `total` bytes (truncated when the message is longer).
fn received_status(source: i32, tag: i32, total: usize, cap: usize) -> Status {
    Status {
        source,
        tag,
        count: total.min(cap),
        cancelled: false,
        truncated_from: (total > cap).then_some(total),
    }
}

pub(super) fn probe_status(h: &MsgHeader) -> Status {
    Status {
        source: h.source,
        tag: h.tag,
        count: h.total_len as usize,
        cancelled: false,
        truncated_from: None,
    }
}
