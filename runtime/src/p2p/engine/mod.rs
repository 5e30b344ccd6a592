//! The point-to-point engine: turns sends into packets (eager or
//! rendezvous), turns arriving packets into matched receives, and keeps
//! everything pending in one place. All state lives behind the runtime's
//! single lock; [`Engine::progress`] is the only place packets move.
//!
//! The transport's data path (`try_send`, `poll`) must not run on two
//! threads at once (see [`Transport`]). The engine calls it only from its
//! `&mut self` methods, and the engine lives in the runtime's `Mutex`, so
//! every such call is serialized; that is the SAFETY argument at each
//! call site below.
//!
//! Files: this one (requests, matching, eager assembly), `outq.rs`
//! (packets onto the wire), `rndv.rs` (rendezvous: CMA reads, split
//! copies, streams), `typed.rs` (sends from and receives into
//! non-contiguous datatype layouts, packed and unpacked in flight).

use std::collections::VecDeque;
use std::sync::Arc;

use super::bufpool::BufPool;
use super::matching::{Envelope, Matcher, Pattern};
use super::protocol::{self, Kind, MsgHeader, Packet, SendPath, FLAG_SYNC};
use super::request::{Pending, ReqId, ReqState, Requests, SendState};
use crate::status::Status;
use crate::transport::Transport;

mod outq;
mod rndv;
#[cfg(test)]
mod tests;
mod typed;

/// Index of an unexpected message.
pub type UnexpId = usize;

/// A message that arrived before its receive was posted.
#[derive(Debug)]
struct Unexpected {
    header: MsgHeader,
    peer: usize,
    /// Eager bytes received so far (empty for Rts).
    data: Vec<u8>,
    /// All eager bytes are here.
    complete: bool,
    /// A receive matched it (MPI_Mrecv or post) before all bytes arrived.
    claimed: Option<ReqId>,
}

/// Where the continuation bytes of a peer's current eager message go.
#[derive(Debug, Clone, Copy)]
enum Assembly {
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

/// A matched-probe handle (`MPI_Message`): an unexpected message removed
/// from matching, to be received later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHandle(pub UnexpId);

/// The engine state.
pub struct Engine {
    me: usize,
    pid: u32,
    transport: Arc<dyn Transport>,
    eager_limit: usize,
    matcher: Matcher<ReqId, UnexpId>,
    /// Every request.
    pub reqs: Requests,
    unexpected: Vec<Option<Unexpected>>,
    free_unexpected: Vec<UnexpId>,
    /// Per peer (world rank): where its current eager message's bytes go.
    assembling: Vec<Option<Assembly>>,
    /// Per peer: packets waiting for room in its ring, in order.
    outq: Vec<VecDeque<Vec<u8>>>,
    /// Peers with a non-empty `outq`.
    queued_peers: Vec<usize>,
    /// Sends streaming Data packets (their receiver cannot read our memory).
    streams: Vec<ReqId>,
    /// Collective schedules in flight.
    pub(crate) schedules: Vec<crate::coll::run::Registered>,
    /// Buffers for unexpected messages and queued packets.
    bufs: BufPool,
    /// Split copies waiting for the sender's part.
    splits: Vec<rndv::Split>,
    /// Scratch list of local `(address, len)` runs for scattered CMA reads.
    iov: Vec<(usize, usize)>,
    /// Smallest message copied cooperatively (0: never).
    split_min: usize,
    /// Read large messages with CMA when possible (else stream them).
    prefer_cma: bool,
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
    /// An engine for world rank `me` over `transport`.
    pub fn new(
        me: usize,
        world_size: usize,
        transport: Arc<dyn Transport>,
        eager_limit: usize,
    ) -> Engine {
        Engine {
            me,
            pid: std::process::id(),
            transport,
            eager_limit,
            matcher: Matcher::new(),
            reqs: Requests::default(),
            unexpected: Vec::new(),
            free_unexpected: Vec::new(),
            assembling: (0..world_size).map(|_| None).collect(),
            outq: (0..world_size).map(|_| VecDeque::new()).collect(),
            queued_peers: Vec::new(),
            streams: Vec::new(),
            schedules: Vec::new(),
            splits: Vec::new(),
            iov: Vec::new(),
            bufs: BufPool::default(),
            split_min: 0,
            prefer_cma: true,
        }
    }

    /// Sets the smallest message copied cooperatively (0: never).
    pub fn set_split_min(&mut self, bytes: usize) {
        self.split_min = bytes;
    }

    /// Chooses how matched rendezvous messages travel: `"cma"` (the
    /// receiver reads the sender's buffer: one copy), `"stream"` (the
    /// sender pushes Data cells: two copies, pipelined on two cores) or
    /// `"auto"`: stream when every local rank has a core (measured faster
    /// on shared memory here: see docs/STATUS.md), CMA when oversubscribed
    /// (the receiver then finishes alone while the sender is descheduled).
    pub fn set_rndv_protocol(&mut self, protocol: &str) {
        self.prefer_cma = match protocol {
            "stream" => false,
            "cma" => true,
            _ => !self.transport.parallel_peers(),
        };
    }

