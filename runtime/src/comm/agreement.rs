//! A context-id agreement (the protocol of `context.rs`) as a task the
//! engine advances: the blocking constructors wait for it, `idup` returns
//! a request that completes with it, and `create_group` runs it among the
//! group's members only.
//!
//! Each allreduce is a dissemination over the participants (step `s`
//! sends to `me + 2^s` and receives from `me - 2^s`, modulo their number),
//! exact because AND is idempotent. An agreement sends every message with
//! one tag: within one allreduce each step has another source, and rounds
//! follow each other in the same order on every participant, so
//! non-overtaking keeps them apart. Tags on the parent's collective
//! context (`context + 1`, where the constructors of a communicator run in
//! call order):
//!
//! | tags                              | use                                 |
//! |-----------------------------------|-------------------------------------|
//! | `0x4000_0000`                     | split's allgather (`agree.rs`)      |
//! | `0x4000_0100 + seq % 0xf00`       | agreement number `seq` on the parent|
//!
//! `MPI_Comm_create_group` runs on context `CREATE_GROUP_BASE + parent
//! context` with the program's tag, so only the group's members take part.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::context::{lowest_set, WORDS};
use super::{lock, Comm, Shared};
use crate::error::Error;
use crate::p2p::engine::{Engine, Task};
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::{Pending, ReqId, ReqState};
use crate::status::Status;

/// First tag of the parent-wide agreements.
const SEQ_TAG: i32 = 0x4000_0100;
/// Agreements on one communicator that may be in flight at once.
const SEQ_TAGS: u32 = 0xf00;

/// Who takes part in an agreement and where its messages go.
pub(crate) struct Plan {
    /// Context id of the messages.
    pub(crate) context: u32,
    /// Their tag.
    pub(crate) tag: i32,
    /// World rank of each participant.
    pub(crate) world: Vec<usize>,
    /// Each participant's rank in the envelope (its rank in the parent).
    pub(crate) ids: Vec<i32>,
    /// This process's index among the participants.
    pub(crate) me: usize,
    /// Whether this process takes the id (members of the new communicator).
    pub(crate) member: bool,
}

impl Plan {
    /// An agreement over every rank of `parent`, on its collective context
    /// with the next agreement tag.
    pub(crate) fn over(parent: &Comm, member: bool) -> Plan {
        let seq = parent.inner.agree_seq.fetch_add(1, Ordering::Relaxed);
        Plan {
            context: parent.inner.context + 1,
            tag: SEQ_TAG + (seq % SEQ_TAGS) as i32,
            world: parent.inner.world_of.clone(),
            ids: (0..parent.size()).collect(),
            me: parent.rank() as usize,
            member,
        }
    }
}

impl Plan {
    /// An agreement over both groups of an intercommunicator (`world`:
    /// their world ranks, in an order both groups compute alike), on its
    /// collective context with the next agreement tag. Envelopes carry
    /// world ranks, which tell the two groups' ranks apart.
    pub(crate) fn over_union(comm: &Comm, world: Vec<usize>, member: bool) -> Plan {
        let seq = comm.inner.agree_seq.fetch_add(1, Ordering::Relaxed);
        let me = world
            .iter()
            .position(|&w| w == comm.inner.rt.world_rank)
            .expect("a rank of an intercommunicator is in its union");
        Plan {
            context: comm.inner.context + 1,
            tag: SEQ_TAG + (seq % SEQ_TAGS) as i32,
            ids: world.iter().map(|&w| w as i32).collect(),
            world,
            me,
            member,
        }
    }
}

/// Where an agreement leaves its id for whoever builds the communicator.
#[derive(Default)]
pub(crate) struct Outcome {
    inner: Mutex<OutcomeState>,
}

#[derive(Default)]
struct OutcomeState {
    /// The agreed p2p context id, once agreed (and taken, for a member).
    context: Option<u32>,
    /// Nobody will take the id: give it back when it comes.
    orphaned: bool,
    /// Nobody will wait for the request: take it out when it completes.
    unwaited: bool,
}

