//! What the point-to-point engine needs from a transport. Each transport
//! (shared memory, libfabric; CUDA IPC later) is one implementation, and
//! each peer gets one by locality (`select.rs`, `router/`); capabilities,
//! size classes and eager limits are data, so the engine's send path does
//! not branch on transport names.

use std::time::Duration;

use crate::error::Error;

bitflags::bitflags! {
    /// What a transport can do beyond moving packets.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) struct Caps: u32 {
        /// The receiver can read the sender's buffer directly (single copy:
        /// CMA for shared memory, fi_read for libfabric).
        const REMOTE_READ = 1;
        /// Buffers may live in GPU memory (CUDA IPC).
        const DEVICE_MEMORY = 2;
        /// Reaches ranks on other hosts.
        const INTER_HOST = 4;
    }
}

/// Where a buffer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // part of the transport contract; no transport takes device buffers yet
pub(crate) enum MemKind {
    /// Ordinary host memory.
    Host,
    /// CUDA device memory.
    CudaDevice,
}

/// A sender's buffer as its receiver reads it over the network (RMA):
/// the address to read at and the key of its registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RemoteBuf {
    /// Where the buffer starts, as the reader names it (a virtual address,
    /// or an offset into the registration, as the provider wants).
    pub(crate) addr: u64,
    /// The registration's key.
    pub(crate) key: u64,
}