    /// The transport (for waiting).
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// Starts a send of `len` bytes at `buf` to world rank `peer`, as rank
    /// `source` of the communicator with `context`. Returns `None` when the
    /// send is already complete (eager data copied out), else its request.
    ///
    /// # Safety
    /// `buf..buf+len` must stay readable until the returned request completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn start_send(
        &mut self,
        peer: usize,
        context: u32,
        source: i32,
        tag: i32,
        buf: *const u8,
        len: usize,
        sync: bool,
    ) -> Option<ReqId> {
        let path = if peer == self.me {
            SendPath::Eager // to self: one packet, no size limit
        } else {
            protocol::choose_path(len, self.eager_limit)
        };
        // SAFETY: the caller guarantees `buf..buf+len` is readable until completion.
        let data = slice_or_empty(buf, len);
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
        match path {
            SendPath::Eager => {
                let id = sync.then(|| {
                    self.reqs.insert(ReqState::Pending(Pending::Send {
                        peer,
                        buf,
                        len,
                        state: SendState::AwaitAck,
                        typed: None,
                    }))
                });
                header.send_id = id.map_or(0, |id| id.0);
                let first_cap = if peer == self.me {
                    len
                } else {
                    self.transport.max_packet() - protocol::MSG_HEADER
                };
                let first = len.min(first_cap);
                self.push(peer, &[&header.encode(), &data[..first]]);
                let cont_cap = self.transport.max_packet() - protocol::CONT_HEADER;
                for chunk in data[first..].chunks(cont_cap) {
                    self.push(peer, &[&protocol::cont_header(), chunk]);
                }
                id
            }
            SendPath::Rendezvous => {
                let id = self.reqs.insert(ReqState::Pending(Pending::Send {
                    peer,
                    buf,
                    len,
                    state: SendState::AwaitFin,
                    typed: None,
                }));
                header.kind = Kind::Rts;
                header.send_id = id.0;
                header.addr = buf as u64;
                self.push(peer, &[&header.encode()]);
                Some(id)
            }
        }
    }

    /// Posts a receive into `cap` bytes at `buf`.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the returned request completes.
    pub unsafe fn start_recv(&mut self, pattern: Pattern, buf: *mut u8, cap: usize) -> ReqId {
        self.post_recv(pattern, buf, cap, None)
    }

    /// Posts a receive (typed when `typed` is given) and matches it.
    fn post_recv(
        &mut self,
        pattern: Pattern,
        buf: *mut u8,
        cap: usize,
        typed: Option<Box<crate::datatype::Cursor>>,
    ) -> ReqId {
        let id = self.new_recv(buf, cap, typed);
        if let Some(m) = self.matcher.post(pattern, id) {
            self.deliver_unexpected(id, m.msg);
        }
        id
    }

    fn new_recv(
        &mut self,
        buf: *mut u8,
        cap: usize,
        typed: Option<Box<crate::datatype::Cursor>>,
    ) -> ReqId {
        self.reqs.insert(ReqState::Pending(Pending::Recv {
            buf,
            cap,
            matched: None,
            received: 0,
            typed,
        }))
    }

    /// Receives a message removed by a matched probe.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable until the returned request completes.
    pub unsafe fn start_mrecv(&mut self, msg: MessageHandle, buf: *mut u8, cap: usize) -> ReqId {
        let id = self.new_recv(buf, cap, None);
        self.deliver_unexpected(id, msg.0);
        id
    }

    /// Status of the earliest unexpected message matching `pattern`.
    pub fn probe(&self, pattern: &Pattern) -> Option<Status> {
        self.matcher.probe(pattern).and_then(|(_, &uid)| {
            let u = self.unexpected.get(uid)?.as_ref()?;
            Some(probe_status(&u.header))
        })
    }

    /// Removes the earliest unexpected message matching `pattern` (MPI_Improbe).
    pub fn mprobe(&mut self, pattern: &Pattern) -> Option<(MessageHandle, Status)> {
        let (_, uid) = self.matcher.take(pattern)?;
        let u = self.unexpected.get(uid)?.as_ref()?;
        Some((MessageHandle(uid), probe_status(&u.header)))
    }

    /// Cancels a posted, unmatched receive. Returns whether it was cancelled.
    pub fn cancel(&mut self, id: ReqId) -> bool {
        if self.matcher.cancel_posted(|&p| p == id).is_some() {
            let mut status = Status::empty();
            status.cancelled = true;
            self.reqs.complete(id, status);
            true
        } else {
            false
        }
    }

    /// Moves packets: flushes queued sends, handles arrivals, pumps streams.
    /// Returns whether anything happened.
    #[inline]
    pub fn progress(&mut self) -> bool {
        let mut did = !self.queued_peers.is_empty() && self.flush_outq();
        // The transport lives in the Arc's allocation, not in `self`, and
        // the engine never replaces it: borrowing it through a raw pointer
        // while `handle` takes `&mut self` aliases nothing (and saves the
        // two atomic operations of an Arc clone on every poll).
        let transport: *const dyn Transport = Arc::as_ptr(&self.transport);
        // SAFETY: see above; `self.transport` keeps the allocation alive.
        let transport = unsafe { &*transport };
        // SAFETY: `&mut self` (see the module docs).
        did |= unsafe { transport.poll(&mut |peer, bytes| self.handle(peer, bytes)) } > 0;
        if !self.streams.is_empty() {
            did |= self.pump_streams();
        }
        if !self.schedules.is_empty() {
            did |= self.advance_schedules();
        }
        did
    }

