//! Byte buffers the engine reuses for the messages it must hold: eager
//! messages that arrive before their receive (the unexpected queue) and
//! packets waiting for room in a peer's ring. A streaming sender keeps
//! both busy with one buffer per message; taking them from the allocator
//! each time costs more than the copy for small messages.

/// Buffers of at most [`BufPool::MAX_KEPT_CAPACITY`] bytes kept after use;
/// small ones apart, since a sender that runs ahead (the root of
/// back-to-back broadcasts) leaves thousands of small unexpected messages
/// at its receiver, and each should not cost an allocation.
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    free: Vec<Vec<u8>>,
    small: Vec<Vec<u8>>,
}

impl BufPool {
    /// Largest buffer kept for reuse (larger ones go back to the allocator).
    pub(crate) const MAX_KEPT_CAPACITY: usize = 64 * 1024;
    /// Most buffers kept.
    const MAX_KEPT: usize = 256;
    /// Largest buffer kept among the small ones.
    const SMALL_CAPACITY: usize = 64;
    /// Most small buffers kept (about 6 MiB with their headers).
    const MAX_SMALL_KEPT: usize = 1 << 16;

    /// An empty buffer with room for at least `len` bytes.
    pub(crate) fn take(&mut self, len: usize) -> Vec<u8> {
        let list = if len <= Self::SMALL_CAPACITY {
            &mut self.small
        } else {
            &mut self.free
        };
        match list.pop() {
            Some(mut v) => {
                v.reserve(len);
                v
            }
            // Small buffers get the small list's capacity, so that any
            // of them serves any small message later.
            None if len <= Self::SMALL_CAPACITY => Vec::with_capacity(Self::SMALL_CAPACITY),
            None => Vec::with_capacity(len),
        }
    }

    /// A buffer holding `parts` one after the other.
    pub(crate) fn concat(&mut self, parts: &[&[u8]]) -> Vec<u8> {
        let mut v = self.take(parts.iter().map(|p| p.len()).sum());
        parts.iter().for_each(|p| v.extend_from_slice(p));
        v
    }

    /// Gives `v` back for reuse.
    pub(crate) fn give(&mut self, mut v: Vec<u8>) {
        let cap = v.capacity();
        if cap == Self::SMALL_CAPACITY && self.small.len() < Self::MAX_SMALL_KEPT {
            v.clear();
            self.small.push(v);
        } else if cap <= Self::MAX_KEPT_CAPACITY && self.free.len() < Self::MAX_KEPT {
            v.clear();
            self.free.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_empty_and_big_ones_are_not_kept() {
        let mut pool = BufPool::default();
        let v = pool.concat(&[b"ab", b"cd"]);
        assert_eq!(v, b"abcd");
        let ptr = v.as_ptr();
        pool.give(v);
        let again = pool.take(3);
        assert!(again.is_empty() && again.capacity() >= 4);
        assert_eq!(again.as_ptr(), ptr, "the buffer is reused");
        pool.give(Vec::with_capacity(BufPool::MAX_KEPT_CAPACITY + 1));
        assert!(pool.free.is_empty(), "too large to keep");
    }

    #[test]
    fn small_buffers_are_kept_by_the_thousand() {
        let mut pool = BufPool::default();
        let held: Vec<Vec<u8>> = (0..5000).map(|_| pool.take(8)).collect();
        held.into_iter().for_each(|v| pool.give(v));
        assert_eq!(pool.small.len(), 5000);
        let v = pool.take(BufPool::SMALL_CAPACITY);
        assert_eq!(
            v.capacity(),
            BufPool::SMALL_CAPACITY,
            "any small buffer fits any small message"
        );
        assert_eq!(pool.small.len(), 4999);
        assert!(pool.free.is_empty());
    }
}
