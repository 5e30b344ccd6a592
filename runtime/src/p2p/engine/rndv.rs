//! Rendezvous: a matched Rts is read straight from the sender's memory
//! (CMA; between hosts, an RMA read: `rma.rs`), copied by both sides at
//! once (split), moved by the transport into the posted buffer (direct),
//! or streamed by the sender in Data packets after a Cts.
//!
//! Non-contiguous buffers (see `typed.rs`): a receive into a typed layout
//! reads with CMA through local iovecs built from the layout's segments,
//! `SCATTER_MAX` of them per system call; a sender with a typed layout
//! flags its Rts with `FLAG_PACKED`, since the receiver cannot read a
//! layout it does not know, and packs each Data packet straight from its
//! segments into the ring.

use super::{slice_mut_or_empty, slice_or_empty, Engine};
use std::sync::Arc;

use crate::p2p::protocol::{self, Kind, MsgHeader, FLAG_DIRECT, FLAG_IPC, FLAG_PACKED, FLAG_RMA};
use crate::p2p::request::{Pending, ReqId, ReqState, SendState};
use crate::status::Status;
use crate::transport::Caps;

/// Most local iovecs gathered per CMA call into a non-contiguous receive
/// (`process_vm_readv` takes at most `IOV_MAX` = 1024).
const SCATTER_MAX: usize = 1024;

/// A receive whose second part the sender is writing.
#[derive(Debug)]
pub(super) struct Split {
    req: ReqId,
    buf: *mut u8,
    offset: usize,
    len: usize,
    /// The sender's pid and buffer address (to read the part ourselves if its write fails).
    pid: u32,
    addr: u64,
}

// SAFETY: `buf` is only written by the engine under the runtime's lock while
// the receive's owner keeps the buffer alive (see `Request`).
unsafe impl Send for Split {}

impl Engine {
    /// Sender side of a split copy: write our part into the receiver.
    pub(super) fn on_split(&mut self, peer: usize, req: protocol::SplitReq) {
        let failed = match self.reqs.get(ReqId(req.send_id)) {
            // A typed send offers no address (its Rts says so): never split.
            Some(ReqState::Pending(Pending::Send {
                buf,
                len,
                typed: None,
                ..
            })) => {
                let (off, n) = (req.offset as usize, req.len as usize);
                if off.checked_add(n).is_none_or(|end| end > *len) {
                    true
                } else {
                    // SAFETY: the send's buffer stays valid until the request completes.
                    let part = unsafe { slice_or_empty(buf.add(off), n) };
                    let to = req.addr.wrapping_add(req.offset);
                    self.transport
                        .write_remote(peer, req.pid, to, part)
                        .is_err()
                }
            }
            _ => true,
        };
        let wrote = protocol::ctrl_flagged(Kind::Wrote, u8::from(failed), req.send_id, req.recv_id);
        self.push(peer, &[&wrote]);
    }

    /// Receiver side: the sender's part is in (or it failed: read it ourselves).
    pub(super) fn on_wrote(&mut self, peer: usize, failed: bool, send_id: u64, req: ReqId) {
        let Some(pos) = self.splits.iter().position(|s| s.req == req) else {
            return;
        };
        let split = self.splits.swap_remove(pos);
        let mut result = Ok(());
        if failed {
            // SAFETY: the receive buffer is valid for the split's range.
            let dst = unsafe { slice_mut_or_empty(split.buf.add(split.offset), split.len) };
            result =
                self.transport
                    .read_remote(peer, split.pid, split.addr + split.offset as u64, dst);
        }
        self.push(peer, &[&protocol::ctrl(Kind::Fin, send_id, 0)]);
        match result {
            Ok(()) => {
                self.set_received_all(req);
                self.finish_recv(req);
            }
            Err(e) => self.reqs.fail(req, e),
        }
    }

    /// Streamed bytes for receive `req` (in order).
    pub(super) fn on_data(&mut self, req: ReqId, bytes: &[u8]) {
        let offset = match self.reqs.get(req) {
            Some(ReqState::Pending(Pending::Recv { received, .. })) => *received,
            _ => return,
        };
        self.write_recv(req, offset, bytes);
        if let Some(&ReqState::Pending(Pending::Recv {
            buf,
            cap,
            matched: Some((_, _, total)),
            received,
            ..
        })) = self.reqs.get(req)
        {
            let done = received >= total;
            if !self.device_alias.is_empty() {
                self.stream_to_device(req, buf, received.min(cap), done);
            }
            if done {
                self.finish_recv(req);
            }
        }
    }

