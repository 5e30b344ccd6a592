//! Running schedules inside the progress engine.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::sched::{Schedule, Step, StepState};
use crate::error::Error;
use crate::p2p::engine::{Engine, Task};
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::{Pending, ReqId, ReqState};
use crate::progress::Runtime;

/// A schedule being run: registered with the engine (non-blocking), or
/// on the stack of the thread that runs it to completion (blocking).
pub struct Running {
    /// The steps.
    pub sched: Schedule,
    /// Collective context id of the communicator.
    pub context: u32,
    /// This rank's rank in the communicator.
    pub rank: i32,
}

/// A schedule registered with the engine and the request it completes.
pub struct Registered {
    run: Running,
    req: ReqId,
    /// A step's reduction panicked: no step starts any more; the request
    /// fails once the steps in flight are done (they use the caller's
    /// buffers until then).
    abandoned: bool,
}

impl Task for Registered {
    fn advance(&mut self, engine: &mut Engine) -> bool {
        engine.advance_registered(self)
    }

    fn finished(&self) -> bool {
        self.run.sched.finished()
    }

    fn finish(self: Box<Self>, engine: &mut Engine) {
        engine.finish_run(*self);
    }
}

impl Engine {
    /// Registers a collective schedule and starts what can start; returns
    /// the request that completes when every step has.
    pub fn start_schedule(&mut self, sched: Schedule, context: u32, rank: i32) -> ReqId {
        let req = self.reqs.insert(ReqState::Pending(Pending::Coll));
        let run = Running {
            sched,
            context,
            rank,
        };
        let mut reg = Registered {
            run,
            req,
            abandoned: false,
        };
        self.advance_registered(&mut reg);
        if reg.run.sched.finished() {
            self.finish_run(reg);
        } else {
            self.add_task(Box::new(reg));
        }
        req
    }

    /// Advances a registered schedule; returns whether a step moved. A
    /// user operation that panics here would unwind through whichever call
    /// is progressing the engine: the collective's request fails instead,
    /// once the steps in flight are done (they use the caller's buffers).
    fn advance_registered(&mut self, reg: &mut Registered) -> bool {
        if reg.abandoned {
            if self.abandon_run(&mut reg.run) {
                reg.run.sched.drop_waiting();
                return true;
            }
            return false;
        }
        match catch_unwind(AssertUnwindSafe(|| self.advance_run(&mut reg.run))) {
            Ok(moved) => moved,
            Err(panic) => {
                reg.run
                    .sched
                    .error
                    .get_or_insert(crate::error::user_op_panicked(panic.as_ref()));
                reg.abandoned = true;
                self.advance_registered(reg)
            }
        }
    }

    fn finish_run(&mut self, reg: Registered) {
        let Registered { mut run, req, .. } = reg;
        match run.sched.error.take() {
            Some(e) => self.reqs.fail(req, e),
            None => self.reqs.complete(req, crate::status::Status::empty()),
        }
    }

    /// Leaves a schedule that will not run on (its runner unwound):
    /// cancels its pending receives and returns whether its sends in
    /// flight have all finished (they read the caller's memory until then).
    fn abandon_run(&mut self, run: &mut Running) -> bool {
        let mut done = true;
        for s in 0..run.sched.steps.len() {
            // A shared-memory step holds no engine request: it stops here.
            if run.sched.state[s] == StepState::Polling {
                run.sched.finish(s);
            }
            if let StepState::Running(id) = run.sched.state[s] {
                let id = ReqId(id);
                if matches!(run.sched.steps[s], Step::Recv { .. }) {
                    self.cancel(id);
                }
                if self.reqs.take_finished(id).is_some() {
                    run.sched.finish(s);
                } else {
                    done = false;
                }
            }
        }
        done
    }

    /// Starts ready steps and collects finished ones until nothing changes.
    pub(crate) fn advance_run(&mut self, run: &mut Running) -> bool {
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
                            step_done(run, s, outcome);
                            changed = true;
                        }
                    }
                    StepState::Polling => changed |= self.poll_step(run, s),
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
                if let Some(id) = self.send_step_on_device(run, to, tag, buf) {
                    run.sched.state[s] = StepState::Running(id.0);
                    return;
                }
                let ptr = match run.sched.send_from(s, buf) {
                    Ok(p) => p,
                    Err(e) => {
                        run.sched.error.get_or_insert(e);
                        run.sched.finish(s);
                        return;
                    }
                };
                // SAFETY: the schedule's buffers outlive it (see Schedule).
                let id =
                    unsafe { self.start_send(to, run.context, run.rank, tag, ptr, buf.len, false) };
                match id {
                    Some(id) => run.sched.state[s] = StepState::Running(id.0),
                    None => run.sched.finish(s),
                }
            }
            Step::Recv { from, tag, buf } => {
                let (ptr, alias) = run.sched.recv_into(s, buf);
                let pattern = Pattern {
                    context: run.context,
                    source: SourceSel::Rank(from),
                    tag: TagSel::Tag(tag),
                };
                // SAFETY: as above.
                let id = unsafe {
                    match alias {
                        Some(a) => self.start_recv_aliased(pattern, ptr, buf.len, a),
                        None => self.start_recv(pattern, ptr, buf.len),
                    }
                };
                run.sched.state[s] = StepState::Running(id.0);
                // It may have matched an unexpected message at once.
                if let Some(outcome) = self.reqs.take_finished(id) {
                    step_done(run, s, outcome);
                }
            }
            Step::Reduce { .. } | Step::Copy { .. } => run.sched.run_local(s),
            Step::Poll(_) => {
                run.sched.state[s] = StepState::Polling;
                self.poll_step(run, s);
            }
        }
    }

    /// Polls shared-memory step `s`; returns whether it finished.
    fn poll_step(&mut self, run: &mut Running, s: usize) -> bool {
        let transport = self.transport();
        run.sched.poll_once(s, &|peer| transport.wake(peer))
    }
}

/// Step `s` (a send or receive) finished with `outcome`: a receive into
/// device memory moves its bytes on, an error is kept.
fn step_done(run: &mut Running, s: usize, outcome: Result<crate::status::Status, Error>) {
    let moved = outcome
        .and_then(crate::status::Status::check)
        .and_then(|st| run.sched.received(s, st.count));
    if let Err(e) = moved {
        run.sched.error.get_or_insert(e);
    }
    run.sched.finish(s);
}

impl Runtime {
    /// Runs a collective schedule to completion on the calling thread
    /// (a blocking collective): the same steps as
    /// [`Engine::start_schedule`], without a request or a place in the
    /// engine's list, so a small collective costs little more than its
    /// messages. If a step's reduction unwinds, the receives still
    /// pending are cancelled and the sends in flight waited for before
    /// the panic goes on (the caller's buffers are about to go away).
    pub fn run_schedule(&self, sched: Schedule, context: u32, rank: i32) -> Result<(), Error> {
        let mut run = Running {
            sched,
            context,
            rank,
        };
        let waited = catch_unwind(AssertUnwindSafe(|| {
            if !self.engine().advance_run_once(&mut run) {
                self.wait_until(|e| e.advance_run_once(&mut run).then_some(()));
            }
        }));
        if let Err(panic) = waited {
            self.wait_until(|e| e.abandon_run(&mut run).then_some(()));
            resume_unwind(panic);
        }
        match run.sched.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Engine {
    /// Advances `run`; returns whether it finished.
    fn advance_run_once(&mut self, run: &mut Running) -> bool {
        self.advance_run(run);
        run.sched.finished()
    }
}
