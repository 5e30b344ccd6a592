//! Packets: each one tagged message, sent under the peer's credits
//! (injected when small, else from a send slot; refused ones wait in an
//! ordered backlog), received into pre-posted buffers that are posted
//! again once handed on; credits returned on packets or on their own.
//! Also the completion loop that drives all of it.

use std::mem::MaybeUninit;
use std::sync::atomic::Ordering::SeqCst;

use super::super::endpoint::Posted;
use super::super::sys::{Completion, POLL_MAX};
use super::{
    fatal, FabricLink, OpContext, Peer, State, CREDITS_MASK, CREDITS_SHIFT, CREDIT_ONLY,
    DIRECT_BASE, HELLO, PACKET_IGNORE, RANK_MASK, SEND_BASE, STACK_INJECT,
};
use crate::error::Error;

impl FabricLink {
    /// Posts receive buffer `i`; returns whether the provider took it. If
    /// not, it is posted again from the poll, and the credit of the packet
    /// it held (from `credit_to`) goes back only then: a credit returned
    /// for a buffer not posted would let the peer send a packet that finds
    /// none.
    pub(super) fn post_receive(
        &self,
        st: &mut State,
        i: usize,
        credit_to: Option<usize>,
    ) -> Result<bool, Error> {
        // SAFETY: the buffer and context belong to receive `i`, which is
        // not posted (it just completed, or was never posted); both live
        // until the endpoint is closed.
        let posted = unsafe {
            self.ep.recv(
                self.rx_buf(i),
                self.packet,
                self.rx_desc,
                0,
                PACKET_IGNORE,
                self.context(i),
            )
        }?;
        if posted == Posted::Busy {
            self.note(format_args!("receive buffer {i} refused for now"));
            st.to_repost.push((i, credit_to));
            return Ok(false);
        }
        Ok(true)
    }

    /// One more packet of `peer`'s consumed and its buffer posted again:
    /// its credit is owed back.
    fn owe(&self, st: &mut State, peer: usize) {
        if let Some(p) = st.peers.get_mut(peer).and_then(Option::as_mut) {
            p.owed += 1;
            self.return_credits(st, peer);
        }
    }

    pub(super) fn tag(&self, owed: u32, flags: u64) -> u64 {
        self.me as u64 | (u64::from(owed) & CREDITS_MASK) << CREDITS_SHIFT | flags
    }

    /// Sends one packet of `len` bytes written by `fill`, if `peer` has a
    /// credit (else returns false without running `fill`). Once `fill` has
    /// run the packet is taken: if the provider refuses it for now, it
    /// waits in the backlog.
    pub(super) fn send_packet(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
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
        if let Some(t) = st.trace.as_mut() {
            t.sent(peer);
        }
        true
    }

