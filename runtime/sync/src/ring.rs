//! The protocol of a single-producer single-consumer ring of fixed-size
//! cells (in the runtime: one per ordered pair of local ranks, in the
//! node's shared segment).
//!
//! A cell is a publication word `seq`, a header (`len`, `flags`) and
//! [`Cells::cell_size`] payload bytes. The producer fills cell `i`
//! (mod `cells`) and publishes it with a `Release` store of `seq = i + 1`
//! (wrapping); the consumer, which knows the index `i` it expects next,
//! polls that one word with `Acquire`, so a small message costs the
//! consumer one cache-line transfer: flag, header and payload travel
//! together. The consumer frees cells with a `Release` store of its
//! monotonic [`Tail::index`]; the producer caches it and reloads it
//! (`Acquire`) only when the ring looks full. A stale `seq` from an earlier
//! lap is `i + 1 - k * cells`, never `i + 1`, as `cells < 2^32`.
//!
//! `flags` is not interpreted here: the engine may carry a message kind in it.
//!
//! [`Sender`] and [`Receiver`] are not `Sync`: one thread at a time drives
//! each side, which is what makes the single-producer / single-consumer
//! protocol hold inside a process.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use crate::atomic::{fence, AtomicU32, AtomicU64};

/// The consumer's words, in front of the cells.
#[repr(C)]
#[derive(Debug, Default)]
pub struct Tail {
    /// Index of the next cell the consumer drains (monotonic); consumer-written.
    pub index: AtomicU64,
    /// Non-zero once the producer found the ring full: the consumer, having
    /// freed a cell, clears it and wakes the producer (the only pops that
    /// do, so a ring that never fills costs no wake-up).
    pub want_room: AtomicU32,
}

/// Where a ring's words and cells are: in the runtime, a mapped segment
/// (a cell is its address); in the loom models, loom's atomics and cells.
///
/// # Safety
///
/// Every call returns the same objects for the same arguments; `cell(i)`
/// and `cell(j)` are the same cell exactly when `i` and `j` agree modulo
/// `mask() + 1`, a power of two below 2^32; the cell accessors touch that
/// cell's header and payload only, [`cell_size`](Cells::cell_size)
/// payload bytes at most.
pub unsafe trait Cells {
    /// A handle on one cell.
    type Cell: Copy;
    /// The consumer's words.
    fn tail(&self) -> &Tail;
    /// Cells in the ring, minus one.
    fn mask(&self) -> u64;
    /// Payload bytes of a cell.
    fn cell_size(&self) -> usize;
    /// Cell number `index` (mod `mask() + 1`).
    fn cell(&self, index: u64) -> Self::Cell;
    /// The publication word of `cell`.
    fn seq(&self, cell: Self::Cell) -> &AtomicU32;
    /// Writes the header of `cell`.
    ///
    /// # Safety
    ///
    /// The caller owns the cell: the producer, before publishing it.
    unsafe fn write_header(&self, cell: Self::Cell, len: u32, flags: u32);
    /// Reads the header (`len`, `flags`) of `cell`.
    ///
    /// # Safety
    ///
    /// The caller owns the cell: the consumer, after its publication.
    unsafe fn read_header(&self, cell: Self::Cell) -> (u32, u32);
    /// The whole payload area of `cell`, for writing.
    ///
    /// # Safety
    ///
    /// As for [`write_header`](Cells::write_header), and no other reference
    /// to the payload lives as long as this one.
    #[allow(clippy::mut_from_ref)]
    unsafe fn payload_mut(&self, cell: Self::Cell) -> &mut [u8];
    /// A hint that the producer writes `cell` next (say, a prefetch for
    /// writing of its first line, so that taking the line from the
    /// consumer's core overlaps the producer's work until then).
    fn prepare(&self, _cell: Self::Cell) {}
    /// A hint that the consumer reads `cell` soon (say, a prefetch of its
    /// first line, so that a backlog of messages streams in while the
    /// consumer handles the ones before).
    fn look_ahead(&self, _cell: Self::Cell) {}
    /// The first `len` payload bytes of `cell` (`len <= cell_size()`).
    ///
    /// # Safety
    ///
    /// As for [`read_header`](Cells::read_header).
    unsafe fn payload(&self, cell: Self::Cell, len: usize) -> &[u8];
}