    /// A streamed receive that stands for a device buffer: each full chunk
    /// that arrived (and the rest at the end) goes on to the device now,
    /// overlapping the rest of the transfer; once all is there the stage
    /// has nothing to copy.
    fn stream_to_device(&mut self, req: ReqId, tmp: *mut u8, arrived: usize, done: bool) {
        let chunk = self.pipe_chunk;
        let Some(alias) = self.device_alias.get_mut(&req.0) else {
            return;
        };
        let n = arrived.saturating_sub(alias.copied);
        if n == 0 || (n < chunk && !done) {
            return;
        }
        let (dst, src) = (
            (alias.dst + alias.copied) as *mut u8,
            tmp.wrapping_add(alias.copied),
        );
        // SAFETY: `tmp` holds `arrived` received bytes; the device buffer
        // behind the receive has room for its capacity.
        match unsafe { crate::mem::cuda::copy(dst, src, n) } {
            Ok(()) => {
                alias.copied = arrived;
                if done {
                    alias
                        .delivered
                        .store(true, std::sync::atomic::Ordering::Release);
                }
            }
            Err(e) => {
                self.device_alias.remove(&req.0);
                self.reqs.fail(req, e);
            }
        }
    }

    /// Pushes Data packets for streaming sends while the peer has room:
    /// copied from a contiguous buffer, packed straight from a typed one.
    pub(super) fn pump_streams(&mut self) -> bool {
        if self.streams.is_empty() {
            return false;
        }
        let mut moved = false;
        let mut i = 0;
        while i < self.streams.len() {
            let id = self.streams[i];
            let Some(ReqState::Pending(Pending::Send {
                peer,
                buf,
                len,
                state,
                typed,
            })) = self.reqs.get_mut(id)
            else {
                self.streams.swap_remove(i);
                continue;
            };
            let (peer, len) = (*peer, *len);
            let chunk_cap = self.transport.max_packet(peer) - protocol::DATA_HEADER;
            let SendState::Streaming {
                recv_id,
                mut offset,
            } = *state
            else {
                self.streams.swap_remove(i);
                continue;
            };
            let header = protocol::data_header(recv_id);
            let mut sent = false;
            // A device send streams what has reached pinned memory so far.
            let avail = match self.pipes.get_mut(&id.0) {
                Some(pipe) => {
                    let ready = pipe.ready();
                    // Still copying: keep polling rather than sleep.
                    moved |= ready < len;
                    ready
                }
                None => len,
            };
            while offset < avail {
                let end = (offset + chunk_cap).min(avail);
                // SAFETY: `&mut self` (see the engine module docs); the
                // send's buffer stays valid until the request completes.
                let ok = unsafe {
                    match typed.as_deref_mut() {
                        None => {
                            let data = slice_or_empty(buf.add(offset), end - offset);
                            self.transport.try_send(peer, &[&header, data])
                        }
                        Some(src) => self.transport.try_send_with(
                            peer,
                            protocol::DATA_HEADER + end - offset,
                            &mut |out| {
                                let (h, payload) = out.split_at_mut(protocol::DATA_HEADER);
                                h.copy_from_slice(&header);
                                src.pack(payload);
                            },
                        ),
                    }
                };
                if !ok {
                    break;
                }
                offset = end;
                sent = true;
            }
            *state = SendState::Streaming { recv_id, offset };
            if sent {
                self.transport.wake(peer);
                moved = true;
            }
            if offset >= len {
                self.reqs.complete(id, Status::empty());
                self.pipes.remove(&id.0);
                self.streams.swap_remove(i);
            } else {
                i += 1;
            }
        }
        moved
    }

