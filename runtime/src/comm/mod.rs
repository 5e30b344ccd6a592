//! Communicators: a group of ranks and the context ids that keep their
//! traffic apart. Locality is decided when the runtime starts (the
//! transport knows which world ranks it reaches; the bootstrap says which
//! node each world rank runs on).
//!
//! - [`mod@create`]: `dup`, `split`, `split_type`, `create`, the collective
//!   constructors; all end in one context-id agreement ([`context`],
//!   run as an engine task by `agreement.rs`), as do `idup` (`idup.rs`)
//!   and `create_group`.
//! - `agree`: split's allgather, over point-to-point.
//! - [`attr`]: keyvals and attributes (`MPI_Comm_set_attr` and friends).
//! - `p2p.rs`, `barrier.rs`: traffic on a communicator.
//!
//! Freeing: [`Comm::free`] frees explicitly (deleting attributes, reporting
//! a delete callback's error); dropping the last clone frees too (errors
//! are dropped: no panics in `Drop`). Either way the context id goes back
//! to this process's pool, and a later communicator may reuse it.

mod agree;
mod agreement;
pub mod attr;
mod barrier;
pub mod context;
pub mod create;
mod idup;
mod inter;
mod p2p;
pub(crate) mod p2p_device;
mod p2p_message;
mod p2p_persistent;
mod p2p_plan;
mod p2p_view;
mod partitioned;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::Error;
use crate::group::{Comparison, Group};
use crate::progress::{Extension, Rt};
use crate::status::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};
use crate::topo::{Neighbors, Topology};

pub use crate::status::UNDEFINED;
pub use attr::{AttrValue, CopyFn, CopyPolicy, DeleteFn, Keyval};
pub use create::SplitType;
pub use idup::PendingComm;
pub use p2p_message::Message;
pub use p2p_persistent::Persistent;
pub use partitioned::PartitionedChannel;

/// Longest communicator name kept, in bytes (`MPI_MAX_OBJECT_NAME - 1`).
///
/// See the example on [`Comm::set_name`].
pub const MAX_NAME_LEN: usize = 127;

/// A communicator.
///
/// Cloning gives another handle to the same communicator.
///
/// ```no_run
/// let universe = oxmpi::init()?;
/// let world = universe.world();
/// println!("rank {} of {}", world.rank(), world.size());
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Clone)]
pub struct Comm {
    pub(crate) inner: Arc<CommInner>,
}

/// Process-wide state every communicator of a universe shares.
pub(crate) struct Shared {
    /// Node id of each world rank (from the bootstrap's process mapping).
    pub(crate) node_of_rank: Vec<usize>,
    /// Node id of each world rank as the collective layer sees it: the
    /// real map, or `OXMPI_COLL_NODES` blocks (see `coll::nodes`).
    pub(crate) coll_node_of_rank: Vec<usize>,
    /// Free context ids of this process.
    pub(crate) pool: context::Pool,
}

impl Shared {
    /// Shared state of communicators over these node maps.
    pub(crate) fn new(node_of_rank: Vec<usize>, coll_node_of_rank: Vec<usize>) -> Shared {
        Shared {
            node_of_rank,
            coll_node_of_rank,
            pool: context::Pool::new(),
        }
    }
}

/// What kind of communicator: the predefined ones are never freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    World,
    SelfComm,
    User,
}

pub(crate) struct CommInner {
    pub(crate) rt: Rt,
    pub(crate) shared: Arc<Shared>,
    /// Context id of point-to-point traffic; collectives use `context + 1`.
    pub(crate) context: u32,
    pub(crate) rank: i32,
    /// World rank of each communicator rank (of the local group, for an
    /// intercommunicator).
    pub(crate) world_of: Vec<usize>,
    /// World rank of each rank of the remote group: `Some` for an
    /// intercommunicator (point-to-point ranks name the remote group).
    pub(crate) remote: Option<Vec<usize>>,
    pub(crate) kind: Kind,
    pub(crate) topology: Topology,
    pub(crate) attrs: Mutex<attr::Attrs>,
    name: Mutex<String>,
    /// Freed explicitly: attributes deleted, context id returned.
    freed: AtomicBool,
    /// Non-blocking (and persistent) collective calls made on this
    /// communicator (tag sequence; see coll/tag.rs).
    pub(crate) coll_seq: std::sync::atomic::AtomicU32,
    /// Blocking collective calls made through the C ABI (their own tag
    /// sequence: blocking and non-blocking collectives never match).
    pub(crate) blocking_coll_seq: std::sync::atomic::AtomicU32,
    /// Context-id agreements run over this communicator (their tags; see
    /// `agreement.rs`).
    pub(crate) agree_seq: std::sync::atomic::AtomicU32,
    /// Partitioned operations initialized on this communicator (their matching).
    pub(crate) partitioned: Mutex<partitioned::Counters>,
    /// The collective layer's state for this communicator (its node view
    /// and algorithm choices, made at first use).
    pub(crate) coll: Extension,
    /// Where this communicator's device reductions run (made at first use).
    pub(crate) device_streams: crate::mem::cuda::DeviceStreams,
}

