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
//! Files: this one (the state, sends, receives, probes, progress),
//! `arrive.rs` (arriving packets: matching, unexpected messages, eager
//! assembly, writing into receives), `credit.rs` (the per-peer budget of
//! unreturned eager bytes), `outq.rs` (packets onto the wire),
//! `rndv.rs` (rendezvous: CMA reads, split copies, streams), `rma.rs`
//! (rendezvous by RMA read between hosts), `typed.rs`
//! (sends from and receives into non-contiguous datatype layouts, packed
//! and unpacked in flight).

use std::collections::VecDeque;
use std::sync::Arc;

use super::bufpool::BufPool;
use super::matching::{Matcher, Pattern};
use super::protocol::{self, Kind, MsgHeader, SendPath, FLAG_SYNC};
use super::request::{Pending, ReqId, ReqState, Requests, SendState};
use super::small_copy::copy_bytes;
use crate::status::Status;
use crate::transport::Transport;
use arrive::{probe_status, Assembly, Unexpected};
pub use device::DeviceAlias;
pub use task::Task;

mod arrive;
mod credit;
mod device;
mod outq;
mod rma;
#[cfg(test)]
mod rma_tests;
mod rndv;
mod task;
#[cfg(test)]
mod tests;
mod typed;

/// Index of an unexpected message.
pub type UnexpId = usize;

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
    /// Per peer, where a transport wants a lower eager limit than
    /// `eager_limit` (empty when none does: one look-up fewer per send).
    peer_eager: Vec<usize>,
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
    /// Work of higher layers in flight (non-blocking collective schedules).
    tasks: Vec<Box<dyn Task>>,
    /// The receive a blocking call waits for: once it completes, the
    /// transport's poll may stop (see [`Transport::stop_poll`]).
    pub(crate) awaited: Option<ReqId>,
    /// Buffers for unexpected messages and queued packets.
    bufs: BufPool,
    /// Split copies waiting for the sender's part.
    splits: Vec<rndv::Split>,
    /// Scratch list of local `(address, len)` runs for scattered CMA reads.
    iov: Vec<(usize, usize)>,
    /// Smallest message copied cooperatively (0: never).
    split_min: usize,
    /// Smallest device message sent to a rank of this host by CUDA IPC
    /// (`usize::MAX`: never).
    ipc_min: usize,
    /// Smallest device message sent through the pinned-memory pipeline,
    /// and the pipeline's chunk.
    pipe_min: usize,
    pipe_chunk: usize,
    /// Read large messages with CMA when possible (else stream them).
    prefer_cma: bool,
    /// Direct transfers (and RMA reads) the transport is moving for this engine.
    directs: usize,
    /// RMA reads in flight: the receive, the sender and its send id (for Fin).
    reads: Vec<(ReqId, usize, u64)>,
    /// Rendezvous sends whose buffer the transport exposes for reading.
    exposed: Vec<ReqId>,
    /// Eager bytes per peer not yet returned (both directions).
    credit: credit::Credit,
    /// Receives staged through host memory for a device buffer, by
    /// request id: where a CUDA IPC message may go directly instead.
    device_alias: std::collections::HashMap<u64, DeviceAlias>,
    /// Streaming sends of device memory whose bytes are still arriving in
    /// pinned host memory, by request id: each streams what has arrived.
    pipes: std::collections::HashMap<u64, crate::mem::cuda::DevicePipe>,
}

impl Engine {
    /// An engine for world rank `me` over `transport`.
    pub fn new(
        me: usize,
        world_size: usize,
        transport: Arc<dyn Transport>,
        eager_limit: usize,
    ) -> Engine {
        let limits: Vec<usize> = (0..world_size)
            .map(|p| {
                transport
                    .packet_limit(p)
                    .map_or(eager_limit, |l| (l - protocol::MSG_HEADER).min(eager_limit))
            })
            .collect();
        let peer_eager = if limits.iter().all(|&l| l == eager_limit) {
            Vec::new()
        } else {
            limits
        };
        Engine {
            me,
            pid: std::process::id(),
            transport,
            eager_limit,
            peer_eager,
            matcher: Matcher::new(),
            reqs: Requests::default(),
            unexpected: Vec::new(),
            free_unexpected: Vec::new(),
            assembling: (0..world_size).map(|_| None).collect(),
            outq: (0..world_size).map(|_| VecDeque::new()).collect(),
            queued_peers: Vec::new(),
            streams: Vec::new(),
            tasks: Vec::new(),
            awaited: None,
            splits: Vec::new(),
            iov: Vec::new(),
            bufs: BufPool::default(),
            split_min: 0,
            ipc_min: usize::MAX,
            pipe_min: usize::MAX,
            pipe_chunk: 512 << 10,
            device_alias: std::collections::HashMap::new(),
            pipes: std::collections::HashMap::new(),
            prefer_cma: true,
            directs: 0,
            reads: Vec::new(),
            exposed: Vec::new(),
            credit: credit::Credit::new(world_size, 0),
        }
    }

