//! Spawning (MPI 4.0 section 11.8.2): [`spawn`] on the parents,
//! [`parent`] on the children; the result is an intercommunicator whose
//! remote group lives in the other job, reached through a bridge
//! (`transport::bridge`): one fabric link per process for this
//! connection, its members numbered parents first (`0..P`, by rank in the
//! parents' communicator), then the children (`P..P+C`, by world rank).
//!
//! 1. The parents' root learns the child count; every parent opens its
//!    bridge link and sends the root its address and its next bridge
//!    context (a process-wide counter above every pool id).
//! 2. The root asks the launcher for the new job, passing the parents'
//!    addresses, the root's position and a tag in the children's
//!    environment (`OXMPI_PARENT`: `job|P|C|root|tag|hex,hex,...`).
//! 3. Each child opens its link knowing every parent; the children's root
//!    gathers the children's addresses and counters, introduces itself to
//!    the parents' root (a HELLO packet: the root did not know its
//!    address) and sends the list, tagged `tag`, on the port context.
//! 4. The parents' root hands the list to the parents, which add the
//!    children and answer; then it picks the context (the largest counter
//!    of both groups), sends it to the children's root (tag `tag + 1`)
//!    and to the parents; everyone builds the intercommunicator.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{exchange, handoff, PORT_CONTEXT};
use crate::bootstrap::spawn_wire::SpawnRequest;
use crate::comm::Comm;
use crate::config::Config;
use crate::error::Error;
use crate::p2p::matching::SourceSel;
use crate::transport::bridge::Bridged;
use crate::transport::ofi::link::FabricLink;
use crate::universe::{Launcher, Universe};

/// The children's environment variable with what they need of the parents.
pub const PARENT_ENV: &str = "OXMPI_PARENT";
/// Bytes of one member's record: address length, counter, address.
pub(super) const RECORD: usize = 256;
static NEXT_TAG: AtomicU32 = AtomicU32::new(1);

pub(super) fn record(address: &[u8], counter: u32) -> Result<Vec<u8>, Error> {
    if address.len() > RECORD - 16 {
        return Err(Error::Unsupported(format!(
            "fabric addresses of {} bytes do not fit a spawn record",
            address.len()
        )));
    }
    let mut r = vec![0u8; RECORD];
    r[..8].copy_from_slice(&(address.len() as u64).to_le_bytes());
    r[8..16].copy_from_slice(&u64::from(counter).to_le_bytes());
    r[16..16 + address.len()].copy_from_slice(address);
    Ok(r)
}

