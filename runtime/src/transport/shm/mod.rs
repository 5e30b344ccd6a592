//! Shared memory between the ranks of one node: one segment per node and
//! job (`segment.rs`, [`Backing`]), SPSC rings of fixed-size cells between
//! every ordered pair of local ranks (`ring.rs`, [`Sender`] and
//! [`Receiver`]), a futex doorbell per rank ([`Doorbell`]),
//! and single-copy reads of a peer's memory ([`cma`]).
//!
//! [`ShmNode::establish`] is collective over the whole job (it calls
//! [`Bootstrap::fence`] exactly twice on every rank, also on ranks that fail),
//! so every rank calls it, even one alone on its node. The engine then uses:
//!
//! ```text
//! node.sender(peer).try_push(flags, &[header, payload])  then  node.doorbell(peer).ring()
//! node.receiver(peer).try_pop(|flags, bytes| ...)        or sleep on node.doorbell(me)
//! cma::read_from(node.peer_pid(peer), &[(addr, len)], buf) when node.cma_enabled()
//! ```
//!
//! The segment layout and the sizing rule are in [`Layout`] (`layout.rs`).
//! `transport.rs` (`ShmTransport`) is the engine's `Transport` over all this.

pub mod cma;
pub(crate) mod doorbell;
pub(crate) mod layout;
mod map;
pub(crate) mod ring;
pub(crate) mod segment;
mod setup;
mod transport;

use std::sync::atomic::Ordering::Acquire;
use std::sync::Arc;

pub use cma::CmaStatus;
pub use doorbell::{Doorbell, Wake};
pub use layout::Layout;
pub use ring::{Geometry, Receiver, Reservation, Sender};
pub use segment::{job_file_prefix, remove_job_files, Backing};
pub(crate) use transport::ShmTransport;

use crate::bootstrap::Bootstrap;
use crate::config::Config;
use crate::Error;
use layout::{Header, Slot};
use map::Mapping;
use setup::{attach, create, probe_key, probe_neighbour, probe_pattern, segment_key, slot_offset};

/// What [`ShmNode::establish`] needs from the configuration.
///
/// ```
/// use oxmpi::config::Config;
/// use oxmpi::transport::shm::ShmConfig;
/// let cfg = Config::from_lookup(|name: &str| {
///     Ok((name == "OXMPI_SHM_RING_CELLS").then(|| "16".to_string()))
/// })?;
/// let shm = ShmConfig::from_config(&cfg);
/// assert_eq!((shm.ring_cells, shm.cell_size, shm.memfd, shm.cma), (16, 8192, true, true));
/// assert!(!shm.ptracer_any); // OXMPI_CMA_PTRACER=parent by default
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShmConfig {
    /// Payload bytes per cell (`OXMPI_SHM_CELL_SIZE`).
    pub cell_size: usize,
    /// Cells per ring before scaling (`OXMPI_SHM_RING_CELLS`).
    pub ring_cells: usize,
    /// memfd (true) or `/dev/shm` file (`OXMPI_SHM_MEMFD`).
    pub memfd: bool,
    /// Whether to try CMA at all (`OXMPI_CMA`).
    pub cma: bool,
    /// Whether every process, not only the launcher agent's descendants,
    /// may read this rank under Yama scope 1 (`OXMPI_CMA_PTRACER=any`).
    pub ptracer_any: bool,
}

impl ShmConfig {
    /// The shared-memory part of `cfg`.
    ///
    /// See the example on [`ShmConfig`].
    pub fn from_config(cfg: &Config) -> ShmConfig {
        ShmConfig {
            cell_size: cfg.shm_cell_size,
            ring_cells: cfg.shm_ring_cells,
            memfd: cfg.shm_memfd,
            cma: cfg.cma,
            ptracer_any: cfg.cma_ptracer == "any",
        }
    }
}

