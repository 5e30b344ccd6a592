//! The status of a completed receive (or send): who, which tag, how much.

use crate::error::Error;

/// `MPI_ANY_SOURCE`.
pub const ANY_SOURCE: i32 = -2;
/// `MPI_ANY_TAG`.
pub const ANY_TAG: i32 = -1;
/// `MPI_PROC_NULL`: sends to it and receives from it complete at once.
pub const PROC_NULL: i32 = -1;
/// Largest tag a program may use (`MPI_TAG_UB`).
pub const TAG_UB: i32 = (1 << 30) - 1;

/// Result of a completed operation, as `MPI_Status` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// Sender's rank in the communicator (`MPI_SOURCE`).
    pub source: i32,
    /// Message tag (`MPI_TAG`).
    pub tag: i32,
    /// Bytes received (or the message size for a probe).
    pub count: usize,
    /// The receive was cancelled.
    pub cancelled: bool,
    /// Set when the message was longer than the buffer: `count` bytes were
    /// stored and the rest discarded (`MPI_ERR_TRUNCATE`).
    pub truncated_from: Option<usize>,
}

impl Status {
    /// The status of an operation with no message (e.g. with `PROC_NULL`).
    pub fn empty() -> Status {
        Status {
            source: PROC_NULL,
            tag: ANY_TAG,
            count: 0,
            cancelled: false,
            truncated_from: None,
        }
    }

    /// Number of whole elements of `elem_size` bytes (`MPI_Get_count`);
    /// `None` when the byte count is not a multiple (`MPI_UNDEFINED`).
    pub fn count_of(&self, elem_size: usize) -> Option<usize> {
        if elem_size == 0 {
            return Some(0);
        }
        self.count
            .is_multiple_of(elem_size)
            .then_some(self.count / elem_size)
    }

    /// `Err(Error::Truncated)` when the message did not fit.
    #[inline]
    pub fn check(self) -> Result<Status, Error> {
        match self.truncated_from {
            Some(len) => Err(Error::Truncated {
                message_len: len,
                buffer_len: self.count,
                status: self,
            }),
            None => Ok(self),
        }
    }
}
