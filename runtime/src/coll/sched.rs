//! A collective as a small dependency graph of steps (send, receive,
//! reduce, copy), advanced by the progress engine. A blocking collective
//! runs the same graph to completion; a non-blocking one returns at once and
//! many can be outstanding, on one communicator or several.
//!
//! Algorithms build schedules with [`Schedule::send`], [`Schedule::recv`],
//! [`Schedule::reduce`] and [`Schedule::copy`], each naming the steps it
//! depends on; a step starts when all of them are done.

use crate::error::Error;
pub use crate::ops::Reducer;

/// Where a step's bytes live.
#[derive(Debug, Clone, Copy)]
pub enum Base {
    /// The caller's buffer (valid until the collective completes).
    User(*mut u8),
    /// Scratch buffer `n` owned by the schedule.
    Temp(usize),
}

/// A byte range of a user or scratch buffer.
#[derive(Debug, Clone, Copy)]
pub struct Buf {
    /// Which buffer.
    pub base: Base,
    /// Offset in bytes.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

impl Buf {
    /// `len` bytes at `offset` of the same buffer.
    pub fn slice(&self, offset: usize, len: usize) -> Buf {
        Buf {
            base: self.base,
            offset: self.offset + offset,
            len,
        }
    }
}

/// One step.
pub enum Step {
    /// Send `buf` to world rank `to` with collective tag `tag`.
    Send {
        /// Destination world rank.
        to: usize,
        /// Tag on the collective context.
        tag: i32,
        /// Bytes to send.
        buf: Buf,
    },
    /// Receive into `buf` from communicator rank `from`.
    Recv {
        /// Source rank in the communicator.
        from: i32,
        /// Tag on the collective context.
        tag: i32,
        /// Where the bytes go (exactly `buf.len` are expected).
        buf: Buf,
    },
    /// `inout = input op inout`.
    Reduce {
        /// Left operand.
        input: Buf,
        /// Right operand and result.
        inout: Buf,
        /// The operation.
        op: Reducer,
    },
    /// Copy `src` to `dst` (same length).
    Copy {
        /// Source.
        src: Buf,
        /// Destination.
        dst: Buf,
    },
    /// Work that finishes when its own poll says so (a collective through
    /// the communicator's shared-memory area, `coll/area`); `None` only
    /// while the engine polls it.
    Poll(Option<Box<dyn PollStep>>),
}

/// A step the engine polls until it is done, without messages.
pub trait PollStep: Send {
    /// Moves on as far as it can without blocking; `Ok(true)` once done.
    /// `s` resolves the step's buffers; `wake(world_rank)` rings a peer
    /// that may sleep waiting for what this step published.
    fn poll(&mut self, s: &mut Schedule, wake: &dyn Fn(usize)) -> Result<bool, Error>;
}

/// How far a step got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    /// Waiting for its dependencies.
    Waiting,
    /// A send or receive in flight (engine request id).
    Running(u64),
    /// A [`Step::Poll`] started and not yet done.
    Polling,
    /// Finished.
    Done,
}

impl Drop for Schedule {
    fn drop(&mut self) {
        for buf in self.temps.drain(..) {
            if buf.capacity() <= SPARE_MAX_LEN && self.spare.len() < MAX_SPARE {
                self.spare.push(buf);
            } else {
                super::scratch::give_back(buf);
            }
        }
        // Keep the (emptied) vectors for the next schedule this thread
        // builds: a small collective otherwise spends a good part of its
        // time in the allocator.
        self.steps.clear();
        self.deps.clear();
        self.dep_range.clear();
        self.state.clear();
        let shell = Shell {
            steps: std::mem::take(&mut self.steps),
            deps: std::mem::take(&mut self.deps),
            dep_range: std::mem::take(&mut self.dep_range),
            state: std::mem::take(&mut self.state),
            temps: std::mem::take(&mut self.temps),
            spare: std::mem::take(&mut self.spare),
        };
        // A thread being torn down has no pool left: let the vectors go.
        let _ = SHELLS.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < MAX_SHELLS {
                pool.push(shell);
            }
        });
    }
}

/// The vectors of a finished schedule, kept for reuse.
struct Shell {
    steps: Vec<Step>,
    deps: Vec<u32>,
    dep_range: Vec<(u32, u32)>,
    state: Vec<StepState>,
    temps: Vec<Vec<u8>>,
    spare: Vec<Vec<u8>>,
}

/// Most shells a thread keeps.
const MAX_SHELLS: usize = 16;
/// Small scratch buffers a shell keeps for its next schedule's temporaries
/// (a small collective otherwise allocates and zeroes them on every call),
/// at most this many of at most `SPARE_MAX_LEN` bytes: at most 1 MiB kept
/// per thread.
const MAX_SPARE: usize = 4;
const SPARE_MAX_LEN: usize = 16 * 1024;