    /// A matched rendezvous: read the data directly, or ask for a stream.
    pub(super) fn rendezvous_read(&mut self, req: ReqId, peer: usize, h: &MsgHeader, desc: &[u8]) {
        let (buf, cap, typed) = match self.reqs.get(req) {
            Some(ReqState::Pending(Pending::Recv {
                buf, cap, typed, ..
            })) => (*buf, *cap, typed.is_some()),
            _ => return,
        };
        let total = h.total_len as usize;
        let n = total.min(cap);
        if h.flags & FLAG_IPC != 0 {
            self.ipc_read(req, peer, h, desc, buf, n, typed);
            return;
        }
        // A packed (typed) sender has no address to read: it streams.
        let can_read = h.flags & FLAG_PACKED == 0
            && self.prefer_cma
            && self.transport.caps().contains(Caps::REMOTE_READ)
            && self.transport.can_read_remote(peer);
        if can_read
            && !typed
            && self.split_min > 0
            && n >= self.split_min
            && self.transport.parallel_peers()
        {
            // Both sides copy at once: we read the first part, the sender writes the rest.
            let offset = (n / 2) & !63;
            let split = protocol::SplitReq {
                send_id: h.send_id,
                recv_id: req.0,
                addr: buf as u64,
                offset: offset as u64,
                len: (n - offset) as u64,
                pid: self.pid,
            };
            self.push(peer, &[&split.encode()]);
            // SAFETY: the receive buffer is valid for `cap` >= `offset` bytes.
            let dst = unsafe { slice_mut_or_empty(buf, offset) };
            let (read_pid, read_addr) = (h.pid, h.addr);
            self.splits.push(Split {
                req,
                buf,
                offset,
                len: n - offset,
                pid: read_pid,
                addr: read_addr,
            });
            if let Err(e) = self.transport.read_remote(peer, read_pid, read_addr, dst) {
                // Finish anyway when the sender reports; the error is the result.
                self.splits.retain(|s| s.req != req);
                self.push(peer, &[&protocol::ctrl(Kind::Fin, h.send_id, 0)]);
                self.reqs.fail(req, e);
            }
            return;
        }
        if can_read {
            let read = if typed {
                self.read_scattered(req, peer, h, n)
            } else {
                // SAFETY: the receive buffer is valid for `cap` >= `n` bytes.
                let dst = unsafe { slice_mut_or_empty(buf, n) };
                self.transport.read_remote(peer, h.pid, h.addr, dst).is_ok()
            };
            if read {
                self.set_received_all(req);
                self.push(peer, &[&protocol::ctrl(Kind::Fin, h.send_id, 0)]);
                self.finish_recv(req);
                return;
            }
        }
        // Between hosts: read the sender's exposed buffer over the network.
        if h.flags & FLAG_RMA != 0 && !typed && self.read_rma(req, peer, h, desc, buf, n) {
            return;
        }
        if total == 0 {
            self.push(peer, &[&protocol::ctrl(Kind::Fin, h.send_id, 0)]);
            self.finish_recv(req);
            return;
        }
        // The network moves it straight into the buffer: one copy. Not for
        // a typed side (its layout is not one run) or a truncated receive
        // (the stream keeps what fits).
        if !typed && h.flags & FLAG_PACKED == 0 && total <= cap && self.transport.direct(peer) {
            // SAFETY: `&mut self`; the receive's buffer stays writable
            // until the request completes, which only the direct
            // transfer's completion does.
            let key = unsafe { self.transport.post_direct_recv(peer, buf, total, req.0) };
            if let Ok(key) = key {
                self.directs += 1;
                let cts = protocol::ctrl_flagged(Kind::Cts, FLAG_DIRECT, h.send_id, key);
                self.push(peer, &[&cts]);
                return;
            }
        }
        self.push(peer, &[&protocol::ctrl(Kind::Cts, h.send_id, req.0)]);
    }

