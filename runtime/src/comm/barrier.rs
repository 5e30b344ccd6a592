//! Finalize's barrier: dissemination over point-to-point messages on the
//! communicator's collective context (`MPI_Barrier` itself is the
//! collective module's, through the shared-memory area where it can). On
//! an intercommunicator: a barrier of the local group, a message between
//! the two groups' rank 0 (tag `0x4000_0005`), and a second local barrier.

use super::Comm;
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};

/// Tag of barrier messages on the collective context.
const BARRIER_TAG: i32 = 1;
/// Tag of the leaders' message across an intercommunicator's groups.
const CROSS_BARRIER_TAG: i32 = 0x4000_0005;

impl Comm {
    /// A barrier of point-to-point messages only: finalize's, which must
    /// not depend on collective state (areas, sequences) that a rank may
    /// have left in any shape.
    pub(crate) fn barrier_by_messages(&self) -> Result<(), Error> {
        if let Some(remote) = &self.inner.remote {
            self.local_barrier()?;
            if self.rank() == 0 {
                let sends = [(remote[0], CROSS_BARRIER_TAG, &[][..])];
                let mut recvs = [(0, CROSS_BARRIER_TAG, &mut [][..])];
                super::agree::transfer(self, self.inner.context + 1, &sends, &mut recvs)?;
            }
            return self.local_barrier();
        }
        self.local_barrier()
    }

    /// The dissemination barrier over this rank's own group.
    fn local_barrier(&self) -> Result<(), Error> {
        let (rank, size) = (self.rank() as usize, self.size() as usize);
        let ctx = self.inner.context + 1;
        let rt = self.rt();
        let mut dist = 1;
        while dist < size {
            let to = self.inner.world_of[(rank + dist) % size];
            let from = (rank + size - dist) % size;
            let (send, recv) = {
                let mut e = rt.engine();
                let pattern = Pattern {
                    context: ctx,
                    source: SourceSel::Rank(from as i32),
                    tag: TagSel::Tag(BARRIER_TAG),
                };
                // SAFETY: zero-byte messages: the buffers are never touched.
                let recv = unsafe { e.start_recv(pattern, std::ptr::null_mut(), 0) };
                // SAFETY: as above.
                let send = unsafe {
                    e.start_send(
                        to,
                        ctx,
                        rank as i32,
                        BARRIER_TAG,
                        std::ptr::null(),
                        0,
                        false,
                    )
                };
                (send, recv)
            };
            // Zero-byte sends are eager: complete at once (`send` is None).
            debug_assert!(send.is_none());
            rt.wait_until(|e| e.reqs.take_done(recv));
            dist *= 2;
        }
        Ok(())
    }
}
