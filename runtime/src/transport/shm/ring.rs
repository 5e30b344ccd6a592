//! Single-producer single-consumer rings of fixed-size cells in the segment.
//!
//! One ring per ordered pair of local ranks. A cell is
//! `seq: u32, len: u32, flags: u32, pad: u32` then `cell_size` payload
//! bytes. The producer fills cell `i` (mod `cells`) and publishes it with a
//! `Release` store of `seq = i + 1` (wrapping); the consumer, which knows
//! the index `i` it expects next, polls that one word with `Acquire`, so a
//! small message costs the consumer one cache-line transfer: flag, header
//! and payload travel together. The consumer frees cells with a `Release`
//! store of its monotonic `tail` (alone on its [`LINE`](super::layout::LINE));
//! the producer caches it and reloads it (`Acquire`) only when the ring
//! looks full. A stale `seq` from an earlier lap is `i + 1 - k * cells`,
//! never `i + 1`, as `cells < 2^32`.
//!
//! `flags` is not interpreted here: the engine may carry a message kind in it.
//!
//! [`Sender`] and [`Receiver`] are `Send` but not `Sync`: one thread at a time
//! drives each side, which is what makes the single-producer /
//! single-consumer protocol hold inside a process.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Arc;

use super::layout::{Layout, RingCtl, CELL_HEADER};
use super::map::Mapping;

/// What both sides share: where the ring is and its shape.
#[derive(Debug)]
struct Geometry {
    _map: Arc<Mapping>,
    ctl: NonNull<RingCtl>,
    cells: NonNull<u8>,
    mask: u64,
    stride: usize,
    cell_size: usize,
}

impl Geometry {
    fn new(map: &Arc<Mapping>, offset: usize, layout: &Layout) -> Geometry {
        let ctl = NonNull::from(map.at::<RingCtl>(offset));
        let ctl_len = std::mem::size_of::<RingCtl>();
        let cells_len = layout.cells() * layout.stride();
        Geometry {
            _map: Arc::clone(map),
            ctl,
            cells: map.bytes(offset + ctl_len, cells_len),
            mask: layout.cells() as u64 - 1,
            stride: layout.stride(),
            cell_size: layout.cell_size(),
        }
    }

    fn ctl(&self) -> &RingCtl {
        // SAFETY: `ctl` was checked in bounds and aligned by `Mapping::at`,
        // and `self.map` keeps the mapping alive as long as `self`.
        unsafe { self.ctl.as_ref() }
    }

    /// The publication word of `cell` (a pointer from [`Geometry::cell`]).
    fn seq(&self, cell: *mut u8) -> &AtomicU32 {
        // SAFETY: cells are 64-aligned and inside the mapping, which lives
        // as long as `self`; both sides access this word only atomically.
        unsafe { AtomicU32::from_ptr(cell.cast::<u32>()) }
    }

    /// Start of cell number `index` (mod `cells`).
    fn cell(&self, index: u64) -> *mut u8 {
        let slot = (index & self.mask) as usize;
        // SAFETY: `slot < cells`, and `cells * stride` bytes from `self.cells`
        // were bounds-checked by `Mapping::bytes`.
        unsafe { self.cells.as_ptr().add(slot * self.stride) }
    }
}

/// The producer side of a ring: this rank sending to one peer.
///
/// See the example on [`ShmNode::sender`](super::ShmNode::sender).
#[derive(Debug)]
pub struct Sender {
    g: Geometry,
    head: Cell<u64>,
    cached_tail: Cell<u64>,
    reserved: Cell<bool>,
}

// SAFETY: the raw pointers point into `g.map`, which the Arc keeps alive and
// which is shared memory; moving a side to another thread is fine. `Cell`
// fields keep it `!Sync`.
unsafe impl Send for Sender {}

/// The consumer side of a ring: this rank receiving from one peer.
///
/// See the example on [`ShmNode::receiver`](super::ShmNode::receiver).
#[derive(Debug)]
pub struct Receiver {
    g: Geometry,
    tail: Cell<u64>,
    busy: Cell<bool>,
}

// SAFETY: as for `Sender`.
unsafe impl Send for Receiver {}

