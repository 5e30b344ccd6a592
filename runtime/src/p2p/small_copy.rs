//! Copies of a few bytes without a call into `memcpy`: a small message is
//! copied twice on the latency path (into the ring cell, out into the
//! receive buffer), and for a handful of bytes the call costs more than
//! the copy.

/// Copies `n` bytes from `src` to `dst`: up to 32 bytes as two (possibly
/// overlapping) loads and stores, more through `copy_nonoverlapping`.
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst`
/// writable for `n` bytes, the two ranges disjoint.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: the caller's contract.
    if !unsafe { copy_small(src, dst, n) } {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, n) }
    }
}

/// [`copy_bytes`] for ranges that may overlap (one-sided operations
/// between parts of one window): more than 32 bytes through `ptr::copy`.
///
/// # Safety
/// As for [`std::ptr::copy`]: `src` readable and `dst` writable for `n`
/// bytes.
#[inline(always)]
pub(crate) unsafe fn copy_bytes_overlapping(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: the caller's contract; the small copies load before storing.
    if !unsafe { copy_small(src, dst, n) } {
        // SAFETY: as above.
        unsafe { copy_in_pieces(src, dst, n) }
    }
}

/// Bytes per `memmove` of a large copy. glibc's `memmove` switches to
/// non-temporal stores above a threshold it derives from the cache sizes
/// (near 1 MiB on the VMs measured), and those were slower there at every
/// size: one 1 MiB copy 17.3 us whole against 14.8 in 256 KiB pieces,
/// 4 MiB 79 against 67, 16 MiB 672 against 370 (AMD EPYC VM, a C loop,
/// best of 10; on the Intel VM non-temporal stores were 2.3x slower at
/// 1 MiB). Open MPI's one-sided copies go in pipeline fragments too.
const PIECE: usize = 256 << 10;

/// `ptr::copy` of `n` bytes in pieces of at most [`PIECE`], ordered so
/// that overlapping ranges copy as one `memmove` does: from the end when
/// the destination starts inside the source, else from the start.
///
/// # Safety
/// As for [`std::ptr::copy`].
unsafe fn copy_in_pieces(src: *const u8, dst: *mut u8, n: usize) {
    let backward = (dst as usize) > (src as usize) && (dst as usize) < (src as usize) + n;
    let pieces = n.div_ceil(PIECE);
    for i in 0..pieces {
        let i = if backward { pieces - 1 - i } else { i };
        let at = i * PIECE;
        // SAFETY: each piece lies inside both ranges; a piece only
        // overwrites source bytes that earlier pieces have read (the order
        // above), and `ptr::copy` handles the overlap inside a piece.
        unsafe { std::ptr::copy(src.add(at), dst.add(at), PIECE.min(n - at)) };
    }
}

/// Copies `n` bytes when `n <= 32` (every load before any store, so the
/// ranges may overlap) and says so; copies nothing for longer ones.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
#[inline(always)]
unsafe fn copy_small(src: *const u8, dst: *mut u8, n: usize) -> bool {
    // SAFETY (every arm): each access lies inside the first `n` bytes of
    // `src` or `dst`, and both loads happen before either store.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                let (a, b, c) = (src.read(), src.add(n / 2).read(), src.add(n - 1).read());
                dst.write(a);
                dst.add(n / 2).write(b);
                dst.add(n - 1).write(c);
            }
            4..=8 => two_words::<u32>(src, dst, n),
            9..=16 => two_words::<u64>(src, dst, n),
            17..=32 => two_words::<u128>(src, dst, n),
            _ => return false,
        }
    }
    true
}

/// Copies `n` bytes (`size_of::<W>() <= n <= 2 * size_of::<W>()`) as the
/// first and the last `W` of the range.
///
/// # Safety
/// As for [`copy_bytes`], with `n` in that range.
#[inline(always)]
unsafe fn two_words<W: Copy>(src: *const u8, dst: *mut u8, n: usize) {
    let w = std::mem::size_of::<W>();
    // SAFETY: the caller's contract; unaligned accesses throughout.
    unsafe {
        let head = src.cast::<W>().read_unaligned();
        let tail = src.add(n - w).cast::<W>().read_unaligned();
        dst.cast::<W>().write_unaligned(head);
        dst.add(n - w).cast::<W>().write_unaligned(tail);
    }
}

#[cfg(test)]
mod tests {
    use super::{copy_bytes, copy_bytes_overlapping, PIECE};

    #[test]
    fn every_small_length_copies_exactly_its_bytes() {
        let src: Vec<u8> = (1..=80).collect();
        for n in 0..=70 {
            let mut dst = vec![0u8; 80];
            // SAFETY: both buffers hold 80 bytes and are distinct.
            unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr(), n) };
            assert_eq!(&dst[..n], &src[..n], "length {n}");
            assert!(
                dst[n..].iter().all(|&b| b == 0),
                "length {n} wrote past its end"
            );
        }
    }

    #[test]
    fn large_overlapping_copies_in_pieces_match_memmove() {
        // Sizes around the piece, shifts inside one piece and beyond it,
        // both directions.
        for n in [PIECE + 1, 2 * PIECE + 17, 3 * PIECE] {
            for shift in [1usize, 63, PIECE - 1, PIECE + 5] {
                let total = n + shift;
                let orig: Vec<u8> = (0..total).map(|i| (i * 7 % 251) as u8).collect();
                for forward in [false, true] {
                    let (from, to) = if forward { (shift, 0) } else { (0, shift) };
                    let mut want = orig.clone();
                    want.copy_within(from..from + n, to);
                    let mut got = orig.clone();
                    let p = got.as_mut_ptr();
                    // SAFETY: both ranges lie inside `got`.
                    unsafe { copy_bytes_overlapping(p.add(from), p.add(to), n) };
                    assert!(got == want, "n {n}, shift {shift}, forward {forward}");
                }
            }
        }
    }

    #[test]
    fn overlapping_ranges_copy_as_memmove_does() {
        let orig: Vec<u8> = (1..=120).collect();
        for n in 0..=70 {
            for shift in [1usize, 3, 8, 17, 40] {
                for forward in [true, false] {
                    let (from, to) = if forward { (0, shift) } else { (shift, 0) };
                    let mut got = orig.clone();
                    let mut want = orig.clone();
                    want.copy_within(from..from + n, to);
                    let p = got.as_mut_ptr();
                    // SAFETY: both ranges lie inside the 120-byte buffer.
                    unsafe { copy_bytes_overlapping(p.add(from), p.add(to), n) };
                    assert_eq!(got, want, "length {n}, from {from} to {to}");
                }
            }
        }
    }
}
