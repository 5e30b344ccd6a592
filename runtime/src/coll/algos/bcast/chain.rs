//! Pipelined chain: the buffer flows in segments along the ranks in order
//! from the root; each rank forwards a segment as soon as it has it. Time
//! approaches n/bandwidth plus p segment latencies: for large messages.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};
use crate::coll::tag::STEP_BITS;

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "chain",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Neighbour,
    cost,
    phases: None,
    build: Build::Bcast(build_call),
};

/// Smallest segment.
pub(crate) const MIN_SEGMENT: usize = 64 * 1024;

/// Broadcasts `buf` from `root` in segments.
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
    let max_segments = 1usize << STEP_BITS;
    let seg = MIN_SEGMENT.max(buf.len.div_ceil(max_segments)).max(1);
    let nseg = buf.len.div_ceil(seg).max(1);
    let prev = ctx.absolute((vr + p - 1) % p, root);
    let next = ctx.absolute((vr + 1) % p, root);
    // All segment receives are posted at once; each forward waits for its segment.
    let mut last = Vec::new();
    for j in 0..nseg {
        let off = j * seg;
        let part = buf.slice(off, seg.min(buf.len - off));
        let have = if vr > 0 {
            vec![s.recv(prev as i32, ctx.tag(j), part, after)]
        } else {
            after.to_vec()
        };
        if vr + 1 < p {
            last.push(s.send(ctx.world(next), ctx.tag(j), part, &have));
        }
        last.extend(have);
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

/// Predicted seconds: segments of at least [`MIN_SEGMENT`] bytes flow down
/// the chain, p - 2 steps to fill it, one per segment after.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    let seg = (MIN_SEGMENT as f64).max(t.n / 4096.0).min(t.n.max(1.0));
    (t.p - 2.0 + (t.n / seg).ceil()).max(1.0) * (t.al + seg * t.be)
}
