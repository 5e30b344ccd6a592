//! What each collective writes into its rank's slot of the area and what
//! it makes of the slots of the others once their flags say they are
//! there. Reductions fold in rank order (`x0 op (x1 op (... op xp-1))`),
//! so non-commutative operations get MPI's order.

use crate::coll::sched::{Base, Buf, Reducer, Schedule};
use crate::error::Error;
use crate::p2p::small_copy::copy_bytes;

/// Resolves a call's buffers to addresses: a schedule's (the caller's or
/// its scratch), or only the caller's for a call run directly.
pub(crate) trait Mem {
    /// Address of `buf`'s first byte.
    fn ptr(&mut self, buf: Buf) -> *mut u8;
}

impl Mem for Schedule {
    fn ptr(&mut self, buf: Buf) -> *mut u8 {
        Schedule::ptr(self, buf)
    }
}

/// The buffers of a call run without a schedule: all the caller's.
pub(crate) struct UserMem;

impl Mem for UserMem {
    fn ptr(&mut self, buf: Buf) -> *mut u8 {
        match buf.base {
            // SAFETY: the offset stays inside the buffer the call described.
            Base::User(p) => unsafe { p.add(buf.offset) },
            Base::Temp(_) => unreachable!("a direct area call refers to no scratch buffer"),
        }
    }
}

/// One collective on the area.
pub(crate) enum Op {
    /// Every rank posts its flag and waits for all the others.
    Barrier,
    /// The root posts `buf`; the others copy it.
    Bcast {
        /// The root's data; everyone else's destination.
        buf: Buf,
        /// The root's rank.
        root: usize,
    },
    /// Every rank posts its `input`; the root (`Some`) or everyone (`None`,
    /// an allreduce) folds them into its `buf`.
    Reduce {
        /// The contribution.
        input: Buf,
        /// At the ranks that fold, the result (it may be `input`).
        buf: Buf,
        /// The rank that gets the result, or `None` for all of them.
        root: Option<usize>,
        /// The operation.
        op: Reducer,
    },
    /// Every rank posts its `input` and copies every rank's block into
    /// `buf`.
    Allgather {
        /// This rank's block (in place: its block of `buf`).
        input: Buf,
        /// Every rank's block, rank r's at `r * block`.
        buf: Buf,
        /// Bytes per rank.
        block: usize,
    },
    /// Every rank posts its whole `send`; rank i takes block i of each.
    Alltoall {
        /// Block j for rank j.
        send: Buf,
        /// Block i from rank i.
        recv: Buf,
        /// Bytes per block.
        block: usize,
    },
    /// Every rank posts its whole `input`; rank i folds block i of each
    /// into `out`.
    ReduceScatter {
        /// The whole input.
        input: Buf,
        /// Block offsets in `input`, p + 1 of them.
        off: Vec<usize>,
        /// This rank's block of the result.
        out: Buf,
        /// The operation.
        op: Reducer,
    },
}

/// Whose flags a rank waits for before it collects.
pub(crate) enum Needs {
    /// Nobody's (it only posts).
    Nobody,
    /// One rank's.
    One(usize),
    /// Everyone's.
    All,
}

/// A read-only view of every rank's slot for this call.
pub(crate) struct Slots<'a> {
    /// Address of rank r's slot.
    pub at: &'a dyn Fn(usize) -> *const u8,
    /// Ranks.
    pub p: usize,
}

impl Op {
    /// Bytes this rank posts (at most the slot's size).
    pub(crate) fn payload(&self, me: usize) -> usize {
        match self {
            Op::Barrier => 0,
            Op::Bcast { buf, root } => {
                if me == *root {
                    buf.len
                } else {
                    0
                }
            }
            Op::Reduce { input, .. } => input.len,
            Op::Allgather { block, .. } => *block,
            Op::Alltoall { send, .. } => send.len,
            Op::ReduceScatter { input, .. } => input.len,
        }
    }

    /// Bytes each writing rank posts, the same on every rank (it picks
    /// the ring of slots the call uses).
    pub(crate) fn posted_len(&self) -> usize {
        match self {
            Op::Barrier => 0,
            Op::Bcast { buf, .. } => buf.len,
            Op::Reduce { input, .. } => input.len,
            Op::Allgather { block, .. } => *block,
            Op::Alltoall { send, .. } => send.len,
            Op::ReduceScatter { input, .. } => input.len,
        }
    }

    /// Whether this rank writes its slot (and so must wait until nobody
    /// reads it any more).
    pub(crate) fn writes(&self, me: usize) -> bool {
        match self {
            Op::Barrier => false,
            Op::Bcast { root, .. } => me == *root,
            // Nobody reads a reduce root's slot: it folds its input where
            // it is, unless the fold's first copy would overwrite it (in
            // place).
            Op::Reduce {
                root: Some(r),
                input,
                buf,
                ..
            } if me == *r => same_place(*input, *buf),
            _ => true,
        }
    }