/// This rank's attachment to its node's segment.
///
/// ```no_run
/// use oxmpi::bootstrap::{connect, Bootstrap};
/// use oxmpi::config::Config;
/// use oxmpi::transport::shm::{ShmConfig, ShmNode};
/// let mut boot = connect()?; // run under oxrun: every rank calls establish
/// let node = ShmNode::establish(&mut *boot, &ShmConfig::from_config(&Config::from_env()?))?;
/// let (me, n) = (node.local_rank(), node.local_size());
/// assert_eq!(node.ranks()[me], boot.rank());
/// println!("local rank {me} of {n}, segment {:?}, {} cells of {} bytes per ring",
///     node.backing(), node.layout().cells(), node.layout().cell_size());
/// boot.finalize()?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug)]
pub struct ShmNode {
    layout: Layout,
    local_rank: usize,
    ranks: Vec<usize>,
    pids: Vec<i32>,
    senders: Vec<Option<Sender>>,
    receivers: Vec<Option<Receiver>>,
    bells: Vec<Doorbell>,
    cma: CmaStatus,
    backing: Backing,
}

impl ShmNode {
    /// Creates (on the node's lowest rank) or attaches to this node's
    /// segment. Collective over the job: see the module docs.
    ///
    /// See the example on [`ShmNode`].
    pub fn establish(boot: &mut dyn Bootstrap, cfg: &ShmConfig) -> Result<ShmNode, Error> {
        let rank = boot.rank();
        let node = boot.node_of_rank()[rank];
        let ranks = boot.local_ranks();
        let local_rank = ranks.iter().position(|&r| r == rank).unwrap_or(0);
        let leader = local_rank == 0;
        let layout = Layout::new(ranks.len(), cfg.cell_size, cfg.ring_cells);
        // A word peers read to check CMA; alive until the second fence.
        let probe_word: Box<[u8; 16]> = Box::new(probe_pattern(std::process::id()));
        if cfg.cma {
            cma::allow_peers(cfg.ptracer_any);
        }
        boot.put(
            &probe_key(rank),
            &format!("{}:{}", std::process::id(), probe_word.as_ptr() as usize),
        )?;
        let created = match (&layout, leader) {
            (Ok(layout), true) => {
                segment::remove_stale(std::path::Path::new(segment::SHM_DIR));
                let c = create(cfg, boot.jobid(), node, layout);
                let address = match &c {
                    Ok((seg, _)) => seg.address.clone(),
                    Err(e) => format!("error:{e}"),
                };
                boot.put(&segment_key(node), &address)?;
                Some(c)
            }
            _ => None,
        };
        boot.fence()?;
        let cma = probe_neighbour(boot, cfg, &ranks, local_rank);
        let attached = attach(boot, layout, created, node, &ranks, local_rank, &cma);
        boot.fence()?;
        let ((map, layout, backing), leader_file) = attached?;
        drop(leader_file);
        if let Backing::File(name) = &backing {
            if leader {
                let path = std::path::Path::new(segment::SHM_DIR).join(name);
                std::fs::remove_file(&path)
                    .map_err(|e| segment::io("unlink", path.display().to_string(), e))?;
            }
        }
        drop(probe_word);
        Self::finish(map, layout, backing, ranks, local_rank, cfg.cma)
    }

