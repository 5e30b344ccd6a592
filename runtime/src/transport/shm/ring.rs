//! Single-producer single-consumer rings of fixed-size cells in the segment.
//!
//! One ring per ordered pair of local ranks. A cell is
//! `seq: u32, len: u32, flags: u32, pad: u32` then `cell_size` payload
//! bytes; the consumer's index is alone on its [`LINE`](super::layout::LINE).
//! The protocol (publication by `seq`, the consumer's `tail`, the request
//! for room) is [`oxmpi_sync::ring`], which loom model-checks; this file
//! says where a ring's words lie in the segment ([`Geometry`]).
//!
//! [`Sender`] and [`Receiver`] are `Send` but not `Sync`: one thread at a time
//! drives each side, which is what makes the single-producer /
//! single-consumer protocol hold inside a process.

use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use oxmpi_sync::ring::{self, Cells, Tail};

use super::layout::{Layout, RingCtl, CELL_HEADER};
use super::map::Mapping;

/// The producer side of a ring: this rank sending to one peer.
///
/// See the example on [`ShmNode::sender`](super::ShmNode::sender).
pub type Sender = ring::Sender<Geometry>;

/// The consumer side of a ring: this rank receiving from one peer.
///
/// See the example on [`ShmNode::receiver`](super::ShmNode::receiver).
pub type Receiver = ring::Receiver<Geometry>;

/// A cell claimed by [`Sender::try_reserve`]: fill
/// [`payload`](ring::Reservation::payload), then
/// [`commit`](ring::Reservation::commit). Dropping it uncommitted publishes
/// nothing.
///
/// See the example on [`ShmNode::sender`](super::ShmNode::sender).
pub type Reservation<'a> = ring::Reservation<'a, Geometry>;

/// Where a ring is in the segment and its shape: the memory behind one
/// side of a ring (see [`Cells`]; a cell is its address).
#[derive(Debug)]
pub struct Geometry {
    _map: Arc<Mapping>,
    ctl: NonNull<RingCtl>,
    cells: NonNull<u8>,
    mask: u64,
    stride: usize,
    cell_size: usize,
}

// SAFETY: the raw pointers point into `_map`, which the Arc keeps alive and
// which is shared memory; moving a side to another thread is fine. The
// sides' `Cell` fields keep them `!Sync`.
unsafe impl Send for Geometry {}

impl Geometry {
    /// The ring at `offset` of `map`, laid out by `layout`.
    pub(crate) fn new(map: &Arc<Mapping>, offset: usize, layout: &Layout) -> Geometry {
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
}

// SAFETY: cells are `stride` bytes apart inside the bounds-checked area,
// slot `index & mask`; a cell is `seq: u32, len: u32, flags: u32, pad: u32`
// then `cell_size` payload bytes (`stride >= CELL_HEADER + cell_size`).
unsafe impl Cells for Geometry {
    type Cell = *mut u8;

    fn tail(&self) -> &Tail {
        // SAFETY: `ctl` was checked in bounds and aligned by `Mapping::at`,
        // and `self._map` keeps the mapping alive as long as `self`.
        unsafe { &self.ctl.as_ref().tail.0 }
    }

    fn mask(&self) -> u64 {
        self.mask
    }

    fn cell_size(&self) -> usize {
        self.cell_size
    }

    fn cell(&self, index: u64) -> *mut u8 {
        let slot = (index & self.mask) as usize;
        // SAFETY: `slot < cells`, and `cells * stride` bytes from `self.cells`
        // were bounds-checked by `Mapping::bytes`.
        unsafe { self.cells.as_ptr().add(slot * self.stride) }
    }

    fn seq(&self, cell: *mut u8) -> &AtomicU32 {
        // SAFETY: cells are 64-aligned and inside the mapping, which lives
        // as long as `self`; both sides access this word only atomically.
        unsafe { AtomicU32::from_ptr(cell.cast::<u32>()) }
    }

    unsafe fn write_header(&self, cell: *mut u8, len: u32, flags: u32) {
        // SAFETY: the cell header (16 bytes, 64-aligned) is the caller's.
        unsafe {
            cell.cast::<u32>().add(1).write(len);
            cell.cast::<u32>().add(2).write(flags);
        }
    }

    unsafe fn read_header(&self, cell: *mut u8) -> (u32, u32) {
        // SAFETY: as in `write_header`.
        unsafe {
            (
                cell.cast::<u32>().add(1).read(),
                cell.cast::<u32>().add(2).read(),
            )
        }
    }

    unsafe fn payload_mut(&self, cell: *mut u8) -> &mut [u8] {
        // SAFETY: `cell_size` bytes after the header are inside the cell.
        unsafe { std::slice::from_raw_parts_mut(cell.add(CELL_HEADER), self.cell_size) }
    }

    #[inline(always)]
    fn prepare(&self, cell: *mut u8) {
        // SAFETY: a prefetch is a hint: it never faults and changes no
        // register, flag or memory. `prefetchw` (not `_MM_HINT_ET0`, which
        // the compiler lowers to a read prefetch without the target
        // feature) executes as a no-op on x86-64 processors without it.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            std::arch::asm!("prefetchw [{0}]", in(reg) cell, options(nostack, preserves_flags, readonly))
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = cell;
    }

    #[inline(always)]
    fn look_ahead(&self, cell: *mut u8) {
        prefetch_line(cell as usize);
    }

    unsafe fn payload(&self, cell: *mut u8, len: usize) -> &[u8] {
        // SAFETY: as in `payload_mut`, `len <= cell_size`.
        let payload = unsafe { std::slice::from_raw_parts(cell.add(CELL_HEADER), len) };
        prefetch_rest(payload);
        payload
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
    const PREFETCH_LINES: usize = 16;
    let start = payload.as_ptr() as usize;
    // Lines after the one holding the payload's first byte (that one
    // arrived with the publication word).
    let first = (start & !63) + 64;
    let end = start + payload.len().min(PREFETCH_LINES * 64);
    let mut line = first;
    while line < end {
        prefetch_line(line);
        line += 64;
    }
}

/// Asks for the cache line at `addr` to be read into this core's caches
/// (a no-op off x86-64).
#[inline(always)]
fn prefetch_line(addr: usize) {
    // SAFETY: prefetching is a hint: it never faults, whatever the address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch(addr as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// A fresh ring in an anonymous shared mapping (tests and benches).
#[cfg(test)]
pub(crate) fn anonymous(cell_size: usize, cells: usize) -> (Sender, Receiver) {
    let layout = Layout::new(2, cell_size, cells).expect("layout");
    let map = Arc::new(Mapping::anonymous(layout.segment_len()).expect("mmap"));
    let off = layout.ring_offset(0, 1);
    (
        Sender::new(Geometry::new(&map, off, &layout)),
        Receiver::new(Geometry::new(&map, off, &layout)),
    )
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