pub(super) fn unrecord(r: &[u8]) -> (Vec<u8>, u32) {
    let len = (u64::from_le_bytes(r[..8].try_into().expect("8 bytes")) as usize).min(RECORD - 16);
    let counter = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes")) as u32;
    (r[16..16 + len].to_vec(), counter)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What the children learn of their parents.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ParentInfo {
    parents: usize,
    children: usize,
    root: usize,
    tag: u32,
    addresses: Vec<Vec<u8>>,
}

impl ParentInfo {
    fn encode(&self) -> String {
        let addrs: Vec<String> = self.addresses.iter().map(|a| hex(a)).collect();
        format!(
            "{}|{}|{}|{}|{}",
            self.parents,
            self.children,
            self.root,
            self.tag,
            addrs.join(",")
        )
    }

    fn decode(text: &str) -> Result<ParentInfo, Error> {
        let bad = || Error::Bootstrap(format!("{PARENT_ENV}={text:?} is malformed"));
        let f: Vec<&str> = text.split('|').collect();
        if f.len() != 5 {
            return Err(bad());
        }
        let num = |s: &str| s.parse::<usize>().map_err(|_| bad());
        let addresses = f[4]
            .split(',')
            .map(|a| unhex(a).ok_or_else(bad))
            .collect::<Result<Vec<_>, _>>()?;
        let info = ParentInfo {
            parents: num(f[0])?,
            children: num(f[1])?,
            root: num(f[2])?,
            tag: num(f[3])? as u32,
            addresses,
        };
        if info.addresses.len() != info.parents || info.root >= info.parents {
            return Err(bad());
        }
        Ok(info)
    }
}

fn failed() -> Error {
    Error::Spawn("the root could not spawn the processes (its own error says why)".into())
}

pub(super) use crate::comm::context::{
    bridge_counter as next_counter, take_bridge_context as take_context,
};

fn bridged(comm: &Comm) -> Result<Arc<Bridged>, Error> {
    comm.rt()
        .bridged
        .get()
        .cloned()
        .ok_or_else(|| Error::State("this runtime has no bridges to other jobs".into()))
}

pub(super) fn open_link(me: usize, size: usize, remote: &[usize]) -> Result<FabricLink, Error> {
    let config = Config::from_env()?;
    let link = FabricLink::open(&crate::transport::fabric_config(&config), me, size, remote)
        .map_err(|e| {
            Error::Unsupported(format!(
                "a link to another job needs a fabric endpoint (libfabric), and none opened: {e}"
            ))
        })?;
    if config.debug_enabled("transport") {
        eprintln!(
            "oxmpi[transport]: bridge position {me} of {size}: fabric endpoint {}",
            link.description()
        );
    }
    Ok(link)
}

/// Registers `link` (members at `positions` are the other job's) and
/// grows the engine; the peer index of each position.
pub(super) fn register(
    comm: &Comm,
    link: FabricLink,
    size: usize,
    positions: &[usize],
) -> Result<Vec<usize>, Error> {
    let b = bridged(comm)?;
    let mut e = comm.rt().engine();
    let peers = b.add_bridge(link, size, positions);
    e.add_peers(b.peer_count());
    Ok(peers)
}

/// Spawns the processes of `req` (significant at `root` only) as a new
/// job (`MPI_Comm_spawn` / `MPI_Comm_spawn_multiple`); the
/// intercommunicator with the children. Collective over `comm`.
///
/// Errors: `MPI_ERR_SPAWN` naming why the launcher could not start them;
/// `MPI_ERR_UNSUPPORTED_OPERATION` without a launcher that spawns or
/// without a fabric endpoint.
pub fn spawn(
    launcher: &Launcher,
    comm: &Comm,
    root: i32,
    req: Option<SpawnRequest>,
) -> Result<Comm, Error> {
    let root = super::check_root(comm, root)?;
    let at_root = comm.rank() as usize == root;
    let parents = comm.size() as usize;
    // 1. The child count, then every parent's address and counter.
    let count = if at_root {
        let req = req.as_ref().ok_or_else(|| Error::InvalidArgument {
            arg: "command",
            reason: "the root has nothing to spawn".into(),
        });
        Some(req.map(|r| {
            let n: u32 = r.cmds.iter().map(|c| c.maxprocs).sum();
            (n as u64).to_le_bytes().to_vec()
        }))
    } else {
        None
    };
    let count = handoff(comm, root, count, failed)?;
    let children = u64::from_le_bytes(count[..8].try_into().expect("8 bytes")) as usize;
    let size = parents + children;
    let me = comm.rank() as usize;
    let link = open_link(me, size, &(parents..size).collect::<Vec<_>>())?;
    let mine = record(&link.address()?, next_counter())?;
    let records = gather(comm, root, &mine)?;
    // 2. The launcher starts the children.
    let tag = NEXT_TAG.fetch_add(2, Ordering::Relaxed) & 0x0fff_fffe;
    let started = if at_root {
        let mut req = req.expect("checked above");
        let info = ParentInfo {
            parents,
            children,
            root,
            tag,
            addresses: records.chunks(RECORD).map(|r| unrecord(r).0).collect(),
        };
        req.preput.push((PARENT_ENV.to_string(), info.encode()));
        Some(launcher.spawn(&req).map(|()| Vec::new()))
    } else {
        None
    };
    handoff(comm, root, started, failed)?;
    // 3. The children's root reports (its HELLO first: see the module doc).
    let child_positions: Vec<usize> = (parents..size).collect();
    let peers = register(comm, link, size, &child_positions)?;
    let report = if at_root {
        let mut got = vec![0u8; RECORD * children];
        exchange(
            comm,
            PORT_CONTEXT,
            root as i32,
            tag as i32,
            &[],
            &mut [(SourceSel::Rank(parents as i32), &mut got[..])],
        )?;
        Some(Ok(got))
    } else {
        None
    };
    let report = handoff(comm, root, report, failed)?;
    let b = bridged(comm)?;
    let mut counter = next_counter();
    for (k, r) in report.chunks(RECORD).enumerate() {
        let (address, theirs) = unrecord(r);
        counter = counter.max(theirs);
        let _e = comm.rt().engine();
        b.with_link(peers[k], |l, pos| l.add_peer_if_absent(pos, &address))
            .transpose()?;
    }
    // 4. Everyone added the children: the root picks the context.
    let acks = gather(comm, root, &u64::from(counter).to_le_bytes())?;
    let ctx = if at_root {
        let ctx = acks
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as u32)
            .max()
            .unwrap_or(counter);
        let ctx = (ctx + 1) & !1;
        let bytes = u64::from(ctx).to_le_bytes();
        exchange(
            comm,
            PORT_CONTEXT,
            root as i32,
            tag as i32 + 1,
            &[(peers[0], &bytes[..])],
            &mut [],
        )?;
        Some(Ok(bytes.to_vec()))
    } else {
        None
    };
    let ctx = handoff(comm, root, ctx, failed)?;
    let ctx = u64::from_le_bytes(ctx[..8].try_into().expect("8 bytes")) as u32;
    take_context(ctx);
    Ok(comm.build_inter(ctx, comm.world_ranks().to_vec(), peers))
}

