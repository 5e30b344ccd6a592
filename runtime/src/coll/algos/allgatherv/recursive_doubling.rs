//! Recursive-doubling allgatherv: lg p rounds, each doubling the range of
//! blocks a rank holds, in a packed buffer (the receive buffer itself when
//! its blocks are contiguous in rank order, else scratch copied out at the
//! end). Power-of-two rank counts only.

use crate::coll::algos::{then, AlgoInfo, Build};
use crate::coll::ctx::Ctx;
use crate::coll::inter::Pattern;
use crate::coll::model::{Args, Model};
use crate::coll::sched::{Base, Buf, Schedule};

/// Its registry entry.
pub(crate) const INFO: AlgoInfo = AlgoInfo {
    name: "recursive_doubling",
    commutative_only: false,
    pow2_only: true,
    multi_node: false,
    pattern: Pattern::Halving,
    cost,
    phases: None,
    build: Build::Allgatherv(build),
};

/// The whole range when the parts lie back to back in rank order in one buffer.
fn packed(parts: &[Buf]) -> Option<Buf> {
    let first = parts.first()?;
    let mut end = first.offset;
    for b in parts {
        let same = match (b.base, first.base) {
            (Base::User(x), Base::User(y)) => x == y,
            (Base::Temp(x), Base::Temp(y)) => x == y,
            _ => false,
        };
        if !same || b.offset != end {
            return None;
        }
        end += b.len;
    }
    Some(first.slice(0, end - first.offset))
}

/// Fills every `parts[r]` (the caller's own is already there).
pub(crate) fn build(ctx: &Ctx, s: &mut Schedule, parts: &[Buf], after: &[usize]) -> Vec<usize> {
    let p = ctx.size;
    if p == 1 {
        return after.to_vec();
    }
    // off[r]: byte offset of block r in the packed buffer.
    let mut off = vec![0; p + 1];
    for r in 0..p {
        off[r + 1] = off[r] + parts[r].len;
    }
    let range = |buf: Buf, a: usize, b: usize| buf.slice(off[a], off[b] - off[a]);
    let direct = packed(parts);
    let (buf, mut last) = match direct {
        Some(buf) => (buf, after.to_vec()),
        None => {
            let tmp = s.temp(off[p]);
            let own = range(tmp, ctx.rank, ctx.rank + 1);
            let c = s.copy_some(parts[ctx.rank], own, after);
            (tmp, then(after, [c]))
        }
    };
    let (mut mask, mut round) = (1, 0);
    while mask < p {
        let peer = ctx.rank ^ mask;
        let mine = ctx.rank & !(mask - 1);
        let theirs = peer & !(mask - 1);
        let out = range(buf, mine, mine + mask);
        let inb = range(buf, theirs, theirs + mask);
        let snd = s.send_some(ctx.world(peer), ctx.tag(round), out, &last);
        let rcv = s.recv_some(peer as i32, ctx.tag(round), inb, &last);
        last = then(&last, [snd, rcv]);
        mask <<= 1;
        round += 1;
    }
    if direct.is_some() {
        return last;
    }
    let copies: Vec<Option<usize>> = (0..p)
        .filter(|&r| r != ctx.rank)
        .map(|r| s.copy_some(range(buf, r, r + 1), parts[r], &last))
        .collect();
    then(&last, copies)
}

/// Predicted seconds.
fn cost(m: &Model, a: &Args) -> f64 {
    let t = m.terms(a);
    t.lg * t.al + t.n * (t.p - 1.0) * t.be
}