/// Context ids of the predefined communicators (each takes two: p2p, collective).
pub(crate) const WORLD_CONTEXT: u32 = 0;
/// `MPI_COMM_SELF`.
pub(crate) const SELF_CONTEXT: u32 = 2;

/// A communicator's identity while it lives: its point-to-point context
/// id (unique among this process's live communicators; reused after a
/// free). The C front end maps it to its own handle.
///
/// ```no_run
/// use std::collections::HashMap;
/// use oxmpi::CommId;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // Per-communicator bookkeeping keyed by identity.
/// let mut calls: HashMap<CommId, u32> = HashMap::new();
/// let dup = world.dup()?;
/// *calls.entry(world.id()).or_default() += 1;
/// *calls.entry(dup.id()).or_default() += 1;
/// assert_eq!(calls.len(), 2);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommId(pub u32);

impl Comm {
    /// `MPI_COMM_WORLD` and `MPI_COMM_SELF`, built by `init`.
    pub(crate) fn predefined(rt: Rt, shared: Arc<Shared>, self_comm: bool) -> Comm {
        let me = rt.world_rank;
        let (context, rank, world_of, kind, name) = if self_comm {
            (SELF_CONTEXT, 0, vec![me], Kind::SelfComm, "MPI_COMM_SELF")
        } else {
            let all = (0..rt.world_size).collect();
            (WORLD_CONTEXT, me as i32, all, Kind::World, "MPI_COMM_WORLD")
        };
        Comm::build(
            rt,
            shared,
            context,
            rank,
            world_of,
            kind,
            Topology::None,
            name,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        rt: Rt,
        shared: Arc<Shared>,
        context: u32,
        rank: i32,
        world_of: Vec<usize>,
        kind: Kind,
        topology: Topology,
        name: &str,
    ) -> Comm {
        Comm::build_with_remote(
            rt, shared, context, rank, world_of, None, kind, topology, name,
        )
    }

    /// [`Comm::build`] with a remote group (an intercommunicator when `Some`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build_with_remote(
        rt: Rt,
        shared: Arc<Shared>,
        context: u32,
        rank: i32,
        world_of: Vec<usize>,
        remote: Option<Vec<usize>>,
        kind: Kind,
        topology: Topology,
        name: &str,
    ) -> Comm {
        Comm {
            inner: Arc::new(CommInner {
                rt,
                shared,
                context,
                rank,
                world_of,
                remote,
                kind,
                topology,
                attrs: Mutex::new(attr::Attrs::default()),
                name: Mutex::new(name.to_owned()),
                freed: AtomicBool::new(false),
                coll_seq: std::sync::atomic::AtomicU32::new(0),
                blocking_coll_seq: std::sync::atomic::AtomicU32::new(0),
                agree_seq: std::sync::atomic::AtomicU32::new(0),
                partitioned: Mutex::default(),
                coll: Extension::default(),
                device_streams: Default::default(),
            }),
        }
    }

    /// This process's rank in the communicator.
    ///
    /// See the example on [`Comm`].
    pub fn rank(&self) -> i32 {
        self.inner.rank
    }

    /// Number of ranks in the communicator.
    ///
    /// See the example on [`Comm`].
    pub fn size(&self) -> i32 {
        self.inner.world_of.len() as i32
    }

    /// This communicator's identity (see [`CommId`]).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let dup = world.dup()?;
    /// assert_ne!(dup.id(), world.id()); // distinct while both live
    /// assert_eq!(world.clone().id(), world.id()); // clones are the same communicator
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn id(&self) -> CommId {
        CommId(self.inner.context)
    }

    /// The group of the communicator (`MPI_Comm_group`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let evens = world.group().range_incl(&[(0, world.size() - 1, 2)])?;
    /// let sub = world.create(&evens)?; // None on odd ranks
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn group(&self) -> Group {
        Group::from_world(self.inner.world_of.clone(), Some(self.inner.rt.world_rank))
    }