/// How many cells past the one it pops the consumer asks for early
/// ([`Cells::look_ahead`]).
const LOOK_AHEAD: u64 = 4;

/// The producer side of a ring.
#[derive(Debug)]
pub struct Sender<C: Cells> {
    cells: C,
    head: Cell<u64>,
    cached_tail: Cell<u64>,
    reserved: Cell<bool>,
}

/// The consumer side of a ring.
#[derive(Debug)]
pub struct Receiver<C: Cells> {
    cells: C,
    tail: Cell<u64>,
    busy: Cell<bool>,
}

/// A cell claimed by [`Sender::try_reserve`]: fill
/// [`payload`](Reservation::payload), then [`commit`](Reservation::commit).
/// Dropping it uncommitted publishes nothing.
#[derive(Debug)]
pub struct Reservation<'a, C: Cells> {
    sender: &'a Sender<C>,
    cell: C::Cell,
    _unsync: PhantomData<&'a mut [u8]>,
}

impl<C: Cells> Sender<C> {
    /// The producer side of the ring in `cells`, which starts where the
    /// consumer's index stands (0 in a fresh ring).
    pub fn new(cells: C) -> Sender<C> {
        let tail = cells.tail().index.load(Acquire);
        Sender {
            cells,
            head: Cell::new(tail),
            cached_tail: Cell::new(tail),
            reserved: Cell::new(false),
        }
    }

    /// Payload bytes one message may carry.
    pub fn max_payload(&self) -> usize {
        self.cells.cell_size()
    }

    /// Whether a free cell exists (reloads the consumer's index if needed).
    fn has_room(&self) -> bool {
        let cells = self.cells.mask() + 1;
        if self.head.get().wrapping_sub(self.cached_tail.get()) < cells {
            return true;
        }
        let tail = self.cells.tail();
        self.cached_tail.set(tail.index.load(Acquire));
        if self.head.get().wrapping_sub(self.cached_tail.get()) < cells {
            return true;
        }
        // Full: ask the consumer to wake this side when it frees a cell
        // (this side may sleep before then), then look once more. The two
        // SeqCst fences (here and in `take_room_request`) order each side's
        // store before its load: either the consumer sees the request, or
        // this reload sees its pop. Without them both may read the old
        // value and this side sleeps with no wake-up coming.
        if tail.want_room.load(Relaxed) == 0 {
            tail.want_room.store(1, Relaxed);
        }
        fence(SeqCst);
        self.cached_tail.set(tail.index.load(Acquire));
        self.head.get().wrapping_sub(self.cached_tail.get()) < cells
    }

    /// Copies the concatenation of `parts` into the next cell and publishes it
    /// with `flags`. Returns `false` (and copies nothing) when the ring is full
    /// or a [`Reservation`] is outstanding.
    ///
    /// # Panics
    ///
    /// If the parts add up to more than [`max_payload`](Sender::max_payload).
    pub fn try_push(&self, flags: u32, parts: &[&[u8]]) -> bool {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        assert!(
            total <= self.cells.cell_size(),
            "shm push of {total} bytes exceeds the {}-byte cell",
            self.cells.cell_size()
        );
        let Some(mut r) = self.try_reserve() else {
            return false;
        };
        let payload = r.payload();
        let mut at = 0;
        for part in parts {
            payload[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        r.commit(total, flags);
        true
    }

    /// Claims the next cell for in-place filling; `None` when the ring is
    /// full or another reservation is outstanding.
    pub fn try_reserve(&self) -> Option<Reservation<'_, C>> {
        if self.reserved.get() || !self.has_room() {
            return None;
        }
        self.reserved.set(true);
        Some(Reservation {
            sender: self,
            cell: self.cells.cell(self.head.get()),
            _unsync: PhantomData,
        })
    }
}

impl<C: Cells> Reservation<'_, C> {
    /// The cell's payload area, [`max_payload`](Sender::max_payload) bytes.
    pub fn payload(&mut self) -> &mut [u8] {
        // SAFETY: the cell is free (head - tail < cells), so the consumer does
        // not read it until its `seq` is published; only this reservation (the
        // sender is !Sync and `reserved` admits one) writes it.
        unsafe { self.sender.cells.payload_mut(self.cell) }
    }

