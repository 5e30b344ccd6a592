//! Kernel tests: every op x every type against an independent scalar
//! reference (`reference`, `matrix`), plus targeted semantics (`semantics`).

mod matrix;
mod reference;
mod semantics;

/// xorshift64*: deterministic test inputs without a dependency.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Native-endian bytes of a slice of numbers.
macro_rules! bytes_of {
    ($($x:expr),* $(,)?) => {{
        let mut v: Vec<u8> = Vec::new();
        $(v.extend_from_slice(&$x.to_ne_bytes());)*
        v
    }};
}
pub(crate) use bytes_of;
