//! Bulk transfers that move straight between user buffers, no packets:
//!
//! - direct tagged: the receiver posts a tagged receive into its buffer
//!   (`DIRECT` bit and a key in the tag, the key sent back in a Cts) and
//!   the sender sends its whole buffer into it;
//! - RMA read: the sender exposes its buffer (a registration its Rts
//!   names by address and key), the receiver reads it with `fi_read` and
//!   answers Fin, on which the sender conceals it again.
//!
//! Each operation is boxed (the provider holds its context's address) and
//! owns the registration of its local buffer, if local buffers are
//! registered; the registration is closed when the operation ends.

use std::ffi::c_void;

use super::super::endpoint::{Mr, Posted, CONTEXT_BYTES};
use super::super::mr;
use super::super::sys;
use super::{FabricLink, OpContext, State, CREDITS_MASK, CREDITS_SHIFT, DIRECT, DIRECT_BASE};
use crate::error::Error;
use crate::transport::RemoteBuf;

/// A direct operation in flight.
#[repr(C)]
pub(super) struct DirectOp {
    context: OpContext,
    token: u64,
    kind: Kind,
    peer: usize,
    len: usize,
    /// The operation, while the provider has not taken it yet.
    unposted: Option<Op>,
    /// The local buffer's registration.
    mr: Option<Mr>,
}

/// Which direct operation (for the transport log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    Recv = 1,
    Send = 2,
    Read = 4,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Recv => "tagged receive",
            Kind::Send => "tagged send",
            Kind::Read => "RMA read",
        }
    }
}

/// What a direct operation posts.
#[derive(Clone, Copy)]
enum Op {
    /// `len` bytes at `buf` to address `dest` with `tag`.
    Send {
        dest: u64,
        tag: u64,
        buf: *const u8,
        len: usize,
    },
    /// `len` bytes of peer `src`'s registration `key` at `addr` into `buf`.
    Read {
        src: u64,
        addr: u64,
        key: u64,
        buf: *mut u8,
        len: usize,
    },
}