    /// Posts one packet to `peer` (its credit already taken): injected
    /// when small, else copied into a free send slot. False when the
    /// provider or the send slots have no room now.
    pub(super) fn post(&self, st: &mut State, peer: usize, bytes: &[u8]) -> bool {
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
    pub(super) fn send_slot(&self, st: &mut State, peer: usize, slot: usize, len: usize) -> bool {
        let p = st.peers[peer].expect("a fabric peer");
        // SAFETY: the slot and its context stay valid and untouched until
        // the send's completion returns the slot.
        let outcome = unsafe {
            self.ep.send(
                self.tx_buf(slot),
                len,
                self.tx_desc,
                p.addr,
                self.tag(p.owed, 0),
                self.context(self.receives + slot),
            )
        };
        self.posted(st, peer, outcome)
    }

    /// What posting a packet to `peer` did: taken (its owed credits went
    /// with it), refused for now, or a failure that ends this rank.
    pub(super) fn posted(
        &self,
        st: &mut State,
        peer: usize,
        outcome: Result<Posted, Error>,
    ) -> bool {
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
    pub(super) fn flush_backlog(&self, st: &mut State) {
        while let Some((peer, bytes)) = st.backlog.pop_front() {
            if !self.post(st, peer, &bytes) {
                st.backlog.push_front((peer, bytes));
                return;
            }
        }
    }

    /// Introduces this endpoint to `peer`, whose address this side knows
    /// but which does not know ours: one injected message carrying our
    /// address (no credit taken; the receiver posts a buffer for it). False
    /// when the provider has no room now.
    pub(crate) fn send_hello(&self, peer: usize) -> Result<bool, Error> {
        let address = self.address()?;
        if address.len() > self.ep.inject_size() {
            return Err(Error::Unsupported(format!(
                "the provider's addresses ({} bytes) do not fit one injected message ({})",
                address.len(),
                self.ep.inject_size()
            )));
        }
        // SAFETY: the caller holds the engine lock (no data path call runs).
        let st = unsafe { &mut *self.state.get() };
        let p = st.peers[peer].ok_or_else(|| Error::State(format!("no address of {peer}")))?;
        Ok(matches!(
            self.ep.inject(&address, p.addr, self.tag(0, HELLO))?,
            Posted::Yes
        ))
    }

    /// Returns the credits owed to `peer` in a message of their own, once
    /// half a window is owed. Below that the peer still holds half its
    /// credits and is not starved; and every credit-only message then
    /// carries at least half a window, which is what bounds them to two
    /// in flight per peer (the receive buffers' `+ 3`). A message refused
    /// or failed is tried again from the poll (`owing`): credits are never
    /// dropped, as a peer left without them would wait forever.
    pub(super) fn return_credits(&self, st: &mut State, peer: usize) {
        let Some(p) = st.peers[peer].as_mut() else {
            return;
        };
        if p.owed < (self.credits / 2).max(1) {
            return;
        }
        match self.ep.inject(&[], p.addr, self.tag(p.owed, CREDIT_ONLY)) {
            Ok(Posted::Yes) => {
                p.owed = 0;
                if let Some(t) = st.trace.as_mut() {
                    t.credit_sent(peer);
                }
            }
            outcome => {
                if st.owing.contains(&peer) {
                    return;
                }
                if let Err(e) = outcome {
                    self.note(format_args!(
                        "returning {} credits to rank {peer} failed: {e}",
                        p.owed
                    ));
                }
                st.owing.push(peer);
            }
        }
    }

    /// Retries what the provider refused earlier.
    pub(super) fn retry_refused(&self, st: &mut State) {
        // Taken and handed back with its capacity: a packet's repost waits
        // here on every poll (see `take_completions`), so no allocation.
        let mut reposts = std::mem::take(&mut st.to_repost);
        for &(i, credit_to) in &reposts {
            match self.post_receive(st, i, credit_to) {
                Ok(true) => {
                    if let Some(peer) = credit_to {
                        self.owe(st, peer);
                    }
                }
                Ok(false) => {}
                Err(e) => fatal(self.me, &e.to_string()),
            }
        }
        if st.to_repost.is_empty() {
            reposts.clear();
            st.to_repost = reposts;
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

    /// Takes completions: hands arrived packets to `sink` (returns
    /// how many), posts their buffers again, frees send slots and ends
    /// direct operations.
    ///
    /// # Safety
    /// Data path (see [`Transport::poll`](crate::transport::Transport::poll)).
    pub(super) unsafe fn take_completions(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        let mut handled = 0;
        let mut completions = 0;
        let mut done = [const { MaybeUninit::<Completion>::uninit() }; POLL_MAX];
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
                            self.note(format_args!("a direct transfer failed: {}", failed.text));
                            // SAFETY: as above.
                            let st = unsafe { &mut *self.state.get() };
                            let e = Error::Fabric {
                                what: "a direct transfer",
                                reason: failed.text,
                            };
                            self.finish_direct(st, s - DIRECT_BASE, Err(e));
                            continue;
                        }
                        // A send failed: its peer is gone (the launcher
                        // ends the job) or the link is; free the slot.
                        Some(s) if s >= SEND_BASE => {
                            self.note(format_args!("a packet send failed: {}", failed.text));
                            // SAFETY: as above.
                            unsafe { &mut *self.state.get() }
                                .free_sends
                                .push(s - SEND_BASE);
                            continue;
                        }
                        None => {
                            self.note(format_args!("an operation failed: {}", failed.text));
                            continue;
                        }
                        Some(_) => fatal(self.me, &format!("a receive failed: {}", failed.text)),
                    }
                }
            };
            if n == 0 {
                break;
            }
            completions += n;
            for c in &done[..n] {
                // SAFETY: the poll wrote the first `n` entries.
                let c = unsafe { c.assume_init_ref() };
                // SAFETY: every context we post is one of ours.
                let slot = unsafe { (*c.context.cast::<OpContext>()).slot };
                if slot >= DIRECT_BASE {
                    // SAFETY: data path; no other reference is live.
                    let st = unsafe { &mut *self.state.get() };
                    self.finish_direct(st, slot - DIRECT_BASE, Ok(c.len as usize));
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
                if c.tag & HELLO != 0 {
                    // SAFETY: as below: the receive completed with `len` bytes.
                    let address =
                        unsafe { std::slice::from_raw_parts(self.rx_buf(slot), c.len as usize) }
                            .to_vec();
                    // SAFETY: data path; no other reference is live.
                    let st = unsafe { &mut *self.state.get() };
                    if st.peers.get(from).is_some_and(Option::is_none) {
                        match self.ep.insert(&address) {
                            Ok(addr) => {
                                st.peers[from] = Some(Peer {
                                    addr,
                                    credits: self.credits,
                                    owed: 0,
                                })
                            }
                            Err(e) => fatal(self.me, &format!("rank {from}'s address: {e}")),
                        }
                    }
                    if let Err(e) = self.post_receive(st, slot, None) {
                        fatal(self.me, &e.to_string());
                    }
                    continue;
                }
                {
                    // SAFETY: as above.
                    let st = unsafe { &mut *self.state.get() };
                    let Some(Some(p)) = st.peers.get_mut(from) else {
                        fatal(self.me, &format!("a packet from unknown rank {from}"));
                    };
                    p.credits += returned;
                    if let Some(t) = st.trace.as_mut() {
                        t.arrived(from, has_payload);
                    }
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
                let credit_to = has_payload.then_some(from);
                if st.to_repost.is_empty() {
                    // Posted again at the start of the next poll, not here:
                    // the packet's receiver goes on at once (a ping-pong's
                    // reply leaves before the provider call), and the next
                    // poll comes while it waits anyway. One buffer at most
                    // waits so: a receiver that stops polling withholds one
                    // credit of one peer (it goes back once posted).
                    st.to_repost.push((slot, credit_to));
                    continue;
                }
                match self.post_receive(st, slot, credit_to) {
                    Ok(true) if has_payload => self.owe(st, from),
                    Ok(_) => {}
                    Err(e) => fatal(self.me, &e.to_string()),
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
        if self.debug {
            // SAFETY: data path; no other reference is live.
            self.check_stall(unsafe { &mut *self.state.get() });
        }
        handled
    }
}
