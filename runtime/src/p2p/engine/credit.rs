//! Eager credit: what bounds the memory a receiver spends on a sender's
//! eager messages that arrive before their receives. A sender counts the
//! eager bytes it sent each peer and not yet got back; past the budget
//! (`OXMPI_EAGER_BUDGET`) it sends that peer rendezvous (an Rts header,
//! the data staying in the sender's buffer) until credit returns. The
//! receiver gives the bytes back (a Credit packet) once they are matched
//! to a receive, in batches of a quarter of the budget, so a peer's
//! unmatched eager data never exceeds the budget. Nothing ever waits for
//! credit: rendezvous needs none, so no send and no receive can deadlock.

use super::Engine;
use crate::p2p::protocol::{self, Kind, SendPath};

/// Per-peer eager accounting on both sides of the wire.
#[derive(Debug)]
pub(super) struct Credit {
    /// Most unreturned eager bytes per peer (0: unlimited).
    budget: usize,
    /// Sender side: eager bytes sent to each peer, not yet returned.
    sent: Vec<usize>,
    /// Receiver side: eager bytes from each peer matched, not yet returned.
    due: Vec<usize>,
}

impl Credit {
    pub(super) fn new(world_size: usize, budget: usize) -> Credit {
        Credit {
            budget,
            sent: vec![0; world_size],
            due: vec![0; world_size],
        }
    }

    /// Makes room for peers `0..count`.
    pub(super) fn grow(&mut self, count: usize) {
        self.sent.resize(count, 0);
        self.due.resize(count, 0);
    }

    /// Whether `len` more eager bytes may go to `peer`; counts them if so.
    fn take(&mut self, peer: usize, len: usize) -> bool {
        if self.budget == 0 {
            return true;
        }
        let sent = &mut self.sent[peer];
        if sent.saturating_add(len) > self.budget {
            return false;
        }
        *sent += len;
        true
    }

    /// `peer` gave back `bytes`.
    fn returned(&mut self, peer: usize, bytes: u64) {
        if let Some(sent) = self.sent.get_mut(peer) {
            *sent = sent.saturating_sub(bytes as usize);
        }
    }

    /// `len` eager bytes from `peer` were matched; the bytes to give back
    /// now, if a batch is due.
    fn consumed(&mut self, peer: usize, len: u64) -> Option<u64> {
        if self.budget == 0 {
            return None;
        }
        let due = self.due.get_mut(peer)?;
        *due = due.saturating_add(len as usize);
        (*due >= (self.budget / 4).max(1)).then(|| std::mem::take(due) as u64)
    }
}

impl Engine {
    /// Sets the most eager bytes a peer may have sent this rank and not
    /// got back (0: unlimited). Call before any message moves.
    pub fn set_eager_budget(&mut self, bytes: usize) {
        self.credit = Credit::new(self.credit.sent.len(), bytes);
    }

    /// How `len` bytes go to `peer`: eager to self always; else eager when
    /// within the eager limit and the peer's credit (which it takes).
    pub(super) fn send_path(&mut self, peer: usize, len: usize) -> SendPath {
        if peer == self.me {
            return SendPath::Eager; // to self: one packet, no size limit
        }
        match protocol::choose_path(len, self.eager_limit_to(peer)) {
            SendPath::Eager if self.credit.take(peer, len) => SendPath::Eager,
            _ => SendPath::Rendezvous,
        }
    }

    /// An eager message of `len` bytes from `peer` was matched to a receive.
    pub(super) fn eager_matched(&mut self, peer: usize, len: u64) {
        if peer == self.me {
            return;
        }
        if let Some(bytes) = self.credit.consumed(peer, len) {
            self.push(peer, &[&protocol::ctrl(Kind::Credit, bytes, 0)]);
        }
    }

    /// A Credit packet from `peer` returned `bytes`.
    pub(super) fn on_credit(&mut self, peer: usize, bytes: u64) {
        self.credit.returned(peer, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_budget_sends_wait_for_returned_credit() {
        let mut c = Credit::new(2, 100);
        assert!(c.take(1, 60));
        assert!(c.take(1, 40));
        assert!(!c.take(1, 1), "budget spent");
        assert!(c.take(0, 100), "per peer");
        c.returned(1, 50);
        assert!(c.take(1, 50));
        assert!(!c.take(1, 1));
        // Unlimited.
        let mut c = Credit::new(1, 0);
        assert!(c.take(0, usize::MAX) && c.take(0, usize::MAX));
        assert_eq!(c.consumed(0, 1 << 40), None);
    }

    #[test]
    fn receivers_return_credit_in_quarter_budget_batches() {
        let mut c = Credit::new(2, 100);
        assert_eq!(c.consumed(1, 20), None);
        assert_eq!(c.consumed(1, 4), None);
        assert_eq!(c.consumed(1, 1), Some(25));
        assert_eq!(c.consumed(1, 24), None);
        assert_eq!(c.consumed(0, 30), Some(30));
    }
}