/// A cell claimed by [`Sender::try_reserve`]: fill
/// [`payload`](Reservation::payload), then [`commit`](Reservation::commit).
/// Dropping it uncommitted publishes nothing.
///
/// See the example on [`ShmNode::sender`](super::ShmNode::sender).
#[derive(Debug)]
pub struct Reservation<'a> {
    sender: &'a Sender,
    cell: *mut u8,
    _unsync: PhantomData<&'a mut [u8]>,
}

impl Sender {
    pub(crate) fn new(map: &Arc<Mapping>, offset: usize, layout: &Layout) -> Sender {
        let g = Geometry::new(map, offset, layout);
        // Rings start empty: the consumer's `tail` is 0 until it pops.
        let tail = g.ctl().tail.0.index.load(Acquire);
        Sender {
            g,
            head: Cell::new(tail),
            cached_tail: Cell::new(tail),
            reserved: Cell::new(false),
        }
    }

    /// Payload bytes one message may carry.
    ///
    /// See the example on [`ShmNode::sender`](super::ShmNode::sender).
    pub fn max_payload(&self) -> usize {
        self.g.cell_size
    }

    /// Whether a free cell exists (reloads the consumer's index if needed).
    fn has_room(&self) -> bool {
        let cells = self.g.mask + 1;
        if self.head.get().wrapping_sub(self.cached_tail.get()) < cells {
            return true;
        }
        let ctl = &self.g.ctl().tail.0;
        self.cached_tail.set(ctl.index.load(Acquire));
        if self.head.get().wrapping_sub(self.cached_tail.get()) < cells {
            return true;
        }
        // Full: ask the consumer to ring this rank's doorbell when it frees
        // a cell (this rank may sleep before then). A rank goes to sleep
        // only after many more polls, each reloading the index, so a pop
        // that races with this store is seen by one of them.
        if ctl.want_room.load(Relaxed) == 0 {
            ctl.want_room.store(1, Relaxed);
        }
        false
    }

    /// Copies the concatenation of `parts` into the next cell and publishes it
    /// with `flags`. Returns `false` (and copies nothing) when the ring is full
    /// or a [`Reservation`] is outstanding.
    ///
    /// # Panics
    ///
    /// If the parts add up to more than [`max_payload`](Sender::max_payload).
    ///
    /// See the example on [`ShmNode::sender`](super::ShmNode::sender).
    pub fn try_push(&self, flags: u32, parts: &[&[u8]]) -> bool {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        assert!(
            total <= self.g.cell_size,
            "shm push of {total} bytes exceeds the {}-byte cell",
            self.g.cell_size
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
    ///
    /// See the example on [`ShmNode::sender`](super::ShmNode::sender).
    pub fn try_reserve(&self) -> Option<Reservation<'_>> {
        if self.reserved.get() || !self.has_room() {
            return None;
        }
        self.reserved.set(true);
        Some(Reservation {
            sender: self,
            cell: self.g.cell(self.head.get()),
            _unsync: PhantomData,
        })
    }
}

impl Reservation<'_> {
    /// The cell's payload area, [`max_payload`](Sender::max_payload) bytes.
    ///
    /// See the example on [`ShmNode::sender`](super::ShmNode::sender).
    pub fn payload(&mut self) -> &mut [u8] {
        // SAFETY: the cell is free (head - tail < cells), so the consumer does
        // not read it until its `seq` is published; only this reservation (the
        // sender is !Sync and `reserved` admits one) writes it.
        unsafe {
            std::slice::from_raw_parts_mut(self.cell.add(CELL_HEADER), self.sender.g.cell_size)
        }
    }

    /// Publishes the first `len` payload bytes with `flags`.
    ///
    /// # Panics
    ///
    /// If `len` exceeds [`max_payload`](Sender::max_payload).
    ///
    /// See the example on [`ShmNode::sender`](super::ShmNode::sender).
    pub fn commit(self, len: usize, flags: u32) {
        let s = self.sender;
        assert!(
            len <= s.g.cell_size,
            "shm commit of {len} bytes exceeds the cell"
        );
        let index = s.head.get();
        // SAFETY: the cell header (16 bytes, 64-aligned) is ours to write
        // for the reasons given in `payload`.
        unsafe {
            self.cell.cast::<u32>().add(1).write(len as u32);
            self.cell.cast::<u32>().add(2).write(flags);
        }
        s.g.seq(self.cell)
            .store((index as u32).wrapping_add(1), Release);
        s.head.set(index + 1);
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.sender.reserved.set(false);
    }
}

