//! Split's small collective, written with point-to-point messages on the
//! parent's collective context (`context + 1`): [`allgather_fixed`],
//! every rank's fixed-size record (`(color, key)`), a ring of `size - 1`
//! steps. Blocking and sized for tiny inputs; independent of the
//! collective module (`coll/`, a higher layer).
//!
//! # Tags
//!
//! Tag `0x4000_0000` on the collective context, above every user tag
//! (`TAG_UB` is 2^30 - 1) so it can never meet a user message, and apart
//! from the barrier's tag 1 and the context-id agreements' tags (see
//! `agreement.rs`). Successive calls reuse the tag: MPI's ordering of
//! collectives on a communicator and non-overtaking between a pair of
//! ranks keep the rounds apart.

use super::Comm;
use crate::error::Error;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};

/// Tag of the allgather ring.
const GATHER_TAG: i32 = 0x4000_0000;

/// Sends `send` to comm rank `to` and receives exactly `recv.len()` bytes
/// from comm rank `from`, both tagged `tag` on the collective context.
fn exchange(
    comm: &Comm,
    to: usize,
    from: usize,
    tag: i32,
    send: &[u8],
    recv: &mut [u8],
) -> Result<(), Error> {
    let ctx = comm.inner.context + 1;
    let rt = comm.rt();
    let (send_id, recv_id) = {
        let mut e = rt.engine();
        let pattern = Pattern {
            context: ctx,
            source: SourceSel::Rank(from as i32),
            tag: TagSel::Tag(tag),
        };
        // SAFETY: `recv` stays borrowed (and writable) until we waited below.
        let r = unsafe { e.start_recv(pattern, recv.as_mut_ptr(), recv.len()) };
        // SAFETY: `send` stays borrowed until we waited below.
        let s = unsafe {
            e.start_send(
                comm.inner.world_of[to],
                ctx,
                comm.rank(),
                tag,
                send.as_ptr(),
                send.len(),
                false,
            )
        };
        (s, r)
    };
    let got = rt.wait_until(|e| e.reqs.take_finished(recv_id));
    if let Some(s) = send_id {
        rt.wait_until(|e| e.reqs.take_finished(s))?;
    }
    let status = got?;
    if status.count != recv.len() || status.truncated_from.is_some() {
        return Err(Error::State(format!(
            "communicator agreement: rank {from} sent {} bytes where {} were expected \
             (ranks disagree about a collective call)",
            status.truncated_from.unwrap_or(status.count),
            recv.len()
        )));
    }
    Ok(())
}

/// Every rank's `mine` (all of the same length), concatenated in rank order.
pub(crate) fn allgather_fixed(comm: &Comm, mine: &[u8]) -> Result<Vec<u8>, Error> {
    let (rank, size, n) = (comm.rank() as usize, comm.size() as usize, mine.len());
    let mut all = vec![0u8; n * size];
    all[rank * n..(rank + 1) * n].copy_from_slice(mine);
    let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    // Step s: pass on the block of rank (rank - s), receive that of (rank - s - 1).
    for s in 0..size.saturating_sub(1) {
        let out = (rank + size - s) % size;
        let inc = (rank + 2 * size - s - 1) % size;
        let block = all[out * n..(out + 1) * n].to_vec();
        exchange(
            comm,
            right,
            left,
            GATHER_TAG,
            &block,
            &mut all[inc * n..(inc + 1) * n],
        )?;
    }
    Ok(all)
}