impl FabricLink {
    /// A new direct operation's index and its context pointer.
    fn new_direct(
        st: &mut State,
        token: u64,
        (kind, peer, len): (Kind, usize, usize),
        mr: Option<Mr>,
    ) -> (usize, *mut c_void) {
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
            kind,
            peer,
            len,
            unposted: None,
            mr,
        });
        let ctx = std::ptr::addr_of_mut!(op.context).cast();
        st.direct[index] = Some(op);
        (index, ctx)
    }

    /// Removes direct operation `index`, closing its registration (the
    /// provider no longer uses it).
    fn drop_direct(&self, st: &mut State, index: usize) -> Option<Box<DirectOp>> {
        let mut op = st.direct.get_mut(index).and_then(Option::take)?;
        st.free_direct.push(index);
        if let Some(m) = op.mr.take() {
            // SAFETY: the operation completed, failed or was never posted.
            unsafe { st.reg.close(&self.ep, m) };
        }
        Some(op)
    }

    /// Ends direct operation `index` with `outcome`.
    pub(super) fn finish_direct(
        &self,
        st: &mut State,
        index: usize,
        outcome: Result<usize, Error>,
    ) {
        let Some(op) = self.drop_direct(st, index) else {
            return;
        };
        if self.debug && outcome.is_ok() {
            // The first of each kind with each peer, so that a log shows
            // which paths a job took.
            let seen = &mut st.logged[op.peer];
            if *seen & op.kind as u8 == 0 {
                *seen |= op.kind as u8;
                eprintln!(
                    "oxmpi[transport]: rank {}: first {} with rank {}: {} bytes{}",
                    self.me,
                    op.kind.name(),
                    op.peer,
                    op.len,
                    if st.reg.local() { ", registered" } else { "" }
                );
            }
        }
        st.direct_done.push((op.token, outcome));
    }

    /// Posts direct operation `index` (again); false when the provider
    /// refuses it for now.
    pub(super) fn post_direct(&self, st: &mut State, index: usize) -> bool {
        let Some(op) = st.direct[index].as_mut() else {
            return true;
        };
        let Some(what) = op.unposted else {
            return true;
        };
        let ctx = std::ptr::addr_of_mut!(op.context).cast();
        let desc = mr::desc(op.mr.as_ref());
        // SAFETY: the callers of `post_direct_send` / `post_read` keep the
        // buffer valid until the completion; the boxed context and the
        // registration stay put until then.
        let outcome = unsafe {
            match what {
                Op::Send {
                    dest,
                    tag,
                    buf,
                    len,
                } => self.ep.send(buf, len, desc, dest, tag, ctx),
                Op::Read {
                    src,
                    addr,
                    key,
                    buf,
                    len,
                } => self.ep.read(buf, len, desc, src, addr, key, ctx),
            }
        };
        match outcome {
            Ok(Posted::Yes) => {
                op.unposted = None;
                true
            }
            Ok(Posted::Busy) => false,
            Err(e) => {
                self.finish_direct(st, index, Err(e));
                true
            }
        }
    }

    /// Posts `op` as direct operation `index`, after those the provider
    /// refused before.
    fn post_in_order(&self, st: &mut State, index: usize, op: Op) {
        if let Some(d) = st.direct[index].as_mut() {
            d.unposted = Some(op);
        }
        if !st.direct_retry.is_empty() || !self.post_direct(st, index) {
            st.direct_retry.push_back(index);
        }
    }

    /// See [`Transport::post_direct_recv`](crate::transport::Transport::post_direct_recv).
    pub(super) unsafe fn direct_recv(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<u64, Error> {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        // SAFETY: the caller keeps the buffer until the completion, which
        // closes the registration.
        let mr = unsafe { st.reg.local_mr(&self.ep, buf, len, sys::FI_RECV) }?;
        let desc = mr::desc(mr.as_ref());
        let key = st.next_key & CREDITS_MASK;
        st.next_key = st.next_key.wrapping_add(1);
        let tag = DIRECT | key << CREDITS_SHIFT | peer as u64;
        let (index, ctx) = Self::new_direct(st, token, (Kind::Recv, peer, len), mr);
        // SAFETY: the caller keeps the buffer writable until the completion;
        // the boxed context and the registration stay put until then.
        match unsafe { self.ep.recv(buf, len, desc, tag, 0, ctx) } {
            Ok(Posted::Yes) => Ok(key),
            outcome => {
                self.drop_direct(st, index);
                Err(outcome.err().unwrap_or_else(|| Error::Fabric {
                    what: "fi_trecv",
                    reason: "the provider's receive queue is full".into(),
                }))
            }
        }
    }

    /// See [`Transport::post_direct_send`](crate::transport::Transport::post_direct_send).
    pub(super) unsafe fn direct_send(
        &self,
        peer: usize,
        key: u64,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        let dest = self.peer_addr(st, peer)?;
        // SAFETY: the caller keeps the buffer until the completion.
        let mr = unsafe { st.reg.local_mr(&self.ep, buf, len, sys::FI_SEND) }?;
        let tag = DIRECT | (key & CREDITS_MASK) << CREDITS_SHIFT | self.me as u64;
        let (index, _) = Self::new_direct(st, token, (Kind::Send, peer, len), mr);
        self.post_in_order(
            st,
            index,
            Op::Send {
                dest,
                tag,
                buf,
                len,
            },
        );
        Ok(())
    }

    /// See [`Transport::expose`](crate::transport::Transport::expose).
    pub(super) unsafe fn expose_buf(
        &self,
        peer: usize,
        buf: *const u8,
        len: usize,
        token: u64,
    ) -> Result<RemoteBuf, Error> {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        self.peer_addr(st, peer)?;
        // SAFETY: the caller keeps the buffer until `conceal_buf`.
        let (mr, addr) = unsafe { st.reg.remote_mr(&self.ep, buf, len) }?;
        let key = mr.key;
        st.exposed.push((token, mr));
        Ok(RemoteBuf { addr, key })
    }

    /// See [`Transport::conceal`](crate::transport::Transport::conceal).
    pub(super) unsafe fn conceal_buf(&self, token: u64) {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        if let Some(i) = st.exposed.iter().position(|(t, _)| *t == token) {
            let (_, m) = st.exposed.swap_remove(i);
            // SAFETY: the receiver is done with it (Fin) or never reads it (Cts).
            unsafe { st.reg.close(&self.ep, m) };
        }
    }

    /// See [`Transport::post_read`](crate::transport::Transport::post_read).
    pub(super) unsafe fn read_into(
        &self,
        peer: usize,
        buf: *mut u8,
        len: usize,
        remote: RemoteBuf,
        token: u64,
    ) -> Result<(), Error> {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        let src = self.peer_addr(st, peer)?;
        // SAFETY: the caller keeps the buffer until the completion.
        let mr = unsafe { st.reg.local_mr(&self.ep, buf, len, sys::FI_READ) }?;
        let (index, _) = Self::new_direct(st, token, (Kind::Read, peer, len), mr);
        self.post_in_order(
            st,
            index,
            Op::Read {
                src,
                addr: remote.addr,
                key: remote.key,
                buf,
                len,
            },
        );
        Ok(())
    }

    /// See [`Transport::take_direct_done`](crate::transport::Transport::take_direct_done).
    pub(super) unsafe fn direct_done(&self, done: &mut dyn FnMut(u64, Result<usize, Error>)) {
        // SAFETY: data path (the caller's contract).
        let st = unsafe { &mut *self.state.get() };
        if st.direct_done.is_empty() {
            return;
        }
        for (token, outcome) in std::mem::take(&mut st.direct_done) {
            done(token, outcome);
        }
    }

    /// Every registration direct operations and exposures hold, taken
    /// (the endpoint is closed: nothing uses them any more).
    pub(super) fn take_registrations(st: &mut State) -> Vec<Mr> {
        let mut all: Vec<Mr> = st.exposed.drain(..).map(|(_, m)| m).collect();
        all.extend(
            st.direct
                .iter_mut()
                .filter_map(Option::take)
                .filter_map(|op| op.mr),
        );
        all
    }
}
