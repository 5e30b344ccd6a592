//! The layout of `MPI_Status` and what is read from and written to it.

use std::ffi::c_int;

use oxmpi::Status;

/// `MPI_Status`: 20 bytes, MPICH's field order. The count is in bytes:
/// `count_lo` holds bits 0..32, bits 31..1 of `count_hi_and_cancelled` hold
/// bits 32..63, bit 0 is the cancelled flag.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(non_snake_case)]
pub struct MPI_Status {
    /// Low 32 bits of the byte count.
    pub count_lo: c_int,
    /// High bits of the byte count, shifted left by one; bit 0: cancelled.
    pub count_hi_and_cancelled: c_int,
    /// Sender's rank.
    pub MPI_SOURCE: c_int,
    /// Message tag.
    pub MPI_TAG: c_int,
    /// Error code (set by multiple-completion calls only).
    pub MPI_ERROR: c_int,
}

/// `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE`: `(MPI_Status *)1`.
pub const STATUS_IGNORE: usize = 1;

/// Whether a status pointer is `MPI_STATUS_IGNORE` / `MPI_STATUSES_IGNORE`.
#[inline]
pub fn status_ignored(p: *const MPI_Status) -> bool {
    p as usize == STATUS_IGNORE
}

/// The C status of a runtime status (`MPI_ERROR` is left as `error`).
#[inline]
pub fn c_status(s: &Status, error: c_int) -> MPI_Status {
    let count = s.count as u64;
    MPI_Status {
        count_lo: count as u32 as c_int,
        count_hi_and_cancelled: (((count >> 32) << 1) as u32 | u32::from(s.cancelled)) as c_int,
        MPI_SOURCE: s.source,
        MPI_TAG: s.tag,
        MPI_ERROR: error,
    }
}

/// The byte count stored in a C status.
pub fn status_bytes(s: &MPI_Status) -> u64 {
    u64::from(s.count_lo as u32) + (u64::from(s.count_hi_and_cancelled as u32 >> 1) << 32)
}

/// Stores a byte count in a C status, keeping its cancelled bit.
pub fn set_status_bytes(s: &mut MPI_Status, bytes: u64) {
    s.count_lo = bytes as u32 as c_int;
    s.count_hi_and_cancelled =
        ((((bytes >> 32) as u32) << 1) | (s.count_hi_and_cancelled as u32 & 1)) as c_int;
}

/// Whether a C status says cancelled.
pub fn status_cancelled(s: &MPI_Status) -> bool {
    s.count_hi_and_cancelled & 1 == 1
}

/// Writes a single-completion status (source, tag, count, cancelled; the
/// `MPI_ERROR` field is left alone, as MPI specifies) unless ignored.
///
/// # Safety
/// `p` is `MPI_STATUS_IGNORE`, or valid for writes of one `MPI_Status`.
#[inline]
pub unsafe fn write_status(p: *mut MPI_Status, s: &Status) {
    if status_ignored(p) || p.is_null() {
        return;
    }
    // SAFETY: the caller's contract; MPI_ERROR is read before being kept.
    unsafe {
        let error = (*p).MPI_ERROR;
        *p = c_status(s, error);
    }
}
