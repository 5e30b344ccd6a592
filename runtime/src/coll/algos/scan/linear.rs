//! Linear scan: rank r receives the prefix of ranks 0..r from rank r-1,
//! combines its own contribution and passes the result on. p-1 steps one
//! after another, each one message of n bytes: for few ranks and large n.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Reducer, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "linear",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Neighbour,
    cost,
    phases: None,
    build: Build::Scan(build_call),
};

/// Computes this rank's (inclusive, or `exclusive`) prefix into `out`.
/// `input` is this rank's contribution, or `None` when it is already in
/// `out` (`MPI_IN_PLACE`).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    input: Option<Buf>,
    out: Buf,
    op: &Reducer,
    exclusive: bool,
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    let n = out.len;
    let last_rank = rank + 1 == p;
    if n == 0 {
        return after.to_vec();
    }
    // `next` ends as the prefix through this rank, passed to rank + 1.
    let (next, mut ready) = match (input, exclusive) {
        (Some(inp), false) => (out, vec![s.copy(inp, out, after)]),
        (None, false) => (out, after.to_vec()),
        (inp, true) if !last_rank || rank == 0 => {
            let t = s.temp(n);
            (t, vec![s.copy(inp.unwrap_or(out), t, after)])
        }
        (_, true) => (out, after.to_vec()),
    };
    if rank > 0 {
        let prev = s.temp(n);
        let rcv = s.recv(rank as i32 - 1, ctx.tag(0), prev, after);
        let mut deps = ready.clone();
        deps.push(rcv);
        if exclusive {
            // out = prefix of 0..rank; next = prev op mine (after `next`
            // copied an in-place input out of `out`).
            let c = s.copy(prev, out, &deps);
            ready = if last_rank {
                vec![c]
            } else {
                vec![s.reduce(op, prev, next, &deps), c]
            };
        } else {
            ready = vec![s.reduce(op, prev, next, &deps)];
        }
    }
    if last_rank {
        return ready;
    }
    vec![s.send(ctx.world(rank + 1), ctx.tag(0), next, &ready)]
}

/// [`build`] for a scan call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Prefix,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.input, r.out, r.op, r.exclusive, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n * t.be + t.n * t.ga)
}
