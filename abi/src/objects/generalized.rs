//! Generalized requests (`MPI_Grequest_start`, MPI 4.0 section 13.2):
//! operations the program carries out itself, completed by
//! `MPI_Grequest_complete`, with three callbacks MPI calls:
//!
//! - `query_fn` fills the status, when a wait or test completes the
//!   request (and at each `MPI_Request_get_status` once it is complete);
//! - `free_fn` after it, when that completion frees the request, or by
//!   `MPI_Request_free` (no `query_fn` then); a request freed before
//!   `MPI_Grequest_complete` is released by that call instead;
//! - `cancel_fn` by `MPI_Cancel`, told whether `MPI_Grequest_complete` was
//!   already called.
//!
//! A callback's error code is returned, unchanged, by the MPI call that ran
//! it. A completion runs `query_fn` then `free_fn` and reports the error of
//! the last callback that failed (MPI: "the error code returned by the last
//! callback, namely free_fn"; a failed `query_fn` is not lost when
//! `free_fn` succeeds). The callbacks run without the state lock held, so
//! they may call MPI (e.g. `MPI_Status_set_elements`).

use std::ffi::{c_int, c_void};

use oxmpi::Status;

use crate::errors::AbiError;
use crate::handles::{self, empty_status, MPI_Status};

/// `MPI_Grequest_query_function`.
pub type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
/// `MPI_Grequest_free_function`.
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
pub type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
/// `MPIX_Grequest_poll_function`.
pub type PollFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;

/// The callbacks of a generalized request and their `extra_state`. A null
/// function pointer is a callback that does nothing and succeeds.
#[derive(Clone, Copy)]
pub struct Callbacks {
    /// Fills the status.
    pub query_fn: Option<QueryFn>,
    /// Releases the program's resources.
    pub free_fn: Option<FreeFn>,
    /// Starts cancelling the operation.
    pub cancel_fn: Option<CancelFn>,
    /// Advances the operation (`MPIX_Grequest_start`): called by tests and
    /// waits while the request is not complete, without the state lock.
    pub poll_fn: Option<PollFn>,
    /// The program's argument to the callbacks (an address).
    pub extra_state: usize,
}

/// A generalized request.
pub struct Grequest {
    /// Its callbacks.
    pub callbacks: Callbacks,
    /// `MPI_Grequest_complete` was called.
    pub complete: bool,
    /// `MPI_Request_free` was called before it completed: the handle is
    /// gone and `MPI_Grequest_complete` releases the request.
    pub freed: bool,
}

/// A callback's return code as an error.
fn check(rc: c_int, what: &str) -> Result<(), AbiError> {
    match rc {
        0 => Ok(()),
        rc => Err(AbiError::from_code(rc, what)),
    }
}

impl Callbacks {
    fn state(&self) -> *mut c_void {
        self.extra_state as *mut c_void
    }

    /// Runs `query_fn` on a fresh status and returns what it set.
    pub fn query(&self) -> (Status, Option<AbiError>) {
        let mut c = handles::c_status(&empty_status(), 0);
        let rc = match self.query_fn {
            // SAFETY: a function the program gave MPI_Grequest_start, called
            // as MPI specifies with a valid status.
            Some(f) => unsafe { f(self.state(), &mut c) },
            None => 0,
        };
        let status = Status {
            source: c.MPI_SOURCE,
            tag: c.MPI_TAG,
            count: handles::status_bytes(&c) as usize,
            cancelled: handles::status_cancelled(&c),
            truncated_from: None,
        };
        (
            status,
            check(rc, "the generalized request's query_fn").err(),
        )
    }

    /// Runs `poll_fn` (nothing without one).
    pub fn poll(&self) -> Result<(), AbiError> {
        let Some(f) = self.poll_fn else {
            return Ok(());
        };
        let mut c = handles::c_status(&empty_status(), 0);
        // SAFETY: as in `query`.
        check(
            unsafe { f(self.state(), &mut c) },
            "the generalized request's poll_fn",
        )
    }

    /// Runs `free_fn`.
    pub fn free(&self) -> Result<(), AbiError> {
        let rc = match self.free_fn {
            // SAFETY: as in `query`.
            Some(f) => unsafe { f(self.state()) },
            None => 0,
        };
        check(rc, "the generalized request's free_fn")
    }

    /// Runs `cancel_fn`; `complete` says whether `MPI_Grequest_complete`
    /// was called.
    pub fn cancel(&self, complete: bool) -> Result<(), AbiError> {
        let rc = match self.cancel_fn {
            // SAFETY: as in `query`.
            Some(f) => unsafe { f(self.state(), c_int::from(complete)) },
            None => 0,
        };
        check(rc, "the generalized request's cancel_fn")
    }

    /// A wait or test completed the request: `query_fn`, then `free_fn`;
    /// the status and the error of the last callback that failed.
    pub fn complete(&self) -> (Status, Option<AbiError>) {
        let (status, queried) = self.query();
        (status, self.free().err().or(queried))
    }
}
