//! The steps of [`ShmNode::establish`](super::ShmNode::establish): the
//! leader creates and initialises the segment, every rank probes CMA on its
//! neighbour, maps the segment, checks its header and records itself.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Arc;

use super::layout::{Header, Layout, Slot, MAGIC, VERSION};
use super::map::Mapping;
use super::segment::{self, Backing};
use super::{cma, CmaStatus, ShmConfig};
use crate::bootstrap::Bootstrap;
use crate::Error;

/// The leader's segment-address key for `node` in the PMI KV space.
pub(super) fn segment_key(node: usize) -> String {
    format!("oxmpi-shm-seg-{node}")
}

/// A rank's `pid:probe address` key.
pub(super) fn probe_key(rank: usize) -> String {
    format!("oxmpi-shm-probe-{rank}")
}

pub(super) fn slot_offset(layout: &Layout, i: usize) -> usize {
    layout.slots_offset() + i * std::mem::size_of::<Slot>()
}

pub(super) fn probe_pattern(pid: u32) -> [u8; 16] {
    let mut w = *b"oxmpi-cma-probe!";
    w[..4].copy_from_slice(&pid.to_le_bytes());
    w
}

pub(super) fn probe_neighbour(
    boot: &mut dyn Bootstrap,
    cfg: &ShmConfig,
    ranks: &[usize],
    me: usize,
) -> CmaStatus {
    if !cfg.cma || ranks.len() < 2 {
        return CmaStatus::Disabled("not needed".into());
    }
    let peer = ranks[(me + 1) % ranks.len()];
    let value = boot
        .get(&probe_key(peer))
        .ok()
        .flatten()
        .unwrap_or_default();
    let parsed = value
        .split_once(':')
        .and_then(|(p, a)| Some((p.parse::<u32>().ok()?, a.parse::<usize>().ok()?)));
    match parsed {
        Some((pid, addr)) => cma::probe(pid as i32, addr, &probe_pattern(pid)),
        None => CmaStatus::Disabled(format!("rank {peer} published no probe ({value:?})")),
    }
}

pub(super) type Created = Result<(segment::Created, Arc<Mapping>), Error>;

/// Leader: creates, sizes, maps and initialises the segment.
pub(super) fn create(cfg: &ShmConfig, jobid: &str, node: usize, layout: &Layout) -> Created {
    let len = layout.segment_len();
    let seg = segment::create(cfg.memfd, jobid, node, len)?;
    let map = match Mapping::of_file(&seg.file, len) {
        Ok(map) => Arc::new(map),
        Err(e) => {
            if let Backing::File(name) = &seg.backing {
                let _ = std::fs::remove_file(std::path::Path::new(segment::SHM_DIR).join(name));
            }
            return Err(e);
        }
    };
    let h = map.at::<Header>(0);
    h.version.store(VERSION, Relaxed);
    h.local_size.store(layout.local_size() as u32, Relaxed);
    h.cell_size.store(layout.cell_size() as u32, Relaxed);
    h.cells.store(layout.cells() as u32, Relaxed);
    h.total_len.store(len as u64, Relaxed);
    h.creator_pid.store(std::process::id(), Relaxed);
    h.magic.store(MAGIC, Release);
    Ok((seg, map))
}

/// The mapping, layout and backing; and the leader's file, which must stay
/// open until every peer has opened it (the second fence).
pub(super) type Attached = Result<((Arc<Mapping>, Layout, Backing), Option<std::fs::File>), Error>;

/// Everyone: maps the segment (leader: already mapped), checks its header
/// and records this rank in it.
pub(super) fn attach(
    boot: &mut dyn Bootstrap,
    layout: Result<Layout, Error>,
    created: Option<Created>,
    node: usize,
    ranks: &[usize],
    me: usize,
    cma: &CmaStatus,
) -> Attached {
    let layout = layout?;
    let (map, backing, keep) = match created {
        Some(c) => {
            let (seg, map) = c?;
            (map, seg.backing, Some(seg.file))
        }
        None => {
            let address = boot.get(&segment_key(node))?.unwrap_or_default();
            if let Some(why) = address.strip_prefix("error:") {
                return Err(Error::Bootstrap(format!(
                    "rank {} (node leader) could not create the node segment: {why}",
                    ranks[0]
                )));
            }
            let file = segment::open(&address)?;
            let len = file.metadata().map_or(0, |m| m.len()) as usize;
            check_len(len, &layout)?;
            let map = Arc::new(Mapping::of_file(&file, len)?);
            check_header(map.at::<Header>(0), &layout)?;
            let backing = match address.strip_prefix("file:") {
                Some(name) => Backing::File(name.to_string()),
                None => Backing::Memfd,
            };
            (map, backing, None)
        }
    };
    let slot = map.at::<Slot>(slot_offset(&layout, me));
    slot.pid.store(std::process::id(), Relaxed);
    let ok = if *cma == CmaStatus::Enabled { 1 } else { 2 };
    slot.cma_ok.store(ok, Relaxed);
    map.at::<Header>(0).attached.fetch_add(1, Release);
    Ok(((map, layout, backing), keep))
}

pub(super) fn check_len(len: usize, layout: &Layout) -> Result<(), Error> {
    if len != layout.segment_len() {
        return Err(mismatch(format!(
            "is {len} bytes, this rank expects {} (same OXMPI_SHM_* settings on every rank?)",
            layout.segment_len()
        )));
    }
    Ok(())
}

pub(super) fn check_header(h: &Header, layout: &Layout) -> Result<(), Error> {
    let magic = h.magic.load(Acquire);
    if magic != MAGIC {
        return Err(mismatch(format!(
            "has magic {magic:#018x}, not an OxMPI segment"
        )));
    }
    let got = (
        h.version.load(Relaxed),
        h.local_size.load(Relaxed) as usize,
        h.cell_size.load(Relaxed) as usize,
        h.cells.load(Relaxed) as usize,
    );
    let want = (
        VERSION,
        layout.local_size(),
        layout.cell_size(),
        layout.cells(),
    );
    if got != want {
        return Err(mismatch(format!(
            "has (version, local ranks, cell size, cells) = {got:?}, this rank expects {want:?}"
        )));
    }
    Ok(())
}

pub(super) fn mismatch(what: String) -> Error {
    Error::Bootstrap(format!("node segment {what}"))
}
