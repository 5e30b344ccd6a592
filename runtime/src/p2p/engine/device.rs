//! Sends of device memory that need no host bounce: by CUDA IPC to a rank
//! of this host (an Rts carrying the allocation's IPC description; the
//! receiver copies and answers Fin), or through the pinned-memory pipeline
//! (an Rts without an address; the engine streams what has reached host
//! memory). Also the device side of staged receives ([`DeviceAlias`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::Engine;
use crate::error::Error;
use crate::mem::cuda::{self, DevicePipe};
use crate::p2p::protocol::{self, Kind, MsgHeader};
use crate::p2p::request::{ReqId, ReqState, Requests};

/// The device buffer a staged receive stands for: a message that arrives
/// by CUDA IPC is copied there directly (device to device), a streamed one
/// chunk by chunk as it arrives, and `delivered` tells the stage not to
/// copy its host temporary over it.
#[derive(Debug, Clone)]
pub struct DeviceAlias {
    /// The device address of the receive's first byte (contiguous).
    pub dst: usize,
    /// Set once the whole message is in `dst`.
    pub delivered: Arc<std::sync::atomic::AtomicBool>,
    /// Leading bytes of a streamed message already copied to `dst`.
    pub copied: usize,
}

/// Drops the entries of `map` whose requests are no longer pending, once
/// it holds `limit` (side tables of requests that may end without the
/// code that removes them: a cancel, a failed peer).
pub(super) fn prune<V>(map: &mut HashMap<u64, V>, reqs: &Requests, limit: usize) {
    if map.len() >= limit {
        map.retain(|&r, _| matches!(reqs.get(ReqId(r)), Some(ReqState::Pending(_))));
    }
}

impl Engine {
    /// Sends device messages of at least `bytes` to ranks of this host by
    /// CUDA IPC (`None`: never).
    pub fn set_ipc_min(&mut self, bytes: Option<usize>) {
        self.ipc_min = bytes.unwrap_or(usize::MAX);
    }

    /// Device messages of at least `min` bytes that do not go by CUDA IPC
    /// are staged in chunks of `chunk` bytes, each sent as it arrives.
    pub fn set_pipeline(&mut self, min: usize, chunk: usize) {
        self.pipe_min = min;
        self.pipe_chunk = chunk;
    }

    /// Starts a send of `len` bytes of device memory at `buf` to world rank
    /// `peer` without a host bounce when this size and peer allow it: by
    /// CUDA IPC (another rank of this host, at least the IPC minimum; a
    /// buffer that cannot be exported falls through), else through the
    /// pinned pipeline (at least its minimum). `Ok(None)`: neither applies,
    /// the caller stages the data itself.
    ///
    /// # Safety
    /// `buf..buf+len` is device memory, unchanged and valid until the
    /// request completes.
    pub unsafe fn start_send_device(
        &mut self,
        peer: usize,
        context: u32,
        source: i32,
        tag: i32,
        buf: *const u8,
        len: usize,
    ) -> Result<Option<ReqId>, Error> {
        let envelope = (peer, context, source, tag, len);
        if len >= self.ipc_min && peer != self.me && self.transport.same_host(peer) {
            if let Ok(desc) = cuda::ipc::export(buf, len) {
                let id = self.awaiting_fin(peer, buf, len);
                self.push_rts(envelope, id, protocol::FLAG_IPC, buf as u64, &desc.encode());
                return Ok(Some(id));
            }
        }
        if len < self.pipe_min || peer == self.me {
            return Ok(None);
        }
        // SAFETY: the caller's contract.
        let pipe = unsafe { DevicePipe::start(buf, len, self.pipe_chunk) }?;
        let id = self.awaiting_fin(peer, pipe.host(), len);
        // Entries of sends that ended another way (a failed peer).
        prune(&mut self.pipes, &self.reqs, 64);
        self.pipes.insert(id.0, pipe);
        // No address: the receiver asks for a stream, which sends what the
        // pipe has made ready.
        self.push_rts(envelope, id, protocol::FLAG_PACKED, 0, &[]);
        Ok(Some(id))
    }

    /// Pushes the Rts of send `id` with `flags`, `addr` and `extra` bytes
    /// after the header.
    fn push_rts(
        &mut self,
        (peer, context, source, tag, len): (usize, u32, i32, i32, usize),
        id: ReqId,
        flags: u8,
        addr: u64,
        extra: &[u8],
    ) {
        let header = MsgHeader {
            kind: Kind::Rts,
            flags,
            context,
            source,
            tag,
            total_len: len as u64,
            send_id: id.0,
            addr,
            pid: self.pid,
        };
        let head = &header.encode()[..header.len()];
        if extra.is_empty() {
            self.push(peer, &[head]);
        } else {
            self.push(peer, &[head, extra]);
        }
    }
}
