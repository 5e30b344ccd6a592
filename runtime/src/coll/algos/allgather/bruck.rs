//! Bruck allgather: ceil(lg p) rounds for any p. Blocks are gathered in a
//! rotated scratch buffer (position i holds rank rank+i), then rotated into
//! place.

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
    pattern: Pattern::Halving,
    cost,
    phases: None,
    build: Build::Allgather(build_call),
};

/// Fills every block of `buf` (`block` bytes each).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    block: usize,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    let rank = ctx.rank;
    if p == 1 {
        return after.to_vec();
    }
    let tmp = s.temp(p * block);
    let mut last = vec![s.copy(buf.slice(rank * block, block), tmp.slice(0, block), after)];
    let (mut d, mut round) = (1, 0);
    while d < p {
        let n = d.min(p - d);
        let to = (rank + p - d) % p;
        let from = (rank + d) % p;
        let snd = s.send(
            ctx.world(to),
            ctx.tag(round),
            tmp.slice(0, n * block),
            &last,
        );
        let rcv = s.recv(
            from as i32,
            ctx.tag(round),
            tmp.slice(d * block, n * block),
            &last,
        );
        last = vec![snd, rcv];
        d <<= 1;
        round += 1;
    }
    // Unrotate: scratch position i belongs to rank rank+i.
    let mut done = Vec::new();
    for i in 0..p {
        let r = (rank + i) % p;
        if r != rank {
            done.push(s.copy(
                tmp.slice(i * block, block),
                buf.slice(r * block, block),
                &last,
            ));
        }
    }
    done.extend(last);
    done
}

/// [`build`] for an allgather call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Gathered,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.block, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * t.al + t.n * (t.p - 1.0) * t.be + t.n * t.p * t.be
}
