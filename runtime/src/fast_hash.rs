//! A fast hasher for the small integer keys of the hot path (context ids,
//! ranks). The keys come from ranks of the same job, so resistance to
//! chosen-key flooding (SipHash's purpose) buys nothing here.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplier: 2^64 divided by the golden ratio, which spreads consecutive
/// integers across the table.
const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

/// Rotate-xor-multiply hasher for integer keys.
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

impl IntHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SPREAD);
    }
}

impl Hasher for IntHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(n as u64);
    }
    #[inline]
    fn write_i32(&mut self, n: i32) {
        self.mix(n as u32 as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A HashMap with [`IntHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_small_keys_hash_apart() {
        let hashes: std::collections::HashSet<u64> = (0..10_000u32)
            .map(|k| {
                let mut h = IntHasher::default();
                h.write_u32(k);
                h.finish()
            })
            .collect();
        assert_eq!(hashes.len(), 10_000);
    }
}