impl Outcome {
    /// Takes the agreed id (once the agreement's request has completed).
    pub(crate) fn take(&self) -> Option<u32> {
        lock(&self.inner).context.take()
    }

    /// Nobody will wait for the agreement's request (call with the engine
    /// locked, after checking it has not finished).
    pub(crate) fn forget_request(&self) {
        lock(&self.inner).unwaited = true;
    }

    /// The id will not be used: returns it to `shared`'s pool now, or
    /// when the agreement ends.
    pub(crate) fn orphan(&self, shared: &Shared) {
        let mut s = lock(&self.inner);
        s.orphaned = true;
        if let Some(c) = s.context.take() {
            shared.pool.release(c);
        }
    }
}

/// An allreduce step in flight: its buffers stay with the task until both
/// requests are taken.
struct InFlight {
    recv: ReqId,
    send: Option<ReqId>,
    from: usize,
    _out: Vec<u8>,
    inb: Vec<u8>,
}

/// Which allreduce of the round is running.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// ANDing the offered bitmaps.
    Offer,
    /// ANDing the "holds candidate `pair`" flags.
    Confirm {
        /// The candidate pair.
        pair: usize,
        /// Whether this process holds it.
        held: bool,
    },
}

/// An agreement in progress.
struct Agreement {
    shared: Arc<Shared>,
    plan: Plan,
    phase: Phase,
    words: Vec<u64>,
    dist: usize,
    step: Option<InFlight>,
    result: Option<Result<u32, Error>>,
    outcome: Arc<Outcome>,
    req: ReqId,
}

impl Agreement {
    /// Starts a round: offers this process's free pairs.
    fn offer(&mut self, engine: &mut Engine) {
        self.phase = Phase::Offer;
        self.words = self.shared.pool.offer(self.plan.member).to_vec();
        self.begin(engine);
    }

    /// Starts the current allreduce from its first step.
    fn begin(&mut self, engine: &mut Engine) {
        self.dist = 1;
        self.next_step(engine);
    }

    /// Starts the next step, or ends the allreduce when none is left.
    fn next_step(&mut self, engine: &mut Engine) {
        let n = self.plan.world.len();
        if self.dist >= n {
            self.reduced(engine);
            return;
        }
        let me = self.plan.me;
        let (to, from) = ((me + self.dist) % n, (me + n - self.dist) % n);
        let out: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut inb = vec![0u8; out.len()];
        let pattern = Pattern {
            context: self.plan.context,
            source: SourceSel::Rank(self.plan.ids[from]),
            tag: TagSel::Tag(self.plan.tag),
        };
        // SAFETY: both buffers are heap memory the task keeps (in
        // `InFlight`) until their requests are taken.
        let (recv, send) = unsafe {
            let recv = engine.start_recv(pattern, inb.as_mut_ptr(), inb.len());
            let send = engine.start_send(
                self.plan.world[to],
                self.plan.context,
                self.plan.ids[me],
                self.plan.tag,
                out.as_ptr(),
                out.len(),
                false,
            );
            (recv, send)
        };
        self.step = Some(InFlight {
            recv,
            send,
            from,
            _out: out,
            inb,
        });
    }

    /// Takes the step in flight if both its requests are done; returns
    /// whether it did.
    fn poll_step(&mut self, engine: &mut Engine) -> bool {
        let Some(step) = &self.step else { return false };
        if !engine.reqs.is_done(step.recv) || step.send.is_some_and(|s| !engine.reqs.is_done(s)) {
            return false;
        }
        let step = self.step.take().expect("checked above");
        if let Some(s) = step.send {
            let _ = engine.reqs.take_finished(s);
        }
        let got = engine.reqs.take_finished(step.recv);
        match got {
            Some(Ok(st)) if st.count == step.inb.len() && st.truncated_from.is_none() => {
                for (w, b) in self.words.iter_mut().zip(step.inb.chunks_exact(8)) {
                    *w &= u64::from_le_bytes(b.try_into().expect("8-byte chunk"));
                }
                self.dist *= 2;
                self.next_step(engine);
            }
            Some(Err(e)) => self.result = Some(Err(e)),
            other => {
                let sent = match other {
                    Some(Ok(st)) => st.truncated_from.unwrap_or(st.count),
                    _ => 0,
                };
                self.result = Some(Err(Error::State(format!(
                    "communicator agreement: rank {} sent {sent} bytes where {} were \
                     expected (ranks disagree about a communicator constructor)",
                    self.plan.ids[step.from],
                    step.inb.len()
                ))));
            }
        }
        true
    }

