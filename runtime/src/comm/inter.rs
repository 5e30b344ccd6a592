//! Intercommunicators: two disjoint groups, the local one (this rank's,
//! [`Comm::rank`] and [`Comm::size`]) and the remote one, whose ranks
//! point-to-point calls name. One pair of context ids serves both groups
//! (agreed over their union, so it is free on every member); collectives
//! (`coll/intercomm.rs`) run on its collective context.
//!
//! Constructors: [`Comm::intercomm_create`] (leaders over a bridge
//! communicator), [`Comm::intercomm_from_groups`], [`Comm::merge`], and
//! `dup`, `idup`, `split` and `create` of an intercommunicator (here,
//! called by `create.rs` and `idup.rs`).
//!
//! # Union
//!
//! Both groups order their union alike: the group whose rank 0 has the
//! lower world rank first. Agreements over the union carry world ranks in
//! their envelopes (`Plan::over_union`). [`union_allgather`] gives every
//! rank every record of both groups (split's colors, create's positions,
//! merge's `high`), with tags apart from split's ring:
//!
//! | tag            | context                          | use                       |
//! |----------------|----------------------------------|---------------------------|
//! | `0x4000_0002`  | intercomm's collective           | records within a group    |
//! | `0x4000_0003`  | intercomm's collective           | records across the groups |
//! | `0x4000_0004`  | local comm's collective          | a leader's bcast (create) |
//! | `0x4000_0005`  | intercomm's collective           | `Comm::barrier` across    |
//! | program's tag  | bridge's collective              | the leaders' exchange     |
//! | `2^30 + tag`   | `CREATE_GROUP_BASE + bridge ctx` | create's agreement        |

use super::agree::transfer;
use super::agreement::{self, Plan};
use super::context::CREATE_GROUP_BASE;
use super::{Comm, Kind, UNDEFINED};
use crate::error::Error;
use crate::group::Group;
use crate::topo::Topology;

/// Records exchanged within a group.
const LOCAL_TAG: i32 = 0x4000_0002;
/// Records exchanged across the groups.
const CROSS_TAG: i32 = 0x4000_0003;
/// A leader's broadcast of the remote group in `intercomm_create`.
const LEADER_TAG: i32 = 0x4000_0004;
/// Agreements of `intercomm_create` (bit 30 over the program's tag).
const CREATE_TAG_BIT: i32 = 1 << 30;

fn words(list: &[usize]) -> Vec<u8> {
    list.iter()
        .flat_map(|&w| (w as u64).to_le_bytes())
        .collect()
}

fn unwords(bytes: &[u8]) -> Vec<usize> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
        .collect()
}

fn int_at(bytes: &[u8], i: usize) -> i32 {
    i32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
}

/// Every rank's `mine` (all of one length) on intercommunicator `comm`:
/// the local group's records in rank order, then the remote group's.
pub(super) fn union_allgather(comm: &Comm, mine: &[u8]) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let remote = comm.inner.remote.as_ref().expect("an intercommunicator");
    let (n, me) = (mine.len(), comm.rank() as usize);
    let mut local = vec![0u8; n * comm.size() as usize];
    let mut far = vec![0u8; n * remote.len()];
    local[me * n..(me + 1) * n].copy_from_slice(mine);
    let mut sends: Vec<(usize, i32, &[u8])> = Vec::new();
    for (r, &w) in comm.inner.world_of.iter().enumerate() {
        if r != me {
            sends.push((w, LOCAL_TAG, mine));
        }
    }
    for &w in remote {
        sends.push((w, CROSS_TAG, mine));
    }
    let mut recvs: Vec<(i32, i32, &mut [u8])> = Vec::new();
    for (r, chunk) in local
        .chunks_mut(n.max(1))
        .enumerate()
        .take(comm.size() as usize)
    {
        if r != me {
            recvs.push((r as i32, LOCAL_TAG, &mut chunk[..n]));
        }
    }
    for (r, chunk) in far.chunks_mut(n.max(1)).enumerate().take(remote.len()) {
        recvs.push((r as i32, CROSS_TAG, &mut chunk[..n]));
    }
    transfer(comm, comm.inner.context + 1, &sends, &mut recvs)?;
    Ok((local, far))
}

/// The union of two groups in the order both compute: the group whose
/// first member has the lower world rank first.
fn union_order(local: &[usize], remote: &[usize]) -> Vec<usize> {
    if local[0] < remote[0] {
        [local, remote].concat()
    } else {
        [remote, local].concat()
    }
}

