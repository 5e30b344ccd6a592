//! Binomial-tree broadcast: lg p rounds of whole-buffer messages; the
//! latency-optimal choice for small messages.

use crate::coll::algos::{AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "binomial",
    commutative_only: false,
    pow2_only: false,
    multi_node: false,
    pattern: Pattern::Tree,
    cost,
    phases: None,
    build: Build::Bcast(build_call),
};

/// Broadcasts `buf` from `root`, with messages on tag step `step`.
pub(crate) fn build(
    ctx: &Ctx,
    s: &mut Schedule,
    buf: Buf,
    root: usize,
    step: usize,
    after: &[usize],
) -> Vec<usize> {
    let place = Place::new(ctx.rank, ctx.size, root);
    let mut last = after.to_vec();
    if let Some(parent) = place.parent() {
        last = vec![s.recv(parent as i32, ctx.tag(step), buf, &last)];
    }
    let sends: Vec<usize> = place
        .children()
        .map(|child| s.send(ctx.world(child), ctx.tag(step), buf, &last))
        .collect();
    if sends.is_empty() {
        last
    } else {
        sends
    }
}

/// Where a rank sits in a binomial tree: its rank relative to the root,
/// and the lowest set bit of that (the parent's distance, and the bound
/// below which the children's distances lie; the root: all of them).
/// The schedule above and the broadcast without one (`coll/tree_direct.rs`,
/// `coll/tree_ibcast.rs`) both walk it, so they send the same messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    vr: usize,
    low: usize,
    root: usize,
    size: usize,
}

impl Place {
    /// `rank`'s place among `size` ranks in the tree rooted at `root`.
    #[inline]
    pub(crate) fn new(rank: usize, size: usize, root: usize) -> Place {
        let vr = (rank + size - root) % size;
        let low = if vr == 0 {
            size.next_power_of_two()
        } else {
            1 << vr.trailing_zeros()
        };
        Place {
            vr,
            low,
            root,
            size,
        }
    }

    fn absolute(&self, rel: usize) -> usize {
        (rel + self.root) % self.size
    }

    /// The parent's rank; `None` at the root.
    #[inline]
    pub(crate) fn parent(&self) -> Option<usize> {
        (self.vr != 0).then(|| self.absolute(self.vr - self.low))
    }

    /// The children's ranks, farthest first.
    #[inline]
    pub(crate) fn children(self) -> impl Iterator<Item = usize> {
        let mut mask = self.low >> 1;
        std::iter::from_fn(move || {
            while mask > 0 {
                let rel = self.vr + mask;
                mask >>= 1;
                if rel < self.size {
                    return Some(self.absolute(rel));
                }
            }
            None
        })
    }
}

/// [`build`] for a bcast call of the registry.
pub(super) fn build_call(
    ctx: &Ctx,
    s: &mut Schedule,
    r: &super::Broadcast,
    after: &[usize],
) -> Vec<usize> {
    build(ctx, s, r.buf, r.root, 0, after)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * (t.al + t.n * t.be)
}