thread_local! {
    /// This thread's reusable schedule vectors (emptied).
    static SHELLS: std::cell::RefCell<Vec<Shell>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A collective's steps, dependencies and scratch memory.
pub struct Schedule {
    pub(crate) steps: Vec<Step>,
    /// Dependencies of every step, concatenated; `dep_range[i]` is step i's slice.
    deps: Vec<u32>,
    dep_range: Vec<(u32, u32)>,
    pub(crate) state: Vec<StepState>,
    pub(crate) temps: Vec<Vec<u8>>,
    /// Small buffers of earlier schedules, for [`Schedule::temp`].
    spare: Vec<Vec<u8>>,
    pub(crate) remaining: usize,
    /// First error met (a reduction failing, a truncated receive).
    pub(crate) error: Option<Error>,
    /// Set when the caller's buffers are device memory (see `on_device.rs`).
    pub(crate) device: Option<Box<super::on_device::DeviceRun>>,
}

// SAFETY: user buffer pointers are only dereferenced by the engine under its
// lock while the collective's caller keeps the buffers alive (the request
// borrows them, and blocking calls wait before returning).
unsafe impl Send for Schedule {}

impl Default for Schedule {
    fn default() -> Self {
        Self::new()
    }
}

impl Schedule {
    /// An empty schedule.
    #[inline]
    pub fn new() -> Schedule {
        let reused = SHELLS
            .try_with(|pool| pool.borrow_mut().pop())
            .ok()
            .flatten();
        // Most schedules have a handful of steps: avoid regrowing.
        let shell = reused.unwrap_or_else(|| Shell {
            steps: Vec::with_capacity(8),
            deps: Vec::with_capacity(16),
            dep_range: Vec::with_capacity(8),
            state: Vec::with_capacity(8),
            temps: Vec::new(),
            spare: Vec::new(),
        });
        Schedule {
            steps: shell.steps,
            deps: shell.deps,
            dep_range: shell.dep_range,
            state: shell.state,
            temps: shell.temps,
            spare: shell.spare,
            remaining: 0,
            error: None,
            device: None,
        }
    }

    /// A scratch buffer of `len` bytes; its contents are unspecified (reused
    /// memory): steps must write it before they read it.
    pub fn temp(&mut self, len: usize) -> Buf {
        let spare = if len <= SPARE_MAX_LEN {
            self.spare.pop()
        } else {
            None
        };
        let buf = match spare {
            // Initialised memory from an earlier schedule: shortening it
            // writes nothing, growing it zeroes only the new part.
            Some(mut b) => {
                b.resize(len, 0);
                b
            }
            None => super::scratch::take(len),
        };
        self.temps.push(buf);
        Buf {
            base: Base::Temp(self.temps.len() - 1),
            offset: 0,
            len,
        }
    }

    /// A user buffer of `len` bytes at `ptr`.
    pub fn user(ptr: *mut u8, len: usize) -> Buf {
        Buf {
            base: Base::User(ptr),
            offset: 0,
            len,
        }
    }

    fn push(&mut self, step: Step, after: &[usize]) -> usize {
        self.steps.push(step);
        let start = self.deps.len() as u32;
        self.deps.extend(after.iter().map(|&d| d as u32));
        self.dep_range.push((start, self.deps.len() as u32));
        self.state.push(StepState::Waiting);
        self.remaining += 1;
        self.steps.len() - 1
    }

    /// Sends `buf` to world rank `to` once `after` are done.
    pub fn send(&mut self, to: usize, tag: i32, buf: Buf, after: &[usize]) -> usize {
        self.push(Step::Send { to, tag, buf }, after)
    }

    /// Receives into `buf` from communicator rank `from` once `after` are done.
    pub fn recv(&mut self, from: i32, tag: i32, buf: Buf, after: &[usize]) -> usize {
        self.push(Step::Recv { from, tag, buf }, after)
    }

    /// Like [`Schedule::send`], but adds nothing for an empty `buf`: for
    /// messages whose length both sides know, so the receiver skips it too.
    pub fn send_some(&mut self, to: usize, tag: i32, buf: Buf, after: &[usize]) -> Option<usize> {
        (buf.len > 0).then(|| self.send(to, tag, buf, after))
    }

    /// Like [`Schedule::recv`], but adds nothing for an empty `buf` (see
    /// [`Schedule::send_some`]).
    pub fn recv_some(&mut self, from: i32, tag: i32, buf: Buf, after: &[usize]) -> Option<usize> {
        (buf.len > 0).then(|| self.recv(from, tag, buf, after))
    }

    /// Like [`Schedule::copy`], but adds nothing for an empty range.
    pub fn copy_some(&mut self, src: Buf, dst: Buf, after: &[usize]) -> Option<usize> {
        (src.len > 0).then(|| self.copy(src, dst, after))
    }

    /// `inout = input op inout` once `after` are done.
    pub fn reduce(&mut self, op: &Reducer, input: Buf, inout: Buf, after: &[usize]) -> usize {
        self.push(
            Step::Reduce {
                input,
                inout,
                op: op.clone(),
            },
            after,
        )
    }

    /// Adds `step`, polled once `after` are done.
    pub fn poll_step(&mut self, step: Box<dyn PollStep>, after: &[usize]) -> usize {
        self.push(Step::Poll(Some(step)), after)
    }

    /// Polls step `i` (a started [`Step::Poll`]) once; marks it done when
    /// it finishes or fails. Returns whether it finished.
    pub(crate) fn poll_once(&mut self, i: usize, wake: &dyn Fn(usize)) -> bool {
        let Step::Poll(slot) = &mut self.steps[i] else {
            return false;
        };
        let Some(mut step) = slot.take() else {
            return false;
        };
        let outcome = step.poll(self, wake);
        if let Step::Poll(slot) = &mut self.steps[i] {
            *slot = Some(step);
        }
        match outcome {
            Ok(false) => false,
            Ok(true) => {
                self.finish(i);
                true
            }
            Err(e) => {
                self.error.get_or_insert(e);
                self.finish(i);
                true
            }
        }
    }

    /// Copies `src` into `dst` once `after` are done.
    pub fn copy(&mut self, src: Buf, dst: Buf, after: &[usize]) -> usize {
        self.push(Step::Copy { src, dst }, after)
    }

    /// Whether every step finished.
    pub fn finished(&self) -> bool {
        self.remaining == 0
    }

    /// Whether step `i` may start.
    pub(crate) fn ready(&self, i: usize) -> bool {
        let (a, b) = self.dep_range[i];
        self.state[i] == StepState::Waiting
            && self.deps[a as usize..b as usize]
                .iter()
                .all(|&d| self.state[d as usize] == StepState::Done)
    }

    /// The address of `buf`.
    pub(crate) fn ptr(&mut self, buf: Buf) -> *mut u8 {
        match buf.base {
            // SAFETY: offsets stay inside the buffer the algorithm described.
            Base::User(p) => unsafe { p.add(buf.offset) },
            Base::Temp(i) => match self.device_temp(i, buf.offset) {
                Some(p) => p,
                None => self.temps[i][buf.offset..].as_mut_ptr(),
            },
        }
    }

    /// Runs a local (reduce or copy) step now.
    pub(crate) fn run_local(&mut self, i: usize) {
        let (src, dst, op) = match &self.steps[i] {
            Step::Reduce { input, inout, op } => (*input, *inout, Some(op.clone())),
            Step::Copy { src, dst } => (*src, *dst, None),
            _ => return,
        };
        if self.device.is_some() {
            if let Err(e) = self.run_local_on_device(src, dst, op) {
                self.error.get_or_insert(e);
            }
            self.finish(i);
            return;
        }
        let len = src.len.min(dst.len);
        let s = self.ptr(src);
        let d = self.ptr(dst);
        // SAFETY: both ranges are `len` bytes inside live buffers; the
        // algorithms never reduce or copy a range onto an overlapping one.
        let (input, inout) = unsafe {
            (
                std::slice::from_raw_parts(s, len),
                std::slice::from_raw_parts_mut(d, len),
            )
        };
        match op {
            Some(op) => {
                if let Err(e) = op(input, inout) {
                    self.error.get_or_insert(e);
                }
            }
            None => inout.copy_from_slice(input),
        }
        self.finish(i);
    }

    /// Marks every step that has not started as done (an abandoned
    /// schedule: once nothing is in flight, it is finished).
    pub(crate) fn drop_waiting(&mut self) {
        for i in 0..self.state.len() {
            if self.state[i] == StepState::Waiting {
                self.finish(i);
            }
        }
    }

    pub(crate) fn finish(&mut self, i: usize) {
        if self.state[i] != StepState::Done {
            self.state[i] = StepState::Done;
            self.remaining -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_come_back_at_the_asked_length() {
        let mut s = Schedule::new();
        let a = s.temp(100);
        s.temps[0].fill(7);
        drop(s);
        let mut s = Schedule::new();
        let (b, c, d) = (s.temp(40), s.temp(300), s.temp(SPARE_MAX_LEN + 1));
        assert_eq!(
            (a.len, b.len, c.len, d.len),
            (100, 40, 300, SPARE_MAX_LEN + 1)
        );
        let lens: Vec<usize> = s.temps.iter().map(Vec::len).collect();
        assert_eq!(lens, [40, 300, SPARE_MAX_LEN + 1]);
        drop(s);
        let s = Schedule::new();
        assert!(s.spare.len() <= MAX_SPARE);
        assert!(s.spare.iter().all(|b| b.capacity() <= SPARE_MAX_LEN));
    }

    #[test]
    fn local_steps_follow_dependencies() {
        let mut s = Schedule::new();
        let a = s.temp(4);
        let b = s.temp(4);
        let add = Reducer::shared(|i: &[u8], io: &mut [u8]| {
            io.iter_mut().zip(i).for_each(|(x, y)| *x += *y);
            Ok(())
        });
        s.temps[0].copy_from_slice(&[1, 2, 3, 4]);
        let c = s.copy(a, b, &[]);
        let r = s.reduce(&add, a, b, &[c]);
        assert!(s.ready(c) && !s.ready(r));
        s.run_local(c);
        assert!(s.ready(r));
        s.run_local(r);
        assert!(s.finished());
        assert_eq!(s.temps[1], [2, 4, 6, 8]);
    }
}
