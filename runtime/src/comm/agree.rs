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
    let sends = [(comm.inner.world_of[to], tag, send)];
    let mut recvs = [(from as i32, tag, recv)];
    transfer(comm, comm.inner.context + 1, &sends, &mut recvs)
}

/// Starts every send (to a world rank, with a tag) and every receive (from
/// an envelope rank, with a tag, of exactly the buffer's length) on
/// `context`, with this rank's rank in `comm` as the envelope's source,
/// and waits for them all.
pub(super) fn transfer(
    comm: &Comm,
    context: u32,
    sends: &[(usize, i32, &[u8])],
    recvs: &mut [(i32, i32, &mut [u8])],
) -> Result<(), Error> {
    let rt = comm.rt();
    let (send_ids, recv_ids) = {
        let mut e = rt.engine();
        let mut recv_ids = Vec::with_capacity(recvs.len());
        for (from, tag, buf) in recvs.iter_mut() {
            let pattern = Pattern {
                context,
                source: SourceSel::Rank(*from),
                tag: TagSel::Tag(*tag),
            };
            // SAFETY: `recvs` stays borrowed (and writable) until we waited below.
            recv_ids.push(unsafe { e.start_recv(pattern, buf.as_mut_ptr(), buf.len()) });
        }
        let mut send_ids = Vec::with_capacity(sends.len());
        for &(to, tag, buf) in sends {
            // SAFETY: `sends` stays borrowed until we waited below.
            send_ids.push(unsafe {
                e.start_send(
                    to,
                    context,
                    comm.rank(),
                    tag,
                    buf.as_ptr(),
                    buf.len(),
                    false,
                )
            });
        }
        (send_ids, recv_ids)
    };
    let mut first_error = None;
    for (id, (from, _, buf)) in recv_ids.into_iter().zip(recvs.iter()) {
        let got = rt.wait_until(|e| e.reqs.take_finished(id));
        let err = match got {
            Ok(st) if st.count == buf.len() && st.truncated_from.is_none() => None,
            Ok(st) => Some(Error::State(format!(
                "communicator agreement: rank {from} sent {} bytes where {} were expected \
                 (ranks disagree about a collective call)",
                st.truncated_from.unwrap_or(st.count),
                buf.len()
            ))),
            Err(e) => Some(e),
        };
        if first_error.is_none() {
            first_error = err;
        }
    }
    for id in send_ids.into_iter().flatten() {
        if let Err(e) = rt.wait_until(|e| e.reqs.take_finished(id)) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
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
