//! Folding a non-power-of-two group onto a power of two: of the first
//! `2*rem` ranks (rem = size - pof2), each even rank hands its data to the
//! odd rank after it and sits out; the odd ones and everyone above continue
//! as `pof2` virtual ranks. Combining the pair as (even op odd) keeps rank
//! order, so non-commutative operations stay correct.

use super::ctx::{pow2_floor, Ctx};
use super::sched::{Buf, Reducer, Schedule};

/// The folded view of one rank.
#[derive(Debug, Clone, Copy)]
pub struct Fold {
    /// Largest power of two not above the size.
    pub pof2: usize,
    /// Ranks folded away (`size - pof2`).
    pub rem: usize,
    /// This rank's virtual rank, or `None` if it sits out.
    pub vrank: Option<usize>,
}

impl Fold {
    /// The fold of `ctx`.
    pub fn of(ctx: &Ctx) -> Fold {
        let pof2 = pow2_floor(ctx.size);
        let rem = ctx.size - pof2;
        let vrank = if ctx.rank < 2 * rem {
            (ctx.rank % 2 == 1).then_some(ctx.rank / 2)
        } else {
            Some(ctx.rank - rem)
        };
        Fold { pof2, rem, vrank }
    }

    /// The real rank of virtual rank `v`.
    pub fn real(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }

    /// Adds the fold-in steps (tag step 0): even ranks of the first pairs send
    /// `buf`, odd ones receive into `tmp` and compute `buf = tmp op buf`.
    pub fn fold_in(
        &self,
        ctx: &Ctx,
        s: &mut Schedule,
        buf: Buf,
        tmp: Buf,
        op: &Reducer,
        after: &[usize],
    ) -> Vec<usize> {
        if ctx.rank >= 2 * self.rem {
            return after.to_vec();
        }
        if ctx.rank.is_multiple_of(2) {
            vec![s.send(ctx.world(ctx.rank + 1), ctx.tag(0), buf, after)]
        } else {
            let r = s.recv(ctx.rank as i32 - 1, ctx.tag(0), tmp, after);
            vec![s.reduce(op, tmp, buf, &[r])]
        }
    }

    /// Adds the fold-out steps (tag step `step`): odd ranks return the result.
    pub fn fold_out(
        &self,
        ctx: &Ctx,
        s: &mut Schedule,
        buf: Buf,
        step: usize,
        after: &[usize],
    ) -> Vec<usize> {
        if ctx.rank >= 2 * self.rem {
            return after.to_vec();
        }
        if ctx.rank % 2 == 1 {
            vec![s.send(ctx.world(ctx.rank - 1), ctx.tag(step), buf, after)]
        } else {
            vec![s.recv(ctx.rank as i32 + 1, ctx.tag(step), buf, after)]
        }
    }
}
