//! Binomial-tree broadcast: lg p rounds of whole-buffer messages; the
//! latency-optimal choice for small messages.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "binomial",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Tree,
    cost,
    phases: None,
    build: Build::Bcast(build_call),
};

/// Broadcasts `buf` from `root`, with messages on tag step `step`.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    root: usize,
    step: usize,
    after: &[usize],
) -> Vec<usize> {
    let p = ctx.size;
    let vr = ctx.relative(ctx.rank, root);
    let mut last = after.to_vec();
    let mut mask = 1;
    while mask < p {
        if vr & mask != 0 {
            let parent = ctx.absolute(vr - mask, root);
            last = vec![s.recv(parent as i32, ctx.tag(step), buf, &last)];
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut sends = Vec::new();
    while mask > 0 {
        if vr + mask < p {
            let child = ctx.absolute(vr + mask, root);
            sends.push(s.send(ctx.world(child), ctx.tag(step), buf, &last));
        }
        mask >>= 1;
    }
    if sends.is_empty() {
        last
    } else {
        sends
    }
}

/// [`build`] for a bcast call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Broadcast,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.root, 0, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * (t.al + t.n * t.be)
}
