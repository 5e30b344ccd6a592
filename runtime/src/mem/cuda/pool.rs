//! A small bounded pool of driver allocations (device scratch, pinned host
//! buffers): allocating and freeing through the driver is slow (and a
//! device free synchronises the device), so freed buffers are kept for
//! the next user of the same context.

use std::sync::Mutex;

/// Buffers kept: (context, address, bytes), at most `max_buffers` of at
/// most `max_bytes` bytes in all.
pub(super) struct Pool {
    kept: Mutex<Vec<(usize, usize, usize)>>,
    max_buffers: usize,
    max_bytes: usize,
}

impl Pool {
    /// An empty pool with these bounds.
    pub(super) const fn new(max_buffers: usize, max_bytes: usize) -> Pool {
        Pool {
            kept: Mutex::new(Vec::new()),
            max_buffers,
            max_bytes,
        }
    }

    /// A kept buffer of context `ctx` with room for `len` bytes and not
    /// more than twice that: `(address, bytes)`, taken out of the pool.
    pub(super) fn take(&self, ctx: usize, len: usize) -> Option<(usize, usize)> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let i = kept
            .iter()
            .position(|&(c, _, cap)| c == ctx && cap >= len && cap / 2 <= len)?;
        let (_, addr, cap) = kept.swap_remove(i);
        Some((addr, cap))
    }

    /// Keeps a buffer if the bounds allow; false: the caller frees it.
    pub(super) fn give(&self, ctx: usize, addr: usize, cap: usize) -> bool {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: usize = kept.iter().map(|&(_, _, c)| c).sum();
        if kept.len() < self.max_buffers && bytes + cap <= self.max_bytes {
            kept.push((ctx, addr, cap));
            return true;
        }
        false
    }
}
