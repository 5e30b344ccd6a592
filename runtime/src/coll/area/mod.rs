//! Small collectives through a per-communicator shared-memory area, for
//! communicators whose ranks are all on this host: every rank has a flag
//! and two payload slots per channel (cache-line separated), and a
//! collective is loads and stores on them, no messages.
//!
//! Protocol, for the call with sequence number `k` on a channel (blocking
//! and non-blocking calls each have their own channel: MPI orders each
//! kind on its own, see `tag.rs`; each rank has `DEPTH` slots per channel):
//!
//! 1. Turn: the rank's call `k - 1` on the channel has finished here (the
//!    area serves one call at a time per channel, in call order).
//! 2. Gate (a rank that writes its slot): every rank's flag is at least
//!    `k - DEPTH + 1`. A rank posts that only after finishing `k - DEPTH`,
//!    the last call that used slot `k mod DEPTH`, so nobody reads it any
//!    more.
//! 3. Post: the payload into slot `k mod DEPTH` and the slot's stamp set
//!    to `k` (release), then the flag set to `k`, then every peer's
//!    doorbell rung (a peer asleep in the engine's wait wakes up; no system
//!    call for one awake).
//! 4. Collect: once the ranks it needs have posted `k` (a writer's slot
//!    stamped `k`, another rank's flag at least `k`; acquire), the rank
//!    reads the slots and makes its result. The stamp shares the first
//!    cache line with the payload, so a reader of a small payload loads one
//!    line the writer wrote, not two (the flag's and the slot's).
//!
//! A rank whose flag nobody waits for in call `k` (a bcast's receiver, a
//! reduce's root: their flags only free slots for reuse) posts it late:
//! with the next call that others wait for, every [`PUBLISH_EVERY`]th
//! call, or before it waits. So the rank that sets the pace of back-to-
//! back rooted calls stores to no line a peer polls and rings no doorbell
//! on most calls; the writer it lags behind sees at most
//! `PUBLISH_EVERY - 1` fewer free slots.
//!
//! Flags only grow (64 bits: no wrap, no ABA). A waiting step returns to
//! the engine, which spins, yields and sleeps on the doorbell as for any
//! message, so ranks on fewer cores than ranks do not spin.
//!
//! The area is made at the first such call of each channel: the leader
//! (rank 0) creates a memfd and sends its (pid, fd, slot size) to the
//! others as that call's first messages; they open it through `/proc`.
//! Calls planned before it is mapped wait in their turn step.

mod direct;
mod ops;
mod region;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

pub(crate) use direct::{direct_at, Direct};
pub(crate) use ops::Op;
use ops::{Mem, Needs, Slots};
use region::Region;

use super::ctx::Ctx;
use super::sched::{Buf, PollStep, Schedule};
use super::tag;
use crate::error::Error;

/// A cache line: flags and slots start on their own.
const LINE: usize = 64;
/// Large slots (`OXMPI_SHM_COLL_BYTES`) per rank and channel: a rank may
/// post this many calls ahead of the slowest reader (a root's bcasts, a
/// reduce's contributions) before it waits.
pub(crate) const DEPTH: u64 = 8;
/// The rings of small slots, smallest first: bytes of a slot (its stamp and
/// payload) and slots per rank and channel. A call uses the first ring
/// whose slots hold its payload, the large ring beyond. Slots of a line or
/// less, packed in a row, let a reader of back-to-back calls stream
/// through whole lines that the hardware prefetches (several calls a line
/// in the smallest ring: a scalar reduction's); deep rings let a writer of
/// small payloads run far ahead before it waits (as an eager sender fills
/// a ring), so a root or a leaf of back-to-back small calls rarely waits
/// for a reader and ranks sharing a core switch less.
pub(crate) const SMALL_RINGS: [(usize, u64); 2] = [(16, 256), (64, 128)];
/// Rings per channel: the small ones and the large one.
const RINGS: usize = SMALL_RINGS.len() + 1;
const _: () = {
    assert!(DEPTH.is_power_of_two());
    let mut i = 0;
    while i < SMALL_RINGS.len() {
        assert!(SMALL_RINGS[i].0.is_multiple_of(STAMP) && SMALL_RINGS[i].1.is_power_of_two());
        i += 1;
    }
};
/// Bytes at the start of every slot for its stamp (the sequence number of
/// the call whose payload follows).
const STAMP: usize = 8;
/// A flag nobody waits for is posted at least every this many calls (well
/// under [`DEPTH`], so a writer always finds a free slot in the end).
const PUBLISH_EVERY: u64 = 4;
/// Bytes of the leader's set-up message: pid, fd, slot size (u32 each), 0.
const SETUP_LEN: usize = 16;

