//! What lies where in a node's segment, and how big it is.
//!
//! ```text
//! offset 0          Header      magic, version, local size, cell size, cells,
//!                               total length, creator pid, attach/probe counters,
//!                               ranks asleep on their doorbells
//! slots             [Slot; n]   per local rank: pid, probe address, CMA verdict
//! bells             [Padded<Bell>; n]            one futex doorbell per local rank
//! rings             [Ring; n*(n-1)]              one per ordered pair (from, to), from != to,
//!                                                index from*(n-1) + (to - (to > from))
//! Ring              Padded<AtomicU64> tail       written by the consumer (128 B)
//!                   [Cell; cells]                each `stride` bytes, 64-byte aligned
//! Cell              seq: u32, len: u32, flags: u32, pad: u32, payload[cell_size]
//! ```
//!
//! Every area starts on a [`LINE`] boundary. The segment is laid out by
//! [`Layout`] alone, so a rank that computes the same `Layout` finds the same
//! offsets; the header records the inputs so that a rank whose settings differ
//! is refused instead of misreading the rings.
//!
//! # Sizing rule
//!
//! `stride = round_up(16 + cell_size, 64)`. The ring cells of a node take
//! `n*(n-1) * cells * stride` bytes. When that exceeds [`RING_BUDGET`]
//! (256 MiB), `cells` is lowered to the largest power of two that fits, but
//! never below [`MIN_CELLS`] (4): with the defaults (8 KiB cells, 64 per ring)
//! 16 local ranks keep 64 cells (~127 MiB), 32 keep 32 (~254 MiB), 64 keep 8
//! (~254 MiB); past ~90 ranks the floor wins and the segment grows beyond the
//! budget. The configured `cells` is itself rounded down to a power of two.

use std::sync::atomic::{AtomicU32, AtomicU64};

pub(crate) use oxmpi_sync::doorbell::Bell;
use oxmpi_sync::ring::Tail;

use crate::Error;

/// `"OXMPISHM"`, little-endian: the first word of every segment.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"OXMPISHM");
/// Bumped whenever the layout below changes.
pub(crate) const VERSION: u32 = 3;
/// Padding unit: two 64-byte lines, so adjacent-line prefetch cannot couple
/// a producer's and a consumer's words.
pub(crate) const LINE: usize = 128;
/// Bytes in front of each cell's payload (publication word, length, flags).
pub(crate) const CELL_HEADER: usize = 16;
/// Ring cells are scaled down to keep the node's rings within this many bytes.
pub(crate) const RING_BUDGET: usize = 256 << 20;
/// The fewest cells a ring is ever given.
pub(crate) const MIN_CELLS: usize = 4;
/// Smallest accepted payload size of a cell.
pub(crate) const MIN_CELL_SIZE: usize = 64;
/// Largest accepted payload size of a cell.
pub(crate) const MAX_CELL_SIZE: usize = 1 << 20;
/// Most local ranks a segment serves.
pub(crate) const MAX_LOCAL: usize = 4096;

/// Types that may be viewed in place in the shared segment: `repr(C)`,
/// made only of atomics, valid for every bit pattern (all zero included).
///
/// # Safety
///
/// Implementors must satisfy exactly that.
pub(crate) unsafe trait Shared {}
// SAFETY: each is repr(C) over atomic integers only (any bits are valid).
unsafe impl Shared for Header {}
// SAFETY: as above.
unsafe impl Shared for Slot {}
// SAFETY: as above.
unsafe impl Shared for Padded<Bell> {}
// SAFETY: as above.
unsafe impl Shared for RingCtl {}

/// A value alone on its own [`LINE`].
#[repr(C, align(128))]
#[derive(Debug, Default)]
pub(crate) struct Padded<T>(pub T);

/// The segment's first bytes.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Header {
    /// [`MAGIC`] once the leader has initialised everything else.
    pub magic: AtomicU64,
    pub version: AtomicU32,
    pub local_size: AtomicU32,
    pub cell_size: AtomicU32,
    pub cells: AtomicU32,
    pub total_len: AtomicU64,
    pub creator_pid: AtomicU32,
    /// Ranks that have mapped the segment (the leader included).
    pub attached: AtomicU32,
    /// Ranks that have published their CMA verdict.
    pub probed: AtomicU32,
    /// Local ranks asleep on their doorbells right now (see `doorbell.rs`):
    /// the others may be using a core, which tells a waiting rank whether
    /// spinning would take a core from a peer.
    pub asleep: AtomicU32,
}

/// Per local rank facts, written by that rank.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Slot {
    pub pid: AtomicU32,
    /// 1: this rank could read its neighbour's probe word; 2: it could not.
    pub cma_ok: AtomicU32,
    /// Address of a word in this rank's memory that peers read to probe CMA.
    pub probe_addr: AtomicU64,
}

/// A ring's control block, in front of its cells: the consumer's index
/// (cells are published by their own `seq` word, see `ring.rs`) and the
/// producer's request for room, on one line. The producer keeps a cached
/// copy of the index and reads it across only when the ring looks full.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct RingCtl {
    /// The consumer's side of the ring (its index and the producer's
    /// request for room, see [`Tail`]).
    pub tail: Padded<Tail>,
}

/// Sizes and offsets of a node's segment (see the module docs).
///
/// ```no_run
/// # use oxmpi::bootstrap::{connect, Bootstrap};
/// # use oxmpi::config::Config;
/// # use oxmpi::transport::shm::{ShmConfig, ShmNode};
/// # let mut boot = connect()?;
/// let cfg = ShmConfig::from_config(&Config::from_env()?);
/// let node = ShmNode::establish(&mut *boot, &cfg)?;
/// let layout = node.layout();
/// assert_eq!(layout.cell_size(), cfg.cell_size);
/// assert!(layout.cells().is_power_of_two() && layout.cells() <= cfg.ring_cells.max(4));
/// # boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    local_size: usize,
    cell_size: usize,
    cells: usize,
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

