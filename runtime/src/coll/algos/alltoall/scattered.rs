//! Scattered alltoall: sends and receives posted [`WINDOW`] peers at a
//! time (rank+k and rank-k for k in the window), the next window once
//! this one completes. Overlaps message latencies: for small and medium
//! blocks. Any sizes (alltoallv/w).

use crate::coll::algos::{then, AlgoInfo};
use crate::coll::ctx::Ctx;
use crate::coll::sched::{Buf, Schedule};

/// Applicability.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "scattered",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
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
