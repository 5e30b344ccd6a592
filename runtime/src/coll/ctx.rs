//! What an algorithm knows about the call: ranks, peers and tags.

use super::tag;

/// The calling rank's view of one collective call.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    /// Rank in the communicator.
    pub rank: usize,
    /// Ranks in the communicator.
    pub size: usize,
    /// World rank of every communicator rank.
    pub world_of: std::borrow::Cow<'a, [usize]>,
    /// This call's sequence number on the communicator.
    pub seq: u32,
}

impl Ctx<'_> {
    /// The tag of step `step` of this call.
    pub fn tag(&self, step: usize) -> i32 {
        tag::tag(self.seq, step as u32)
    }

    /// World rank of communicator rank `r` (for sends).
    pub fn world(&self, r: usize) -> usize {
        self.world_of[r]
    }

    /// `r` shifted so that `root` becomes 0.
    pub fn relative(&self, r: usize, root: usize) -> usize {
        (r + self.size - root) % self.size
    }

    /// Inverse of [`Ctx::relative`].
    pub fn absolute(&self, rel: usize, root: usize) -> usize {
        (rel + root) % self.size
    }
}

/// Largest power of two not above `n` (`n` >= 1).
pub fn pow2_floor(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// Splits `count` elements into `parts` blocks as evenly as possible:
/// (first element, elements) of block `i`.
pub fn block(count: usize, parts: usize, i: usize) -> (usize, usize) {
    let base = count / parts;
    let extra = count % parts;
    let start = i * base + i.min(extra);
    (start, base + usize::from(i < extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_everything_once() {
        for count in 0..20 {
            for parts in 1..7 {
                let mut next = 0;
                for i in 0..parts {
                    let (s, n) = block(count, parts, i);
                    assert_eq!(s, next);
                    next += n;
                }
                assert_eq!(next, count);
            }
        }
        assert_eq!(pow2_floor(1), 1);
        assert_eq!(pow2_floor(6), 4);
        assert_eq!(pow2_floor(8), 8);
    }
}
