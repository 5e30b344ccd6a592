//! Collective constructors: `dup`, `split`, `split_type`, `create`,
//! `create_group`. Each works out this rank's members locally (split
//! gathers every rank's `(color, key)` first), then runs one context-id
//! agreement (`agreement.rs`): over the parent, or over the group's
//! members for `create_group`. Those of an intercommunicator are in
//! `inter.rs` (dup, split and create dispatch there).

use super::agreement::{self, Plan};
use super::context::CREATE_GROUP_BASE;
use super::{agree, Comm, Kind, UNDEFINED};
use crate::error::Error;
use crate::group::Group;
use crate::machine::HwLevel;
use crate::topo::Topology;

/// Kinds of [`Comm::split_type`] (`MPI_COMM_TYPE_*`; for
/// `MPI_COMM_TYPE_HW_UNGUIDED` see [`Comm::split_hw_unguided`]).
///
/// ```no_run
/// use oxmpi::SplitType;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let node = world.split_type(SplitType::Shared, 0)?.expect("every rank is on a node");
/// println!("{} ranks share my node", node.size());
/// assert!(world.split_type(SplitType::Undefined, 0)?.is_none());
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitType {
    /// Ranks that can share memory: those on the same node
    /// (`MPI_COMM_TYPE_SHARED`).
    Shared,
    /// This rank wants no communicator (`MPI_UNDEFINED`): gets `None`.
    Undefined,
    /// Ranks in the same object of a hardware level
    /// (`MPI_COMM_TYPE_HW_GUIDED` with `mpi_hw_resource_type`); a rank not
    /// bound inside one such object gets `None`.
    Hardware(HwLevel),
}

