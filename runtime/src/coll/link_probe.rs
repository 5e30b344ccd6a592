//! Measures the link between nodes at start-up, so that collective
//! selection across hosts uses the real network's latency and bandwidth
//! (the model's `inter_alpha` / `inter_beta`) rather than placeholders.
//!
//! Runs only when the job spans nodes and the job's model left both at
//! their defaults (a model file that sets them is used as it is). World
//! rank 0 and the lowest rank of another node ping-pong 8 bytes and
//! 128 KiB a few times (under 2 MB on the link) over the engine itself
//! (before any communicator exists, on a context no communicator uses);
//! rank 0 then sends the two figures to every other rank, so every rank
//! selects alike.

use super::inter::{DEFAULT_INTER_ALPHA, DEFAULT_INTER_BETA};
use super::select::Model;
use crate::error::Error;
use crate::p2p::engine::Engine;
use crate::p2p::matching::{Pattern, SourceSel, TagSel};
use crate::p2p::request::ReqId;

/// The context of the probe's messages: far above every communicator's.
const PROBE_CONTEXT: u32 = u32::MAX - 1;
const PING: i32 = 1;
const RESULT: i32 = 2;
const SMALL: usize = 8;
const LARGE: usize = 128 << 10;

/// Fills in `model`'s inter-node latency and bandwidth by measuring (see
/// the module docs); `node_of_rank` is the launcher's placement.
pub(crate) fn measure(
    engine: &mut Engine,
    me: usize,
    node_of_rank: &[usize],
    model: &mut Model,
) -> Result<(), Error> {
    let Some(partner) = node_of_rank.iter().position(|&n| n != node_of_rank[0]) else {
        return Ok(());
    };
    if model.inter_alpha != DEFAULT_INTER_ALPHA || model.inter_beta != DEFAULT_INTER_BETA {
        return Ok(());
    }
    let figures = if me == 0 {
        let small = round_trip(engine, partner, SMALL, 20, true)?;
        let large = round_trip(engine, partner, LARGE, 6, true)?;
        let alpha = small / 2.0;
        // A loaded machine can make the small round trip look as slow as
        // the large one: then take the large one's rate whole.
        let beta = if large > 2.0 * small {
            (large - small) / 2.0 / (LARGE - SMALL) as f64
        } else {
            large / 2.0 / LARGE as f64
        };
        let bytes = encode([alpha, beta]);
        for r in 1..node_of_rank.len() {
            send(engine, r, RESULT, &bytes)?;
        }
        // Out before returning: a packet still queued here (a connection
        // being made) would otherwise wait until this rank next calls MPI,
        // and every other rank's start-up with it.
        drive(engine, |e| !e.busy())?;
        [alpha, beta]
    } else {
        if me == partner {
            round_trip(engine, 0, SMALL, 20, false)?;
            round_trip(engine, 0, LARGE, 6, false)?;
        }
        let mut bytes = [0u8; 16];
        recv(engine, 0, RESULT, &mut bytes)?;
        decode(bytes)
    };
    model.inter_alpha = figures[0];
    model.inter_beta = figures[1];
    Ok(())
}

/// `rounds` round trips of `len` bytes with `peer` (the initiator sends
/// first); the fastest round trip's time in seconds (initiator only).
fn round_trip(
    engine: &mut Engine,
    peer: usize,
    len: usize,
    rounds: usize,
    initiator: bool,
) -> Result<f64, Error> {
    let out = vec![1u8; len];
    let mut back = vec![0u8; len];
    let mut best = f64::MAX;
    // One more round than timed: the first also makes the connection.
    for round in 0..=rounds {
        let t = std::time::Instant::now();
        if initiator {
            send(engine, peer, PING, &out)?;
            recv(engine, peer, PING, &mut back)?;
        } else {
            recv(engine, peer, PING, &mut back)?;
            send(engine, peer, PING, &out)?;
        }
        if round > 0 {
            best = best.min(t.elapsed().as_secs_f64());
        }
    }
    Ok(best)
}

fn send(engine: &mut Engine, peer: usize, tag: i32, bytes: &[u8]) -> Result<(), Error> {
    let source = engine.rank() as i32;
    // SAFETY: `bytes` outlives the send: waited for below.
    let id = unsafe {
        engine.start_send(
            peer,
            PROBE_CONTEXT,
            source,
            tag,
            bytes.as_ptr(),
            bytes.len(),
            false,
        )
    };
    match id {
        Some(id) => wait(engine, id),
        None => Ok(()),
    }
}

fn recv(engine: &mut Engine, peer: usize, tag: i32, bytes: &mut [u8]) -> Result<(), Error> {
    let pattern = Pattern {
        context: PROBE_CONTEXT,
        source: SourceSel::Rank(peer as i32),
        tag: TagSel::Tag(tag),
    };
    // SAFETY: `bytes` outlives the receive: waited for below.
    let id = unsafe { engine.start_recv(pattern, bytes.as_mut_ptr(), bytes.len()) };
    wait(engine, id)
}

/// Drives the engine until request `id` finishes.
fn wait(engine: &mut Engine, id: ReqId) -> Result<(), Error> {
    let mut outcome = None;
    drive(engine, |e| {
        outcome = e.reqs.take_finished(id);
        outcome.is_some()
    })?;
    outcome.expect("drive returned").map(drop)
}

/// Drives the engine until `done`: spinning at first, then sleeping on
/// the transport between polls (a peer may be slow to start), for at most
/// a minute.
fn drive(engine: &mut Engine, mut done: impl FnMut(&mut Engine) -> bool) -> Result<(), Error> {
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut idle = 0u32;
    loop {
        let token = engine.transport().wait_token();
        let moved = engine.progress();
        if done(engine) {
            return Ok(());
        }
        idle = if moved { 0 } else { idle.saturating_add(1) };
        if idle > 2000 {
            engine.transport().wait(token, Duration::from_millis(1));
        }
        if Instant::now() > deadline {
            return Err(Error::Bootstrap(
                "measuring the link between nodes: no answer in 60 s".into(),
            ));
        }
    }
}

fn encode(f: [f64; 2]) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&f[0].to_le_bytes());
    b[8..].copy_from_slice(&f[1].to_le_bytes());
    b
}

fn decode(b: [u8; 16]) -> [f64; 2] {
    let word = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    [word(0), word(8)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_survive_the_wire() {
        let f = [3.25e-6, 1.0 / 1.2e9];
        assert_eq!(decode(encode(f)), f);
    }
}
