//! Packing from and unpacking into device memory: a contiguous type is one
//! copy each way; otherwise the bytes the elements touch are copied to a
//! host shadow with the same layout, packed or unpacked there by the host
//! code, and (for unpacking) copied back whole, gaps included as they were
//! read, so bytes outside the elements keep their values.

use super::Placed;
use crate::error::Error;
use crate::mem::cuda;

/// The bytes `p`'s elements touch: `(offset from p.buf, length)`.
fn span(p: &Placed) -> (isize, usize) {
    if p.count == 0 || p.len == 0 {
        return (0, 0);
    }
    let last = (p.count as isize - 1) * p.dt.extent();
    let lo = p.dt.true_lb() + last.min(0);
    let hi = p.dt.true_lb() + p.dt.true_extent() + last.max(0);
    (lo, (hi - lo) as usize)
}

/// Whether `p`'s elements are in device memory.
#[inline]
pub(super) fn on_device(p: &Placed) -> bool {
    cuda::active() && p.len > 0 && cuda::is_device((p.buf as *const u8).wrapping_offset(span(p).0))
}

/// A host copy of the bytes `p` touches; the address that stands for
/// `p.buf` in it.
///
/// # Safety
/// `p`'s elements are device memory.
unsafe fn shadow(p: &Placed) -> Result<(Vec<u8>, isize), Error> {
    let (lo, len) = span(p);
    let mut host = vec![0u8; len];
    let first = (p.buf as *const u8).wrapping_offset(lo);
    // SAFETY: the caller's contract: the span is the elements' memory.
    unsafe { cuda::copy_from_device(&mut host, first) }?;
    Ok((host, lo))
}

/// [`Placed::pack_into`] for device memory.
///
/// # Safety
/// As [`Placed::pack_into`].
pub(super) unsafe fn pack_into(p: &Placed, out: &mut [u8]) -> Result<(), Error> {
    if p.dt.is_contiguous() {
        let first = (p.buf as *const u8).wrapping_offset(p.dt.true_lb());
        let n = out.len().min(p.len);
        // SAFETY: the caller's contract: the elements are `p.len` bytes there.
        return unsafe { cuda::copy_from_device(&mut out[..n], first) };
    }
    // SAFETY: the caller's contract; the layout stays inside the span.
    unsafe { through_shadow(p, false, |base| p.dt.pack_raw(base, p.count, 0, out)) }
}

/// [`Placed::unpack`] for device memory (`tmp` holds the bytes to unpack).
///
/// # Safety
/// As [`Placed::unpack`].
pub(super) unsafe fn unpack(p: &Placed, tmp: &[u8]) -> Result<(), Error> {
    if p.dt.is_contiguous() {
        // One run: the bytes go straight to their place, no shadow.
        let first = (p.buf as *mut u8).wrapping_offset(p.dt.true_lb());
        // SAFETY: the caller's contract: room for `p.len` >= `tmp.len()` bytes.
        return unsafe { cuda::copy_to_device(first, tmp) };
    }
    // SAFETY: the caller's contract; the layout stays inside the span.
    unsafe { through_shadow(p, true, |base| p.dt.unpack_raw(base, p.count, 0, tmp)) }
}

/// Runs `f` on a host shadow of the bytes `p` touches, given the address
/// that stands for `p.buf` in it; with `write_back`, the shadow (gaps as
/// they were read) is copied back to the device afterwards.
///
/// # Safety
/// `p`'s elements are device memory; `f` stays inside their span.
pub(super) unsafe fn through_shadow<R>(
    p: &Placed,
    write_back: bool,
    f: impl FnOnce(*mut u8) -> Result<R, Error>,
) -> Result<R, Error> {
    // SAFETY: the caller's contract.
    let (mut host, lo) = unsafe { shadow(p) }?;
    let r = f(host.as_mut_ptr().wrapping_offset(-lo))?;
    if write_back {
        let first = (p.buf as *mut u8).wrapping_offset(lo);
        // SAFETY: the caller's contract: the span is the elements' memory.
        unsafe { cuda::copy_to_device(first, &host) }?;
    }
    Ok(r)
}