/// Largest payload per rank a call may post (`OXMPI_SHM_COLL_BYTES`; 0:
/// the area is never used).
pub(crate) fn capacity() -> usize {
    static CAP: OnceLock<usize> = OnceLock::new();
    *CAP.get_or_init(|| crate::config::get(&crate::config::SHM_COLL_BYTES).unwrap_or(4096))
}

/// Whether this process may make areas: memfds shared through `/proc`
/// work here (probed once) and `OXMPI_SHM_MEMFD` does not turn them off
/// (then the collectives use messages).
pub(crate) fn memfd_ok() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        crate::config::get(&crate::config::SHM_MEMFD).unwrap_or(true)
            && Region::create(LINE).is_ok()
    })
}

/// Where things are in an area of `p` ranks with slots of `slot` bytes.
#[derive(Debug, Clone, Copy)]
struct Layout {
    p: usize,
    slot: usize,
}

impl Layout {
    fn len(&self) -> usize {
        let last = self.ring(1, RINGS - 1);
        last.start + self.p * last.per_rank
    }
    /// The flag of rank `r` on channel `c`.
    fn flag(&self, c: usize, r: usize) -> usize {
        LINE + (c * self.p + r) * LINE
    }
    /// Bytes of a slot and slots per rank of ring `class` (an index of
    /// [`SMALL_RINGS`], or the large ring after them).
    fn geometry(&self, class: usize) -> (usize, u64) {
        SMALL_RINGS
            .get(class)
            .copied()
            .unwrap_or((self.slot, DEPTH))
    }
    /// Ring `class` of channel `c`: after the flags, each ring class in
    /// turn, channel 0's then channel 1's.
    fn ring(&self, c: usize, class: usize) -> Ring {
        let size = |class| {
            let (slot, depth) = self.geometry(class);
            slot * depth as usize
        };
        let flags = LINE + 2 * self.p * LINE;
        let start = flags + (0..class).map(|k| 2 * self.p * size(k)).sum::<usize>();
        let (slot, depth) = self.geometry(class);
        Ring {
            start: start + c * self.p * size(class),
            per_rank: size(class),
            slot,
            mask: depth - 1,
        }
    }
}

/// Where one ring of slots lies: every rank's `depth` slots of one size on
/// one channel, worked out once per area (a call finds its slots with a
/// multiply and a mask).
#[derive(Debug, Clone, Copy)]
struct Ring {
    /// Offset of rank 0's first slot.
    start: usize,
    /// Bytes of one rank's slots.
    per_rank: usize,
    /// Bytes of a slot.
    slot: usize,
    /// Depth - 1 (depths are powers of two).
    mask: u64,
}

impl Ring {
    /// Offset of rank `r`'s slot (its stamp) for sequence `k`.
    #[inline]
    fn offset(&self, r: usize, k: u64) -> usize {
        self.start + r * self.per_rank + (k & self.mask) as usize * self.slot
    }
}

/// The ring class of a call posting `bytes` bytes (see [`SMALL_RINGS`]).
#[inline]
fn class(bytes: usize) -> usize {
    SMALL_RINGS
        .iter()
        .position(|&(slot, _)| bytes + STAMP <= slot)
        .unwrap_or(SMALL_RINGS.len())
}

/// Whether a call posting `bytes` bytes per rank uses one of the deep
/// rings of small slots (see [`SMALL_RINGS`]).
pub(crate) fn in_small_ring(bytes: usize) -> bool {
    class(bytes) < SMALL_RINGS.len()
}