    fn finish(
        map: Arc<Mapping>,
        layout: Layout,
        backing: Backing,
        ranks: Vec<usize>,
        me: usize,
        want_cma: bool,
    ) -> Result<ShmNode, Error> {
        let n = ranks.len();
        let header = map.at::<Header>(0);
        if header.attached.load(Acquire) as usize != n {
            return Err(Error::Bootstrap(format!(
                "node segment: {} of {n} local ranks attached",
                header.attached.load(Acquire)
            )));
        }
        let slots: Vec<&Slot> = (0..n).map(|i| map.at(slot_offset(&layout, i))).collect();
        let pids = slots.iter().map(|s| s.pid.load(Acquire) as i32).collect();
        let cma = match slots.iter().position(|s| s.cma_ok.load(Acquire) != 1) {
            _ if !want_cma => CmaStatus::Disabled("OXMPI_CMA=off".into()),
            None => CmaStatus::Enabled,
            Some(i) => CmaStatus::Disabled(format!("local rank {i} could not read its neighbour")),
        };
        let bell_size = std::mem::size_of::<layout::Padded<layout::Bell>>();
        Ok(ShmNode {
            senders: (0..n)
                .map(|to| {
                    (to != me).then(|| {
                        Sender::new(Geometry::new(&map, layout.ring_offset(me, to), &layout))
                    })
                })
                .collect(),
            receivers: (0..n)
                .map(|from| {
                    (from != me).then(|| {
                        Receiver::new(Geometry::new(&map, layout.ring_offset(from, me), &layout))
                    })
                })
                .collect(),
            bells: (0..n)
                .map(|i| Doorbell::new(&map, layout.bells_offset() + i * bell_size))
                .collect(),
            layout,
            local_rank: me,
            ranks,
            pids,
            cma,
            backing,
        })
    }

    /// This rank's index among the node's ranks.
    ///
    /// See the example on [`ShmNode`].
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// How many ranks share the node.
    ///
    /// See the example on [`ShmNode`].
    pub fn local_size(&self) -> usize {
        self.ranks.len()
    }

