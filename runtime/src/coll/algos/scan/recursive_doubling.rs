//! Recursive-doubling scan: in round k each rank exchanges the combined
//! contributions of its aligned group of 2^k ranks with the partner group
//! (rank xor 2^k). A rank above its partner folds the partner's (lower)
//! ranks in front of both its running group total and its result; a rank
//! below it appends them to the group total only. Rank order is kept, so
//! any operation works. ceil(lg p) rounds of n bytes each.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
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
    build: Build::Scan(build_call),
};

/// Computes this rank's (inclusive, or `exclusive`) prefix into `out`.
/// `input` is this rank's contribution, or `None` when it is already in
/// `out` (`MPI_IN_PLACE`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    input: Option<Buf>,
    out: Buf,
    op: &Reducer,
    commutative: bool,
    exclusive: bool,
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    let n = out.len;
    if n == 0 || (p == 1 && (exclusive || input.is_none())) {
        return after.to_vec();
    }
    let mine = input.unwrap_or(out);
    // `group`: the combined contributions of this rank's current group.
    let group = s.temp(n);
    let mut last = vec![s.copy(mine, group, after)];
    if let (Some(inp), false) = (input, exclusive) {
        last.push(s.copy(inp, out, after));
    }
    let tmp = s.temp(n);
    // Exscan: whether `out` holds anything yet.
    let mut started = false;
    let (mut mask, mut round) = (1, 0);
    while mask < p {
        let peer = rank ^ mask;
        if peer < p {
            let snd = s.send(ctx.world(peer), ctx.tag(round), group, &last);
            let rcv = s.recv(peer as i32, ctx.tag(round), tmp, &last);
            let both = [snd, rcv];
            last = if peer < rank {
                // The peer's ranks come first: x = tmp op x.
                let g = s.reduce(op, tmp, group, &both);
                let o = if exclusive && !started {
                    s.copy(tmp, out, &both)
                } else {
                    s.reduce(op, tmp, out, &both)
                };
                started = true;
                vec![g, o]
            } else if commutative {
                vec![s.reduce(op, tmp, group, &both)]
            } else {
                // Ours come first: tmp = group op tmp, then keep tmp.
                let red = s.reduce(op, group, tmp, &both);
                vec![s.copy(tmp, group, &[red])]
            };
        }
        mask <<= 1;
        round += 1;
    }
    last
}

/// [`build`] for a scan call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Prefix,
    after: &[usize],
) -> Vec<usize> {
    build(
        ctx,
        s,
        r.input,
        r.out,
        r.op,
        r.commutative,
        r.exclusive,
        after,
    )
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * (t.al + t.n * t.be + 2.0 * t.n * t.ga)
}
