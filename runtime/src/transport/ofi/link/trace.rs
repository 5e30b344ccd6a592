//! What `OXMPI_DEBUG=transport` adds to the fabric link's data path:
//! per-peer packet counts, a line for every operation the provider fails
//! or refuses in a way that loses or delays a packet, and, when no packet
//! has arrived for [`STALL`] while the link is polled, one dump of the
//! link's state (credits, debts, what waits to be sent), so that a job
//! that hangs across hosts shows which side holds the missing message.
//! Off (the default), the link keeps no trace and pays one branch.

use std::time::{Duration, Instant};

use super::{FabricLink, State, SEND_SLOTS};

/// Polls without an arriving packet for this long make the link dump its
/// state (once per stall).
const STALL: Duration = Duration::from_secs(5);

/// Per-peer counts and the stall clock.
pub(super) struct Trace {
    /// Packets handed to the provider (or its backlog), per peer.
    sent: Vec<u64>,
    /// Packets received (with payload), per peer.
    received: Vec<u64>,
    /// Credit-only messages sent and received, per peer.
    credit_msgs: Vec<(u64, u64)>,
    last_arrival: Instant,
    dumped: bool,
}

impl Trace {
    pub(super) fn new(world_size: usize) -> Trace {
        Trace {
            sent: vec![0; world_size],
            received: vec![0; world_size],
            credit_msgs: vec![(0, 0); world_size],
            last_arrival: Instant::now(),
            dumped: false,
        }
    }

    fn grow(&mut self, peer: usize) {
        if peer >= self.sent.len() {
            self.sent.resize(peer + 1, 0);
            self.received.resize(peer + 1, 0);
            self.credit_msgs.resize(peer + 1, (0, 0));
        }
    }

    pub(super) fn sent(&mut self, peer: usize) {
        self.grow(peer);
        self.sent[peer] += 1;
    }

    pub(super) fn credit_sent(&mut self, peer: usize) {
        self.grow(peer);
        self.credit_msgs[peer].0 += 1;
    }

    /// A packet (`payload`) or a credit-only message arrived from `peer`.
    pub(super) fn arrived(&mut self, peer: usize, payload: bool) {
        self.grow(peer);
        if payload {
            self.received[peer] += 1;
        } else {
            self.credit_msgs[peer].1 += 1;
        }
        self.last_arrival = Instant::now();
        self.dumped = false;
    }
}

impl FabricLink {
    /// Logs `what` happening on the link (debug only).
    pub(super) fn note(&self, what: std::fmt::Arguments<'_>) {
        if self.debug {
            eprintln!("oxmpi[transport]: rank {}: fabric: {what}", self.me);
        }
    }

    /// Dumps the link's state once a stall has lasted [`STALL`] (debug
    /// only; called from the poll, under the data path's exclusion).
    pub(super) fn check_stall(&self, st: &mut State) {
        let Some(trace) = st.trace.as_mut() else {
            return;
        };
        if trace.dumped || trace.last_arrival.elapsed() < STALL {
            return;
        }
        trace.dumped = true;
        let mut peers = String::new();
        for (rank, p) in st.peers.iter().enumerate() {
            let Some(p) = p else { continue };
            let (cs, cr) = trace.credit_msgs.get(rank).copied().unwrap_or_default();
            peers.push_str(&format!(
                " [rank {rank}: credits {} owed {} sent {} received {} credit msgs {cs}/{cr}]",
                p.credits,
                p.owed,
                trace.sent.get(rank).copied().unwrap_or(0),
                trace.received.get(rank).copied().unwrap_or(0),
            ));
        }
        eprintln!(
            "oxmpi[transport]: rank {}: fabric: no packet for {:?}:{peers}; backlog {}, \
             send slots busy {}, receives to repost {}, credit messages owed {:?}, \
             direct ops {} (to retry {}), exposed {}",
            self.me,
            trace.last_arrival.elapsed(),
            st.backlog.len(),
            SEND_SLOTS - st.free_sends.len(),
            st.to_repost.len(),
            st.owing,
            st.direct.len() - st.free_direct.len(),
            st.direct_retry.len(),
            st.exposed.len(),
        );
    }
}
