//! Byte buffers the engine reuses for the messages it must hold: eager
//! messages that arrive before their receive (the unexpected queue) and
//! packets waiting for room in a peer's ring. A streaming sender keeps
//! both busy with one buffer per message; taking them from the allocator
//! each time costs more than the copy for small messages.

/// Buffers of at most [`BufPool::MAX_KEPT_CAPACITY`] bytes kept after use.
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    free: Vec<Vec<u8>>,
}

impl BufPool {
    /// Largest buffer kept for reuse (larger ones go back to the allocator).
    pub(crate) const MAX_KEPT_CAPACITY: usize = 64 * 1024;
    /// Most buffers kept.
    const MAX_KEPT: usize = 256;

    /// An empty buffer with room for at least `len` bytes.
    pub(crate) fn take(&mut self, len: usize) -> Vec<u8> {
        match self.free.pop() {
            Some(mut v) => {
                v.reserve(len);
                v
            }
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
        if v.capacity() <= Self::MAX_KEPT_CAPACITY && self.free.len() < Self::MAX_KEPT {
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
}