impl Comm {
    /// Whether this is an intercommunicator (`MPI_Comm_test_inter`).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// assert!(!world.is_inter());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn is_inter(&self) -> bool {
        self.inner.remote.is_some()
    }

    /// Size of the remote group (`MPI_Comm_remote_size`).
    ///
    /// Errors: `MPI_ERR_COMM` on an intracommunicator.
    ///
    /// See the example on [`Comm::intercomm_create`].
    pub fn remote_size(&self) -> Result<i32, Error> {
        Ok(self.remote_list("MPI_Comm_remote_size")?.len() as i32)
    }

    /// The remote group (`MPI_Comm_remote_group`).
    ///
    /// Errors: `MPI_ERR_COMM` on an intracommunicator.
    ///
    /// See the example on [`Comm::intercomm_create`].
    pub fn remote_group(&self) -> Result<Group, Error> {
        let list = self.remote_list("MPI_Comm_remote_group")?.to_vec();
        Ok(Group::from_world(list, Some(self.inner.rt.world_rank)))
    }

    fn remote_list(&self, call: &str) -> Result<&[usize], Error> {
        self.inner.remote.as_deref().ok_or_else(|| {
            Error::InvalidComm(format!(
                "{call} needs an intercommunicator; {} is an intracommunicator",
                self.describe()
            ))
        })
    }

    /// `Err` (`MPI_ERR_COMM`) on an intercommunicator, for calls defined
    /// on intracommunicators only.
    pub(crate) fn check_intra(&self, call: &str) -> Result<(), Error> {
        if self.is_inter() {
            return Err(Error::InvalidComm(format!(
                "{call} needs an intracommunicator; {} is an intercommunicator",
                self.describe()
            )));
        }
        Ok(())
    }

    /// Makes an intercommunicator (`MPI_Intercomm_create`) between this
    /// intracommunicator's group and another, disjoint one: the two
    /// leaders (`local_leader` here, `remote_leader` in `peer`, the bridge
    /// communicator, which matters at the leaders only) exchange their
    /// groups with tag `tag`, and both groups agree on a context id.
    /// Collective over this communicator and the remote one.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let color = world.rank() % 2;
    /// let half = world.split(color, 0)?.unwrap();
    /// // Leaders: rank 0 of each half, world ranks 0 and 1.
    /// let inter = half.intercomm_create(0, Some(&world), 1 - color, 99)?;
    /// assert!(inter.is_inter());
    /// assert_eq!(inter.size() + inter.remote_size()?, world.size());
    /// let all = inter.merge(color == 1)?; // even ranks first
    /// assert_eq!(all.size(), world.size());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn intercomm_create(
        &self,
        local_leader: i32,
        peer: Option<&Comm>,
        remote_leader: i32,
        tag: i32,
    ) -> Result<Comm, Error> {
        self.check_live()?;
        self.check_intra("MPI_Intercomm_create")?;
        Comm::send_tag(tag)?;
        if !(0..self.size()).contains(&local_leader) {
            return Err(Error::InvalidRank {
                arg: "local_leader",
                value: local_leader,
                size: self.size(),
            });
        }
        let me = self.rank() as usize;
        let leader = local_leader as usize;
        // Leader: [bridge context, remote group...]; everyone else gets it
        // (or word FAILED when the leader's exchange failed: nobody waits).
        const FAILED: u64 = u64::MAX;
        let ctx = self.inner.context + 1;
        let info = if me == leader {
            let got = leader_exchange(self, peer, remote_leader, tag);
            let (header, body) = match &got {
                Ok(info) => (info.len() as u64, &info[..]),
                Err(_) => (FAILED, &[][..]),
            };
            let header = header.to_le_bytes();
            for (r, &w) in self.inner.world_of.iter().enumerate() {
                if r != me {
                    let mut sends = vec![(w, LEADER_TAG, &header[..])];
                    if got.is_ok() {
                        sends.push((w, LEADER_TAG, body));
                    }
                    transfer(self, ctx, &sends, &mut [])?;
                }
            }
            got?
        } else {
            let mut header = [0u8; 8];
            transfer(
                self,
                ctx,
                &[],
                &mut [(local_leader, LEADER_TAG, &mut header[..])],
            )?;
            if u64::from_le_bytes(header) == FAILED {
                return Err(Error::InvalidComm(format!(
                    "MPI_Intercomm_create: the local leader (rank {local_leader}) could not \
                     reach the remote leader (its own error says why)"
                )));
            }
            let mut info = vec![0u8; u64::from_le_bytes(header) as usize];
            transfer(
                self,
                ctx,
                &[],
                &mut [(local_leader, LEADER_TAG, &mut info[..])],
            )?;
            info
        };
        let bridge = u64::from_le_bytes(info[..8].try_into().expect("8 bytes")) as u32;
        let remote = unwords(&info[8..]);
        if let Some(w) = remote.iter().find(|w| self.inner.world_of.contains(w)) {
            return Err(Error::InvalidArgument {
                arg: "remote_leader",
                reason: format!("world rank {w} is in both groups: they must be disjoint"),
            });
        }
        let world = union_order(&self.inner.world_of, &remote);
        let me_in = world
            .iter()
            .position(|&w| w == self.inner.rt.world_rank)
            .expect("a member of its own group");
        let plan = Plan {
            context: CREATE_GROUP_BASE + bridge,
            tag: CREATE_TAG_BIT | tag,
            ids: world.iter().map(|&w| w as i32).collect(),
            world,
            me: me_in,
            member: true,
        };
        let context = agreement::run(self, plan)?;
        Ok(self.build_inter(context, self.inner.world_of.clone(), remote))
    }

    /// Makes an intercommunicator from two disjoint groups
    /// (`MPI_Intercomm_create_from_groups`), without a parent: every
    /// member of `local` passes `remote` (the other side passes the
    /// reverse), and both sides the same `tag`, which keeps creations
    /// apart. The leaders do not matter here: every member knows both
    /// groups. `self` is any communicator of this process (its runtime).
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let g = world.group();
    /// let evens = g.range_incl(&[(0, world.size() - 1, 2)])?;
    /// let odds = g.difference(&evens);
    /// let (mine, theirs) = if world.rank() % 2 == 0 { (&evens, &odds) } else { (&odds, &evens) };
    /// let inter = world.intercomm_from_groups(mine, theirs, "halves")?;
    /// assert_eq!(inter.remote_size()?, theirs.size());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn intercomm_from_groups(
        &self,
        local: &Group,
        remote: &Group,
        tag: &str,
    ) -> Result<Comm, Error> {
        let (l, r) = (local.world_ranks().to_vec(), remote.world_ranks().to_vec());
        let me = self.inner.rt.world_rank;
        if !l.contains(&me) {
            return Err(Error::InvalidArgument {
                arg: "local_group",
                reason: format!("world rank {me} (the caller) is not in it"),
            });
        }
        if r.is_empty() || r.iter().any(|w| l.contains(w)) {
            return Err(Error::InvalidArgument {
                arg: "remote_group",
                reason: "it must be non-empty and disjoint from the local group".into(),
            });
        }
        let world = union_order(&l, &r);
        let context = self.agree_on_group(world, tag)?;
        Ok(self.build_inter(context, l, r))
    }

    /// A communicator of the ranks of `group`, in the group's order, made
    /// by its members only and without a parent
    /// (`MPI_Comm_create_from_group`): every member passes the same group
    /// and `tag`, which keeps creations apart. `self` is any communicator
    /// of this process (its runtime). `None` for an empty group.
    ///
    /// Errors: this process is not in `group`.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let all = world.create_from_group(&world.group(), "everyone")?.unwrap();
    /// assert_eq!(all.size(), world.size());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn create_from_group(&self, group: &Group, tag: &str) -> Result<Option<Comm>, Error> {
        let world_of = group.world_ranks().to_vec();
        if world_of.is_empty() {
            return Ok(None);
        }
        let me = self.inner.rt.world_rank;
        if !world_of.contains(&me) {
            return Err(Error::InvalidArgument {
                arg: "group",
                reason: format!("world rank {me} (the caller) is not in it"),
            });
        }
        let context = self.agree_on_group(world_of.clone(), &format!("intra:{tag}"))?;
        Ok(Some(self.build_child(context, world_of, Topology::None)))
    }

    /// Agrees on a context id among the world ranks `world` (this process
    /// among them, every member passing the same list and `tag`), for
    /// communicators made from groups without a parent.
    pub(crate) fn agree_on_group(&self, world: Vec<usize>, tag: &str) -> Result<u32, Error> {
        let me = self.inner.rt.world_rank;
        let me_in = world
            .iter()
            .position(|&w| w == me)
            .expect("checked by the caller");
        // FNV-1a of the tag, in the program's tag range.
        let hash = tag.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let plan = Plan {
            context: CREATE_GROUP_BASE - 2,
            tag: (hash % (crate::status::TAG_UB as u64 + 1)) as i32,
            ids: world.iter().map(|&w| w as i32).collect(),
            world,
            me: me_in,
            member: true,
        };
        agreement::run(self, plan)
    }

    /// Merges both groups into an intracommunicator
    /// (`MPI_Intercomm_merge`): the group passing `high == false` first;
    /// when both pass the same, the group whose rank 0 has the lower world
    /// rank first. Collective over both groups.
    ///
    /// See the example on [`Comm::intercomm_create`].
    pub fn merge(&self, high: bool) -> Result<Comm, Error> {
        self.check_live()?;
        let remote = self.remote_list("MPI_Intercomm_merge")?.to_vec();
        if self.spans_jobs() {
            return self.merge_across_jobs(high, remote);
        }
        let (_, far) = union_allgather(self, &[u8::from(high)])?;
        let local = &self.inner.world_of;
        let local_first = if (far[0] != 0) == high {
            local[0] < remote[0]
        } else {
            !high
        };
        let world = if local_first {
            [&local[..], &remote[..]].concat()
        } else {
            [&remote[..], &local[..]].concat()
        };
        let plan = Plan::over_union(self, union_order(local, &remote), true);
        let context = agreement::run(self, plan)?;
        let me = self.inner.rt.world_rank;
        let rank = world.iter().position(|&w| w == me).expect("a member") as i32;
        Ok(Comm::build(
            self.inner.rt.clone(),
            self.inner.shared.clone(),
            context,
            rank,
            world,
            Kind::User,
            Topology::None,
            "",
        ))
    }

    /// Whether members of this communicator belong to another job (peer
    /// indices past the world: see `transport::bridge`).
    pub(crate) fn spans_jobs(&self) -> bool {
        let world = self.inner.rt.world_size;
        self.inner.world_of.iter().any(|&w| w >= world)
            || self
                .inner
                .remote
                .as_ref()
                .is_some_and(|r| r.iter().any(|&w| w >= world))
    }

    /// `merge` of an intercommunicator between two jobs: world ranks mean
    /// different processes on the two sides, so the order's tie-break is
    /// the two groups' first members' (host, pid), and the context is the
    /// largest bridge counter of both groups (`context::bridge_counter`).
    fn merge_across_jobs(&self, high: bool, remote: Vec<usize>) -> Result<Comm, Error> {
        let mut mine = vec![u8::from(high)];
        mine.extend(u64::from(std::process::id()).to_le_bytes());
        mine.extend(host_hash().to_le_bytes());
        mine.extend(u64::from(super::context::bridge_counter()).to_le_bytes());
        let n = mine.len();
        let (near, far) = union_allgather(self, &mine)?;
        let key = |r: &[u8]| (r[9..17].to_vec(), r[1..9].to_vec());
        let local_first = if (far[0] != 0) == high {
            key(&near[..n]) < key(&far[..n])
        } else {
            !high
        };
        let ctx = near
            .chunks(n)
            .chain(far.chunks(n))
            .map(|r| u64::from_le_bytes(r[17..25].try_into().expect("8 bytes")) as u32)
            .max()
            .unwrap_or(super::context::BRIDGE_CONTEXT_BASE);
        let ctx = (ctx + 1) & !1;
        super::context::take_bridge_context(ctx);
        let local = &self.inner.world_of;
        let world = if local_first {
            [&local[..], &remote[..]].concat()
        } else {
            [&remote[..], &local[..]].concat()
        };
        let rank = self.rank() as usize + if local_first { 0 } else { remote.len() };
        Ok(Comm::build(
            self.inner.rt.clone(),
            self.inner.shared.clone(),
            ctx,
            rank as i32,
            world,
            Kind::User,
            Topology::None,
            "",
        ))
    }

    /// The agreement plan of a constructor over every rank of this
    /// communicator (both groups of an intercommunicator).
    pub(crate) fn agreement_plan(&self, member: bool) -> Plan {
        match &self.inner.remote {
            Some(remote) => {
                Plan::over_union(self, union_order(&self.inner.world_of, remote), member)
            }
            None => Plan::over(self, member),
        }
    }

    /// An intercommunicator with p2p context `context`, local group
    /// `local` (world ranks, this process among them) and remote group
    /// `remote`.
    pub(crate) fn build_inter(&self, context: u32, local: Vec<usize>, remote: Vec<usize>) -> Comm {
        let me = self.inner.rt.world_rank;
        let rank = local.iter().position(|&w| w == me).expect("a member") as i32;
        Comm::build_with_remote(
            self.inner.rt.clone(),
            self.inner.shared.clone(),
            context,
            rank,
            local,
            Some(remote),
            Kind::User,
            Topology::None,
            "",
        )
    }

    /// A communicator over the same groups as this one with p2p context
    /// `context` (dup and idup).
    pub(crate) fn same_groups(&self, context: u32, topology: Topology) -> Comm {
        match &self.inner.remote {
            Some(remote) => self.build_inter(context, self.inner.world_of.clone(), remote.clone()),
            None => self.build_child(context, self.inner.world_of.clone(), topology),
        }
    }

    /// `MPI_Comm_split` of an intercommunicator: the local ranks of this
    /// rank's color (by key, then rank) facing the remote ranks of the
    /// same color; `None` for `UNDEFINED` or a color the remote group lacks.
    pub(crate) fn inter_split(&self, color: i32, key: i32) -> Result<Option<Comm>, Error> {
        let mine: Vec<u8> = [color.to_le_bytes(), key.to_le_bytes()].concat();
        let (local, far) = union_allgather(self, &mine)?;
        let pick = |recs: &[u8], peers: &[usize]| -> Vec<usize> {
            let mut same: Vec<usize> = (0..peers.len())
                .filter(|&r| int_at(recs, 2 * r) == color)
                .collect();
            same.sort_by_key(|&r| (int_at(recs, 2 * r + 1), r));
            same.iter().map(|&r| peers[r]).collect()
        };
        let remote = self.inner.remote.clone().expect("an intercommunicator");
        let (l, r) = (pick(&local, &self.inner.world_of), pick(&far, &remote));
        let member = color != UNDEFINED && !r.is_empty();
        let context = agreement::run(self, self.agreement_plan(member))?;
        Ok(member.then(|| self.build_inter(context, l, r)))
    }

    /// `MPI_Comm_create` of an intercommunicator: `group` (of the local
    /// group) facing the group the remote ranks pass; `None` outside
    /// `group` or when either group is empty.
    pub(crate) fn inter_create(&self, group: &Group) -> Result<Option<Comm>, Error> {
        let me = self.inner.rt.world_rank;
        let pos = group
            .world_ranks()
            .iter()
            .position(|&w| w == me)
            .map_or(-1, |p| p as i32);
        let (_, far) = union_allgather(self, &pos.to_le_bytes())?;
        let remote = self.inner.remote.clone().expect("an intercommunicator");
        let mut r: Vec<(i32, usize)> = (0..remote.len())
            .map(|i| (int_at(&far, i), remote[i]))
            .filter(|&(p, _)| p >= 0)
            .collect();
        r.sort_unstable();
        let r: Vec<usize> = r.into_iter().map(|(_, w)| w).collect();
        let member = pos >= 0 && !r.is_empty();
        let context = agreement::run(self, self.agreement_plan(member))?;
        Ok(member.then(|| self.build_inter(context, group.world_ranks().to_vec(), r)))
    }
}

