//! Scatter then ring allgather (van de Geijn): the root's buffer is cut into
//! p blocks, scattered down a binomial tree, then every rank passes blocks
//! around a ring. About 2n bytes per rank whatever p is: for large messages.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::{block, Ctx};
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "scatter_allgather",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Neighbour,
    cost,
    phases: None,
    build: Build::Bcast(build_call),
};

/// Broadcasts `buf` from `root`.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    root: usize,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    if p == 1 {
        return after.to_vec();
    }
    let vr = ctx.relative(ctx.rank, root);
    // Bytes of blocks [a, b) (blocks indexed by relative rank).
    let range = |a: usize, b: usize| {
        let start = block(buf.len, p, a).0;
        let end = if b >= p {
            buf.len
        } else {
            block(buf.len, p, b).0
        };
        buf.slice(start, end - start)
    };
    // Binomial scatter: receive my subtree's blocks, hand children theirs.
    let mut last = after.to_vec();
    let mut mask = 1;
    while mask < p {
        if vr & mask != 0 {
            let parent = ctx.absolute(vr - mask, root);
            last = vec![s.recv(parent as i32, ctx.tag(0), range(vr, vr + mask), &last)];
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut scattered = last.clone();
    while mask > 0 {
        if vr + mask < p {
            let child = ctx.absolute(vr + mask, root);
            let part = range(vr + mask, (vr + 2 * mask).min(p));
            scattered.push(s.send(ctx.world(child), ctx.tag(0), part, &last));
        }
        mask >>= 1;
    }
    // Ring allgather by relative rank: at step k send block vr-k, receive vr-k-1.
    let right = ctx.absolute((vr + 1) % p, root);
    let left = ctx.absolute((vr + p - 1) % p, root);
    let mut last = scattered;
    for k in 0..p - 1 {
        let out = (vr + p - k) % p;
        let inb = (vr + 2 * p - k - 1) % p;
        let snd = s.send(ctx.world(right), ctx.tag(1 + k), range(out, out + 1), &last);
        let rcv = s.recv(left as i32, ctx.tag(1 + k), range(inb, inb + 1), &last);
        last = vec![snd, rcv];
    }
    last
}

/// [`build`] for a bcast call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Broadcast,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.root, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.lg + t.p - 1.0) * t.al + 2.0 * t.n * t.frac * t.be
}
