//! Reused scratch buffers for schedules. A fresh `vec![0; n]` of a few MiB
//! costs a page fault per 4 KiB page on every collective call; keeping
//! finished schedules' buffers (up to a bound) makes repeated large
//! collectives touch warm memory instead.

use std::sync::Mutex;

/// Buffers smaller than this are not pooled (the allocator is fast there).
const MIN_POOLED: usize = 64 * 1024;
/// Most bytes kept in the pool.
const MAX_POOLED: usize = 256 << 20;

struct Pool {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    bufs: Vec::new(),
    bytes: 0,
});

/// A buffer of `len` initialised bytes (contents unspecified: schedules write
/// scratch memory before they read it).
pub fn take(len: usize) -> Vec<u8> {
    if len >= MIN_POOLED {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let best = pool
            .bufs
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        if let Some(i) = best {
            let mut buf = pool.bufs.swap_remove(i);
            pool.bytes -= buf.capacity();
            drop(pool);
            buf.resize(len, 0);
            return buf;
        }
    }
    vec![0u8; len]
}

/// Returns a buffer for reuse.
pub fn give_back(buf: Vec<u8>) {
    if buf.capacity() < MIN_POOLED {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if pool.bytes + buf.capacity() <= MAX_POOLED {
        pool.bytes += buf.capacity();
        pool.bufs.push(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_reused() {
        let a = take(1 << 20);
        let ptr = a.as_ptr();
        give_back(a);
        let b = take(1 << 19);
        assert_eq!(b.len(), 1 << 19);
        // Another test may race for the pool; reuse is likely, not certain.
        let _ = ptr == b.as_ptr();
        give_back(b);
        assert_eq!(take(10).len(), 10);
    }
}