/// The local leader's side of `intercomm_create`: exchanges the groups with
/// the remote leader over `peer` (the program's tag, on the bridge's
/// collective context) and returns [bridge context, remote group...].
fn leader_exchange(
    local: &Comm,
    peer: Option<&Comm>,
    remote_leader: i32,
    tag: i32,
) -> Result<Vec<u8>, Error> {
    let peer = peer.ok_or_else(|| {
        Error::InvalidComm(
            "MPI_Intercomm_create: the local leader needs a peer (bridge) communicator".into(),
        )
    })?;
    peer.check_live()?;
    peer.check_intra("MPI_Intercomm_create's peer communicator")?;
    let Some(far_leader) = peer.dest("remote_leader", remote_leader)? else {
        return Err(Error::InvalidRank {
            arg: "remote_leader",
            value: remote_leader,
            size: peer.size(),
        });
    };
    let ctx = peer.inner.context + 1;
    let mine = words(&local.inner.world_of);
    let mut count = [0u8; 8];
    let sends = [(far_leader, tag, &(mine.len() as u64).to_le_bytes()[..])];
    transfer(
        peer,
        ctx,
        &sends,
        &mut [(remote_leader, tag, &mut count[..])],
    )?;
    let mut theirs = vec![0u8; u64::from_le_bytes(count) as usize];
    transfer(
        peer,
        ctx,
        &[(far_leader, tag, &mine[..])],
        &mut [(remote_leader, tag, &mut theirs[..])],
    )?;
    let mut info = u64::from(peer.inner.context).to_le_bytes().to_vec();
    info.extend(theirs);
    Ok(info)
}

/// FNV-1a of this host's name (the tie-break of `merge_across_jobs`).
fn host_hash() -> u64 {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}
