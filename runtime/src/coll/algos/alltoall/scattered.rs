//! Scattered alltoall: sends and receives posted [`WINDOW`] peers at a
//! time (rank+k and rank-k for k in the window), the next window once
//! this one completes. Overlaps message latencies: for small and medium
//! blocks. Any sizes (alltoallv/w).

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "scattered",
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
    name: "scattered",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Pairs,
    cost,
    phases: None,
    build: Build::Alltoallv(build_v),
};

/// Peers whose messages are in flight together.
pub(crate) const WINDOW: usize = 32;

/// Sends `send[j]` to rank j and receives rank j's block into `recv[j]`;
/// `send` must not overlap `recv`. Empty blocks are skipped.
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
    let mut k = 1;
    while k < p {
        let end = (k + WINDOW).min(p);
        let mut window = Vec::new();
        for d in k..end {
            let (to, from) = ((rank + d) % p, (rank + p - d) % p);
            window.push(s.recv_some(from as i32, ctx.tag(d), recv[from], &last));
            window.push(s.send_some(ctx.world(to), ctx.tag(d), send[to], &last));
        }
        last = then(&last, window);
        k = end;
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

/// Predicted seconds. Posting costs each message about alpha/2 of CPU
/// time that overlapping does not hide; many large messages in flight at
/// once spill the cache (up to twice the copy time past 1 MiB).
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    let w = (t.p - 1.0).min(WINDOW as f64);
    let spill = (w * t.n / (1u64 << 20) as f64).min(1.0);
    t.al + (t.p - 1.0) * (t.al / 2.0 + t.n * t.be * (1.0 + spill))
}
