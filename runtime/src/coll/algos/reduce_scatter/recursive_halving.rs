//! Recursive-halving reduce-scatter: after folding to a power of two (the
//! first 2(p - 2^k) ranks pair up, evens handing their input to odds),
//! lg p rounds, each exchanging half of the range still held with the
//! partner and reducing the half kept; then every folded-away rank gets
//! its block from its partner. n(p-1)/p bytes in lg p messages; combines
//! out of rank order: commutative operations only.

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::fold::Fold;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "recursive_halving",
    commutative_only: true,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Halving,
    cost,
    phases: None,
    build: Build::ReduceScatter(build_call),
};

/// Reduces block `rank` of every rank's `input` into `out`; `off[r]` is the
/// byte offset of block r in `input` (`off[p]` its length). `input` is
/// read only; `out` must not overlap it.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    input: Buf,
    off: &[usize],
    out: Buf,
    op: &Reducer,
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    let block = |b: Buf, r: usize| b.slice(off[r], off[r + 1] - off[r]);
    if p == 1 {
        return then(after, [s.copy_some(block(input, 0), out, after)]);
    }
    let fold = Fold::of(ctx);
    if fold.rem == 0 {
        return power_of_two(ctx, s, input, off, out, op, after);
    }
    let acc = s.temp(input.len);
    let tmp = s.temp(input.len);
    let c = s.copy(input, acc, after);
    let mut last = fold.fold_in(ctx, s, acc, tmp, op, &[c]);
    let rounds = fold.pof2.trailing_zeros() as usize;
    let back = ctx.tag(1 + rounds);
    let Some(v) = fold.vrank else {
        // Folded away: the partner returns this rank's block.
        let rcv = s.recv_some(rank as i32 + 1, back, out, &last);
        return then(&last, [rcv]);
    };
    // Virtual rank w stands for real ranks 2w, 2w+1 (w < rem) or w + rem:
    // its range of the input starts at the first of them.
    let start = |w: usize| {
        if w == fold.pof2 {
            off[p]
        } else if w < fold.rem {
            off[2 * w]
        } else {
            off[w + fold.rem]
        }
    };
    let range = |b: Buf, lo: usize, hi: usize| b.slice(start(lo), start(hi) - start(lo));
    let (mut lo, mut hi) = (0, fold.pof2);
    for round in 0..rounds {
        let mask = fold.pof2 >> (round + 1);
        let peer = fold.real(v ^ mask);
        let mid = lo + mask;
        let (keep, give) = if v & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let tag = ctx.tag(1 + round);
        let snd = s.send_some(ctx.world(peer), tag, range(acc, give.0, give.1), &last);
        let rcv = s.recv_some(peer as i32, tag, range(tmp, keep.0, keep.1), &last);
        let kept = range(acc, keep.0, keep.1);
        let red = s.reduce(
            op,
            range(tmp, keep.0, keep.1),
            kept,
            &then(&last, [snd, rcv]),
        );
        last = vec![red];
        (lo, hi) = keep;
    }
    let mut done = vec![s.copy(block(acc, rank), out, &last)];
    if v < fold.rem {
        // This odd rank also holds its folded-away partner's block.
        let partner = rank - 1;
        done.extend(s.send_some(ctx.world(partner), back, block(acc, partner), &last));
    }
    done
}

/// [`build`] on a power-of-two number of ranks, without copying the input
/// first: the first round sends straight from `input`; each round receives
/// the partner's half into a fresh place and adds the kept half there (the
/// two scratch buffers alternate), and the last round receives into `out`,
/// whose range is then exactly this rank's block. Two ranks need no
/// scratch memory at all.
fn power_of_two(
    ctx: &Ctx,
    s: &mut Schedule,
    input: Buf,
    off: &[usize],
    out: Buf,
    op: &Reducer,
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    let rounds = p.trailing_zeros() as usize;
    let range = |b: Buf, lo: usize, hi: usize| b.slice(off[lo], off[hi] - off[lo]);
    let scratch = if rounds > 1 {
        [s.temp(input.len), s.temp(input.len)]
    } else {
        [out, out]
    };
    let mut cur = input;
    let mut last = after.to_vec();
    let (mut lo, mut hi) = (0, p);
    for round in 0..rounds {
        let mask = p >> (round + 1);
        let peer = rank ^ mask;
        let mid = lo + mask;
        let (keep, give) = if rank & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let next = scratch[round % 2];
        let dst = if round + 1 == rounds {
            out
        } else {
            range(next, keep.0, keep.1)
        };
        let tag = ctx.tag(1 + round);
        let snd = s.send_some(ctx.world(peer), tag, range(cur, give.0, give.1), &last);
        let rcv = s.recv_some(peer as i32, tag, dst, &last);
        let red = s.reduce(
            op,
            range(cur, keep.0, keep.1),
            dst,
            &then(&last, [snd, rcv]),
        );
        last = vec![red];
        cur = next;
        (lo, hi) = keep;
    }
    last
}

/// [`build`] for a reducescatter call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Split,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.input, r.off, r.out, r.op, after)
}

/// Predicted seconds; a non-power-of-two group first folds its extra
/// ranks in (one exchange and a reduction).
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    let fold = if a.ranks.is_power_of_two() {
        0.0
    } else {
        t.al + t.n * t.be + t.n * t.ga
    };
    t.lg * t.al + t.n * t.frac * (t.be + t.ga) + fold
}
