//! Collective operations. Each call builds a schedule (see `sched.rs`) with
//! the algorithm [`select`] picks: a [`Planned`] collective, which a
//! non-blocking call hands to the progress engine (returning its
//! [`Request`](crate::request::Request)) and a blocking call runs to
//! completion on the calling thread. Traffic runs on the communicator's
//! collective context with tags from `tag.rs`. One file per collective's
//! API (`reduce.rs`, `bcast.rs`, `allgather.rs`, `gather.rs`, ...); this one
//! keeps what they share.

pub mod algos;
mod allgather;
mod allgatherv;
mod alltoall;
mod area;
mod bcast;
mod blocks;
pub mod calibrate;
pub(crate) mod ctx;
mod device_slices;
mod elementwise;
pub(crate) mod fold;
mod gather;
pub mod inter;
pub mod intercomm;
pub(crate) mod link_probe;
pub mod model;
mod neighbor;
pub mod nodes;
mod on_device;
pub mod overrides;
pub mod persistent;
mod planned;
mod reduce;
mod reduce_scatter;
pub(crate) mod run;
mod scan;
mod scatter;
pub(crate) mod sched;
mod scratch;
pub mod select;
#[cfg(test)]
pub(crate) mod sim;
pub(crate) mod tag;
mod tree_direct;
mod tree_ibcast;
mod view;
mod view_reduce;

use std::cell::Cell;
use std::sync::atomic::Ordering;

use crate::buffer::Scalar;
use crate::comm::Comm;
use crate::error::Error;
use crate::ops::ElemType;
use crate::progress::Runtime;
use algos::Args;
use ctx::Ctx;
use sched::{Buf, Schedule};
use select::Coll;

pub use blocks::Blocks;
pub use planned::Planned;

/// What the collective layer keeps per communicator (in the slot the
/// communicator holds for it).
#[derive(Default)]
pub(crate) struct PerComm {
    /// Which node each rank is on (computed at first use).
    pub(crate) nodes: nodes::Cached,
    /// Algorithms chosen on this communicator, by call class.
    pub(crate) picks: select::Picks,
    /// The shared-memory area of its small collectives (made at first use).
    pub(crate) area: std::sync::Arc<area::AreaState>,
}

impl Comm {
    /// This communicator's collective state.
    #[inline]
    pub(crate) fn coll_state(&self) -> &PerComm {
        self.inner.coll.get_or_init(PerComm::default)
    }
}

impl Runtime {
    /// The algorithm selector (set when the universe starts).
    #[inline]
    pub(crate) fn selector(&self) -> &select::Selector {
        self.coll
            .get_or_init::<select::Selector>(|| unreachable!("the universe sets the selector"))
    }
}

/// The element layout of a reduction: `count` elements of `size` bytes,
/// of kernel type `ty` (`None` for types only user operations apply to).
///
/// ```no_run
/// use oxmpi::coll::Elems;
/// use oxmpi::ops::{ElemType, Op};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut v = [world.rank() as f64; 4];
/// // Four f64 the kernels know as F64; `ty: None` would allow only user ops.
/// let e = Elems { count: v.len(), size: 8, ty: Some(ElemType::F64) };
/// // SAFETY: in place (`send` is None); `v` outlives the request.
/// let r = unsafe { world.iallreduce_raw(None, v.as_mut_ptr().cast(), e, &Op::SUM) }?;
/// r.wait()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Elems {
    /// Number of elements.
    pub count: usize,
    /// Bytes per element.
    pub size: usize,
    /// Kernel type for built-in operations.
    pub ty: Option<ElemType>,
}

impl Elems {
    fn of<T: Scalar>(count: usize) -> Elems {
        Elems {
            count,
            size: std::mem::size_of::<T>(),
            ty: T::ELEM,
        }
    }
    fn bytes(&self) -> usize {
        self.count * self.size
    }
}

fn user(ptr: *const u8, len: usize) -> Buf {
    Schedule::user(ptr as *mut u8, len)
}

/// What the collective this thread starts next belongs to: a blocking
/// call of the C ABI (see [`BlockingCall`]) and/or the start of a
/// persistent collective, whose reserved sequence it then takes (see
/// [`persistent`]).
#[derive(Clone, Copy)]
struct Mark {
    blocking: bool,
    pinned: Option<persistent::PersistentSeq>,
}

impl Mark {
    /// The channel bit of the call: [`tag::BLOCKING`] for a blocking
    /// call's, else 0 (the sequence of an area call after its channel's
    /// first, see [`Comm::call_seq`]).
    fn kind(self) -> u32 {
        if self.blocking {
            tag::BLOCKING
        } else {
            0
        }
    }
}

thread_local! {
    /// One thread-local for both marks: in a shared library every access
    /// to one is a call (`__tls_get_addr`), and a call reads both.
    static MARK: Cell<Mark> = const {
        Cell::new(Mark {
            blocking: false,
            pinned: None,
        })
    };
}