    /// Makes room for peers `0..count` (the transport reaches new peers:
    /// processes of another job, see `transport::bridge`).
    pub fn add_peers(&mut self, count: usize) {
        let old = self.outq.len();
        if count <= old {
            return;
        }
        let limits: Vec<usize> = (old..count)
            .map(|p| {
                self.transport
                    .packet_limit(p)
                    .map_or(self.eager_limit, |l| {
                        (l - protocol::MSG_HEADER).min(self.eager_limit)
                    })
            })
            .collect();
        if self.peer_eager.is_empty() && limits.iter().any(|&l| l != self.eager_limit) {
            self.peer_eager = vec![self.eager_limit; old];
        }
        if !self.peer_eager.is_empty() {
            self.peer_eager.extend(limits);
        }
        self.assembling.resize_with(count, || None);
        self.outq.resize_with(count, VecDeque::new);
        self.credit.grow(count);
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
        let path = self.send_path(peer, len);
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
                let head = header.len();
                let first = self.first_packet_bytes(peer, head, len);
                // Header and bytes are written straight into the cell.
                self.push_with(peer, head + first, &mut |out| {
                    let (h, payload) = out.split_at_mut(head);
                    header.write(h);
                    // SAFETY: `payload` holds `first` bytes and is a cell
                    // or an engine buffer, never the caller's data.
                    unsafe { copy_bytes(data.as_ptr(), payload.as_mut_ptr(), first) };
                });
                if first < len {
                    let cont_cap = self.transport.max_packet(peer) - protocol::CONT_HEADER;
                    for chunk in data[first..].chunks(cont_cap) {
                        self.push(peer, &[&protocol::cont_header(), chunk]);
                    }
                }
                id
            }
            SendPath::Rendezvous => {
                let id = self.awaiting_fin(peer, buf, len);
                header.kind = Kind::Rts;
                header.send_id = id.0;
                header.addr = buf as u64;
                if let Some(remote) = self.expose(peer, buf, len, id) {
                    header.flags |= protocol::FLAG_RMA;
                    let desc = protocol::rma_desc(remote);
                    self.push(peer, &[&header.encode()[..header.len()], &desc]);
                } else {
                    self.push(peer, &[&header.encode()[..header.len()]]);
                }
                Some(id)
            }
        }
    }

    /// A rendezvous send's request: done when the receiver's Fin comes.
    fn awaiting_fin(&mut self, peer: usize, buf: *const u8, len: usize) -> ReqId {
        self.reqs.insert(ReqState::Pending(Pending::Send {
            peer,
            buf,
            len,
            state: SendState::AwaitFin,
            typed: None,
        }))
    }

    /// This engine's world rank.
    pub fn rank(&self) -> usize {
        self.me
    }

    /// The eager limit for messages to `peer`.
    #[inline]
    pub(super) fn eager_limit_to(&self, peer: usize) -> usize {
        self.peer_eager
            .get(peer)
            .copied()
            .unwrap_or(self.eager_limit)
    }

    /// Bytes of a `len`-byte eager message that travel in its first packet,
    /// after a `head`-byte header: all of them to self, else what a packet
    /// holds (the rest follows in Cont packets).
    fn first_packet_bytes(&self, peer: usize, head: usize, len: usize) -> usize {
        if peer == self.me {
            len
        } else {
            len.min(self.transport.max_packet(peer) - head)
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

    /// Posts a receive into the host temporary `buf` that stands for the
    /// device buffer `alias` (see [`DeviceAlias`]) and matches it.
    ///
    /// # Safety
    /// As [`Engine::start_recv`]; `alias.dst` has room for `cap` bytes
    /// until the request completes.
    pub unsafe fn start_recv_aliased(
        &mut self,
        pattern: Pattern,
        buf: *mut u8,
        cap: usize,
        alias: DeviceAlias,
    ) -> ReqId {
        let id = self.new_recv(buf, cap, None);
        // Entries of receives that ended another way (cancelled, failed).
        device::prune(&mut self.device_alias, &self.reqs, 256);
        self.device_alias.insert(id.0, alias);
        if let Some(m) = self.matcher.post(pattern, id) {
            self.deliver_unexpected(id, m.msg);
        }
        id
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
        let mut did = self.flush_queued();
        // The transport lives in the Arc's allocation, not in `self`, and
        // the engine never replaces it: borrowing it through a raw pointer
        // while `handle` takes `&mut self` aliases nothing (and saves the
        // two atomic operations of an Arc clone on every poll).
        let transport: *const dyn Transport = Arc::as_ptr(&self.transport);
        // SAFETY: see above; `self.transport` keeps the allocation alive.
        let transport = unsafe { &*transport };
        // SAFETY: `&mut self` (see the module docs).
        did |= unsafe { transport.poll(&mut |peer, bytes| self.handle(peer, bytes)) } > 0;
        if self.directs > 0 {
            did |= self.reap_direct();
        }
        if !self.streams.is_empty() {
            did |= self.pump_streams();
        }
        if !self.tasks.is_empty() {
            did |= self.advance_tasks();
        }
        did
    }

    /// Moves packets queued for full rings into those that have room now
    /// (what [`Engine::progress`] does first); returns whether any moved.
    #[inline]
    pub fn flush_queued(&mut self) -> bool {
        !self.queued_peers.is_empty() && self.flush_outq()
    }

    /// How many packets to world rank `peer` wait in its queue for room
    /// in its ring (a sender that should not run further ahead checks).
    pub fn queued_to(&self, peer: usize) -> usize {
        self.outq.get(peer).map_or(0, |q| q.len())
    }

    /// Whether a direct transfer (or RMA read) of this engine's is under
    /// way: the fabric moves its bytes only while it is polled.
    pub fn streaming(&self) -> bool {
        self.directs > 0
    }

    /// Whether anything is still in flight from this rank (queued packets,
    /// streams, partially assembled messages).
    pub fn busy(&self) -> bool {
        !self.queued_peers.is_empty()
            || !self.streams.is_empty()
            || !self.tasks.is_empty()
            || self.directs > 0
            // SAFETY: `&self` of the engine, which lives behind the
            // runtime's lock (see the module docs).
            || unsafe { self.transport.busy() }
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
