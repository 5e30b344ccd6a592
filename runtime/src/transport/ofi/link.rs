//! The fabric transport: [`Transport`] over one libfabric RDM endpoint,
//! for the peers on other hosts.
//!
//! Every packet is one tagged message. The tag carries what the transport
//! itself needs, so packets keep the engine's layout unchanged:
//!
//! ```text
//! bit 63       0 (set only for direct transfers, which packet receives never match)
//! bit 62       CREDIT_ONLY: no payload, only returned credits
//! bits 32..62  credits returned to the receiver of this message (30 bits)
//! bits 0..32   the sender's world rank
//! ```
//!
//! Flow control: a sender may have at most `credits` packets in flight to
//! one peer. The receiver returns them as it consumes packets, on any
//! packet it sends back, or in a CREDIT_ONLY message once half a window is
//! owed. Each receiver pre-posts `(credits + 2) x remote peers` buffers of
//! one packet each: at most `credits` data packets and (as a window's
//! credits come back in halves) two credit messages per peer can be in
//! flight, so a sender can never make a receiver hold more than that.
//! Order between a pair of ranks is the provider's send-after-send order
//! (`FI_ORDER_SAS`, required when the endpoint is opened).

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use super::endpoint::{Endpoint, Posted, CONTEXT_BYTES};
use super::sys::{Completion, POLL_MAX};
use crate::error::Error;
use crate::transport::{Caps, Transport};

const RANK_MASK: u64 = 0xffff_ffff;
const CREDITS_SHIFT: u32 = 32;
const CREDITS_MASK: u64 = (1 << 30) - 1;
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
    /// Interface / domain name (None: the first reachable one).
    pub(crate) iface: Option<String>,
    /// Largest packet.
    pub(crate) packet: usize,
    /// Packets in flight per peer.
    pub(crate) credits: usize,
}

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

