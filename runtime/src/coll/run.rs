//! Running schedules inside the progress engine.

use super::sched::{Schedule, Step, StepState};
use crate::p2p::engine::Engine;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::{Pending, ReqId, ReqState};

/// A schedule registered with the engine.
pub struct Running {
    /// The steps.
    pub sched: Schedule,
    /// The request that completes with it.
    pub req: ReqId,
    /// Collective context id of the communicator.
    pub context: u32,
    /// This rank's rank in the communicator.
    pub rank: i32,
}

impl Engine {
    /// Registers a collective schedule and starts what can start; returns
    /// the request that completes when every step has.
    pub fn start_schedule(&mut self, sched: Schedule, context: u32, rank: i32) -> ReqId {
        let req = self.reqs.insert(ReqState::Pending(Pending::Coll));
        let mut run = Running {
            sched,
            req,
            context,
            rank,
        };
        self.advance_run(&mut run);
        if run.sched.finished() {
            self.finish_run(run);
        } else {
            self.schedules.push(run);
        }
        req
    }

    /// Advances every registered schedule; returns whether any step moved.
    pub(crate) fn advance_schedules(&mut self) -> bool {
        // Work on the list outside `self` so each schedule is advanced in place.
        let mut list = std::mem::take(&mut self.schedules);
        let mut moved = false;
        for run in list.iter_mut() {
            moved |= self.advance_run(run);
        }
        list.append(&mut self.schedules);
        let mut i = 0;
        while i < list.len() {
            if list[i].sched.finished() {
                let run = list.swap_remove(i);
                self.finish_run(run);
            } else {
                i += 1;
            }
        }
        self.schedules = list;
        moved
    }

    fn finish_run(&mut self, run: Running) {
        let mut run = run;
        match run.sched.error.take() {
            Some(e) => self.reqs.fail(run.req, e),
            None => self.reqs.complete(run.req, crate::status::Status::empty()),
        }
    }

    /// Starts ready steps and collects finished ones until nothing changes.
    fn advance_run(&mut self, run: &mut Running) -> bool {
        let mut moved = false;
        loop {
            let mut changed = false;
            for s in 0..run.sched.steps.len() {
                match run.sched.state[s] {
                    StepState::Waiting if run.sched.ready(s) => {
                        self.start_step(run, s);
                        changed = true;
                    }
                    StepState::Running(id) => {
                        if let Some(outcome) = self.reqs.take_finished(ReqId(id)) {
                            if let Err(e) = outcome.and_then(crate::status::Status::check) {
                                run.sched.error.get_or_insert(e);
                            }
                            run.sched.finish(s);
                            changed = true;
                        }
                    }
                    _ => {}
                }
            }
            moved |= changed;
            if !changed {
                break;
            }
        }
        moved
    }

    fn start_step(&mut self, run: &mut Running, s: usize) {
        match run.sched.steps[s] {
            Step::Send { to, tag, buf } => {
                let ptr = run.sched.ptr(buf);
                // SAFETY: the schedule's buffers outlive it (see Schedule).
                let id =
                    unsafe { self.start_send(to, run.context, run.rank, tag, ptr, buf.len, false) };
                match id {
                    Some(id) => run.sched.state[s] = StepState::Running(id.0),
                    None => run.sched.finish(s),
                }
            }
            Step::Recv { from, tag, buf } => {
                let ptr = run.sched.ptr(buf);
                let pattern = Pattern {
                    context: run.context,
                    source: SourceSel::Rank(from),
                    tag: TagSel::Tag(tag),
                };
                // SAFETY: as above.
                let id = unsafe { self.start_recv(pattern, ptr, buf.len) };
                run.sched.state[s] = StepState::Running(id.0);
                // It may have matched an unexpected message at once.
                if let Some(outcome) = self.reqs.take_finished(id) {
                    if let Err(e) = outcome.and_then(crate::status::Status::check) {
                        run.sched.error.get_or_insert(e);
                    }
                    run.sched.finish(s);
                }
            }
            Step::Reduce { .. } | Step::Copy { .. } => run.sched.run_local(s),
        }
    }
}
