//! Pairwise reduce-scatter: p-1 steps; at step k each rank sends block
//! rank+k of its input to rank+k and receives rank-k's contribution to its
//! own block. Commutative operations fold each contribution in as it
//! arrives; non-commutative ones keep every contribution in scratch and
//! combine them in rank order (x_0 op x_1 op ... op x_{p-1}), so any
//! operation works. Moves n(p-1)/p bytes per rank in p-1 messages.

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "pairwise",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Pairs,
    cost,
    phases: None,
    build: Build::ReduceScatter(build_call),
};

/// Reduces block `rank` of every rank's `input` into `out`. `parts[r]` is
/// block r of `input` (read only); `out` must not overlap `input`.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    parts: &[Buf],
    out: Buf,
    op: &Reducer,
    commutative: bool,
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    let mine = parts[rank];
    if commutative {
        let mut last = vec![s.copy(mine, out, after)];
        let tmp = s.temp(mine.len);
        for k in 1..p {
            let (to, from) = ((rank + k) % p, (rank + p - k) % p);
            let snd = s.send_some(ctx.world(to), ctx.tag(k), parts[to], &last);
            let rcv = s.recv_some(from as i32, ctx.tag(k), tmp, &last);
            let red = s.reduce(op, tmp, out, &then(&last, [rcv]));
            last = [red].into_iter().chain(snd).collect();
        }
        return last;
    }
    // x[r] = rank r's contribution, then the running prefix x_0 op .. op x_r.
    let mut ready = vec![Vec::new(); p];
    let x: Vec<Buf> = (0..p).map(|_| s.temp(mine.len)).collect();
    ready[rank] = vec![s.copy(mine, x[rank], after)];
    let mut last = after.to_vec();
    for k in 1..p {
        let (to, from) = ((rank + k) % p, (rank + p - k) % p);
        let snd = s.send_some(ctx.world(to), ctx.tag(k), parts[to], &last);
        let rcv = s.recv_some(from as i32, ctx.tag(k), x[from], &last);
        ready[from] = rcv.into_iter().collect();
        last = then(&last, [snd, rcv]);
    }
    let mut prefix = ready[0].clone();
    for r in 1..p {
        let mut deps = std::mem::take(&mut ready[r]);
        deps.extend(&prefix);
        // x[r] = x[r-1] op x[r].
        prefix = vec![s.reduce(op, x[r - 1], x[r], &deps)];
    }
    let mut done = vec![s.copy(x[p - 1], out, &prefix)];
    done.extend(last);
    done
}

/// [`build`] for a reducescatter call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Split,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, &r.parts(), r.out, r.op, r.commutative, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n / t.p * (t.be + t.ga))
}