/// A packet transport between this rank and some peers (world ranks).
///
/// The data path ([`try_send`](Transport::try_send),
/// [`try_send_with`](Transport::try_send_with) and
/// [`poll`](Transport::poll)) is `unsafe`: a transport may keep
/// single-producer / single-consumer queue ends without locks, so its
/// callers must never run those two methods concurrently from different
/// threads (nesting on one thread, a send from inside `poll`'s sink, is
/// allowed). The engine calls them only while holding the runtime's lock.
/// Everything else may be called from any thread at any time.
pub(crate) trait Transport: Send + Sync {
    /// Short name for logs and `oxrun --info`.
    #[allow(dead_code)] // part of the contract; nothing logs it yet
    fn name(&self) -> &'static str;
    /// Capabilities.
    fn caps(&self) -> Caps;
    /// Whether `peer` is reachable through this transport.
    #[allow(dead_code)] // part of the contract; select.rs decides reachability today
    fn reaches(&self, peer: usize) -> bool;
    /// Largest packet (header and payload together) one send to `peer` carries.
    fn max_packet(&self, peer: usize) -> usize;
    /// Sends one packet gathered from `parts`, or returns false when the
    /// peer's queue is full (nothing was sent; try again later).
    ///
    /// # Safety
    /// Not concurrently with another `try_send` or `poll` on this transport.
    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool;
    /// Sends one packet of `len` bytes (at most
    /// [`max_packet`](Transport::max_packet)) written in place by `fill`,
    /// which gets exactly `len` bytes of the transport's own memory (a
    /// ring cell): what lets a sender pack a non-contiguous buffer
    /// straight into the cell. Returns false when the peer's queue is
    /// full; `fill` then has not run. `fill` runs at most once.
    ///
    /// # Safety
    /// Not concurrently with another `try_send`, `try_send_with` or `poll`
    /// on this transport.
    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool;
    /// Hands every packet that has arrived to `sink(peer, bytes)`; returns
    /// how many were handled.
    ///
    /// # Safety
    /// Not concurrently with another `try_send` or `poll` on this transport.
    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize;
    /// Asks the [`Transport::poll`] in progress (the caller's sink calls
    /// this) to return after the packet it is handing over, leaving later
    /// packets where they are: a blocking receive that got its message
    /// returns, and the next receive can take its message straight from
    /// the ring instead of through the unexpected queue. A hint: a
    /// transport may go on.
    fn stop_poll(&self) {}
    /// Whether this rank may read `peer`'s memory directly.
    fn can_read_remote(&self, peer: usize) -> bool;
    /// Copies `dst.len()` bytes at `addr` in process `pid` (rank `peer`) into `dst`.
    fn read_remote(&self, peer: usize, pid: u32, addr: u64, dst: &mut [u8]) -> Result<(), Error>;
    /// Copies the `local` runs' total length from `addr` in process `pid`
    /// (rank `peer`) into the runs `(address, len)` of this process, in
    /// order: a single-copy read into a non-contiguous buffer.
    ///
    /// # Safety
    /// Every run is valid for writes of its length, and none overlaps
    /// memory Rust code holds a reference to.
    unsafe fn read_remote_scatter(
        &self,
        peer: usize,
        pid: u32,
        addr: u64,
        local: &[(usize, usize)],
    ) -> Result<(), Error> {
        let _ = (pid, addr, local);
        Err(Error::Unsupported(format!(
            "no scattered reads from rank {peer}"
        )))
    }
    /// Copies `src` into process `pid` (rank `peer`) at `addr`: the other
    /// half of a cooperative single copy. Same permission as reading.
    fn write_remote(&self, peer: usize, pid: u32, addr: u64, src: &[u8]) -> Result<(), Error> {
        let _ = (pid, addr, src);
        Err(Error::Unsupported(format!(
            "no remote writes to rank {peer}"
        )))
    }
    /// The largest packet (header included) this transport wants an eager
    /// message to `peer` to take, when that caps the engine's own eager
    /// limit (None: no opinion). The engine subtracts its header.
    fn packet_limit(&self, peer: usize) -> Option<usize> {
        let _ = peer;
        None
    }
    /// Whether `peer` runs on this host (so CUDA IPC can reach its device
    /// memory).
    fn same_host(&self, peer: usize) -> bool {
        let _ = peer;
        false
    }
    /// Whether a bulk transfer with `peer` can move straight between the
    /// two user buffers through the transport itself (a tagged send into
    /// a posted receive: one copy, done by the network).
    fn direct(&self, peer: usize) -> bool {
        let _ = peer;
        false
    }
    /// Posts a receive of exactly `len` bytes into `buf` for a direct send
    /// from `peer`; returns the key that send must carry. Its completion is
    /// reported by [`take_direct_done`](Transport::take_direct_done) with
    /// `token`.
    ///
    /// # Safety
    /// `buf..buf+len` stays writable, and no Rust reference to it exists,
    /// until the completion is reported. Not concurrently with the data path.
    unsafe fn post_direct_recv(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<u64, Error> {
        let _ = (buf, len, token);
        Err(Error::Unsupported(format!(
            "no direct transfers with rank {peer}"
        )))
    }
    /// Sends `len` bytes at `buf` to `peer`'s direct receive `key`; its
    /// completion (the buffer may be reused) is reported with `token`.
    ///
    /// # Safety
    /// `buf..buf+len` stays readable until the completion is reported. Not
    /// concurrently with the data path.
    unsafe fn post_direct_send(
        &self,
        peer: usize,
        key: u64,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<(), Error> {
        let _ = (key, buf, len, token);
        Err(Error::Unsupported(format!(
            "no direct transfers with rank {peer}"
        )))
    }
    /// Whether a rendezvous send to `peer` should offer its buffer for
    /// the receiver to read over the network ([`expose`](Transport::expose)).
    fn offers_read(&self, peer: usize) -> bool {
        let _ = peer;
        false
    }
    /// Makes `len` bytes at `buf` readable by `peer` until
    /// [`conceal`](Transport::conceal) with the same `token`.
    ///
    /// # Safety
    /// `buf..buf+len` stays readable and unchanged until concealed. Not
    /// concurrently with the data path.
    unsafe fn expose(
        &self,
        peer: usize,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<RemoteBuf, Error> {
        let _ = (buf, len, token);
        Err(Error::Unsupported(format!(
            "no remote reads by rank {peer}"
        )))
    }
    /// Ends exposure `token` to `peer` (nothing when there is none).
    ///
    /// # Safety
    /// `peer` reads it no more. Not concurrently with the data path.
    unsafe fn conceal(&self, peer: usize, token: u64) {
        let _ = (peer, token);
    }
    /// Reads `len` bytes of `peer`'s exposed buffer `remote` into `buf`;
    /// its completion is reported by
    /// [`take_direct_done`](Transport::take_direct_done) with `token`.
    ///
    /// # Safety
    /// As [`post_direct_recv`](Transport::post_direct_recv).
    unsafe fn post_read(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        remote: RemoteBuf,
        token: u64,
    ) -> Result<(), Error> {
        let _ = (buf, len, remote, token);
        Err(Error::Unsupported(format!(
            "no remote reads from rank {peer}"
        )))
    }
    /// Hands each finished direct operation's (and read's) token and
    /// outcome (bytes moved) to `done`.
    ///
    /// # Safety
    /// Not concurrently with the data path.
    unsafe fn take_direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        let _ = done;
    }
    /// Whether packets already handed to this transport still wait on its
    /// side (refused for the moment, or not yet sent): a rank must not
    /// leave before they are out.
    ///
    /// # Safety
    /// Not concurrently with the data path.
    unsafe fn busy(&self) -> bool {
        false
    }
    /// Whether this transport's ranks have a core each (no oversubscription),
    /// so both sides of a transfer can copy at the same time.
    fn parallel_peers(&self) -> bool {
        false
    }
    /// Whether more of this host's ranks want a core right now than there
    /// are cores, so that a waiting rank should leave its core soon rather
    /// than spin (by default: whenever the ranks outnumber the cores).
    fn crowded(&self) -> bool {
        !self.parallel_peers()
    }
    /// A token to pass to [`Transport::wait`]; taken before the last poll so
    /// that a packet arriving in between is not slept through.
    fn wait_token(&self) -> u32;
    /// Sleeps until a peer signals (or `timeout`), unless the token is stale.
    fn wait(&self, token: u32, timeout: Duration);
    /// Tells `peer` that something was sent to it (or space was freed).
    fn wake(&self, peer: usize);
}