impl Receiver {
    pub(crate) fn new(map: &Arc<Mapping>, offset: usize, layout: &Layout) -> Receiver {
        let g = Geometry::new(map, offset, layout);
        let tail = g.ctl().tail.0.index.load(Acquire);
        Receiver {
            g,
            tail: Cell::new(tail),
            busy: Cell::new(false),
        }
    }

    /// The next cell to drain, if the producer has published it.
    fn ready_cell(&self) -> Option<*mut u8> {
        let tail = self.tail.get();
        let cell = self.g.cell(tail);
        (self.g.seq(cell).load(Acquire) == (tail as u32).wrapping_add(1)).then_some(cell)
    }

    /// Whether no message is waiting.
    ///
    /// See the example on [`ShmNode::receiver`](super::ShmNode::receiver).
    pub fn is_empty(&self) -> bool {
        self.ready_cell().is_none()
    }

    /// Hands the oldest message (`flags`, payload) to `f` in place, then frees
    /// its cell. `None` when the ring is empty, or when called from inside
    /// another `try_pop` on the same receiver.
    ///
    /// See the example on [`ShmNode::receiver`](super::ShmNode::receiver).
    pub fn try_pop<R>(&self, f: impl FnOnce(u32, &[u8]) -> R) -> Option<R> {
        if self.busy.get() {
            return None;
        }
        let cell = self.ready_cell()?;
        self.busy.set(true);
        let _busy = BusyGuard(&self.busy);
        // SAFETY: the cell's `seq` says it is published (Acquire above), so
        // the producer has finished writing it and will not touch it again
        // until we publish a larger tail. A corrupt length is clamped.
        let (flags, payload) = unsafe {
            let len = (cell.cast::<u32>().add(1).read() as usize).min(self.g.cell_size);
            let flags = cell.cast::<u32>().add(2).read();
            (
                flags,
                std::slice::from_raw_parts(cell.add(CELL_HEADER), len),
            )
        };
        prefetch_rest(payload);
        let out = f(flags, payload);
        let next = self.tail.get() + 1;
        self.tail.set(next);
        self.g.ctl().tail.0.index.store(next, Release);
        Some(out)
    }

    /// Whether the producer found the ring full and asked for room since
    /// the last call (the request is consumed): call it after popping, and
    /// ring the producer's doorbell when it says so.
    pub fn take_room_request(&self) -> bool {
        let want = &self.g.ctl().tail.0.want_room;
        want.load(Relaxed) != 0 && want.swap(0, Relaxed) != 0
    }
}

/// Asks for the cache lines of a message's payload past the cell's first
/// line before the message is handled: they were just written by the
/// producer's core, and fetching them one by one in the copy out would put
/// each transfer on the receiver's path after matching; issued here, the
/// transfers overlap matching. Up to `PREFETCH_LINES` lines (beyond that
/// the copy's own streaming covers the rest).
#[inline(always)]
fn prefetch_rest(payload: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        const PREFETCH_LINES: usize = 16;
        let start = payload.as_ptr() as usize;
        // Lines after the one holding the payload's first byte (that one
        // arrived with the publication word).
        let first = (start & !63) + 64;
        let end = start + payload.len().min(PREFETCH_LINES * 64);
        let mut line = first;
        while line < end {
            // SAFETY: prefetching is a hint: it never faults, and every
            // address here is inside the payload anyway.
            unsafe {
                std::arch::x86_64::_mm_prefetch(line as *const i8, std::arch::x86_64::_MM_HINT_T0)
            };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = payload;
}

/// Clears a receiver's `busy` flag however `try_pop` is left (a panicking
/// callback leaves the message in the ring, to be seen again).
struct BusyGuard<'a>(&'a Cell<bool>);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// A fresh ring in an anonymous shared mapping (tests and benches).
#[cfg(test)]
pub(crate) fn anonymous(cell_size: usize, cells: usize) -> (Sender, Receiver) {
    let layout = Layout::new(2, cell_size, cells).expect("layout");
    let map = Arc::new(Mapping::anonymous(layout.segment_len()).expect("mmap"));
    let off = layout.ring_offset(0, 1);
    (
        Sender::new(&map, off, &layout),
        Receiver::new(&map, off, &layout),
    )
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