    /// World rank of each rank of this communicator, in rank order.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let odd = world.split(world.rank() % 2, 0)?.unwrap();
    /// // Rank r of `odd` is world rank world_ranks()[r].
    /// assert_eq!(odd.world_ranks()[odd.rank() as usize], world.rank() as usize);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn world_ranks(&self) -> &[usize] {
        &self.inner.world_of
    }

    /// Compares two communicators (`MPI_Comm_compare`): `Ident` for the
    /// same communicator, `Congruent` for the same ranks in the same order
    /// (e.g. a dup), `Similar` for the same ranks in another order,
    /// `Unequal` otherwise.
    ///
    /// ```no_run
    /// use oxmpi::Comparison;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// assert_eq!(world.compare(&world.clone()), Comparison::Ident);
    /// assert_eq!(world.compare(&world.dup()?), Comparison::Congruent);
    /// let reversed = world.split(0, -world.rank())?.unwrap();
    /// if world.size() > 1 {
    ///     assert_eq!(world.compare(&reversed), Comparison::Similar);
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn compare(&self, other: &Comm) -> Comparison {
        if Arc::ptr_eq(&self.inner, &other.inner) || self.inner.context == other.inner.context {
            return Comparison::Ident;
        }
        let local = self.group().compare(&other.group());
        match (&self.inner.remote, &other.inner.remote) {
            (None, None) => {}
            // Intercommunicators: both groups must compare alike.
            (Some(a), Some(b)) => {
                let me = Some(self.inner.rt.world_rank);
                let far =
                    Group::from_world(a.clone(), me).compare(&Group::from_world(b.clone(), me));
                match (local, far) {
                    (Comparison::Unequal, _) | (_, Comparison::Unequal) => {
                        return Comparison::Unequal
                    }
                    (Comparison::Ident, Comparison::Ident) => {}
                    _ => return Comparison::Similar,
                }
            }
            _ => return Comparison::Unequal,
        }
        match local {
            Comparison::Ident => Comparison::Congruent,
            c => c,
        }
    }

    /// The virtual topology attached to the communicator (`MPI_Topo_test`).
    ///
    /// ```no_run
    /// use oxmpi::Topology;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// assert_eq!(world.topology(), &Topology::None);
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let Topology::Cart(cart) = ring.topology() else { unreachable!() };
    /// assert_eq!(cart.dims(), &[world.size()]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn topology(&self) -> &Topology {
        &self.inner.topology
    }

    /// The neighbors of this rank that neighborhood collectives
    /// (`MPI_Neighbor_*`) exchange with, as MPI orders them: for a grid,
    /// for each dimension the rank at -1 then the rank at +1 (`PROC_NULL`
    /// past an open edge), the same list in both directions; for a general
    /// graph, [`Comm::graph_neighbors`] of this rank in both directions;
    /// for a distributed graph, its sources and destinations.
    ///
    /// Errors: `MPI_ERR_TOPOLOGY` for a communicator without a topology.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let grid = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let n = grid.neighbors()?; // [left, right] both ways
    /// assert_eq!(n.sources.len(), 2);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn neighbors(&self) -> Result<Neighbors, Error> {
        self.inner.topology.neighbors(self.rank()).ok_or_else(|| {
            Error::InvalidTopology(format!(
                "{} has no topology: neighborhood collectives need a cartesian, graph \
                 or distributed graph communicator",
                self.describe()
            ))
        })
    }

    /// Whether this is a predefined communicator (world or self).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// assert!(world.is_predefined() && universe.self_comm().is_predefined());
    /// assert!(!world.dup()?.is_predefined());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_predefined(&self) -> bool {
        self.inner.kind != Kind::User
    }

    /// The communicator's name (`MPI_Comm_get_name`): `MPI_COMM_WORLD` and
    /// `MPI_COMM_SELF` for the predefined ones, empty until set otherwise.
    ///
    /// See the example on [`Comm::set_name`].
    pub fn name(&self) -> String {
        lock(&self.inner.name).clone()
    }

    /// Names the communicator (`MPI_Comm_set_name`), locally. Names longer
    /// than [`MAX_NAME_LEN`] bytes are truncated (at a character boundary).
    ///
    /// ```no_run
    /// use oxmpi::comm::MAX_NAME_LEN;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// assert_eq!(world.name(), "MPI_COMM_WORLD");
    /// let solver = world.dup()?;
    /// assert_eq!(solver.name(), "");
    /// solver.set_name("solver");
    /// assert_eq!(solver.name(), "solver");
    /// solver.set_name(&"x".repeat(1000));
    /// assert_eq!(solver.name().len(), MAX_NAME_LEN);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn set_name(&self, name: &str) {
        let mut end = name.len().min(MAX_NAME_LEN);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        *lock(&self.inner.name) = name[..end].to_owned();
    }

    /// Frees the communicator (`MPI_Comm_free`): deletes its attributes
    /// (running delete callbacks) and returns its context id for reuse.
    /// Other clones of this handle must not be used afterwards. Pending
    /// operations on it still complete.
    ///
    /// Errors: the predefined communicators cannot be freed; a freed one
    /// cannot be freed again; a delete callback's error is returned (the
    /// communicator is freed anyway).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// for _ in 0..10_000 {
    ///     world.dup()?.free()?; // ids are recycled
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn free(self) -> Result<(), Error> {
        if self.inner.kind != Kind::User {
            return Err(Error::InvalidComm(format!(
                "{} is predefined and cannot be freed",
                self.describe()
            )));
        }
        self.check_live()?;
        let result = self.delete_all_attrs();
        if !self.inner.freed.swap(true, Ordering::AcqRel) {
            self.inner.shared.pool.release(self.inner.context);
        }
        result
    }

    /// Whether [`Comm::free`] was called on a clone of this handle.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let dup = world.dup()?;
    /// let other_handle = dup.clone();
    /// dup.free()?;
    /// assert!(other_handle.is_freed());
    /// assert!(other_handle.dup().is_err()); // a freed communicator cannot be used
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_freed(&self) -> bool {
        self.inner.freed.load(Ordering::Acquire)
    }

    /// `Err` when the communicator was freed through another clone.
    pub(crate) fn check_live(&self) -> Result<(), Error> {
        if self.is_freed() {
            Err(Error::InvalidComm(format!(
                "{} was already freed",
                self.describe()
            )))
        } else {
            Ok(())
        }
    }

    /// How error messages name this communicator.
    pub(crate) fn describe(&self) -> String {
        let name = self.name();
        if name.is_empty() {
            format!("communicator (context {})", self.inner.context)
        } else {
            format!("communicator {name:?}")
        }
    }

    /// Checks a destination rank; `Ok(None)` for `PROC_NULL`.
    #[inline]
    pub(crate) fn dest(&self, arg: &'static str, rank: i32) -> Result<Option<usize>, Error> {
        if rank == PROC_NULL {
            return Ok(None);
        }
        match usize::try_from(rank).ok().and_then(|r| self.peers().get(r)) {
            Some(&world) => Ok(Some(world)),
            None => Err(self.bad_rank(arg, rank)),
        }
    }

    /// World rank of each rank that point-to-point ranks name: the remote
    /// group of an intercommunicator, else the communicator's own ranks.
    #[inline]
    pub(crate) fn peers(&self) -> &[usize] {
        self.inner.remote.as_deref().unwrap_or(&self.inner.world_of)
    }

    /// How many ranks point-to-point ranks (and the blocks of a
    /// collective's buffers) name: the remote group's size for an
    /// intercommunicator, else [`Comm::size`].
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// assert_eq!(world.peer_count(), world.size());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn peer_count(&self) -> i32 {
        self.peers().len() as i32
    }

    #[cold]
    fn bad_rank(&self, arg: &'static str, rank: i32) -> Error {
        Error::InvalidRank {
            arg,
            value: rank,
            size: self.peer_count(),
        }
    }

    /// Checks a receive's source (a rank, `ANY_SOURCE` or `PROC_NULL`).
    #[inline]
    pub(crate) fn source(&self, rank: i32) -> Result<(), Error> {
        if rank == ANY_SOURCE || rank == PROC_NULL || (0..self.peer_count()).contains(&rank) {
            Ok(())
        } else {
            Err(self.bad_rank("source", rank))
        }
    }

    #[inline]
    pub(crate) fn send_tag(tag: i32) -> Result<(), Error> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Self::bad_tag(tag, false))
        }
    }

    #[inline]
    pub(crate) fn recv_tag(tag: i32) -> Result<(), Error> {
        if tag == ANY_TAG || (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Self::bad_tag(tag, true))
        }
    }

    #[cold]
    fn bad_tag(tag: i32, allows_any: bool) -> Error {
        Error::InvalidTag {
            arg: "tag",
            value: tag,
            allows_any,
        }
    }

    pub(crate) fn rt(&self) -> &Rt {
        &self.inner.rt
    }

    /// The context of this communicator's internal (collective) traffic.
    pub(crate) fn collective_context(&self) -> u32 {
        self.inner.context + 1
    }

    /// A [`Sweep`](crate::request::Sweep) over requests of this
    /// communicator's runtime (every request of the process): completes
    /// many under one engine lock and one poll.
    pub fn sweep(&self) -> crate::request::Sweep<'_> {
        crate::request::Sweep::new(self.rt())
    }
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("name", &self.name())
            .field("context", &self.inner.context)
            .field("rank", &self.rank())
            .field("size", &self.size())
            .finish()
    }
}

impl Drop for CommInner {
    /// The last handle went away without [`Comm::free`]: delete the
    /// attributes (errors cannot be reported here) and return the id.
    fn drop(&mut self) {
        if self.kind != Kind::User || *self.freed.get_mut() {
            return;
        }
        let attrs = std::mem::take(self.attrs.get_mut().unwrap_or_else(|e| e.into_inner()));
        let _ = attrs.delete_all(CommId(self.context));
        self.shared.pool.release(self.context);
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