    /// Global rank of every local rank (index = local rank), ascending.
    ///
    /// See the example on [`ShmNode`].
    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }

    /// The segment's layout (cell size, cells per ring after scaling).
    ///
    /// See the examples on [`ShmNode`] and [`Layout`].
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// What backs the segment.
    ///
    /// See the examples on [`ShmNode`] and [`Backing`].
    pub fn backing(&self) -> &Backing {
        &self.backing
    }

    /// The ring this rank sends to local rank `to` on.
    ///
    /// # Panics
    ///
    /// If `to` is this rank or not below [`local_size`](ShmNode::local_size).
    ///
    /// ```no_run
    /// # use oxmpi::bootstrap::{connect, Bootstrap};
    /// # use oxmpi::config::Config;
    /// # use oxmpi::transport::shm::{ShmConfig, ShmNode};
    /// # let mut boot = connect()?;
    /// # let node = ShmNode::establish(&mut *boot, &ShmConfig::from_config(&Config::from_env()?))?;
    /// let (me, n) = (node.local_rank(), node.local_size());
    /// # if n < 2 { return Ok(()); }
    /// let next = (me + 1) % n;
    /// let tx = node.sender(next);
    /// // Copy a header and a payload into the next cell; false while the ring is full.
    /// while !tx.try_push(7, &[b"hdr:", b"hello"]) {
    ///     std::hint::spin_loop();
    /// }
    /// // Or fill a cell in place.
    /// let mut cell = loop {
    ///     if let Some(c) = tx.try_reserve() {
    ///         break c;
    ///     }
    /// };
    /// let len = tx.max_payload().min(cell.payload().len());
    /// cell.payload()[..len].fill(0xab);
    /// cell.commit(len, 8);
    /// node.doorbell(next).ring(); // tell `next` to look
    /// # boot.fence()?; // keep the segment mapped until every rank is done
    /// # boot.finalize()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn sender(&self, to: usize) -> &Sender {
        self.senders
            .get(to)
            .and_then(Option::as_ref)
            .unwrap_or_else(|| panic!("no shm ring from local rank {} to {to}", self.local_rank))
    }

    /// The ring this rank receives from local rank `from` on.
    ///
    /// # Panics
    ///
    /// If `from` is this rank or not below [`local_size`](ShmNode::local_size).
    ///
    /// ```no_run
    /// # use oxmpi::bootstrap::{connect, Bootstrap};
    /// # use oxmpi::config::Config;
    /// # use oxmpi::transport::shm::{ShmConfig, ShmNode};
    /// # let mut boot = connect()?;
    /// # let node = ShmNode::establish(&mut *boot, &ShmConfig::from_config(&Config::from_env()?))?;
    /// let (me, n) = (node.local_rank(), node.local_size());
    /// # if n < 2 { return Ok(()); }
    /// # while !node.sender((me + 1) % n).try_push(1, &[b"ping"]) {}
    /// # node.doorbell((me + 1) % n).ring();
    /// let rx = node.receiver((me + n - 1) % n);
    /// let bell = node.doorbell(me);
    /// loop {
    ///     let seen = bell.current(); // read before checking, so no ring is missed
    ///     if !rx.is_empty() {
    ///         break;
    ///     }
    ///     bell.wait(seen, None);
    /// }
    /// // The bytes are lent to the closure, then the cell is freed.
    /// let got = rx.try_pop(|flags, bytes| (flags, bytes.to_vec()));
    /// assert!(got.is_some());
    /// # boot.fence()?;
    /// # boot.finalize()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn receiver(&self, from: usize) -> &Receiver {
        self.receivers
            .get(from)
            .and_then(Option::as_ref)
            .unwrap_or_else(|| panic!("no shm ring from local rank {from} to {}", self.local_rank))
    }

    /// Local rank `local`'s doorbell (this rank sleeps on its own).
    ///
    /// # Panics
    ///
    /// If `local` is not below [`local_size`](ShmNode::local_size).
    ///
    /// See the examples on [`ShmNode::sender`], [`ShmNode::receiver`] and [`Doorbell`].
    pub fn doorbell(&self, local: usize) -> &Doorbell {
        &self.bells[local]
    }

    /// Process id of local rank `local` (for [`cma::read_from`]).
    ///
    /// # Panics
    ///
    /// If `local` is not below [`local_size`](ShmNode::local_size).
    ///
    /// ```no_run
    /// # use oxmpi::bootstrap::{connect, Bootstrap};
    /// # use oxmpi::config::Config;
    /// # use oxmpi::transport::shm::{cma, CmaStatus, ShmConfig, ShmNode};
    /// # let mut boot = connect()?;
    /// # let node = ShmNode::establish(&mut *boot, &ShmConfig::from_config(&Config::from_env()?))?;
    /// let (me, n) = (node.local_rank(), node.local_size());
    /// let mine = vec![me as u8; 64];
    /// // Publish where my buffer is, then read the next local rank's in one copy.
    /// boot.put(&format!("buf-{}", boot.rank()), &(mine.as_ptr() as usize).to_string())?;
    /// boot.fence()?;
    /// let peer = (me + 1) % n;
    /// let addr = boot.get(&format!("buf-{}", node.ranks()[peer]))?.expect("every rank put one");
    /// let addr: usize = addr.parse().expect("an address");
    /// if node.cma_enabled() {
    ///     let mut buf = vec![0u8; 64];
    ///     cma::read_from(node.peer_pid(peer), &[(addr, 64)], &mut buf)?;
    ///     assert_eq!(buf, vec![peer as u8; 64]);
    /// } else if let CmaStatus::Disabled(why) = node.cma_status() {
    ///     println!("copying through the rings: {why}");
    /// }
    /// boot.fence()?; // keep `mine` alive until the peer has read it
    /// # boot.finalize()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn peer_pid(&self, local: usize) -> i32 {
        self.pids[local]
    }

    /// Whether single-copy reads between this node's ranks work (every
    /// rank's start-up probe succeeded and `OXMPI_CMA` is on).
    ///
    /// See the example on [`ShmNode::peer_pid`].
    pub fn cma_enabled(&self) -> bool {
        self.cma == CmaStatus::Enabled
    }

    /// The CMA verdict, with the reason when disabled.
    ///
    /// See the example on [`ShmNode::peer_pid`].
    pub fn cma_status(&self) -> &CmaStatus {
        &self.cma
    }
}

#[cfg(test)]
mod tests;