/// A direct transfer in flight; boxed, so the context's address (which the
/// provider holds) never moves.
#[repr(C)]
struct DirectOp {
    context: OpContext,
    token: u64,
    /// A send the provider refused for now: (peer address, tag, buffer, length).
    retry: Option<(u64, u64, *const u8, usize)>,
}

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
    /// Receive buffers the provider refused to take back (queue full).
    to_repost: Vec<usize>,
    /// Peers owed a credit message that could not be sent yet.
    owing: Vec<usize>,
    /// Packets already filled (and their credit taken) that the provider
    /// refused for the moment, in order; sent before anything else.
    backlog: std::collections::VecDeque<(usize, Vec<u8>)>,
    /// Direct transfers in flight (None: a free entry).
    direct: Vec<Option<Box<DirectOp>>>,
    free_direct: Vec<usize>,
    /// Direct sends to post again (indices into `direct`), in order.
    direct_retry: std::collections::VecDeque<usize>,
    /// Finished direct transfers: token and bytes moved, or the failure.
    direct_done: Vec<(u64, Result<usize, Error>)>,
    /// The key of the next direct receive.
    next_key: u64,
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
    contexts: Slab,
    state: UnsafeCell<State>,
    /// Threads in [`sleep`](Self::sleep).
    sleepers: AtomicU32,
    /// Polls that took completions so far: a sleeper's token.
    generation: AtomicU32,
    /// Rung by a poll that took completions while threads sleep.
    wake: OwnedFd,
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
        let receives = (credits as usize + 2) * remote.len();
        let ep = Endpoint::open(
            cfg.provider.as_deref(),
            cfg.iface.as_deref(),
            (receives + SEND_SLOTS).max(64),
        )?;
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
            rx: Slab::new(receives * packet),
            tx: Slab::new(SEND_SLOTS * packet),
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
            }),
            sleepers: AtomicU32::new(0),
            generation: AtomicU32::new(0),
            wake,
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
            link.post_receive(st, i)?;
        }
        Ok(link)
    }

    /// What was opened (provider, interface, limits), for logs.
    pub(crate) fn description(&self) -> &str {
        &self.ep.description
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

    /// How many polls took completions so far: taken before a last poll
    /// and passed to [`sleep`](Self::sleep), so that a completion another
    /// thread takes in between is not slept through.
    pub(crate) fn generation(&self) -> u32 {
        self.generation.load(SeqCst)
    }

    /// Sleeps until a completion may be waiting, another thread's poll
    /// took one since `token` (see [`generation`](Self::generation)), or
    /// `timeout`; returns whether something may have arrived (false: the
    /// time ran out quietly).
    pub(crate) fn sleep(&self, token: u32, timeout: Duration) -> bool {
        let Some(fd) = self.ep.wait_fd() else {
            // No descriptor: a short nap instead.
            std::thread::sleep(timeout.min(Duration::from_micros(50)));
            return true;
        };
        self.sleepers.fetch_add(1, SeqCst);
        if self.generation.load(SeqCst) != token {
            // Another thread's poll took completions since the token.
            self.sleepers.fetch_sub(1, SeqCst);
            return true;
        }
        // The provider may have work only a poll does (a connection being
        // made to a peer that is not polling yet): then sleep briefly, so
        // that a rank waiting on such a peer does not spin.
        let (timeout, quiet) = if self.ep.may_sleep() {
            (timeout, true)
        } else {
            (timeout.min(PENDING_NAP), false)
        };
        let mut fds = [
            nix::libc::pollfd {
                fd,
                events: nix::libc::POLLIN,
                revents: 0,
            },
            nix::libc::pollfd {
                fd: self.wake.as_raw_fd(),
                events: nix::libc::POLLIN,
                revents: 0,
            },
        ];
        let ts = nix::libc::timespec {
            tv_sec: timeout.as_secs().min(i32::MAX as u64) as nix::libc::time_t,
            tv_nsec: timeout.subsec_nanos() as nix::libc::c_long,
        };
        // SAFETY: two valid pollfds, a valid timespec, no signal mask.
        let n = unsafe { nix::libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        self.sleepers.fetch_sub(1, SeqCst);
        if fds[1].revents != 0 {
            let mut count = [0u8; 8];
            // SAFETY: reads 8 bytes into `count` from our eventfd (non-blocking).
            unsafe { nix::libc::read(self.wake.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
        }
        n != 0 || !quiet
    }

    /// Whether operations of this link wait on the provider: sends or
    /// direct transfers not yet complete, or anything it refused for now.
    /// Only polls move them.
    ///
    /// # Safety
    /// Not concurrently with the data path.
    #[inline]
    pub(crate) unsafe fn in_flight(&self) -> bool {
        // SAFETY: the caller's contract.
        let st = unsafe { &*self.state.get() };
        st.free_sends.len() < SEND_SLOTS
            || st.free_direct.len() < st.direct.len()
            || !st.backlog.is_empty()
            || !st.to_repost.is_empty()
            || !st.owing.is_empty()
            || !st.direct_retry.is_empty()
    }

    /// Wakes the threads sleeping in [`sleep`](Self::sleep): a poll took
    /// completions, possibly one a sleeper waits for. One atomic load when
    /// nobody sleeps.
    fn wake_sleepers(&self) {
        if self.sleepers.load(SeqCst) > 0 {
            let one = 1u64.to_ne_bytes();
            // SAFETY: writes 8 bytes to our eventfd.
            unsafe { nix::libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) };
        }
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

    fn post_receive(&self, st: &mut State, i: usize) -> Result<(), Error> {
        // SAFETY: the buffer and context belong to receive `i`, which is
        // not posted (it just completed, or was never posted); both live
        // until the endpoint is closed.
        let posted = unsafe {
            self.ep.recv(
                self.rx_buf(i),
                self.packet,
                0,
                PACKET_IGNORE,
                self.context(i),
            )
        }?;
        if posted == Posted::Busy {
            st.to_repost.push(i);
        }
        Ok(())
    }

    fn tag(&self, owed: u32, flags: u64) -> u64 {
        self.me as u64 | (u64::from(owed) & CREDITS_MASK) << CREDITS_SHIFT | flags
    }

    /// Sends one packet of `len` bytes written by `fill`, if `peer` has a
    /// credit (else returns false without running `fill`). Once `fill` has
    /// run the packet is taken: if the provider refuses it for now, it
    /// waits in the backlog.
    fn send_packet(&self, peer: usize, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        // SAFETY: data path (see the Sync impl).
        let st = unsafe { &mut *self.state.get() };
        let Some(p) = st.peers.get(peer).copied().flatten() else {
            return false;
        };
        if p.credits == 0 || len > self.packet {
            return false;
        }
        if !st.backlog.is_empty() {
            self.flush_backlog(st);
            if !st.backlog.is_empty() {
                return false;
            }
        }
        if len <= self.ep.inject_size().min(STACK_INJECT) {
            let mut bytes = [0u8; STACK_INJECT];
            fill(&mut bytes[..len]);
            if !self.post(st, peer, &bytes[..len]) {
                st.backlog.push_back((peer, bytes[..len].to_vec()));
            }
        } else {
            let Some(slot) = st.free_sends.pop() else {
                return false;
            };
            // SAFETY: send slot `slot` is taken: nothing else reads or writes it.
            let buf = unsafe { std::slice::from_raw_parts_mut(self.tx_buf(slot), len) };
            fill(buf);
            if !self.send_slot(st, peer, slot, len) {
                st.backlog.push_back((peer, buf.to_vec()));
                st.free_sends.push(slot);
            }
        }
        st.peers[peer].as_mut().expect("checked above").credits -= 1;
        true
    }

    /// Posts one packet to `peer` (its credit already taken): injected
    /// when small, else copied into a free send slot. False when the
    /// provider or the send slots have no room now.
    fn post(&self, st: &mut State, peer: usize, bytes: &[u8]) -> bool {
        if bytes.len() <= self.ep.inject_size() {
            let p = st.peers[peer].expect("a fabric peer");
            return self.posted(st, peer, self.ep.inject(bytes, p.addr, self.tag(p.owed, 0)));
        }
        let Some(slot) = st.free_sends.pop() else {
            return false;
        };
        // SAFETY: the slot is taken and `bytes` (a backlog entry) lies elsewhere.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.tx_buf(slot), bytes.len()) };
        if !self.send_slot(st, peer, slot, bytes.len()) {
            st.free_sends.push(slot);
            return false;
        }
        true
    }

    /// Sends the first `len` bytes of taken send slot `slot` to `peer`,
    /// piggybacking the credits owed to it. On success the slot comes back
    /// with the send's completion; on false (no room now) it stays the
    /// caller's.
    fn send_slot(&self, st: &mut State, peer: usize, slot: usize, len: usize) -> bool {
        let p = st.peers[peer].expect("a fabric peer");
        // SAFETY: the slot and its context stay valid and untouched until
        // the send's completion returns the slot.
        let outcome = unsafe {
            self.ep.send(
                self.tx_buf(slot),
                len,
                p.addr,
                self.tag(p.owed, 0),
                self.context(self.receives + slot),
            )
        };
        self.posted(st, peer, outcome)
    }

    /// What posting a packet to `peer` did: taken (its owed credits went
    /// with it), refused for now, or a failure that ends this rank.
    fn posted(&self, st: &mut State, peer: usize, outcome: Result<Posted, Error>) -> bool {
        match outcome {
            Ok(Posted::Yes) => {
                st.peers[peer].as_mut().expect("a fabric peer").owed = 0;
                true
            }
            Ok(Posted::Busy) => false,
            Err(e) => fatal(self.me, &format!("sending to rank {peer}: {e}")),
        }
    }

    /// Posts backlogged packets, in order, while the provider takes them.
    fn flush_backlog(&self, st: &mut State) {
        while let Some((peer, bytes)) = st.backlog.pop_front() {
            if !self.post(st, peer, &bytes) {
                st.backlog.push_front((peer, bytes));
                return;
            }
        }
    }

    /// Returns the credits owed to `peer` in a message of their own.
    fn return_credits(&self, st: &mut State, peer: usize) {
        let Some(p) = st.peers[peer].as_mut() else {
            return;
        };
        if p.owed == 0 {
            return;
        }
        match self.ep.inject(&[], p.addr, self.tag(p.owed, CREDIT_ONLY)) {
            Ok(Posted::Yes) => p.owed = 0,
            Ok(Posted::Busy) => {
                if !st.owing.contains(&peer) {
                    st.owing.push(peer);
                }
            }
            // The peer is gone (finalized and closed, or failed: then the
            // launcher ends the job): its credits no longer matter.
            Err(_) => p.owed = 0,
        }
    }

    /// A new direct operation's index and its context pointer.
    fn new_direct(st: &mut State, token: u64) -> (usize, *mut c_void) {
        let index = st.free_direct.pop().unwrap_or_else(|| {
            st.direct.push(None);
            st.direct.len() - 1
        });
        let mut op = Box::new(DirectOp {
            context: OpContext {
                provider: [0; CONTEXT_BYTES],
                slot: DIRECT_BASE + index,
            },
            token,
            retry: None,
        });
        let ctx = std::ptr::addr_of_mut!(op.context).cast();
        st.direct[index] = Some(op);
        (index, ctx)
    }

    /// Ends direct operation `index` with `outcome`.
    fn finish_direct(st: &mut State, index: usize, outcome: Result<usize, Error>) {
        if let Some(op) = st.direct.get_mut(index).and_then(Option::take) {
            st.direct_done.push((op.token, outcome));
            st.free_direct.push(index);
        }
    }

    /// Posts direct send `index` (again); false when the provider refuses
    /// it for now.
    fn post_direct(&self, st: &mut State, index: usize) -> bool {
        let Some(op) = st.direct[index].as_mut() else {
            return true;
        };
        let Some((addr, tag, buf, len)) = op.retry else {
            return true;
        };
        let ctx = std::ptr::addr_of_mut!(op.context).cast();
        // SAFETY: the caller of `post_direct_send` keeps the buffer
        // readable until the completion; the boxed context stays put.
        match unsafe { self.ep.send(buf, len, addr, tag, ctx) } {
            Ok(Posted::Yes) => {
                op.retry = None;
                true
            }
            Ok(Posted::Busy) => false,
            Err(e) => {
                Self::finish_direct(st, index, Err(e));
                true
            }
        }
    }

    /// Retries what the provider refused earlier.
    fn retry_refused(&self, st: &mut State) {
        for i in std::mem::take(&mut st.to_repost) {
            if let Err(e) = self.post_receive(st, i) {
                fatal(self.me, &e.to_string());
            }
        }
        for peer in std::mem::take(&mut st.owing) {
            self.return_credits(st, peer);
        }
        self.flush_backlog(st);
        while let Some(&index) = st.direct_retry.front() {
            if !self.post_direct(st, index) {
                break;
            }
            st.direct_retry.pop_front();
        }
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
        let mut handled = 0;
        let mut completions = 0;
        let mut done = [Completion {
            context: std::ptr::null_mut(),
            flags: 0,
            len: 0,
            tag: 0,
        }; POLL_MAX];
        {
            // SAFETY: data path; no other reference to the state is live.
            let st = unsafe { &mut *self.state.get() };
            if !st.to_repost.is_empty()
                || !st.owing.is_empty()
                || !st.backlog.is_empty()
                || !st.direct_retry.is_empty()
            {
                self.retry_refused(st);
            }
        }
        loop {
            let n = match self.ep.poll(&mut done) {
                Ok(n) => n,
                Err(failed) => {
                    // SAFETY: every context we post is one of ours.
                    let slot = (!failed.context.is_null())
                        .then(|| unsafe { (*failed.context.cast::<OpContext>()).slot });
                    match slot {
                        Some(s) if s >= DIRECT_BASE => {
                            // SAFETY: as above.
                            let st = unsafe { &mut *self.state.get() };
                            let e = Error::Fabric {
                                what: "a direct transfer",
                                reason: failed.text,
                            };
                            Self::finish_direct(st, s - DIRECT_BASE, Err(e));
                            continue;
                        }
                        // A send failed: its peer is gone (the launcher
                        // ends the job) or the link is; free the slot.
                        Some(s) if s >= SEND_BASE => {
                            // SAFETY: as above.
                            unsafe { &mut *self.state.get() }
                                .free_sends
                                .push(s - SEND_BASE);
                            continue;
                        }
                        None => continue,
                        Some(_) => fatal(self.me, &format!("a receive failed: {}", failed.text)),
                    }
                }
            };
            if n == 0 {
                break;
            }
            completions += n;
            for c in &done[..n] {
                // SAFETY: every context we post is one of ours.
                let slot = unsafe { (*c.context.cast::<OpContext>()).slot };
                if slot >= DIRECT_BASE {
                    // SAFETY: data path; no other reference is live.
                    let st = unsafe { &mut *self.state.get() };
                    Self::finish_direct(st, slot - DIRECT_BASE, Ok(c.len as usize));
                    continue;
                }
                if slot >= SEND_BASE {
                    // SAFETY: data path; no other reference is live.
                    unsafe { &mut *self.state.get() }
                        .free_sends
                        .push(slot - SEND_BASE);
                    continue;
                }
                let from = (c.tag & RANK_MASK) as usize;
                let returned = ((c.tag >> CREDITS_SHIFT) & CREDITS_MASK) as u32;
                let has_payload = c.tag & CREDIT_ONLY == 0;
                {
                    // SAFETY: as above.
                    let st = unsafe { &mut *self.state.get() };
                    let Some(Some(p)) = st.peers.get_mut(from) else {
                        fatal(self.me, &format!("a packet from unknown rank {from}"));
                    };
                    p.credits += returned;
                }
                if has_payload {
                    // SAFETY: the receive completed: the provider wrote
                    // `len` bytes and no longer touches the buffer until
                    // it is posted again below.
                    let bytes =
                        unsafe { std::slice::from_raw_parts(self.rx_buf(slot), c.len as usize) };
                    sink(from, bytes);
                    handled += 1;
                }
                // SAFETY: the sink has returned; nothing else holds the state.
                let st = unsafe { &mut *self.state.get() };
                if let Err(e) = self.post_receive(st, slot) {
                    fatal(self.me, &e.to_string());
                }
                if has_payload {
                    let p = st.peers[from].as_mut().expect("checked above");
                    p.owed += 1;
                    if p.owed >= self.credits / 2 {
                        self.return_credits(st, from);
                    }
                }
            }
            if n < POLL_MAX {
                break;
            }
        }
        if completions > 0 {
            self.generation.fetch_add(1, SeqCst);
            self.wake_sleepers();
        }
        handled
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
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        let key = st.next_key & CREDITS_MASK;
        st.next_key = st.next_key.wrapping_add(1);
        let tag = DIRECT | key << CREDITS_SHIFT | peer as u64;
        let (index, ctx) = Self::new_direct(st, token);
        // SAFETY: the caller keeps the buffer writable until the completion;
        // the boxed context stays put until then.
        match unsafe { self.ep.recv(buf, len, tag, 0, ctx) } {
            Ok(Posted::Yes) => Ok(key),
            outcome => {
                st.direct[index] = None;
                st.free_direct.push(index);
                Err(outcome.err().unwrap_or_else(|| Error::Fabric {
                    what: "fi_trecv",
                    reason: "the provider's receive queue is full".into(),
                }))
            }
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
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        let Some(p) = st.peers.get(peer).copied().flatten() else {
            return Err(Error::Unsupported(format!(
                "rank {peer} is not on the fabric"
            )));
        };
        let tag = DIRECT | (key & CREDITS_MASK) << CREDITS_SHIFT | self.me as u64;
        let (index, _) = Self::new_direct(st, token);
        if let Some(op) = st.direct[index].as_mut() {
            op.retry = Some((p.addr, tag, buf, len));
        }
        if !st.direct_retry.is_empty() || !self.post_direct(st, index) {
            st.direct_retry.push_back(index);
        }
        Ok(())
    }

    unsafe fn take_direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        if st.direct_done.is_empty() {
            return;
        }
        let finished = std::mem::take(&mut st.direct_done);
        for (token, outcome) in finished {
            done(token, outcome);
        }
    }

    fn wait_token(&self) -> u32 {
        self.generation()
    }

    fn wait(&self, token: u32, timeout: Duration) {
        self.sleep(token, timeout);
    }

    fn wake(&self, _peer: usize) {}
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