/// While alive, the collectives the current thread starts are those of one
/// blocking collective call (`MPI_Barrier`, `MPI_Allreduce`, ...): they take
/// their tags from the communicator's blocking sequence, apart from the
/// non-blocking calls' (see `tag.rs`), since MPI never matches a blocking
/// collective with a non-blocking one.
///
/// ```no_run
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let mut x = [world.rank() as u8; 4];
/// // Rank 0 starts an ibcast before a blocking barrier, the others after
/// // it: each call still meets its own kind.
/// // SAFETY: `x` outlives the request, waited on below.
/// let start = |x: &mut [u8; 4]| unsafe { world.ibcast_raw(x.as_mut_ptr(), 4, 0) };
/// let early = if world.rank() == 0 { Some(start(&mut x)?) } else { None };
/// {
///     let _blocking = oxmpi::coll::BlockingCall::enter();
///     world.ibarrier()?.wait()?;
/// }
/// let req = match early {
///     Some(req) => req,
///     None => start(&mut x)?,
/// };
/// req.wait()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug)]
pub struct BlockingCall {
    /// The mark before this one (blocking calls may nest on one thread).
    outer: bool,
}

impl BlockingCall {
    /// Marks the current thread's collectives as a blocking call's until
    /// the returned value drops.
    pub fn enter() -> BlockingCall {
        let mark = MARK.get();
        MARK.set(Mark {
            blocking: true,
            ..mark
        });
        BlockingCall {
            outer: mark.blocking,
        }
    }
}

impl Drop for BlockingCall {
    fn drop(&mut self) {
        MARK.set(Mark {
            blocking: self.outer,
            ..MARK.get()
        });
    }
}

impl Comm {
    /// The next collective sequence number on this communicator, from the
    /// blocking or the non-blocking calls' counter (see [`BlockingCall`]);
    /// never 0 in its counter bits (sequence 0 is the internal barrier's,
    /// see tag.rs).
    fn next_coll_seq(&self) -> u32 {
        self.next_coll_seq_of(MARK.get().blocking)
    }

    /// [`Comm::next_coll_seq`] from the blocking calls' counter or not.
    #[inline]
    fn next_coll_seq_of(&self, blocking: bool) -> u32 {
        let counter = if blocking {
            &self.inner.blocking_coll_seq
        } else {
            &self.inner.coll_seq
        };
        let next = || counter.fetch_add(1, Ordering::Relaxed).wrapping_add(1) & (tag::BLOCKING - 1);
        let mut seq = next();
        if seq == 0 {
            seq = next();
        }
        if blocking {
            seq | tag::BLOCKING
        } else {
            seq
        }
    }