/// Every member's fixed-size `mine`, in rank order, at `root` (empty
/// elsewhere).
pub(super) fn gather(comm: &Comm, root: usize, mine: &[u8]) -> Result<Vec<u8>, Error> {
    const GATHER_TAG: i32 = 0x4000_0007;
    let ctx = comm.collective_context();
    let me = comm.rank() as usize;
    if me != root {
        let to = comm.world_ranks()[root];
        exchange(comm, ctx, me as i32, GATHER_TAG, &[(to, mine)], &mut [])?;
        return Ok(Vec::new());
    }
    let n = mine.len();
    let mut all = vec![0u8; n * comm.size() as usize];
    all[me * n..(me + 1) * n].copy_from_slice(mine);
    for (r, chunk) in all.chunks_mut(n.max(1)).enumerate() {
        if r != me {
            exchange(
                comm,
                ctx,
                me as i32,
                GATHER_TAG,
                &[],
                &mut [(SourceSel::Rank(r as i32), chunk)],
            )?;
        }
    }
    Ok(all)
}

/// This process's parents (`MPI_Comm_get_parent`): on a spawned job's
/// processes, the intercommunicator with the job that spawned it; `None`
/// elsewhere. Collective over the world, and to be called once, right
/// after init: the parents wait in [`spawn`] until the children connect
/// (the C front end calls it in `MPI_Init` and keeps the handle).
pub fn parent(universe: &Universe) -> Result<Option<Comm>, Error> {
    let Ok(text) = std::env::var(PARENT_ENV) else {
        return Ok(None);
    };
    let info = ParentInfo::decode(&text)?;
    let world = universe.world();
    let (me, children) = (world.rank() as usize, world.size() as usize);
    if children != info.children {
        return Err(Error::Bootstrap(format!(
            "the parents spawned {} processes and this job has {children}",
            info.children
        )));
    }
    let p = info.parents;
    let size = p + children;
    let link = open_link(p + me, size, &(0..p).collect::<Vec<_>>())?;
    for (pos, address) in info.addresses.iter().enumerate() {
        link.add_peer(pos, address)?;
    }
    let mine = record(&link.address()?, next_counter())?;
    let parents = register(&world, link, size, &(0..p).collect::<Vec<_>>())?;
    let records = gather(&world, 0, &mine)?;
    // The root's failure (the parents unreachable) reaches the other
    // children through the handoff, so that none waits for it.
    let ctx = (me == 0).then(|| report_to_parents(&world, &info, parents[info.root], &records));
    let ctx = handoff(&world, 0, ctx, || {
        Error::Spawn("the children's root could not reach the parents (its error says why)".into())
    })?;
    let ctx = u64::from_le_bytes(ctx[..8].try_into().expect("8 bytes")) as u32;
    take_context(ctx);
    Ok(Some(world.build_inter(
        ctx,
        world.world_ranks().to_vec(),
        parents,
    )))
}

