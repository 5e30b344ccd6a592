//! The fabric transport: [`Transport`] over one libfabric RDM endpoint,
//! for the peers on other hosts.
//!
//! Every packet is one tagged message. The tag carries what the transport
//! itself needs, so packets keep the engine's layout unchanged:
//!
//! ```text
//! bit 63       0 (set only for direct transfers, which packet receives never match)
//! bit 62       CREDIT_ONLY: no payload, only returned credits
//! bit 61       HELLO: the payload is the sender's address (a peer that
//!              did not know it: links between jobs, see `send_hello`)
//! bits 32..61  credits returned to the receiver of this message (29 bits)
//! bits 0..32   the sender's rank (world rank; position in a bridge link)
//! ```
//!
//! Flow control: a sender may have at most `credits` packets in flight to
//! one peer. The receiver returns them as it consumes packets, on any
//! packet it sends back, or in a CREDIT_ONLY message once half a window is
//! owed. Each receiver pre-posts `(credits + 3) x remote peers` buffers of
//! one packet each: at most `credits` data packets, (as a window's
//! credits come back in halves) two credit messages and one HELLO per peer
//! can be in flight, so a sender can never make a receiver hold more.
//! Order between a pair of ranks is the provider's send-after-send order
//! (`FI_ORDER_SAS`, required when the endpoint is opened).
//!
//! Files: this one (opening, packets, credits, polling), `link/direct.rs`
//! (direct tagged transfers and RMA reads between user buffers),
//! `link/sleep.rs` (waiting on the completion queue), `mr.rs` (what gets
//! registered).

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use super::endpoint::{Endpoint, Mr, CONTEXT_BYTES};
use super::mr::{self, MrPolicy, Registrar, RndvPolicy};
use super::sys;
use crate::error::Error;
use crate::transport::{Caps, RemoteBuf, Transport};

mod direct;
mod packets;
mod sleep;
mod trace;

const RANK_MASK: u64 = 0xffff_ffff;
const CREDITS_SHIFT: u32 = 32;
const CREDITS_MASK: u64 = (1 << 29) - 1;
const HELLO: u64 = 1 << 61;
const CREDIT_ONLY: u64 = 1 << 62;
const DIRECT: u64 = 1 << 63;
/// Packet receives match every tag whose DIRECT bit is clear.
const PACKET_IGNORE: u64 = !DIRECT;
/// Send slots (packets in flight that needed a copy), whatever the peers.
const SEND_SLOTS: usize = 64;
/// Longest sleep while the provider reports pending work (`fi_trywait`).
const PENDING_NAP: Duration = Duration::from_millis(1);
/// Largest inject copied through the stack.
const STACK_INJECT: usize = 256;

/// How the fabric transport is opened.
#[derive(Debug, Clone)]
pub(crate) struct FabricConfig {
    /// Provider name (None: libfabric's choice).
    pub(crate) provider: Option<String>,
    /// Interface / domain name (None: by `addr`).
    pub(crate) iface: Option<String>,
    /// This host's IP address the launcher placed the rank at: the
    /// interface holding it is chosen (None, or no interface holds it: the
    /// first reachable one).
    pub(crate) addr: Option<String>,
    /// Largest packet.
    pub(crate) packet: usize,
    /// Packets in flight per peer.
    pub(crate) credits: usize,
    /// Which buffers get registered.
    pub(crate) mr: MrPolicy,
    /// How large contiguous messages cross.
    pub(crate) rndv: RndvPolicy,
    /// Log the first direct operation of each kind with each peer.
    pub(crate) debug: bool,
}

/// Whether `OXMPI_OFI_RNDV=auto` reads with RMA where the provider can:
/// no; on tcp the two paths measured alike within the noise, and tagged
/// sends need no remote-read registrations (docs/ARCHITECTURE.md, "Jobs
/// across hosts").
const READS_BY_DEFAULT: bool = false;