    /// An allreduce ended: the next phase, or the result.
    fn reduced(&mut self, engine: &mut Engine) {
        match self.phase {
            Phase::Offer => match lowest_set(&self.words[..WORDS]) {
                Some(pair) => {
                    let held = self.plan.member && self.shared.pool.hold(pair);
                    self.phase = Phase::Confirm { pair, held };
                    self.words = vec![u64::from(held || !self.plan.member)];
                    self.begin(engine);
                }
                None if self.words[WORDS] == 1 => {
                    self.result = Some(Err(Error::ContextIdsExhausted {
                        limit: super::context::MAX_COMMS,
                        free_here: self.shared.pool.free_count(),
                    }));
                }
                // Another agreement of some process holds the only common
                // ids for now: try again.
                None => self.offer(engine),
            },
            Phase::Confirm { pair, held } => {
                let all = self.words[0] == 1;
                if held {
                    self.shared.pool.settle(pair, all);
                }
                if all {
                    self.result = Some(Ok(2 * pair as u32));
                } else {
                    self.offer(engine);
                }
            }
        }
    }
}

impl Task for Agreement {
    fn advance(&mut self, engine: &mut Engine) -> bool {
        let mut moved = false;
        while self.result.is_none() && self.poll_step(engine) {
            moved = true;
        }
        moved
    }

    fn finished(&self) -> bool {
        self.result.is_some()
    }

    fn finish(self: Box<Self>, engine: &mut Engine) {
        let mut s = lock(&self.outcome.inner);
        match self.result {
            Some(Ok(context)) => {
                if s.orphaned {
                    if self.plan.member {
                        self.shared.pool.release(context);
                    }
                } else if self.plan.member {
                    s.context = Some(context);
                }
                engine.reqs.complete(self.req, Status::empty());
            }
            Some(Err(e)) => engine.reqs.fail(self.req, e),
            None => engine.reqs.fail(
                self.req,
                Error::State("communicator agreement ended without a result".into()),
            ),
        }
        if s.unwaited {
            let _ = engine.reqs.take_finished(self.req);
        }
    }
}

/// Starts an agreement by `plan` among the processes of `shared`; returns
/// the request that completes when it has ended, and where the id will be.
pub(crate) fn start(engine: &mut Engine, shared: Arc<Shared>, plan: Plan) -> (ReqId, Arc<Outcome>) {
    let req = engine.reqs.insert(ReqState::Pending(Pending::Coll));
    let outcome = Arc::new(Outcome::default());
    let mut a = Box::new(Agreement {
        shared,
        plan,
        phase: Phase::Offer,
        words: Vec::new(),
        dist: 1,
        step: None,
        result: None,
        outcome: outcome.clone(),
        req,
    });
    a.offer(engine);
    a.advance(engine);
    if a.finished() {
        a.finish(engine);
    } else {
        engine.add_task(a);
    }
    (req, outcome)
}

/// Runs an agreement by `plan` to its end: the p2p context id (taken on a
/// member; a non-member gets the id its peers took).
pub(crate) fn run(comm: &Comm, plan: Plan) -> Result<u32, Error> {
    let member = plan.member;
    let rt = comm.rt();
    let (req, outcome) = start(&mut rt.engine(), comm.inner.shared.clone(), plan);
    rt.wait_request(req)?;
    match outcome.take() {
        Some(c) => Ok(c),
        None if !member => Ok(0),
        None => Err(Error::State(
            "communicator agreement finished without an id".into(),
        )),
    }
}
