//! Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling
//! allgather (after folding to a power of two). 2 lg p messages and about
//! 2n bytes per rank: the bandwidth-optimal choice with few steps.
//! Combines out of rank order: commutative operations only.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::{block, Ctx};
use crate::coll::fold::Fold;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "rabenseifner",
    commutative_only: true,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Halving,
    cost,
    phases: None,
    build: Build::Allreduce(build_call),
};

/// Reduces `buf` (`count` elements of `elem` bytes) across all ranks.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    count: usize,
    elem: usize,
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
    // Bytes of the block range [a, b) of the pof2 blocks.
    let range = |a: usize, b: usize| {
        let start = block(count, fold.pof2, a).0;
        let end = if b == 0 {
            0
        } else {
            let (s0, n) = block(count, fold.pof2, b - 1);
            s0 + n
        };
        (start * elem, (end - start) * elem)
    };
    if let Some(v) = fold.vrank {
        let (mut lo, mut hi) = (0, fold.pof2);
        // Reduce-scatter by recursive halving.
        for round in 0..rounds {
            let mask = fold.pof2 >> (round + 1);
            let peer = fold.real(v ^ mask);
            let mid = (lo + hi) / 2;
            let ((keep_a, keep_b), (give_a, give_b)) = if v & mask == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let (go, gl) = range(give_a, give_b);
            let (ko, kl) = range(keep_a, keep_b);
            let tag = ctx.tag(1 + round);
            let snd = s.send(ctx.world(peer), tag, buf.slice(go, gl), &last);
            let rcv = s.recv(peer as i32, tag, tmp.slice(ko, kl), &last);
            last = vec![s.reduce(op, tmp.slice(ko, kl), buf.slice(ko, kl), &[snd, rcv])];
            (lo, hi) = (keep_a, keep_b);
        }
        // Allgather by recursive doubling, the same pairs in reverse.
        for round in 0..rounds {
            let mask = 1 << round;
            let peer = fold.real(v ^ mask);
            let width = hi - lo;
            let (pa, pb) = if v & mask == 0 {
                (hi, hi + width)
            } else {
                (lo - width, lo)
            };
            let (mo, ml) = range(lo, hi);
            let (po, pl) = range(pa, pb);
            let tag = ctx.tag(1 + rounds + round);
            let snd = s.send(ctx.world(peer), tag, buf.slice(mo, ml), &last);
            let rcv = s.recv(peer as i32, tag, buf.slice(po, pl), &last);
            last = vec![snd, rcv];
            (lo, hi) = (lo.min(pa), hi.max(pb));
        }
    }
    fold.fold_out(ctx, s, buf, 1 + 2 * rounds, &last)
}

/// [`build`] for an allreduce call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Reduction,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.count, r.elem, r.op, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    2.0 * t.lg * t.al + 2.0 * t.n * t.frac * t.be + t.n * t.frac * t.ga + t.fold
}