/// What the provider keeps per operation, and which of our buffers it is.
#[repr(C, align(64))]
struct OpContext {
    provider: [u8; CONTEXT_BYTES],
    /// Index into the receive buffers, or `SEND_BASE + index` of a send slot.
    slot: usize,
}

const SEND_BASE: usize = 1 << 40;
/// `slot` of a direct transfer: `DIRECT_BASE + index` into `State::direct`.
const DIRECT_BASE: usize = 1 << 41;

/// A zeroed, fixed allocation the provider writes into: addresses stay put.
struct Slab {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Slab {
    fn new(len: usize) -> Slab {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 64).expect("slab layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Slab { ptr, layout }
    }

    fn len(&self) -> usize {
        self.layout.size()
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// One peer on another host.
#[derive(Debug, Clone, Copy)]
struct Peer {
    /// Its address handle.
    addr: u64,
    /// Packets we may still send it.
    credits: u32,
    /// Packets of its we consumed and have not yet returned.
    owed: u32,
}

struct State {
    peers: Vec<Option<Peer>>,
    free_sends: Vec<usize>,
    /// Receive buffers the provider refused to take back (queue full),
    /// each with the peer whose packet it held: that packet's credit goes
    /// back only once the buffer is posted again.
    to_repost: Vec<(usize, Option<usize>)>,
    /// Peers owed a credit message that could not be sent yet.
    owing: Vec<usize>,
    /// Packets already filled (and their credit taken) that the provider
    /// refused for the moment, in order; sent before anything else.
    backlog: std::collections::VecDeque<(usize, Vec<u8>)>,
    /// Direct transfers in flight (None: a free entry).
    direct: Vec<Option<Box<direct::DirectOp>>>,
    free_direct: Vec<usize>,
    /// Direct sends and reads to post again (indices into `direct`), in order.
    direct_retry: std::collections::VecDeque<usize>,
    /// Finished direct transfers: token and bytes moved, or the failure.
    direct_done: Vec<(u64, Result<usize, Error>)>,
    /// The key of the next direct receive.
    next_key: u64,
    /// What gets registered, and the registrations' count.
    reg: Registrar,
    /// The packet buffers' registrations (receive, send), if registered.
    packet_mrs: Vec<Mr>,
    /// Buffers exposed for peers to read, by token.
    exposed: Vec<(u64, Mr)>,
    /// Per peer, the kinds of direct operation logged so far.
    logged: Vec<u8>,
    /// Counts and the stall clock, with `OXMPI_DEBUG=transport` only.
    trace: Option<trace::Trace>,
}

/// The transport to every peer on another host.
pub(crate) struct FabricLink {
    /// Declared first: closing it cancels every posted operation before
    /// the buffers and contexts below are freed.
    ep: Endpoint,
    me: usize,
    packet: usize,
    credits: u32,
    receives: usize,
    rx: Slab,
    tx: Slab,
    /// Descriptors of the packet buffers' registrations (null: none).
    rx_desc: *mut c_void,
    tx_desc: *mut c_void,
    /// Rendezvous sends offer their buffer for RMA reads.
    reads: bool,
    debug: bool,
    contexts: Slab,
    state: UnsafeCell<State>,
    /// Threads in [`sleep`](Self::sleep).
    sleepers: AtomicU32,
    /// Polls that took completions so far: a sleeper's token.
    generation: AtomicU32,
    /// Rung by a poll that took completions while threads sleep.
    wake: OwnedFd,
    /// Whether the completion descriptor stays ready with nothing to take.
    stale: sleep::StaleWaitFd,
}

// SAFETY: `state` and the buffers are touched only by `try_send`,
// `try_send_with` and `poll`, which the `Transport` contract never runs
// concurrently; the endpoint is thread-safe itself.
unsafe impl Sync for FabricLink {}
// SAFETY: the raw pointers are to allocations this value owns.
unsafe impl Send for FabricLink {}

impl FabricLink {
    /// Opens the endpoint for world rank `me`, whose peers on other hosts
    /// are `remote` (world ranks), and posts its receive buffers.
    pub(crate) fn open(
        cfg: &FabricConfig,
        me: usize,
        world_size: usize,
        remote: &[usize],
    ) -> Result<FabricLink, Error> {
        let packet = cfg.packet.max(1024);
        let credits = cfg.credits.clamp(2, CREDITS_MASK as usize) as u32;
        let receives = (credits as usize + 3) * remote.len();
        let cq_size = (receives + SEND_SLOTS).max(64);
        let want_reads = match cfg.rndv {
            RndvPolicy::Auto => READS_BY_DEFAULT,
            RndvPolicy::Read => true,
            RndvPolicy::Tagged => false,
        };
        let ep = Endpoint::open_preferred(
            cfg.provider.as_deref(),
            cfg.iface.as_deref(),
            cfg.addr.as_deref(),
            want_reads,
            cq_size,
        )?;
        let reads = want_reads && ep.can_read;
        let mut reg = Registrar::new(ep.mr_mode, cfg.mr);
        let (rx, tx) = (Slab::new(receives * packet), Slab::new(SEND_SLOTS * packet));
        let mut packet_mrs = Vec::new();
        for (slab, access) in [(&rx, sys::FI_RECV), (&tx, sys::FI_SEND)] {
            // SAFETY: the slabs outlive the registrations (closed on drop).
            match unsafe { reg.local_mr(&ep, slab.ptr, slab.len(), access) } {
                Ok(m) => packet_mrs.extend(m),
                Err(e) => {
                    // SAFETY: nothing is posted yet.
                    packet_mrs
                        .drain(..)
                        .for_each(|m| unsafe { reg.close(&ep, m) });
                    return Err(e);
                }
            }
        }
        let rx_desc = mr::desc(packet_mrs.first());
        let tx_desc = mr::desc(packet_mrs.get(1));
        let n_ctx = receives + SEND_SLOTS;
        // SAFETY: eventfd has no memory preconditions; the result is checked.
        let wake =
            unsafe { nix::libc::eventfd(0, nix::libc::EFD_CLOEXEC | nix::libc::EFD_NONBLOCK) };
        if wake < 0 {
            return Err(Error::Os {
                call: "eventfd",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: a new descriptor that nothing else owns.
        let wake = unsafe { OwnedFd::from_raw_fd(wake) };
        let link = FabricLink {
            ep,
            me,
            packet,
            credits,
            receives,
            rx,
            tx,
            rx_desc,
            tx_desc,
            reads,
            debug: cfg.debug,
            contexts: Slab::new(n_ctx * std::mem::size_of::<OpContext>()),
            state: UnsafeCell::new(State {
                peers: vec![None; world_size],
                free_sends: (0..SEND_SLOTS).rev().collect(),
                to_repost: Vec::new(),
                owing: Vec::new(),
                backlog: std::collections::VecDeque::new(),
                direct: Vec::new(),
                free_direct: Vec::new(),
                direct_retry: std::collections::VecDeque::new(),
                direct_done: Vec::new(),
                next_key: 0,
                reg,
                packet_mrs,
                exposed: Vec::new(),
                logged: vec![0; world_size],
                trace: cfg.debug.then(|| trace::Trace::new(world_size)),
            }),
            sleepers: AtomicU32::new(0),
            generation: AtomicU32::new(0),
            wake,
            stale: sleep::StaleWaitFd::default(),
        };
        for i in 0..n_ctx {
            let slot = if i < receives {
                i
            } else {
                SEND_BASE + i - receives
            };
            // SAFETY: `i` is within the slab, which is aligned for OpContext.
            unsafe {
                link.context(i).cast::<OpContext>().write(OpContext {
                    provider: [0; CONTEXT_BYTES],
                    slot,
                })
            };
        }
        for i in 0..receives {
            // SAFETY: no operation is posted yet, so nothing else uses the state.
            let st = unsafe { &mut *link.state.get() };
            link.post_receive(st, i, None)?;
        }
        Ok(link)
    }

    /// What was opened (provider, interface, limits) and how it is used,
    /// for logs.
    pub(crate) fn description(&self) -> String {
        // SAFETY: read once at set-up, before the data path runs.
        let reg = unsafe { &(*self.state.get()).reg };
        let large = if self.reads {
            "RMA read"
        } else {
            "tagged send"
        };
        format!(
            "{}; {}; large messages by {large}",
            self.ep.description,
            reg.describe()
        )
    }

    /// Registrations open now and made so far.
    #[cfg(test)]
    fn registrations(&self) -> (usize, usize) {
        // SAFETY: tests call this between data path calls.
        let reg = unsafe { &(*self.state.get()).reg };
        (reg.live, reg.made)
    }

    /// Peer `peer`'s address handle.
    fn peer_addr(&self, st: &State, peer: usize) -> Result<u64, Error> {
        match st.peers.get(peer).copied().flatten() {
            Some(p) => Ok(p.addr),
            None => Err(Error::Unsupported(format!(
                "rank {peer} is not on the fabric"
            ))),
        }
    }

    /// This rank's address, to publish.
    pub(crate) fn address(&self) -> Result<Vec<u8>, Error> {
        self.ep.address()
    }

    /// Adds world rank `peer`, at `address` (from its [`address`](Self::address)).
    pub(crate) fn add_peer(&self, peer: usize, address: &[u8]) -> Result<(), Error> {
        let addr = self.ep.insert(address)?;
        // SAFETY: called during set-up, before any data path call.
        let st = unsafe { &mut *self.state.get() };
        st.peers[peer] = Some(Peer {
            addr,
            credits: self.credits,
            owed: 0,
        });
        Ok(())
    }

    /// Adds `peer`'s address unless a HELLO already did. The caller holds
    /// the engine lock (no data path call runs).
    pub(crate) fn add_peer_if_absent(&self, peer: usize, address: &[u8]) -> Result<(), Error> {
        // SAFETY: as `add_peer`: nothing else touches the state now.
        let known = unsafe { &*self.state.get() }
            .peers
            .get(peer)
            .is_some_and(Option::is_some);
        if known {
            return Ok(());
        }
        self.add_peer(peer, address)
    }

    fn context(&self, i: usize) -> *mut c_void {
        // SAFETY: callers pass an index below the number of contexts.
        unsafe {
            self.contexts
                .ptr
                .add(i * std::mem::size_of::<OpContext>())
                .cast()
        }
    }

    fn rx_buf(&self, i: usize) -> *mut u8 {
        // SAFETY: i < receives.
        unsafe { self.rx.ptr.add(i * self.packet) }
    }

    fn tx_buf(&self, i: usize) -> *mut u8 {
        // SAFETY: i < SEND_SLOTS.
        unsafe { self.tx.ptr.add(i * self.packet) }
    }

    /// Whether operations of this link wait on the provider: sends or
    /// direct transfers not yet complete, buffers exposed for peers to
    /// read (the provider serves those reads only while polled), or
    /// anything it refused for now. Only polls move them.
    ///
    /// # Safety
    /// Not concurrently with the data path.
    #[inline]
    pub(crate) unsafe fn in_flight(&self) -> bool {
        // SAFETY: the caller's contract.
        let st = unsafe { &*self.state.get() };
        st.free_sends.len() < SEND_SLOTS
            || st.free_direct.len() < st.direct.len()
            || !st.exposed.is_empty()
            || !st.direct_done.is_empty()
            || !st.backlog.is_empty()
            || !st.to_repost.is_empty()
            || !st.owing.is_empty()
            || !st.direct_retry.is_empty()
    }
}

/// A fabric failure this rank cannot recover from: MPI's default error
/// handler for communication failures is to end the job, which the
/// launcher does once this process exits.
fn fatal(me: usize, what: &str) -> ! {
    eprintln!("oxmpi: rank {me}: fabric failure: {what}");
    // SAFETY: _exit ends the process at once, without running destructors
    // that could wait on the engine lock this thread may hold.
    unsafe { nix::libc::_exit(1) }
}

impl Transport for FabricLink {
    fn name(&self) -> &'static str {
        "ofi"
    }

    fn caps(&self) -> Caps {
        Caps::INTER_HOST
    }

    fn reaches(&self, peer: usize) -> bool {
        // SAFETY: `peers` is written only during set-up.
        unsafe { &*self.state.get() }
            .peers
            .get(peer)
            .is_some_and(Option::is_some)
    }

    fn max_packet(&self, _peer: usize) -> usize {
        self.packet
    }

    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool {
        let len = parts.iter().map(|p| p.len()).sum();
        self.send_packet(peer, len, &mut |out| {
            let mut at = 0;
            for part in parts {
                out[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
        })
    }

    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        self.send_packet(peer, len, fill)
    }

    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        // SAFETY: the caller's contract.
        unsafe { self.take_completions(sink) }
    }

    fn can_read_remote(&self, _peer: usize) -> bool {
        false
    }

    fn read_remote(
        &self,
        peer: usize,
        _pid: u32,
        _addr: u64,
        _dst: &mut [u8],
    ) -> Result<(), Error> {
        Err(Error::Unsupported(format!(
            "rank {peer} is on another host: no direct reads over the fabric yet"
        )))
    }

    unsafe fn busy(&self) -> bool {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &*self.state.get() };
        // Owed credits do not count: a peer that left needs none.
        !st.backlog.is_empty() || !st.direct_retry.is_empty() || st.free_sends.len() < SEND_SLOTS
    }

    fn packet_limit(&self, _peer: usize) -> Option<usize> {
        // One packet: larger messages go direct (one tagged send into the
        // receive buffer) rather than as several packets through buffers.
        Some(self.packet)
    }

    fn direct(&self, peer: usize) -> bool {
        self.reaches(peer)
    }

    unsafe fn post_direct_recv(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<u64, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.direct_recv(peer, buf, len, token) }
    }

    unsafe fn post_direct_send(
        &self,
        peer: usize,
        key: u64,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.direct_send(peer, key, buf, len, token) }
    }

    fn offers_read(&self, peer: usize) -> bool {
        self.reads && self.reaches(peer)
    }

    unsafe fn expose(
        &self,
        peer: usize,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<RemoteBuf, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.expose_buf(peer, buf, len, token) }
    }

    unsafe fn conceal(&self, _peer: usize, token: u64) {
        // SAFETY: the caller's contract.
        unsafe { self.conceal_buf(token) }
    }

    unsafe fn post_read(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        remote: RemoteBuf,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.read_into(peer, buf, len, remote, token) }
    }

    unsafe fn take_direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        // SAFETY: the caller's contract.
        unsafe { self.direct_done(done) }
    }

    fn wait_token(&self) -> u32 {
        self.generation()
    }

    fn wait(&self, token: u32, timeout: Duration) {
        self.sleep(token, timeout);
    }

    fn wake(&self, _peer: usize) {}
}

impl Drop for FabricLink {
    fn drop(&mut self) {
        // Every posted operation ends with the endpoint; then the
        // registrations close, before the endpoint's domain does (when
        // the fields drop).
        self.ep.close_endpoint();
        let st = self.state.get_mut();
        let mut all = Self::take_registrations(st);
        all.append(&mut st.packet_mrs);
        for m in all {
            // SAFETY: the endpoint is closed: nothing uses them.
            unsafe { st.reg.close(&self.ep, m) };
        }
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