    /// Starts a new collective call: its tag sequence (the next one, or a
    /// persistent collective's own, see [`persistent`]) and the rank view.
    fn coll_ctx(&self) -> Ctx<'_> {
        self.coll_ctx_at(self.take_coll_seq())
    }

    /// [`Comm::coll_ctx`] of the call whose sequence is already taken.
    fn coll_ctx_at(&self, seq: u32) -> Ctx<'_> {
        Ctx {
            rank: self.rank() as usize,
            size: self.size() as usize,
            world_of: std::borrow::Cow::Borrowed(&self.inner.world_of),
            seq,
            nodes: Some(self.coll_nodes()),
            model: self.rt().selector().model(),
            area: self.coll_area(),
        }
    }

    /// A new collective call's tag sequence alone (what [`Comm::coll_ctx`]
    /// takes), for a call that needs no more of the view.
    #[inline]
    fn take_coll_seq(&self) -> u32 {
        let mark = MARK.get();
        persistent::take_pinned(mark, self.inner.context)
            .unwrap_or_else(|| self.next_coll_seq_of(mark.blocking))
    }

    /// The tag sequence of a call that `algo` makes with `payload` bytes
    /// per rank: [`Comm::take_coll_seq`]'s, except for a call through the
    /// shared-memory area after its channel's first. Such a call sends no
    /// message (the first carries the area's set-up), so it takes no
    /// sequence number of the counters, only its channel's bit: no atomic
    /// increment per call. Every rank decides alike (the same algorithm,
    /// payload and place among the channel's calls), so the counters stay
    /// in step. A persistent collective takes its own (never the area).
    #[inline(always)]
    fn call_seq(&self, algo: &algos::AlgoInfo, payload: usize) -> u32 {
        self.seq_unless_area(algo.pattern == inter::Pattern::SharedArea, payload)
    }

    /// [`Comm::call_seq`] for a call that goes through the area when
    /// `area` says so (a barrier: whenever it can).
    #[inline(always)]
    fn seq_unless_area(&self, area: bool, payload: usize) -> u32 {
        let mark = MARK.get();
        if let Some(seq) = persistent::take_pinned(mark, self.inner.context) {
            return seq;
        }
        let kind = mark.kind();
        if area && area::serves(kind, payload) && self.coll_area().is_some_and(|a| a.set_up(kind)) {
            return kind;
        }
        self.next_coll_seq_of(mark.blocking)
    }

    /// Runs `op()` to completion on the shared-memory area when `algo` is
    /// the area's entry and the call's channel is set up here, with no
    /// [`Planned`] in between (the blocking `*_raw` calls' common case);
    /// `None` leaves the call to the matching `plan_*`. Such a call takes
    /// no tag sequence there either (see [`Comm::call_seq`]), so it takes
    /// none here.
    #[inline(always)]
    fn run_on_area(
        &self,
        algo: &algos::AlgoInfo,
        payload: usize,
        op: impl FnOnce() -> area::Op,
    ) -> Option<Result<(), Error>> {
        self.run_on_area_if(algo.pattern == inter::Pattern::SharedArea, payload, op)
    }

    /// [`Comm::run_on_area`] for a call that goes through the area when
    /// `area` says so (a barrier: whenever it can).
    #[inline(always)]
    fn run_on_area_if(
        &self,
        area: bool,
        payload: usize,
        op: impl FnOnce() -> area::Op,
    ) -> Option<Result<(), Error>> {
        if !area {
            return None;
        }
        let mark = MARK.get();
        if mark.pinned.is_some_and(|p| p.context == self.inner.context) {
            return None;
        }
        let mut call = self.direct_call(mark.kind(), payload, op)?;
        Some(call.run(self.rt()))
    }

    /// The call `op()` as a direct call on the shared-memory area (see
    /// `area/direct.rs`) when `algo` is the area's entry and the area can
    /// take call `seq` posting `payload` bytes now; `None` leaves the call
    /// to the schedule `algo` builds (which falls back itself where the
    /// area cannot serve it). `op()` refers only to the caller's buffers.
    /// No [`Ctx`] is built unless the schedule is ([`Comm::coll_ctx_at`]).
    #[inline(always)]
    fn area_direct(
        &self,
        seq: u32,
        algo: &algos::AlgoInfo,
        payload: usize,
        op: impl FnOnce() -> area::Op,
    ) -> Option<Planned<'_>> {
        self.area_direct_if(algo.pattern == inter::Pattern::SharedArea, seq, payload, op)
    }

    /// [`Comm::area_direct`] for a call that goes through the area when
    /// `area` says so (a barrier: whenever it can).
    #[inline(always)]
    fn area_direct_if(
        &self,
        area: bool,
        seq: u32,
        payload: usize,
        op: impl FnOnce() -> area::Op,
    ) -> Option<Planned<'_>> {
        if !area {
            return None;
        }
        self.direct_call(seq, payload, op)
            .map(|c| Planned::direct(self, c))
    }

    /// `op()` as call `seq` straight on this communicator's area, if the
    /// area serves a call posting `payload` bytes per rank and is ready
    /// here (see [`area::direct_at`]).
    #[inline(always)]
    fn direct_call(
        &self,
        seq: u32,
        payload: usize,
        op: impl FnOnce() -> area::Op,
    ) -> Option<area::Direct<'_>> {
        if !area::serves(seq, payload) {
            return None;
        }
        let a = self.coll_area()?;
        let me = self.rank() as usize;
        area::direct_at(seq, me, &self.inner.world_of, a, op())
    }

    /// The collective area, if every member is on this host (and memfds
    /// can be made here).
    #[inline]
    fn coll_area(&self) -> Option<&std::sync::Arc<area::AreaState>> {
        let area = &self.coll_state().area;
        let local = match area.local.get() {
            Some(&local) => local,
            None => self.area_is_local(area),
        };
        local.then_some(area)
    }

    /// Whether every member is on this host (and memfds can be made
    /// here), worked out at the first call.
    #[cold]
    #[inline(never)]
    fn area_is_local(&self, area: &area::AreaState) -> bool {
        *area.local.get_or_init(|| {
            let (t, me) = (self.rt().transport(), self.rt().world_rank);
            !self.is_inter()
                && self
                    .inner
                    .world_of
                    .iter()
                    .all(|&w| w == me || t.same_host(w))
                && area::memfd_ok()
        })
    }

    fn plan(&self, mut sched: Schedule) -> Planned<'_> {
        sched.place_on_device(&self.inner.device_streams);
        Planned::new(self, sched)
    }

    fn root(&self, root: i32) -> Result<usize, Error> {
        usize::try_from(root)
            .ok()
            .filter(|&r| r < self.size() as usize)
            .ok_or_else(|| Error::InvalidRank {
                arg: "root",
                value: root,
                size: self.size(),
            })
    }

    /// The selection facts of a call on this communicator.
    fn args(&self, bytes: usize, commutative: bool) -> Args {
        Args::new(self.size() as usize, bytes, commutative).on(self.coll_nodes().layout)
    }

    /// Inlined: every collective call asks, and the answer is nearly
    /// always kept already (the first call of a kind asks the selector).
    #[inline]
    fn pick(&self, coll: Coll, bytes: usize, commutative: bool) -> &'static algos::AlgoInfo {
        self.coll_state()
            .picks
            .get_or(coll, bytes, commutative, || {
                self.pick_anew(coll, bytes, commutative)
            })
    }

    #[cold]
    #[inline(never)]
    fn pick_anew(&self, coll: Coll, bytes: usize, commutative: bool) -> &'static algos::AlgoInfo {
        self.rt()
            .selector()
            .pick(self.inner.context, coll, &self.args(bytes, commutative))
    }
}
