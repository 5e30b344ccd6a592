//! Tags of collective traffic.
//!
//! Collectives run on the communicator's collective context (p2p context + 1),
//! so their messages never match user receives. Within that context each
//! collective call gets a sequence number (every rank calls collectives on a
//! communicator in the same order, so the numbers agree without talking), and
//! each message of the call a step number:
//!
//! ```text
//!  bit 29 ............ 12 | 11 ........ 0
//!      call sequence      |    step
//!      (18 bits, wraps)   |  (12 bits)
//! ```
//!
//! Up to 2^18 collectives can be outstanding on one communicator before a
//! tag could repeat; each call may use up to 4096 distinct steps (an
//! algorithm whose rounds exceed that reuses step numbers in order, which is
//! safe because messages between a pair of ranks do not overtake).
//! Sequence 0 is reserved for the communicator's own internal barrier.

/// Bits of the step field.
pub const STEP_BITS: u32 = 12;
/// Bits of the sequence field.
pub const SEQ_BITS: u32 = 18;

/// The tag of `step` within collective call `seq`.
pub fn tag(seq: u32, step: u32) -> i32 {
    let seq = seq & ((1 << SEQ_BITS) - 1);
    let step = step & ((1 << STEP_BITS) - 1);
    ((seq << STEP_BITS) | step) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_stay_in_the_user_tag_range() {
        assert_eq!(tag(0, 0), 0);
        assert_eq!(tag(1, 5), (1 << 12) | 5);
        let max = tag(u32::MAX, u32::MAX);
        assert!((0..=crate::status::TAG_UB).contains(&max));
    }
}
