//! The shared-memory transport: [`Transport`] over this node's [`ShmNode`]
//! rings, doorbells and CMA reads. Reaches every rank on this host.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{cma, ShmNode};
use crate::error::Error;
use crate::transport::{Caps, Transport};

/// Most cells taken from one peer per poll, so one busy sender cannot starve the others.
const POLL_BUDGET: usize = 64;

/// Rings to and from every local peer.
pub struct ShmTransport {
    node: ShmNode,
    me: usize,
    /// Local index of each world rank (None: not on this host).
    local_of: Vec<Option<usize>>,
    /// Online CPUs of the host.
    cpus: usize,
    /// [`Transport::stop_poll`] was called during this poll.
    stop: std::sync::atomic::AtomicBool,
}

// SAFETY: ShmNode's ring ends are Send but not Sync (single producer /
// single consumer). They are used only by `try_send` and `poll`, whose
// contract (see `Transport`) forbids concurrent calls, so no ring end is
// ever used by two threads at once. Doorbells are Sync themselves; the
// rest is read-only after construction.
unsafe impl Sync for ShmTransport {}

impl ShmTransport {
    /// Wraps an established node; `world_size` sizes the rank lookup table.
    pub fn new(node: ShmNode, world_size: usize) -> ShmTransport {
        let mut local_of = vec![None; world_size];
        for (local, &world) in node.ranks().iter().enumerate() {
            if let Some(slot) = local_of.get_mut(world) {
                *slot = Some(local);
            }
        }
        ShmTransport {
            me: node.local_rank(),
            local_of,
            node,
            cpus: crate::machine::online_cpus(),
            stop: Default::default(),
        }
    }

    fn local(&self, peer: usize) -> Option<usize> {
        self.local_of
            .get(peer)
            .copied()
            .flatten()
            .filter(|&l| l != self.me)
    }
}

impl ShmTransport {
    /// Rings this rank's own doorbell: wakes its thread sleeping in
    /// [`Transport::wait`] (for another wait object's watcher).
    pub(crate) fn ring_own(&self) {
        self.node.doorbell(self.me).ring();
    }
}

impl Transport for ShmTransport {
    fn name(&self) -> &'static str {
        "shm"
    }

    fn caps(&self) -> Caps {
        if self.node.cma_enabled() {
            Caps::REMOTE_READ
        } else {
            Caps::empty()
        }
    }

    fn reaches(&self, peer: usize) -> bool {
        self.local(peer).is_some()
    }

    fn max_packet(&self, _peer: usize) -> usize {
        self.node.layout().cell_size()
    }

    unsafe fn try_send(&self, peer: usize, parts: &[&[u8]]) -> bool {
        let Some(l) = self.local(peer) else {
            return false;
        };
        self.node.sender(l).try_push(0, parts)
    }

    unsafe fn try_send_with(
        &self,
        peer: usize,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        let Some(l) = self.local(peer) else {
            return false;
        };
        let tx = self.node.sender(l);
        let Some(mut cell) = tx.try_reserve() else {
            return false;
        };
        let Some(payload) = cell.payload().get_mut(..len) else {
            return false; // larger than a cell: the engine never asks
        };
        fill(payload);
        cell.commit(len, 0);
        true
    }

    unsafe fn poll(&self, sink: &mut dyn FnMut(usize, &[u8])) -> usize {
        let mut handled = 0;
        self.stop.store(false, Ordering::Relaxed);
        for (l, &world) in self.node.ranks().iter().enumerate() {
            if l == self.me {
                continue;
            }
            let rx = self.node.receiver(l);
            let mut taken = 0;
            while taken < POLL_BUDGET
                && !self.stop.load(Ordering::Relaxed)
                && rx.try_pop(|_, bytes| sink(world, bytes)).is_some()
            {
                taken += 1;
            }
            // Space was freed: a sender that found the ring full may go on
            // (only such a sender needs its doorbell rung).
            if taken > 0 && rx.take_room_request() {
                self.node.doorbell(l).ring();
            }
            handled += taken;
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        handled
    }

    fn stop_poll(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn same_host(&self, _peer: usize) -> bool {
        true
    }

    fn can_read_remote(&self, peer: usize) -> bool {
        self.node.cma_enabled() && self.local(peer).is_some()
    }

    fn read_remote(&self, peer: usize, pid: u32, addr: u64, dst: &mut [u8]) -> Result<(), Error> {
        if self.local(peer).is_none() {
            return Err(Error::Unsupported(format!(
                "rank {peer} is not on this host"
            )));
        }
        let n = cma::read_from(pid as i32, &[(addr as usize, dst.len())], dst)?;
        if n != dst.len() {
            return Err(Error::Os {
                call: "process_vm_readv",
                source: std::io::Error::other(format!(
                    "read {n} of {} bytes from rank {peer}",
                    dst.len()
                )),
            });
        }
        Ok(())
    }

    unsafe fn read_remote_scatter(
        &self,
        peer: usize,
        pid: u32,
        addr: u64,
        local: &[(usize, usize)],
    ) -> Result<(), Error> {
        if self.local(peer).is_none() {
            return Err(Error::Unsupported(format!(
                "rank {peer} is not on this host"
            )));
        }
        let want: usize = local.iter().map(|&(_, n)| n).sum();
        // SAFETY: the caller's contract.
        let n = unsafe { cma::read_scatter(pid as i32, addr as usize, local) }?;
        if n != want {
            return Err(Error::Os {
                call: "process_vm_readv",
                source: std::io::Error::other(format!("read {n} of {want} bytes from rank {peer}")),
            });
        }
        Ok(())
    }

    fn write_remote(&self, peer: usize, pid: u32, addr: u64, src: &[u8]) -> Result<(), Error> {
        if self.local(peer).is_none() {
            return Err(Error::Unsupported(format!(
                "rank {peer} is not on this host"
            )));
        }
        let n = cma::write_to(pid as i32, addr as usize, src)?;
        if n != src.len() {
            return Err(Error::Os {
                call: "process_vm_writev",
                source: std::io::Error::other(format!(
                    "wrote {n} of {} bytes to rank {peer}",
                    src.len()
                )),
            });
        }
        Ok(())
    }

    fn parallel_peers(&self) -> bool {
        self.node.local_size() <= self.cpus
    }

    fn crowded(&self) -> bool {
        let asleep = self.node.doorbell(self.me).node_asleep();
        self.node.local_size().saturating_sub(asleep) > self.cpus
    }

    fn wait_token(&self) -> u32 {
        self.node.doorbell(self.me).current()
    }

    fn wait(&self, token: u32, timeout: Duration) {
        self.node.doorbell(self.me).wait(token, Some(timeout));
    }

    fn wake(&self, peer: usize) {
        if let Some(l) = self.local(peer) {
            self.node.doorbell(l).ring();
        }
    }
}