/// The children's root: introduces itself to the parents' root (bridge
/// peer `to`), sends it the children's `records` and returns the context
/// it answers with.
fn report_to_parents(
    world: &Comm,
    info: &ParentInfo,
    to: usize,
    records: &[u8],
) -> Result<Vec<u8>, Error> {
    let p = info.parents as i32;
    hello(world, &*bridged(world)?, to, info.root)?;
    let mut ctx = [0u8; 8];
    exchange(
        world,
        PORT_CONTEXT,
        p,
        info.tag as i32,
        &[(to, records)],
        &mut [],
    )?;
    exchange(
        world,
        PORT_CONTEXT,
        p,
        info.tag as i32 + 1,
        &[],
        &mut [(SourceSel::Rank(info.root as i32), &mut ctx[..])],
    )?;
    Ok(ctx.to_vec())
}

/// How long the children's root keeps offering its HELLO to the parents'
/// root while the provider refuses it (no room, or a connection still
/// being made): the parents wait in [`spawn`], so a refusal this long
/// means they cannot be reached.
const HELLO_PATIENCE: Duration = Duration::from_secs(30);

/// Introduces the children's root to the parents' root (bridge peer
/// `to`, the parents' rank `root`). A provider may refuse the inject until
/// its connection is made, which only its progress does: every refusal
/// polls the transport before the next try, and after [`HELLO_PATIENCE`]
/// the children give up with an error naming the parent.
fn hello(world: &Comm, b: &Bridged, to: usize, root: usize) -> Result<(), Error> {
    let start = Instant::now();
    loop {
        let sent = {
            let mut e = world.rt().engine();
            let sent = b.with_link(to, |l, pos| l.send_hello(pos)).transpose()?;
            if sent != Some(true) {
                e.progress();
            }
            sent
        };
        match sent {
            Some(true) => return Ok(()),
            None => {
                return Err(Error::State(format!(
                    "the parents' root (rank {root}) has no bridge link"
                )))
            }
            Some(false) if start.elapsed() > HELLO_PATIENCE => {
                return Err(Error::Spawn(format!(
                    "the parents' root (rank {root} of the parent job) refused this job's \
                     introduction for {HELLO_PATIENCE:?}: its fabric address cannot be reached \
                     from this host"
                )))
            }
            Some(false) => std::thread::yield_now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_info_round_trips_and_bad_text_is_refused() {
        let info = ParentInfo {
            parents: 2,
            children: 3,
            root: 1,
            tag: 8,
            addresses: vec![vec![1, 2, 0xff], vec![0, 7]],
        };
        assert_eq!(ParentInfo::decode(&info.encode()).unwrap(), info);
        for bad in ["", "1|1|0|2", "1|1|0|2|zz", "2|1|0|2|00", "1|1|1|2|00"] {
            assert!(ParentInfo::decode(bad).is_err(), "{bad}");
        }
        let r = record(&[9, 8, 7], 0x2000_0004).unwrap();
        assert_eq!(unrecord(&r), (vec![9, 8, 7], 0x2000_0004));
    }
}
