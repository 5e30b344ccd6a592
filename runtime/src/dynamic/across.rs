//! A port connection between two jobs: the groups reach each other
//! through a bridge (`transport::bridge`, as spawned jobs do), whose link
//! numbers the accepting group's members `0..A` and the connecting
//! group's `A..A+C`, by rank in their communicators. The two roots talk
//! over the port's socket (`wire`); each hands its group what it learnt on
//! the communicator's collective context (`handoff`):
//!
//! 1. every member opens its link and sends its root its address and
//!    bridge counter (`spawn::record`); the roots swap their groups'
//!    records and hand the other group's to their members;
//! 2. every member adds the other group's addresses, registers the link
//!    and reports its largest counter; the roots swap their groups'
//!    largest, and the context is the larger of the two (rounded up to a
//!    pair), which each root hands to its group. No member sends to the
//!    other job before every member of both has added the addresses.

use super::spawn::{
    gather, next_counter, open_link, record, register, take_context, unrecord, RECORD,
};
use super::wire::Wire;
use super::{handoff, port_error};
use crate::comm::Comm;
use crate::error::Error;

fn failed() -> Error {
    port_error(
        "",
        "the root could not connect the two jobs (its own error says why)",
    )
}

fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// Builds the intercommunicator with the `remote` processes of the other
/// job; `wire` is the root's connection to the other root (`None`
/// elsewhere), `acceptor` whether this is the accepting group.
pub(super) fn build(
    comm: &Comm,
    root: usize,
    acceptor: bool,
    remote: usize,
    mut wire: Option<Wire>,
) -> Result<Comm, Error> {
    let n = comm.size() as usize;
    let size = n + remote;
    let (mine_at, theirs_at) = if acceptor { (0, n) } else { (remote, 0) };
    let positions: Vec<usize> = (theirs_at..theirs_at + remote).collect();
    let me = mine_at + comm.rank() as usize;
    // 1. Addresses and counters, swapped by the roots. A member whose link
    // does not open still takes part (an all-ones record), so that nobody
    // waits for it; the root then gives up for the group.
    let opened = open_link(me, size, &positions)
        .and_then(|l| Ok((record(&l.address()?, next_counter())?, l)));
    let mine = match &opened {
        Ok((r, _)) => r.clone(),
        Err(_) => vec![0xff; RECORD],
    };
    let records = gather(comm, root, &mine)?;
    let swapped = wire.as_mut().map(|w| {
        if records.chunks(RECORD).any(|r| word(r) == u64::MAX) {
            return Err(port_error(
                w.port(),
                "a member of this group could not open a fabric endpoint (its own error says why)",
            ));
        }
        let theirs = w.swap(comm, acceptor, &records)?;
        if theirs.len() != RECORD * remote {
            return Err(port_error(
                w.port(),
                format!(
                    "the other root sent {} bytes of addresses for {remote} processes",
                    theirs.len()
                ),
            ));
        }
        Ok(theirs)
    });
    let theirs = handoff(comm, root, swapped, failed);
    let (_, link) = opened?;
    let theirs = theirs?;
    // 2. Everyone knows everyone: register, then agree on the context.
    let mut counter = next_counter();
    for (k, r) in theirs.chunks(RECORD).enumerate() {
        let (address, c) = unrecord(r);
        counter = counter.max(c);
        link.add_peer(positions[k], &address)?;
    }
    let peers = register(comm, link, size, &positions)?;
    let counters = gather(comm, root, &u64::from(counter).to_le_bytes())?;
    let agreed = wire.as_mut().map(|w| {
        let ours = counters.chunks(8).map(word).max().unwrap_or(0);
        let theirs = w.swap(comm, acceptor, &ours.to_le_bytes())?;
        if theirs.len() != 8 {
            return Err(port_error(
                w.port(),
                "the other root's context is not one word",
            ));
        }
        let ctx = (ours.max(word(&theirs)) as u32 + 1) & !1;
        Ok(u64::from(ctx).to_le_bytes().to_vec())
    });
    let ctx = word(&handoff(comm, root, agreed, failed)?) as u32;
    take_context(ctx);
    Ok(comm.build_inter(ctx, comm.world_ranks().to_vec(), peers))
}