fn floor_pow2(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

impl Layout {
    /// The layout for `local_size` ranks with `cell_size` payload bytes per
    /// cell and at most `cells` cells per ring, scaled by the sizing rule.
    /// Errors name the offending value.
    pub(crate) fn new(local_size: usize, cell_size: usize, cells: usize) -> Result<Layout, Error> {
        let bad = |what: String| Error::Os {
            call: "shm layout",
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, what),
        };
        if local_size == 0 || local_size > MAX_LOCAL {
            return Err(bad(format!(
                "{local_size} local ranks (need 1..={MAX_LOCAL})"
            )));
        }
        if !(MIN_CELL_SIZE..=MAX_CELL_SIZE).contains(&cell_size) {
            return Err(bad(format!(
                "OXMPI_SHM_CELL_SIZE={cell_size} (need {MIN_CELL_SIZE}..={MAX_CELL_SIZE})"
            )));
        }
        if cells < MIN_CELLS {
            return Err(bad(format!(
                "OXMPI_SHM_RING_CELLS={cells} (need >= {MIN_CELLS})"
            )));
        }
        let stride = round_up(CELL_HEADER + cell_size, 64);
        let pairs = (local_size * (local_size - 1)).max(1);
        let fit = floor_pow2(RING_BUDGET / (pairs * stride));
        let cells = floor_pow2(cells).min(fit).max(MIN_CELLS);
        Ok(Layout {
            local_size,
            cell_size,
            cells,
        })
    }

    /// Ranks sharing the segment.
    pub(crate) fn local_size(&self) -> usize {
        self.local_size
    }

    /// Payload bytes one cell holds.
    ///
    /// See the example on [`Layout`].
    pub fn cell_size(&self) -> usize {
        self.cell_size
    }

    /// Cells per ring, after scaling (a power of two).
    ///
    /// See the example on [`Layout`].
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Bytes from one cell to the next.
    pub(crate) fn stride(&self) -> usize {
        round_up(CELL_HEADER + self.cell_size, 64)
    }

    pub(crate) fn slots_offset(&self) -> usize {
        round_up(std::mem::size_of::<Header>(), LINE)
    }

    pub(crate) fn bells_offset(&self) -> usize {
        self.slots_offset() + round_up(self.local_size * std::mem::size_of::<Slot>(), LINE)
    }

    fn rings_offset(&self) -> usize {
        self.bells_offset() + self.local_size * std::mem::size_of::<Padded<Bell>>()
    }

    /// Bytes of one ring: control block and cells.
    pub(crate) fn ring_len(&self) -> usize {
        round_up(
            std::mem::size_of::<RingCtl>() + self.cells * self.stride(),
            LINE,
        )
    }

    /// Offset of the ring carrying `from` -> `to` (local ranks, distinct).
    pub(crate) fn ring_offset(&self, from: usize, to: usize) -> usize {
        debug_assert!(from != to && from < self.local_size && to < self.local_size);
        let index = from * (self.local_size - 1) + to - usize::from(to > from);
        self.rings_offset() + index * self.ring_len()
    }

    /// Total bytes of the segment.
    pub(crate) fn segment_len(&self) -> usize {
        let rings = self.local_size * (self.local_size - 1);
        round_up(self.rings_offset() + rings * self.ring_len(), 4096)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_rule_keeps_big_nodes_bounded() {
        let l = Layout::new(4, 8192, 64).unwrap();
        assert_eq!((l.cells(), l.stride()), (64, 8256));
        assert_eq!(Layout::new(16, 8192, 64).unwrap().cells(), 64);
        assert_eq!(Layout::new(32, 8192, 64).unwrap().cells(), 32);
        let big = Layout::new(64, 8192, 64).unwrap();
        assert_eq!(big.cells(), 8);
        assert!(
            big.segment_len() <= RING_BUDGET + (1 << 20),
            "{}",
            big.segment_len()
        );
        assert_eq!(Layout::new(512, 8192, 64).unwrap().cells(), MIN_CELLS);
        assert_eq!(Layout::new(2, 64, 100).unwrap().cells(), 64);
        assert_eq!(Layout::new(1, 64, 64).unwrap().segment_len(), 4096);
    }

    #[test]
    fn rings_do_not_overlap_and_are_aligned() {
        let l = Layout::new(5, 100, 8).unwrap();
        let mut offs = Vec::new();
        for f in 0..5 {
            for t in (0..5).filter(|&t| t != f) {
                offs.push(l.ring_offset(f, t));
            }
        }
        offs.sort_unstable();
        offs.dedup();
        assert_eq!(offs.len(), 20);
        assert!(offs.windows(2).all(|w| w[1] - w[0] == l.ring_len()));
        assert!(offs.iter().all(|o| o & (LINE - 1) == 0) && l.stride() & 63 == 0);
        assert!(offs[19] + l.ring_len() <= l.segment_len());
        assert!(l.bells_offset() & (LINE - 1) == 0 && l.slots_offset() >= 40);
    }

    #[test]
    fn bad_settings_are_named() {
        let e = Layout::new(4, 16, 64).unwrap_err().to_string();
        assert!(e.contains("OXMPI_SHM_CELL_SIZE=16"), "{e}");
        let e = Layout::new(4, 8192, 2).unwrap_err().to_string();
        assert!(e.contains("OXMPI_SHM_RING_CELLS=2"), "{e}");
        assert!(Layout::new(0, 8192, 64).is_err());
    }
}