    /// A matched Rts of device memory: copy `n` bytes out of the sender's
    /// buffer, mapped by CUDA IPC, into the receive (a typed one through a
    /// host temporary), then Fin. A failure fails the receive; the send
    /// completes either way.
    #[allow(clippy::too_many_arguments)] // the receive's state, unpacked by the caller
    fn ipc_read(
        &mut self,
        req: ReqId,
        peer: usize,
        h: &MsgHeader,
        desc: &[u8],
        buf: *mut u8,
        n: usize,
        typed: bool,
    ) {
        let copied = match crate::mem::cuda::IpcDesc::decode(desc) {
            None => Err(crate::error::Error::State(format!(
                "rank {peer} sent device memory without its IPC description"
            ))),
            Some(d) => crate::mem::cuda::ipc::open(h.pid, &d).and_then(|src| {
                if let Some(alias) = self.device_alias.remove(&req.0) {
                    // SAFETY: the device buffer behind the staged receive
                    // has room for `cap` >= `n` bytes.
                    unsafe { crate::mem::cuda::copy(alias.dst as *mut u8, src, n) }?;
                    alias
                        .delivered
                        .store(true, std::sync::atomic::Ordering::Release);
                    Ok(())
                } else if typed {
                    let mut tmp = vec![0u8; n];
                    // SAFETY: the mapping holds the sender's `total` >= `n` bytes.
                    unsafe { crate::mem::cuda::copy_from_device(&mut tmp, src) }?;
                    self.write_recv(req, 0, &tmp);
                    Ok(())
                } else {
                    // SAFETY: the receive buffer has room for `cap` >= `n`
                    // bytes; the mapping holds the sender's bytes.
                    unsafe { crate::mem::cuda::copy(buf, src, n) }
                }
            }),
        };
        self.push(peer, &[&protocol::ctrl(Kind::Fin, h.send_id, 0)]);
        match copied {
            Ok(()) => {
                self.set_received_all(req);
                self.finish_recv(req);
            }
            Err(e) => self.reqs.fail(req, e),
        }
    }

    /// Finishes the direct transfers the transport reports done; whether
    /// there were any.
    pub(super) fn reap_direct(&mut self) -> bool {
        let before = self.directs;
        let transport: *const dyn crate::transport::Transport = Arc::as_ptr(&self.transport);
        // SAFETY: as in `progress`: the transport outlives this call and
        // is not replaced.
        let transport = unsafe { &*transport };
        // SAFETY: `&mut self` (see the module docs).
        unsafe {
            transport.take_direct_done(&mut |token, outcome| {
                self.directs -= 1;
                let id = ReqId(token);
                if self.read_done(id, outcome.is_err()) == Some(true) {
                    // The sender streams it instead.
                    return;
                }
                let is_recv = matches!(
                    self.reqs.get(id),
                    Some(ReqState::Pending(Pending::Recv { .. }))
                );
                match outcome {
                    Err(e) => self.reqs.fail(id, e),
                    Ok(_) if is_recv => {
                        self.set_received_all(id);
                        self.finish_recv(id);
                    }
                    Ok(_) => self.reqs.complete(id, Status::empty()),
                }
            })
        };
        self.directs != before
    }

    /// Reads the first `n` bytes of a rendezvous message with CMA straight
    /// into a typed receive's layout: the local iovecs are the layout's
    /// runs, at most [`SCATTER_MAX`] per call. Returns false if a read
    /// failed (the caller then asks for a stream, which starts over).
    ///
    /// Why CMA rather than a Cts: it keeps the single copy, and what the
    /// protocol choice asked for: when ranks are oversubscribed
    /// (`OXMPI_RNDV_PROTOCOL=auto` then prefers CMA) the receiver finishes
    /// alone, without waiting for a descheduled sender to stream. The
    /// kernel scatters the bytes; building the iovecs walks the segments
    /// once, as unpacking would.
    fn read_scattered(&mut self, req: ReqId, peer: usize, h: &MsgHeader, n: usize) -> bool {
        let Some(ReqState::Pending(Pending::Recv {
            typed: Some(dst), ..
        })) = self.reqs.get_mut(req)
        else {
            return false;
        };
        let iov = &mut self.iov;
        let mut done = 0;
        while done < n {
            iov.clear();
            let mut batch = 0;
            while iov.len() < SCATTER_MAX {
                let Some((ptr, len)) = dst.next_run(n - done - batch) else {
                    break;
                };
                iov.push((ptr as usize, len));
                batch += len;
            }
            if batch == 0 {
                return false;
            }
            let from = h.addr.wrapping_add(done as u64);
            // SAFETY: the runs are the receive's layout, which its owner
            // keeps writable until the request completes.
            if unsafe { self.transport.read_remote_scatter(peer, h.pid, from, iov) }.is_err() {
                return false;
            }
            done += batch;
        }
        true
    }

    /// Records a receive's whole message as written (single-copy paths).
    fn set_received_all(&mut self, req: ReqId) {
        if let Some(ReqState::Pending(Pending::Recv {
            received,
            matched: Some((_, _, total)),
            ..
        })) = self.reqs.get_mut(req)
        {
            *received = *total;
        }
    }
}