/// Bytes of a large slot: a stamp and the largest payload.
fn large_slot() -> usize {
    (capacity() + STAMP).next_multiple_of(LINE)
}

/// An area as this rank has it mapped.
struct Mapped {
    region: Arc<Region>,
    /// The region's first byte (it never moves while `region` lives).
    base: *mut u8,
    layout: Layout,
    /// Per channel, the ring of each class.
    rings: [[Ring; RINGS]; 2],
    /// Per channel, each rank's flag as this process last read it: flags
    /// only grow, so a value seen is a lower bound, and a gate or a wait
    /// that it already satisfies needs no load of a line the owner keeps
    /// writing (the bottleneck rank, whose peers run ahead, then reads a
    /// peer's flag about once per ring of calls rather than every call).
    seen: [Box<[AtomicU64]>; 2],
}

// SAFETY: `base` points into `region`, which the struct keeps alive; every
// access through it is an atomic or ordered by the protocol's flags.
unsafe impl Send for Mapped {}
// SAFETY: as above.
unsafe impl Sync for Mapped {}

impl Mapped {
    fn new(region: Arc<Region>, layout: Layout) -> Mapped {
        let none = || (0..layout.p).map(|_| AtomicU64::new(0)).collect();
        let rings = |c| std::array::from_fn(|class| layout.ring(c, class));
        Mapped {
            base: region.base(),
            region,
            layout,
            rings: [rings(0), rings(1)],
            seen: [none(), none()],
        }
    }
    /// Whether rank `r`'s flag on channel `c` is at least `k` (acquire,
    /// when it is read).
    fn flag_at_least(&self, c: usize, r: usize, k: u64) -> bool {
        let seen = &self.seen[c][r];
        if seen.load(Ordering::Relaxed) >= k {
            return true;
        }
        let now = self.flag(c, r).load(Ordering::Acquire);
        seen.store(now, Ordering::Relaxed);
        now >= k
    }
    fn at<T>(&self, offset: usize) -> &T {
        debug_assert!(offset + std::mem::size_of::<T>() <= self.region.len());
        // SAFETY: inside the mapping, aligned (offsets are multiples of 8),
        // and only atomics are made from it this way.
        unsafe { &*self.base.add(offset).cast::<T>() }
    }
    fn flag(&self, c: usize, r: usize) -> &AtomicU64 {
        self.at(self.layout.flag(c, r))
    }
    /// Members that have mapped the leader's memfd.
    fn attached(&self) -> &AtomicU32 {
        self.region.attached()
    }
    /// The ring of channel `c` for calls posting `bytes` bytes.
    #[inline]
    fn ring(&self, c: usize, bytes: usize) -> Ring {
        self.rings[c][class(bytes)]
    }
    /// The payload of rank `r`'s slot for call `k` on `ring`.
    #[inline]
    fn slot(&self, ring: &Ring, r: usize, k: u64) -> *mut u8 {
        // SAFETY: inside the mapping.
        unsafe { self.base.add(ring.offset(r, k) + STAMP) }
    }
    /// The stamp of rank `r`'s slot for call `k` on `ring`.
    #[inline]
    fn stamp(&self, ring: &Ring, r: usize, k: u64) -> &AtomicU64 {
        self.at(ring.offset(r, k))
    }
}

/// What the collective layer keeps per communicator for its area.
#[derive(Default)]
pub(crate) struct AreaState {
    /// The mapped area (set by the leader when it creates it, by a member
    /// when the leader's message arrives).
    mapped: OnceLock<Mapped>,
    /// Why the area cannot be used (its creation or opening failed).
    broken: OnceLock<String>,
    /// The last sequence number planned, per channel.
    planned: [AtomicU64; 2],
    /// The last sequence number finished here, per channel.
    finished: [AtomicU64; 2],
    /// Whether the channel's first call (which carries the set-up) has been planned.
    set_up: [AtomicBool; 2],
    /// The leader's memfd is still open (some member has not mapped it).
    leader_fd_open: AtomicBool,
    /// World rank of each member (for doorbells).
    world: OnceLock<Vec<usize>>,
    /// Whether every member is on this host (set by the communicator).
    pub(crate) local: OnceLock<bool>,
}