impl Comm {
    /// Duplicates the communicator (`MPI_Comm_dup`): same ranks in the same
    /// order and the same topology, new context ids (so traffic on the two
    /// never meets), attributes copied as their keyvals say. Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let lib_comm = world.dup()?;
    /// assert_eq!(lib_comm.compare(&world), oxmpi::Comparison::Congruent);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn dup(&self) -> Result<Comm, Error> {
        if self.is_inter() {
            self.check_live()?;
            let context = agreement::run(self, self.agreement_plan(true))?;
            let new = self.same_groups(context, Topology::None);
            if let Err(e) = self.copy_attrs_to(&new) {
                let _ = new.free();
                return Err(e);
            }
            return Ok(new);
        }
        let new = self
            .derive(
                Some(self.inner.world_of.clone()),
                self.inner.topology.clone(),
            )?
            .expect("every rank is a member of a dup");
        if let Err(e) = self.copy_attrs_to(&new) {
            let _ = new.free();
            return Err(e);
        }
        Ok(new)
    }

    /// Splits the communicator (`MPI_Comm_split`): ranks passing the same
    /// `color` form a new communicator, ordered by `key` and then by their
    /// rank here; [`UNDEFINED`] as color gives `None`. Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Even and odd ranks, each in reverse order.
    /// let half = world.split(world.rank() % 2, -world.rank())?.unwrap();
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn split(&self, color: i32, key: i32) -> Result<Option<Comm>, Error> {
        self.check_live()?;
        if color < 0 && color != UNDEFINED {
            return Err(Error::InvalidArgument {
                arg: "color",
                reason: format!("color {color} is negative and not UNDEFINED"),
            });
        }
        if self.is_inter() {
            return self.inter_split(color, key);
        }
        let mine: Vec<u8> = [color.to_le_bytes(), key.to_le_bytes()].concat();
        let all = agree::allgather_fixed(self, &mine)?;
        let pairs: Vec<(i32, i32)> = all
            .chunks_exact(8)
            .map(|c| {
                let word = |b: &[u8]| i32::from_le_bytes(b.try_into().expect("4 bytes"));
                (word(&c[..4]), word(&c[4..]))
            })
            .collect();
        let members = (color != UNDEFINED).then(|| {
            let mut same: Vec<usize> = (0..pairs.len()).filter(|&r| pairs[r].0 == color).collect();
            same.sort_by_key(|&r| (pairs[r].1, r));
            same.iter().map(|&r| self.inner.world_of[r]).collect()
        });
        self.derive(members, Topology::None)
    }

    /// Splits by locality (`MPI_Comm_split_type`): with
    /// [`SplitType::Shared`], the ranks on this node, ordered by `key`
    /// then rank. Collective. On an intercommunicator, as [`Comm::split`]
    /// with this rank's locality as the color.
    ///
    /// ```no_run
    /// use oxmpi::SplitType;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // One leader per node: node rank 0.
    /// let node = world.split_type(SplitType::Shared, world.rank())?.unwrap();
    /// let leaders = world.split(if node.rank() == 0 { 0 } else { oxmpi::UNDEFINED }, 0)?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn split_type(&self, kind: SplitType, key: i32) -> Result<Option<Comm>, Error> {
        let color = match kind {
            SplitType::Shared => self.hw_color(HwLevel::Node)?,
            SplitType::Undefined => UNDEFINED,
            SplitType::Hardware(level) => self.hw_color(level)?,
        };
        self.split(color, key)
    }

    /// `MPI_COMM_TYPE_HW_UNGUIDED`: the ranks that share this rank's object
    /// at the first hardware level (largest objects first, see
    /// [`HwLevel::ALL`]) whose ranks are a strict subset of this
    /// communicator, ordered by `key` then rank, with that level; `None`
    /// when no level gives one. Collective.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let mut comm = world.clone();
    /// // Down the hierarchy: node, package, ..., core, PU.
    /// while let Some((sub, level)) = comm.split_hw_unguided(0)? {
    ///     assert!(sub.size() < comm.size());
    ///     println!("{} ranks share my {}", sub.size(), level.name());
    ///     comm = sub;
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn split_hw_unguided(&self, key: i32) -> Result<Option<(Comm, HwLevel)>, Error> {
        self.check_live()?;
        self.check_intra("MPI_Comm_split_type")?;
        let mut mine = key.to_le_bytes().to_vec();
        for level in HwLevel::ALL {
            mine.extend(self.hw_color(level)?.to_le_bytes());
        }
        let record = mine.len();
        let all = agree::allgather_fixed(self, &mine)?;
        let word = |r: usize, i: usize| {
            let at = r * record + 4 * i;
            i32::from_le_bytes(all[at..at + 4].try_into().expect("4 bytes"))
        };
        let size = self.size() as usize;
        // Each rank's level: the first where its object is a strict subset.
        let choice = |r: usize| {
            (0..HwLevel::ALL.len()).find(|&l| {
                let c = word(r, 1 + l);
                c != UNDEFINED && (0..size).any(|x| word(x, 1 + l) != c)
            })
        };
        let me = self.rank() as usize;
        let members = choice(me).map(|l| {
            let c = word(me, 1 + l);
            let mut same: Vec<usize> = (0..size)
                .filter(|&x| choice(x) == Some(l) && word(x, 1 + l) == c)
                .collect();
            same.sort_by_key(|&x| (word(x, 0), x));
            (same.iter().map(|&x| self.inner.world_of[x]).collect(), l)
        });
        let (members, level) = match members {
            Some((m, l)) => (Some(m), Some(HwLevel::ALL[l])),
            None => (None, None),
        };
        let new = self.derive(members, Topology::None)?;
        Ok(new.zip(level))
    }

    /// This rank's color at `level`: its node and object there, or
    /// `UNDEFINED` when it is not inside one object.
    fn hw_color(&self, level: HwLevel) -> Result<i32, Error> {
        let node = self.inner.shared.node_of_rank[self.inner.rt.world_rank];
        let Some(index) = level.locate() else {
            return Ok(UNDEFINED);
        };
        // Node in the high bits, object in the low 16.
        i32::try_from((node << 16) | (index & 0xffff)).map_err(|_| {
            Error::Unsupported(format!(
                "splitting by {} on node {node}: more nodes than a split color can tell apart",
                level.name()
            ))
        })
    }

    /// A communicator of the ranks of `group`, in the group's order
    /// (`MPI_Comm_create`); ranks outside the group get `None`. Collective
    /// over this communicator; `group` must be a subgroup of its group. As
    /// MPI-2.2 allows, ranks may pass different, disjoint groups: each
    /// group becomes its own communicator.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let firsts = world.group().incl(&[0])?;
    /// let just_zero = world.create(&firsts)?; // collective over `world`
    /// assert_eq!(just_zero.is_some(), world.rank() == 0);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn create(&self, group: &Group) -> Result<Option<Comm>, Error> {
        self.check_live()?;
        self.check_subgroup(group)?;
        if self.is_inter() {
            return self.inter_create(group);
        }
        let me = self.inner.rt.world_rank;
        let members = group
            .world_ranks()
            .contains(&me)
            .then(|| group.world_ranks().to_vec());
        self.derive(members, Topology::None)
    }

    /// A communicator of the ranks of `group`, in the group's order, made
    /// by the group's members only (`MPI_Comm_create_group`): collective
    /// over `group`, not over this communicator, so other ranks need not
    /// take part. `tag` (0..=`TAG_UB`) tells apart creations that threads
    /// of one process run at once on overlapping groups. A process outside
    /// `group` gets `None` at once.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// // Even ranks build theirs while odd ranks build their own.
    /// let mine = world.group().range_incl(&[(world.rank() % 2, world.size() - 1, 2)])?;
    /// let half = world.create_group(&mine, 7)?.expect("a member of its own group");
    /// assert_eq!(half.size(), mine.size());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn create_group(&self, group: &Group, tag: i32) -> Result<Option<Comm>, Error> {
        self.check_live()?;
        self.check_intra("MPI_Comm_create_group")?;
        Comm::send_tag(tag)?;
        self.check_subgroup(group)?;
        let world_of = group.world_ranks().to_vec();
        let me = self.inner.rt.world_rank;
        let Some(index) = world_of.iter().position(|&w| w == me) else {
            return Ok(None);
        };
        let ids = world_of
            .iter()
            .map(|w| self.inner.world_of.iter().position(|x| x == w).unwrap_or(0) as i32)
            .collect();
        let plan = Plan {
            context: CREATE_GROUP_BASE + self.inner.context,
            tag,
            world: world_of.clone(),
            ids,
            me: index,
            member: true,
        };
        let context = agreement::run(self, plan)?;
        Ok(Some(self.build_child(context, world_of, Topology::None)))
    }

    /// `Err` naming the first world rank of `group` outside this communicator.
    fn check_subgroup(&self, group: &Group) -> Result<(), Error> {
        match group
            .world_ranks()
            .iter()
            .find(|w| !self.inner.world_of.contains(w))
        {
            Some(&w) => Err(Error::InvalidArgument {
                arg: "group",
                reason: format!(
                    "the group holds world rank {w}, which is not in the {} of {} ranks",
                    self.describe(),
                    self.size()
                ),
            }),
            None => Ok(()),
        }
    }

    /// The collective core of every constructor: agree on a context id
    /// over this communicator, then build the new communicator of
    /// `members` (world ranks in rank order) on the ranks that have some.
    pub(crate) fn derive(
        &self,
        members: Option<Vec<usize>>,
        topology: Topology,
    ) -> Result<Option<Comm>, Error> {
        self.check_live()?;
        self.check_intra("this constructor")?;
        let context = agreement::run(self, Plan::over(self, members.is_some()))?;
        Ok(members.map(|world_of| self.build_child(context, world_of, topology)))
    }

    /// A communicator made from this one with p2p context `context`, of
    /// `world_of` (world ranks in rank order, this process among them).
    pub(crate) fn build_child(
        &self,
        context: u32,
        world_of: Vec<usize>,
        topology: Topology,
    ) -> Comm {
        let me = self.inner.rt.world_rank;
        let rank = world_of
            .iter()
            .position(|&w| w == me)
            .expect("a member is in its own communicator") as i32;
        Comm::build(
            self.inner.rt.clone(),
            self.inner.shared.clone(),
            context,
            rank,
            world_of,
            Kind::User,
            topology,
            "",
        )
    }
}
