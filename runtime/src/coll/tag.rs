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
//! The sequence's top bit ([`BLOCKING`]) tells the two kinds of call
//! apart: blocking calls made through the C ABI (see
//! [`BlockingCall`](super::BlockingCall)) count in one sequence, the
//! others (non-blocking, persistent, the Rust API's) in another. MPI says
//! blocking and non-blocking collectives never match each other (MPI 4.1
//! section 6.12), and programs that order an `MPI_Iallreduce` and an
//! `MPI_Barrier` differently on different ranks (as mpi4py's fallback
//! `Comm.Iagree` test does) then still pair each call with its own kind.
//!
//! Up to 2^17 collectives of each kind can be outstanding on one
//! communicator before a tag could repeat; each call may use up to 4096 distinct steps (an
//! algorithm whose rounds exceed that reuses step numbers in order, which is
//! safe because messages between a pair of ranks do not overtake).
//! Sequence 0 is reserved for the communicator's own internal barrier.
//!
//! A persistent collective (`MPI_<Coll>_init`) takes its sequence number
//! once, when it is initialized, and every start reuses it (see
//! `persistent.rs`); its sequence carries the [`PERSISTENT`] flag, which
//! sets bit 30 of the tag. Those tags (from `0x4000_1000`: the sequence
//! is never 0) are above every user tag and apart from the tags of
//! ordinary collectives, so a long-lived persistent collective never meets
//! an ordinary one that wrapped around to the same sequence. They stay
//! clear of the communicator constructors' tags too (`0x4000_0000` to
//! `0x4000_0140`, sequence 0; see `comm/agree.rs`).

/// Bits of the step field.
pub const STEP_BITS: u32 = 12;
/// Bits of the sequence field.
pub const SEQ_BITS: u32 = 18;

/// Bits of one kind's call counter (the sequence less [`BLOCKING`]).
pub const CALL_BITS: u32 = SEQ_BITS - 1;
/// Flag of a blocking collective's sequence number (the sequence field's
/// top bit).
pub const BLOCKING: u32 = 1 << CALL_BITS;

/// Flag of a persistent collective's sequence number.
pub const PERSISTENT: u32 = 1 << 31;

/// Tag bit of persistent collectives' traffic.
const PERSISTENT_TAG: u32 = 1 << 30;

/// The tag of `step` within collective call `seq`.
pub fn tag(seq: u32, step: u32) -> i32 {
    let high = if seq & PERSISTENT != 0 {
        PERSISTENT_TAG
    } else {
        0
    };
    let seq = seq & ((1 << SEQ_BITS) - 1);
    let step = step & ((1 << STEP_BITS) - 1);
    (high | (seq << STEP_BITS) | step) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_stay_in_the_user_tag_range() {
        assert_eq!(tag(0, 0), 0);
        assert_eq!(tag(1, 5), (1 << 12) | 5);
        assert_eq!(tag(BLOCKING | 1, 5), (1 << 29) | (1 << 12) | 5);
        assert_ne!(tag(BLOCKING | 1, 5), tag(1, 5));
        let max = tag(!PERSISTENT, u32::MAX);
        assert!((0..=crate::status::TAG_UB).contains(&max));
        // Persistent tags: above the user range and the constructors' tags.
        let low = tag(PERSISTENT | 1, 0);
        assert_eq!(low, 0x4000_1000);
        assert!(tag(u32::MAX, u32::MAX) > low);
        assert!(tag(u32::MAX, u32::MAX) > crate::status::TAG_UB);
    }
}