impl std::fmt::Debug for AreaState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AreaState")
            .field("mapped", &self.mapped.get().is_some())
            .field("planned", &self.planned)
            .field("finished", &self.finished)
            .finish()
    }
}

impl Drop for AreaState {
    fn drop(&mut self) {
        if *self.leader_fd_open.get_mut() {
            if let Some(m) = self.mapped.get() {
                Arc::clone(&m.region).linger(m.layout.p as u32 - 1);
            }
        }
    }
}

impl AreaState {
    /// An area of `p` ranks in process-local memory, shared by the
    /// simulator's ranks (each keeps its own [`AreaState`]).
    #[cfg(test)]
    pub(crate) fn simulated(p: usize) -> Vec<Arc<AreaState>> {
        let layout = Layout {
            p,
            slot: large_slot(),
        };
        let region = Arc::new(Region::heap(layout.len()));
        (0..p)
            .map(|_| {
                let st = AreaState::default();
                // Every simulated rank maps the same heap memory.
                let _ = st.mapped.set(Mapped::new(Arc::clone(&region), layout));
                for c in 0..2 {
                    st.set_up[c].store(true, Ordering::Relaxed);
                }
                Arc::new(st)
            })
            .collect()
    }

    /// Whether the channel of calls with sequence `seq` has had its first
    /// call (which sets the area up) planned here.
    #[inline]
    pub(crate) fn set_up(&self, seq: u32) -> bool {
        self.set_up[channel_of(seq)].load(Ordering::Relaxed)
    }
}

/// The channel of the call with sequence `seq`: blocking and non-blocking
/// calls each have their own.
#[inline]
fn channel_of(seq: u32) -> usize {
    usize::from(seq & tag::BLOCKING != 0)
}

/// The area of `ctx`'s communicator, if a call posting `payload` bytes per
/// rank may use it: every rank on this host, not a persistent call (whose
/// starts MPI does not order), host memory, and a payload that fits.
pub(crate) fn usable<'a>(ctx: &Ctx<'a>, payload: usize) -> Option<&'a Arc<AreaState>> {
    let area = ctx.area?;
    let one_node = ctx.nodes.is_none_or(|n| n.layout.nodes == 1);
    (one_node && serves(ctx.seq, payload)).then_some(area)
}

/// Whether a communicator's area (which it has only when every rank is on
/// this host) may serve call `seq` posting `payload` bytes per rank (see
/// [`usable`]).
#[inline]
pub(crate) fn serves(seq: u32, payload: usize) -> bool {
    let cap = capacity();
    seq & tag::PERSISTENT == 0 && payload <= cap && cap > 0 && !crate::mem::cuda::active()
}

/// Adds `op` on `area` to `s` once `after` are done; returns the step.
pub(crate) fn add(
    ctx: &Ctx,
    s: &mut Schedule,
    area: &Arc<AreaState>,
    op: Op,
    after: &[usize],
) -> Vec<usize> {
    let call = Call::planned(ctx.seq, ctx.rank, &ctx.world_of, area, op);
    let mut deps = after.to_vec();
    let mut setup = None;
    if !area.set_up[call.channel].swap(true, Ordering::Relaxed) {
        if ctx.rank == 0 {
            lead(ctx, s, area);
        } else {
            let msg = s.temp(SETUP_LEN);
            deps.push(s.recv(0, ctx.tag(0), msg, &[]));
            setup = Some(msg);
        }
    }
    let step = AreaStep {
        area: Arc::clone(area),
        setup,
        call,
    };
    vec![s.poll_step(Box::new(step), &deps)]
}

