//! Bruck alltoall: ceil(lg p) rounds for any p. Blocks are rotated so that
//! position i holds the block for rank+i; in the round of bit k every block
//! whose position has bit k set moves (packed into one message) to rank+2^k;
//! at the end position i holds the block from rank-i. About p/2 blocks per
//! round plus the copies: for small blocks, where latency dominates.
//! Equal block sizes only.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "bruck",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Butterfly,
    cost,
    phases: None,
    build: Build::Alltoall(build_call),
};

/// Exchanges `block` bytes with every rank: `send` and `recv` hold `p`
/// blocks each (block j for / from rank j) and must not overlap.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    send: Buf,
    recv: Buf,
    block: usize,
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    if block == 0 {
        return after.to_vec();
    }
    let blk = |b: Buf, i: usize| b.slice(i * block, block);
    // tmp[i] = the block for rank+i.
    let tmp = s.temp(p * block);
    let lo = (p - rank) * block;
    let mut last = vec![s.copy(send.slice(rank * block, lo), tmp.slice(0, lo), after)];
    if rank > 0 {
        last.push(s.copy(
            send.slice(0, rank * block),
            tmp.slice(lo, rank * block),
            after,
        ));
    }
    let (mut dist, mut round) = (1, 0);
    while dist < p {
        let moving: Vec<usize> = (0..p).filter(|i| i & dist != 0).collect();
        let n = moving.len() * block;
        let (out, inb) = (s.temp(n), s.temp(n));
        let packed: Vec<usize> = moving
            .iter()
            .enumerate()
            .map(|(j, &i)| s.copy(blk(tmp, i), blk(out, j), &last))
            .collect();
        let snd = s.send(ctx.world((rank + dist) % p), ctx.tag(round), out, &packed);
        let rcv = s.recv(((rank + p - dist) % p) as i32, ctx.tag(round), inb, after);
        let mut deps = packed;
        deps.push(rcv);
        last = moving
            .iter()
            .enumerate()
            .map(|(j, &i)| s.copy(blk(inb, j), blk(tmp, i), &deps))
            .collect();
        last.push(snd);
        dist <<= 1;
        round += 1;
    }
    // recv[rank-i] = tmp[i].
    (0..p)
        .map(|i| s.copy(blk(tmp, i), blk(recv, (rank + p - i) % p), &last))
        .collect()
}

/// [`build`] for an alltoall call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Even,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.send, r.recv, r.block, after)
}

/// Predicted seconds. Each round packs, sends and unpacks about half the blocks,
/// plus the two rotations.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * (t.al + 1.5 * t.p * t.n * t.be) + 2.0 * t.p * t.n * t.be
}
