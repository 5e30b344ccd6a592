//! Recursive doubling: lg p rounds of full-buffer exchanges; cheapest in
//! latency, lg p times the bytes. Keeps rank order, so any operation works.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::fold::Fold;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "recursive_doubling",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Butterfly,
    cost,
    phases: None,
    build: Build::Allreduce(build_call),
};

/// Reduces `buf` (the caller's contribution, replaced by the result) across all ranks.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    op: &Reducer,
    after: &[usize],
) -> Vec<usize> {
    if ctx.size == 1 {
        return after.to_vec();
    }
    let fold = Fold::of(ctx);
    let tmp = s.temp(buf.len);
    let mut last = fold.fold_in(ctx, s, buf, tmp, op, after);
    let rounds = fold.pof2.trailing_zeros() as usize;
    if let Some(v) = fold.vrank {
        for round in 0..rounds {
            let mask = 1 << round;
            let pv = v ^ mask;
            let peer = fold.real(pv);
            let snd = s.send(ctx.world(peer), ctx.tag(1 + round), buf, &last);
            let rcv = s.recv(peer as i32, ctx.tag(1 + round), tmp, &last);
            last = if pv < v {
                // The peer's ranks come first: buf = tmp op buf.
                vec![s.reduce(op, tmp, buf, &[snd, rcv])]
            } else {
                // Ours come first: tmp = buf op tmp, then keep tmp.
                let red = s.reduce(op, buf, tmp, &[snd, rcv]);
                vec![s.copy(tmp, buf, &[red])]
            };
        }
    }
    fold.fold_out(ctx, s, buf, 1 + rounds, &last)
}

/// [`build`] for an allreduce call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Reduction,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.op, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * (t.al + t.n * t.be + t.n * t.ga) + t.fold
}