/// The leader's part of the set-up: creates the area (once) and sends its
/// whereabouts to every member.
fn lead(ctx: &Ctx, s: &mut Schedule, area: &AreaState) {
    let layout = Layout {
        p: ctx.size,
        slot: large_slot(),
    };
    if area.mapped.get().is_none() && area.broken.get().is_none() {
        match Region::create(layout.len()) {
            Ok(region) => {
                area.leader_fd_open.store(ctx.size > 1, Ordering::Relaxed);
                let _ = area.mapped.set(Mapped::new(Arc::new(region), layout));
            }
            Err(e) => {
                let _ = area.broken.set(e.to_string());
            }
        }
    }
    let fd = area.mapped.get().and_then(|m| m.region.fd()).unwrap_or(-1);
    let mut msg = [0u8; SETUP_LEN];
    msg[..4].copy_from_slice(&std::process::id().to_le_bytes());
    msg[4..8].copy_from_slice(&fd.to_le_bytes());
    msg[8..12].copy_from_slice(&(layout.slot as u32).to_le_bytes());
    let buf = s.temp(SETUP_LEN);
    // SAFETY: the temporary just made holds SETUP_LEN bytes.
    unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), s.ptr(buf), SETUP_LEN) };
    for r in 1..ctx.size {
        s.send(ctx.world(r), ctx.tag(0), buf, &[]);
    }
}

/// One call's way through the protocol, on the area of its communicator.
pub(crate) struct Call {
    channel: usize,
    seq: u64,
    me: usize,
    op: Op,
    /// Past the post.
    posted: bool,
}

impl Call {
    /// Takes the next sequence number of the channel of call `seq` (its
    /// collective sequence) for `op` at rank `me`; `world_of` maps the
    /// communicator's ranks to world ranks.
    #[inline(always)]
    fn planned(seq: u32, me: usize, world_of: &[usize], area: &AreaState, op: Op) -> Call {
        let channel = channel_of(seq);
        let seq = area.planned[channel].fetch_add(1, Ordering::Relaxed) + 1;
        area.world.get_or_init(|| world_of.to_vec());
        Call {
            channel,
            seq,
            me,
            op,
            posted: false,
        }
    }

    /// Moves on as far as it can without waiting; `Ok(true)` once done.
    /// `mem` resolves the call's buffers; `wake(world_rank)` rings a peer.
    fn advance(
        &mut self,
        area: &AreaState,
        mem: &mut impl Mem,
        wake: &dyn Fn(usize),
    ) -> Result<bool, Error> {
        let (c, k, me) = (self.channel, self.seq, self.me);
        let Some(m) = area.mapped.get() else {
            return Ok(false);
        };
        let p = m.layout.p;
        let bytes = self.op.posted_len();
        let ring = m.ring(c, bytes);
        if !self.posted {
            let finished = area.finished[c].load(Ordering::Acquire);
            if finished != k - 1 {
                publish_late(area, m, c, me, finished, wake);
                return Ok(false);
            }
            if self.op.writes(me) {
                // A rank posts flag k - depth + 1 only after finishing
                // call k - depth, the last that used this slot (this
                // rank's own turn says it has).
                let reused = k.saturating_sub(ring.mask);
                if !(0..p).all(|r| r == me || m.flag_at_least(c, r, reused)) {
                    publish_late(area, m, c, me, k - 1, wake);
                    return Ok(false);
                }
                debug_assert!(self.op.payload(me) + STAMP <= ring.slot);
                self.op.post(mem, me, m.slot(&ring, me, k));
                m.stamp(&ring, me, k).store(k, Ordering::Release);
            }
            self.posted = true;
            if self.op.signals(me) || k % PUBLISH_EVERY == 0 {
                publish(area, m, c, me, k, wake);
            }
        }
        // This rank's own slot is posted (above). A writer's slot is
        // stamped k at most (the gate keeps k + depth out until this rank
        // has finished k).
        let ready = |r: usize| {
            r == me
                || if self.op.writes(r) {
                    m.stamp(&ring, r, k).load(Ordering::Acquire) == k
                } else {
                    m.flag_at_least(c, r, k)
                }
        };
        let all_there = match self.op.needs(me) {
            Needs::Nobody => true,
            Needs::One(r) => ready(r),
            Needs::All => (0..p).all(ready),
        };
        if !all_there {
            publish_late(area, m, c, me, k, wake);
            return Ok(false);
        }
        // Finished before the reduction runs: a user operation that
        // panics leaves the next call free to go on.
        area.finished[c].store(k, Ordering::Release);
        let slot_of = |r: usize| m.slot(&ring, r, k) as *const u8;
        let slots = Slots { at: &slot_of, p };
        let outcome = self.op.collect(mem, me, &slots);
        if me == 0
            && area.leader_fd_open.load(Ordering::Relaxed)
            && m.attached().load(Ordering::Acquire) as usize == p - 1
        {
            m.region.close_file();
            area.leader_fd_open.store(false, Ordering::Relaxed);
        }
        outcome.map(|()| true)
    }
}