    /// Whether another rank waits for this rank's flag to make its result
    /// (otherwise the flag only tells writers that a slot is free again,
    /// and the rank may publish it late: see `Call::advance`).
    pub(crate) fn signals(&self, me: usize) -> bool {
        match self {
            Op::Bcast { root, .. } => me == *root,
            Op::Reduce { root: Some(r), .. } => me != *r,
            _ => true,
        }
    }

    /// Whose flags this rank waits for.
    pub(crate) fn needs(&self, me: usize) -> Needs {
        match self {
            Op::Bcast { root, .. } if me == *root => Needs::Nobody,
            Op::Bcast { root, .. } => Needs::One(*root),
            Op::Reduce { root: Some(r), .. } if me != *r => Needs::Nobody,
            _ => Needs::All,
        }
    }

    /// Copies this rank's contribution into its slot.
    pub(crate) fn post(&self, s: &mut impl Mem, me: usize, slot: *mut u8) {
        let src = match self {
            Op::Barrier => return,
            Op::Bcast { buf, .. } | Op::Reduce { input: buf, .. } => *buf,
            Op::Allgather { input, .. } => *input,
            Op::Alltoall { send, .. } => *send,
            Op::ReduceScatter { input, .. } => *input,
        };
        if src.len > 0 && self.writes(me) {
            // SAFETY: `src` lies in a live buffer of the call; the slot
            // holds at least `payload` bytes (checked when it was built)
            // and no rank reads it now (the gate before posting).
            unsafe { copy_bytes(s.ptr(src), slot, src.len) };
        }
    }

    /// Makes this rank's result from the posted slots.
    pub(crate) fn collect(&self, s: &mut impl Mem, me: usize, slots: &Slots) -> Result<(), Error> {
        let p = slots.p;
        match self {
            Op::Barrier => {}
            Op::Bcast { buf, root } => {
                if me != *root {
                    copy_in(s, (slots.at)(*root), *buf);
                }
            }
            Op::Reduce {
                input,
                buf,
                root,
                op,
            } => {
                if root.is_some_and(|r| r != me) {
                    // A leaf: it only posts.
                } else if self.writes(me) {
                    fold(s, slots, 0, *buf, op)?;
                } else {
                    // A root that did not post: its contribution is read
                    // from its input.
                    let mine = s.ptr(*input).cast_const();
                    let at = |r: usize| if r == me { mine } else { (slots.at)(r) };
                    fold(s, &Slots { at: &at, p }, 0, *buf, op)?;
                }
            }
            Op::Allgather { input, buf, block } => {
                let mine = buf.slice(me * block, *block);
                let in_place = same_place(*input, mine);
                for r in (0..p).filter(|&r| r != me || !in_place) {
                    copy_in(s, (slots.at)(r), buf.slice(r * block, *block));
                }
            }
            Op::Alltoall { recv, block, .. } => {
                for r in 0..p {
                    // SAFETY: block `me` lies inside rank r's posted input.
                    let src = unsafe { (slots.at)(r).add(me * block) };
                    copy_in(s, src, recv.slice(r * block, *block));
                }
            }
            Op::ReduceScatter { off, out, op, .. } => {
                let at = off[me];
                fold(s, slots, at, out.slice(0, off[me + 1] - at), op)?;
            }
        }
        Ok(())
    }
}

/// Whether `a` and `b` start at the same byte of the same buffer.
fn same_place(a: Buf, b: Buf) -> bool {
    let base = match (a.base, b.base) {
        (Base::User(x), Base::User(y)) => std::ptr::eq(x, y),
        (Base::Temp(x), Base::Temp(y)) => x == y,
        _ => false,
    };
    base && a.offset == b.offset
}

/// Copies `dst.len` bytes at `src` (a slot) into `dst`.
fn copy_in(s: &mut impl Mem, src: *const u8, dst: Buf) {
    if dst.len > 0 {
        // SAFETY: `src` holds `dst.len` posted bytes that nobody writes
        // until this rank has moved on; `dst` lies in a live buffer.
        unsafe { copy_bytes(src, s.ptr(dst), dst.len) };
    }
}

/// `out = x0 op (x1 op (... op xp-1))` over the `out.len` bytes at offset
/// `at` of every slot.
fn fold(s: &mut impl Mem, slots: &Slots, at: usize, out: Buf, op: &Reducer) -> Result<(), Error> {
    if out.len == 0 {
        return Ok(());
    }
    let p = slots.p;
    // SAFETY: as in `copy_in`: every slot holds the posted bytes.
    let slot = |r: usize| unsafe { std::slice::from_raw_parts((slots.at)(r).add(at), out.len) };
    copy_in(s, slot(p - 1).as_ptr(), out);
    // SAFETY: `out` lies in a live buffer of the call, apart from the slots.
    let acc = unsafe { std::slice::from_raw_parts_mut(s.ptr(out), out.len) };
    for r in (0..p - 1).rev() {
        op.apply(slot(r), acc)?;
    }
    Ok(())
}