    /// Publishes the first `len` payload bytes with `flags`.
    ///
    /// # Panics
    ///
    /// If `len` exceeds [`max_payload`](Sender::max_payload).
    pub fn commit(self, len: usize, flags: u32) {
        let s = self.sender;
        assert!(
            len <= s.cells.cell_size(),
            "shm commit of {len} bytes exceeds the cell"
        );
        let index = s.head.get();
        // SAFETY: the cell header is ours to write for the reasons given in
        // `payload`.
        unsafe { s.cells.write_header(self.cell, len as u32, flags) };
        s.cells
            .seq(self.cell)
            .store((index as u32).wrapping_add(1), Release);
        s.head.set(index + 1);
        s.cells.prepare(s.cells.cell(index + 1));
    }
}

impl<C: Cells> Drop for Reservation<'_, C> {
    fn drop(&mut self) {
        self.sender.reserved.set(false);
    }
}

impl<C: Cells> Receiver<C> {
    /// The consumer side of the ring in `cells`.
    pub fn new(cells: C) -> Receiver<C> {
        let tail = cells.tail().index.load(Acquire);
        Receiver {
            cells,
            tail: Cell::new(tail),
            busy: Cell::new(false),
        }
    }

    /// The next cell to drain, if the producer has published it.
    fn ready_cell(&self) -> Option<C::Cell> {
        let tail = self.tail.get();
        let cell = self.cells.cell(tail);
        (self.cells.seq(cell).load(Acquire) == (tail as u32).wrapping_add(1)).then_some(cell)
    }

    /// Whether no message is waiting.
    pub fn is_empty(&self) -> bool {
        self.ready_cell().is_none()
    }

    /// Hands the oldest message (`flags`, payload) to `f` in place, then frees
    /// its cell. `None` when the ring is empty, or when called from inside
    /// another `try_pop` on the same receiver.
    pub fn try_pop<R>(&self, f: impl FnOnce(u32, &[u8]) -> R) -> Option<R> {
        if self.busy.get() {
            return None;
        }
        let cell = self.ready_cell()?;
        self.cells
            .look_ahead(self.cells.cell(self.tail.get() + LOOK_AHEAD));
        self.busy.set(true);
        let _busy = BusyGuard(&self.busy);
        // SAFETY: the cell's `seq` says it is published (Acquire above), so
        // the producer has finished writing it and will not touch it again
        // until we publish a larger tail. A corrupt length is clamped.
        let (flags, payload) = unsafe {
            let (len, flags) = self.cells.read_header(cell);
            let len = (len as usize).min(self.cells.cell_size());
            (flags, self.cells.payload(cell, len))
        };
        let out = f(flags, payload);
        let next = self.tail.get() + 1;
        self.tail.set(next);
        self.cells.tail().index.store(next, Release);
        Some(out)
    }

    /// Whether the producer found the ring full and asked for room since
    /// the last call (the request is consumed): call it after popping, and
    /// wake the producer when it says so.
    pub fn take_room_request(&self) -> bool {
        let want = &self.cells.tail().want_room;
        // Pairs with the producer's fence after its request (see `has_room`):
        // the pops' tail stores come before this load. One fence per poll
        // that popped, not per message.
        fence(SeqCst);
        want.load(Relaxed) != 0 && want.swap(0, Relaxed) != 0
    }
}

/// Clears a receiver's `busy` flag however `try_pop` is left (a panicking
/// callback leaves the message in the ring, to be seen again).
struct BusyGuard<'a>(&'a Cell<bool>);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}