/// Stores `k` as rank `me`'s flag on channel `c` and rings every peer.
fn publish(area: &AreaState, m: &Mapped, c: usize, me: usize, k: u64, wake: &dyn Fn(usize)) {
    m.flag(c, me).store(k, Ordering::Release);
    if let Some(world) = area.world.get() {
        for (r, &w) in world.iter().enumerate() {
            if r != me {
                wake(w);
            }
        }
    }
}

/// Before this rank waits: posts `posted` (the last call it has posted on
/// channel `c`) as its flag if [`Call::advance`] left it unpublished, since
/// a peer may wait for the slots that frees. Only this rank stores its
/// flag, so reading it back is exact.
fn publish_late(
    area: &AreaState,
    m: &Mapped,
    c: usize,
    me: usize,
    posted: u64,
    wake: &dyn Fn(usize),
) {
    if posted > m.flag(c, me).load(Ordering::Relaxed) {
        publish(area, m, c, me, posted, wake);
    }
}

/// One collective on the area, as a step the engine polls.
struct AreaStep {
    area: Arc<AreaState>,
    /// A member's copy of the leader's set-up message, when this call
    /// carries it.
    setup: Option<Buf>,
    call: Call,
}

impl AreaStep {
    /// Maps the area from the leader's message if this call carries it.
    fn attach(&self, s: &mut Schedule) -> Result<(), Error> {
        let Some(buf) = self.setup else {
            return Ok(());
        };
        if self.area.mapped.get().is_some() || self.area.broken.get().is_some() {
            return Ok(());
        }
        let mut msg = [0u8; SETUP_LEN];
        // SAFETY: the received temporary holds SETUP_LEN bytes.
        unsafe { std::ptr::copy_nonoverlapping(s.ptr(buf), msg.as_mut_ptr(), SETUP_LEN) };
        let word = |i: usize| u32::from_le_bytes([msg[i], msg[i + 1], msg[i + 2], msg[i + 3]]);
        let (pid, fd, slot) = (word(0), word(4) as i32, word(8) as usize);
        if fd < 0 {
            let _ = self
                .area
                .broken
                .set("the leader (rank 0) could not create the collective area".into());
            return Ok(());
        }
        let p = self.area.world.get().map_or(0, Vec::len);
        let layout = Layout { p, slot };
        match Region::open(pid, fd, layout.len()) {
            Ok(region) => {
                let mapped = Mapped::new(Arc::new(region), layout);
                mapped.attached().fetch_add(1, Ordering::Release);
                let _ = self.area.mapped.set(mapped);
                Ok(())
            }
            Err(e) => {
                let _ = self.area.broken.set(e.to_string());
                Err(e)
            }
        }
    }
}

// SAFETY: its buffers are the schedule's, which the engine touches only
// under its lock while the call's buffers are alive (see `Schedule`).
unsafe impl Send for AreaStep {}

impl PollStep for AreaStep {
    fn poll(&mut self, s: &mut Schedule, wake: &dyn Fn(usize)) -> Result<bool, Error> {
        if !self.call.posted {
            self.attach(s)?;
            if let Some(why) = self.area.broken.get() {
                return Err(Error::State(format!(
                    "a collective through shared memory: {why}"
                )));
            }
        }
        self.call.advance(&self.area, s, wake)
    }
}

#[cfg(test)]
mod tests;
