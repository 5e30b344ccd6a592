//! Persistent collectives (`MPI_<Coll>_init`, MPI 4.0 section 6.13): the
//! front end keeps the call's arguments and starts the matching
//! non-blocking collective at each `MPI_Start`; this module keeps its tags.
//!
//! Every collective call takes the communicator's next sequence number for
//! its tags (see `coll::tag`), which works because every rank makes its
//! collective calls in the same order. MPI orders the *initialization* of
//! persistent collectives like any collective call, but not their starts
//! (rank 0 may start A then B, rank 1 B then A, and ordinary collectives
//! may come in between differently on different ranks). So a persistent
//! collective takes its sequence number once, at initialization
//! ([`Comm::persistent_coll_seq`]), and each start reuses it
//! ([`Comm::start_persistent`]). Reuse is safe: a start waits for the
//! previous round to complete locally, and messages between two ranks with
//! the same tag are matched in the order they were sent.

use super::{tag, Mark, MARK};
use crate::comm::Comm;

/// The tag sequence of one persistent collective on one communicator,
/// reserved by [`Comm::persistent_coll_seq`].
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // Two persistent broadcasts, initialized in the same order everywhere...
/// let (a, b) = (world.persistent_coll_seq(), world.persistent_coll_seq());
/// let (mut x, mut y) = ([world.rank() as u8; 8], [world.rank() as u8; 8]);
/// let (px, py) = (x.as_mut_ptr(), y.as_mut_ptr());
/// // SAFETY: `x` and `y` outlive the requests, waited on below.
/// let start_x = || world.start_persistent(a, || unsafe { world.ibcast_raw(px, 8, 0) });
/// let start_y = || world.start_persistent(b, || unsafe { world.ibcast_raw(py, 8, 0) });
/// // ...and started in different orders on different ranks.
/// let (rx, ry) = if world.rank() % 2 == 0 {
///     (start_x()?, start_y()?)
/// } else {
///     let ry = start_y()?;
///     (start_x()?, ry)
/// };
/// rx.wait()?;
/// ry.wait()?;
/// assert_eq!((x, y), ([0; 8], [0; 8]));
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PersistentSeq {
    /// Point-to-point context id of the communicator.
    pub(super) context: u32,
    /// The sequence number, with [`tag::PERSISTENT`] set.
    seq: u32,
}

/// Clears the pinned sequence when a start returns (or unwinds).
struct Unpin;

impl Drop for Unpin {
    fn drop(&mut self) {
        pin(None);
    }
}

/// The sequence pinned in `mark` (this thread's) for a collective starting
/// on the communicator with context `context`, taken (it serves one call).
#[inline]
pub(super) fn take_pinned(mark: Mark, context: u32) -> Option<u32> {
    let pinned = mark.pinned.filter(|p| p.context == context)?;
    pin(None);
    Some(pinned.seq)
}

/// Sets (or clears) the sequence the next collective started on this
/// thread on the matching communicator takes instead of the next one.
fn pin(seq: Option<PersistentSeq>) {
    MARK.set(Mark {
        pinned: seq,
        ..MARK.get()
    });
}

impl Comm {
    /// Reserves the tags of a new persistent collective on this
    /// communicator (for `MPI_<Coll>_init`). Collective in the MPI sense:
    /// every rank calls it in the same order as its other collective calls
    /// on the communicator; it communicates nothing.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let a = world.persistent_coll_seq(); // at one MPI_Allreduce_init
    /// let b = world.persistent_coll_seq(); // at another
    /// assert_ne!(a, b); // each has tags of its own
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn persistent_coll_seq(&self) -> PersistentSeq {
        PersistentSeq {
            context: self.inner.context,
            seq: self.next_coll_seq() | tag::PERSISTENT,
        }
    }

    /// Runs `start`, which starts one collective on this communicator (a
    /// non-blocking `i*_raw` call, for `MPI_Start` of a persistent
    /// collective), with the tags reserved as `seq` instead of the next
    /// sequence number.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let seq = world.persistent_coll_seq(); // at MPI_Bcast_init
    /// let mut buf = [0u8; 4];
    /// for _ in 0..3 {
    ///     // MPI_Start, then MPI_Wait.
    ///     let req = world.start_persistent(seq, || unsafe { world.ibcast_raw(buf.as_mut_ptr(), 4, 0) })?;
    ///     req.wait()?;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn start_persistent<R>(&self, seq: PersistentSeq, start: impl FnOnce() -> R) -> R {
        debug_assert_eq!(
            seq.context, self.inner.context,
            "another communicator's tags"
        );
        pin(Some(seq));
        let _unpin = Unpin;
        start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_serves_one_call_on_its_communicator() {
        let seq = PersistentSeq {
            context: 4,
            seq: 7 | tag::PERSISTENT,
        };
        let take = |context| take_pinned(MARK.get(), context);
        pin(Some(seq));
        assert_eq!(take(6), None, "another communicator");
        assert_eq!(take(4), Some(7 | tag::PERSISTENT));
        assert_eq!(take(4), None, "taken");
        pin(Some(seq));
        drop(Unpin);
        assert_eq!(take(4), None, "cleared when the start returns");
    }
}
