//! Ring allgatherv: p-1 steps, each passing one block to the right,
//! received straight into its place. Any block sizes and displacements.

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "ring",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Neighbour,
    cost,
    phases: None,
    build: Build::Allgatherv(build),
};

/// Fills every `parts[r]` (the caller's own is already there).
pub(crate) fn build(ctx: &Ctx, s: &mut Schedule, parts: &[Buf], after: &[usize]) -> Vec<usize> {
    let p = ctx.size;
    let (right, left) = ((ctx.rank + 1) % p, (ctx.rank + p - 1) % p);
    let mut last = after.to_vec();
    for k in 0..p.saturating_sub(1) {
        // Step k passes on block rank-k and receives block rank-k-1.
        let out = parts[(ctx.rank + p - k) % p];
        let inb = parts[(ctx.rank + 2 * p - k - 1) % p];
        let snd = s.send_some(ctx.world(right), ctx.tag(k), out, &last);
        let rcv = s.recv_some(left as i32, ctx.tag(k), inb, &last);
        last = then(&last, [snd, rcv]);
    }
    last
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n * t.be)
}
