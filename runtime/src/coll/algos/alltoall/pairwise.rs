//! Pairwise exchange: p-1 steps; at step k each rank sends to rank+k and
//! receives from rank-k, one step at a time. Few messages in flight, so it
//! suits large blocks. Any sizes (alltoallv/w).

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "pairwise",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Pairs,
    cost,
    phases: None,
    build: Build::Alltoall(build_call),
};

/// The same algorithm for alltoallv and alltoallw (blocks of any size).
pub(crate) const INFO_V: AlgoInfo = AlgoInfo {
    name: "pairwise",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Pairs,
    cost,
    phases: None,
    build: Build::Alltoallv(build_v),
};

/// Sends `send[j]` to rank j and receives rank j's block into `recv[j]`;
/// `send` must not overlap `recv`. Empty blocks are skipped (both sides
/// know a pair's size).
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    send: &[Buf],
    recv: &[Buf],
    after: &[usize],
) -> Vec<usize> {
    let (p, rank) = (ctx.size, ctx.rank);
    let own = s.copy_some(send[rank], recv[rank], after);
    let mut last = after.to_vec();
    for k in 1..p {
        let (to, from) = ((rank + k) % p, (rank + p - k) % p);
        let snd = s.send_some(ctx.world(to), ctx.tag(k), send[to], &last);
        let rcv = s.recv_some(from as i32, ctx.tag(k), recv[from], &last);
        last = then(&last, [snd, rcv]);
    }
    last.extend(own);
    last
}

/// [`build`] for an alltoall call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Even,
    after: &[usize],
) -> Vec<usize> {
    build(
        ctx,
        s,
        &r.send_parts(ctx.size),
        &r.recv_parts(ctx.size),
        after,
    )
}

/// [`build`] for an alltoallv call of the registry.
pub(super) fn build_v(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Parts,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.send, r.recv, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    (t.p - 1.0) * (t.al + t.n * t.be)
}
