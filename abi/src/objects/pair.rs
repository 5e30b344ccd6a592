//! The request of `MPI_Isendrecv` / `MPI_Isendrecv_replace`: a receive
//! and a send that complete as one request once both have; its status is
//! the receive's.

use oxmpi::request::Sweep;
use oxmpi::{Error, Request, Status};

use super::detached::Detached;
use crate::errors::{AbiError, Class};

/// Which half of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The receive.
    Recv,
    /// The send.
    Send,
}

/// One half of a pair.
pub enum Half {
    /// Running; `None` while a waiting thread holds the runtime request.
    Running(Option<Request<'static>>),
    /// Completed with this outcome (kept until the pair completes).
    Done(Result<Status, Error>),
}

impl Half {
    /// Records the outcome if the operation has finished.
    fn poll(&mut self, sweep: &mut Sweep<'_>) {
        if let Half::Running(Some(r)) = self {
            match sweep.test(r) {
                Ok(None) => {}
                Ok(Some(s)) => *self = Half::Done(Ok(s)),
                Err(e) => *self = Half::Done(Err(e)),
            }
        }
    }

    /// Whether the operation has finished (its outcome kept, not recorded).
    fn settled(&mut self, sweep: &mut Sweep<'_>) -> bool {
        match self {
            Half::Running(Some(r)) => sweep.settle(r),
            Half::Running(None) => false,
            Half::Done(_) => true,
        }
    }

    /// The outcome of a finished half, leaving it taken.
    fn take(&mut self) -> Result<Status, Error> {
        match std::mem::replace(self, Half::Running(None)) {
            Half::Done(r) => r,
            _ => Ok(Status::empty()),
        }
    }
}

/// A receive and a send started together.
pub struct Pair {
    /// The receive.
    pub recv: Half,
    /// The send.
    pub send: Half,
    /// The send's copy of the data (`MPI_Isendrecv_replace`: read by the
    /// send until it completes).
    pub send_data: Option<Vec<u8>>,
}

// SAFETY: the runtime requests and buffers belong to the program's
// operation, which MPI lets any thread complete; the state lock serialises
// access.
unsafe impl Send for Pair {}

impl Pair {
    /// A pair of running operations.
    pub fn new(recv: Request<'static>, send: Request<'static>, send_data: Option<Vec<u8>>) -> Pair {
        Pair {
            recv: Half::Running(Some(recv)),
            send: Half::Running(Some(send)),
            send_data,
        }
    }

    fn half(&mut self, side: Side) -> &mut Half {
        match side {
            Side::Recv => &mut self.recv,
            Side::Send => &mut self.send,
        }
    }

    /// Tests both halves; once both have completed, the pair's outcome (a
    /// failed send's error first, as `MPI_Sendrecv`).
    pub fn test(&mut self, sweep: &mut Sweep<'_>) -> Option<Result<Status, Error>> {
        self.recv.poll(sweep);
        self.send.poll(sweep);
        if !matches!((&self.recv, &self.send), (Half::Done(_), Half::Done(_))) {
            return None;
        }
        let received = self.recv.take();
        Some(self.send.take().and(received))
    }

    /// Whether both halves have finished, without completing the pair.
    pub fn settled(&mut self, sweep: &mut Sweep<'_>) -> bool {
        self.recv.settled(sweep) & self.send.settled(sweep)
    }

    /// The outcome once both halves finished, without completing the pair
    /// (`MPI_Request_get_status`).
    pub fn peek(&mut self, sweep: &mut Sweep<'_>) -> Option<Result<Status, AbiError>> {
        self.recv.poll(sweep);
        self.send.poll(sweep);
        let as_abi = |e: &Error| AbiError::new(Class(e.class() as i32), e.to_string());
        match (&self.recv, &self.send) {
            (Half::Done(_), Half::Done(Err(e))) => Some(Err(as_abi(e))),
            (Half::Done(Ok(s)), Half::Done(Ok(_))) => Some(Ok(*s)),
            (Half::Done(Err(e)), Half::Done(Ok(_))) => Some(Err(as_abi(e))),
            _ => None,
        }
    }

    /// Takes the running runtime requests, for a thread to wait on.
    pub fn take_running(&mut self) -> Vec<(Side, Request<'static>)> {
        let mut out = Vec::new();
        for side in [Side::Recv, Side::Send] {
            if let Half::Running(r) = self.half(side) {
                if let Some(r) = r.take() {
                    out.push((side, r));
                }
            }
        }
        out
    }

    /// Whether some half is neither finished nor available to wait on.
    pub fn held_elsewhere(&self) -> bool {
        matches!(self.recv, Half::Running(None)) || matches!(self.send, Half::Running(None))
    }

    /// Puts back a runtime request taken by [`Pair::take_running`].
    pub fn put_back(&mut self, side: Side, req: Request<'static>) {
        *self.half(side) = Half::Running(Some(req));
    }

    /// Records the outcome of a half a thread waited on.
    pub fn record(&mut self, side: Side, outcome: Result<Status, Error>) {
        *self.half(side) = Half::Done(outcome);
    }

    /// Cancels the receive if it has not matched (sends are not cancelled).
    pub fn cancel(&self) {
        if let Half::Running(Some(r)) = &self.recv {
            r.cancel();
        }
    }

    /// The pair was freed: its running halves, with the buffers they use,
    /// to finish in the background. A buffer whose half another thread
    /// holds (freeing a request being waited on is erroneous) is leaked
    /// rather than released under it.
    pub fn detach(mut self) -> Vec<Detached> {
        let mut out = Vec::new();
        for (half, data) in [
            (&mut self.recv, None),
            (&mut self.send, self.send_data.take()),
        ] {
            match std::mem::replace(half, Half::Running(None)) {
                Half::Running(Some(req)) => out.push(Detached { req, data }),
                Half::Running(None) => std::mem::forget(data),
                Half::Done(_) => {}
            }
        }
        out
    }
}