    fn free_unexpected(&mut self, id: UnexpId) -> Option<Unexpected> {
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

    fn on_message(&mut self, peer: usize, h: MsgHeader, payload: &[u8]) {
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
                self.set_matched(req, &h);
                if h.kind == Kind::Rts {
                    self.rendezvous_read(req, peer, &h);
                    return;
                }
                if h.flags & FLAG_SYNC != 0 {
                    self.push(peer, &[&protocol::ctrl(Kind::Ack, h.send_id, 0)]);
                }
                self.write_recv(req, 0, payload);
                let remaining = h.total_len as usize - payload.len();
                if remaining == 0 {
                    self.finish_recv(req);
                } else {
                    self.assembling[peer] = Some(Assembly::Request {
                        req,
                        offset: payload.len(),
                        remaining,
                    });
                }
            }
            None => {
                let Some(uid) = queued else { return };
                if let Some(Some(u)) = self.unexpected.get_mut(uid) {
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

    fn on_cont(&mut self, peer: usize, payload: &[u8]) {
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

    fn on_ctrl(&mut self, peer: usize, kind: Kind, flags: u8, send_id: u64, recv_id: u64) {
        let id = ReqId(send_id);
        match kind {
            Kind::Ack | Kind::Fin => self.reqs.complete(id, Status::empty()),
            Kind::Cts => {
                if let Some(ReqState::Pending(Pending::Send { state, .. })) = self.reqs.get_mut(id)
                {
                    *state = SendState::Streaming { recv_id, offset: 0 };
                    self.streams.push(id);
                }
                self.pump_streams();
            }
            Kind::Wrote => self.on_wrote(peer, flags != 0, send_id, ReqId(recv_id)),
            _ => {}
        }
    }

    fn set_matched(&mut self, req: ReqId, h: &MsgHeader) {
        if let Some(ReqState::Pending(Pending::Recv { matched, .. })) = self.reqs.get_mut(req) {
            *matched = Some((h.source, h.tag, h.total_len as usize));
        }
    }

    /// Copies message bytes at `offset` into the receive buffer, or
    /// unpacks them into a typed one's layout (bytes past its capacity
    /// are discarded: truncation).
    fn write_recv(&mut self, req: ReqId, offset: usize, bytes: &[u8]) {
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

    fn finish_recv(&mut self, req: ReqId) {
        if let Some(ReqState::Pending(Pending::Recv {
            cap,
            matched: Some((source, tag, total)),
            ..
        })) = self.reqs.get(req)
        {
            let status = Status {
                source: *source,
                tag: *tag,
                count: (*total).min(*cap),
                cancelled: false,
                truncated_from: (*total > *cap).then_some(*total),
            };
            self.reqs.complete(req, status);
        }
    }

    fn deliver_unexpected(&mut self, req: ReqId, uid: UnexpId) {
        let Some(Some(u)) = self.unexpected.get_mut(uid) else {
            return;
        };
        let h = u.header;
        let peer = u.peer;
        self.set_matched(req, &h);
        if h.kind == Kind::Rts {
            self.free_unexpected(uid);
            self.rendezvous_read(req, peer, &h);
            return;
        }
        if h.flags & FLAG_SYNC != 0 {
            self.push(peer, &[&protocol::ctrl(Kind::Ack, h.send_id, 0)]);
        }
        let complete = self.unexpected[uid].as_ref().is_some_and(|u| u.complete);
        if complete {
            self.copy_out_unexpected(req, uid);
        } else if let Some(Some(u)) = self.unexpected.get_mut(uid) {
            u.claimed = Some(req);
        }
    }

    fn copy_out_unexpected(&mut self, req: ReqId, uid: UnexpId) {
        if let Some(u) = self.free_unexpected(uid) {
            self.write_recv(req, 0, &u.data);
            self.bufs.give(u.data);
            self.finish_recv(req);
        }
    }

    /// Whether anything is still in flight from this rank (queued packets,
    /// streams, partially assembled messages).
    pub fn busy(&self) -> bool {
        !self.queued_peers.is_empty() || !self.streams.is_empty() || !self.schedules.is_empty()
    }
}

fn probe_status(h: &MsgHeader) -> Status {
    Status {
        source: h.source,
        tag: h.tag,
        count: h.total_len as usize,
        cancelled: false,
        truncated_from: None,
    }
}

/// # Safety
/// `ptr..ptr+len` must be readable (any pointer is fine when `len` is 0).
unsafe fn slice_or_empty<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(ptr, len)
    }
}

/// # Safety
/// `ptr..ptr+len` must be writable (any pointer is fine when `len` is 0).
unsafe fn slice_mut_or_empty<'a>(ptr: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(ptr, len)
    }
}
