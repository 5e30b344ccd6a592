//! CUDA device memory in one-sided communication, on both sides of an
//! operation.
//!
//! Origin side (stage.rs): a device origin, result or compare buffer is
//! staged through host memory around the operation. A host buffer costs
//! one relaxed load when no driver is active, one classification otherwise.
//!
//! Target side: window memory on the device (`MPI_Win_create` over it,
//! or a region attached to a dynamic window) is never touched by the
//! CPU: the owner copies with `cuMemcpy`, peers of the host map the
//! allocation once through CUDA IPC (the handle each rank exported when
//! it exposed the memory) and copy the same way. Accumulates read the
//! target's elements to the host, reduce there and write them back, all
//! under the target's accumulate lock, as for host memory.

mod stage;

use super::access::{Access, Target};
use super::control::{DeviceRegion, DEVICE_WORDS};
use super::{rma_error, Win};
use crate::comm::Comm;
use crate::error::{Error, ErrorClass};
use crate::mem::cuda::{self, IpcDesc};

/// How this process reaches one rank's device window memory.
#[derive(Debug, Clone, Copy)]
pub(super) enum DeviceWay {
    /// This process's own memory: the target's addresses are ours.
    Own,
    /// Another process's allocation, opened through CUDA IPC on use (the
    /// mapping is cached by the IPC layer, and reopened if it was dropped).
    Ipc {
        /// The owner's process id.
        pid: u32,
        /// The exported handle of the memory at `start`.
        desc: IpcDesc,
        /// The owner's address `desc` describes.
        start: usize,
    },
}

impl DeviceWay {
    /// Where byte `off` of the window (whose first byte is at `base` in
    /// its owner) is in this process.
    fn at(&self, base: usize, off: usize) -> Result<*mut u8, Error> {
        Ok(match self {
            DeviceWay::Own => (base + off) as *mut u8,
            DeviceWay::Ipc { pid, desc, start } => cuda::ipc::open(*pid, desc)?
                .cast_mut()
                .wrapping_add(base + off - start),
        })
    }

    /// Copies `src` (packed) into the runs `(offset, len)` of the window
    /// memory starting at `base`: one `cuMemcpy` a run, so bytes between
    /// runs are never rewritten (another origin may be writing them).
    ///
    /// # Safety
    /// The runs lie inside the window memory.
    pub(super) unsafe fn write(
        &self,
        base: usize,
        runs: &[(usize, usize)],
        src: &[u8],
    ) -> Result<(), Error> {
        let mut at = 0;
        for &(off, len) in runs {
            let dst = self.at(base, off)?;
            // SAFETY: the caller's promise; `src` holds the runs in order.
            unsafe { cuda::copy(dst, src[at..at + len].as_ptr(), len)? };
            at += len;
        }
        Ok(())
    }

    /// Copies the runs `(offset, len)` of the window memory at `base` into
    /// `dst` (packed): several runs come over as one copy of the bytes
    /// they span, then are gathered on the host.
    ///
    /// # Safety
    /// As for [`DeviceWay::write`].
    pub(super) unsafe fn read(
        &self,
        base: usize,
        runs: &[(usize, usize)],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        let (Some(lo), Some(hi)) = (
            runs.iter().map(|r| r.0).min(),
            runs.iter().map(|r| r.0 + r.1).max(),
        ) else {
            return Ok(());
        };
        let src = self.at(base, lo)?;
        if let [(_, len)] = runs {
            // SAFETY: the caller's promise.
            return unsafe { cuda::copy(dst.as_mut_ptr(), src, *len) };
        }
        let mut span = vec![0u8; hi - lo];
        // SAFETY: the caller's promise: the span lies inside the window.
        unsafe { cuda::copy(span.as_mut_ptr(), src, span.len())? };
        let mut at = 0;
        for &(off, len) in runs {
            dst[at..at + len].copy_from_slice(&span[off - lo..off - lo + len]);
            at += len;
        }
        Ok(())
    }
}

/// What a rank contributes about its window memory when the window is
/// made: whether it is device memory and, if so, its IPC handle.
#[derive(Debug, Clone, Copy)]
pub(super) enum Exposed {
    /// Host memory (or none).
    Host,
    /// Device memory, as peers open it.
    Device(IpcDesc),
    /// Device memory that cannot be exported.
    Failed,
}

/// u64 words of an encoded [`Exposed`]: a tag, then the IPC description.
pub(super) const EXPOSED_WORDS: usize = 1 + DEVICE_WORDS;

/// An IPC description as the words of the control block and of [`Exposed`].
fn desc_words(d: &IpcDesc) -> [u64; DEVICE_WORDS] {
    let mut w = [0u64; DEVICE_WORDS];
    for (i, c) in d.encode().chunks_exact(8).enumerate() {
        w[i] = u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
    w
}

/// Reads [`desc_words`]' words.
fn words_desc(w: &[u64]) -> Option<IpcDesc> {
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    IpcDesc::decode(&bytes)
}

impl Exposed {
    /// Classifies `size` bytes at `base` (host at once when no driver is active).
    pub(super) fn of(base: usize, size: usize) -> Result<Exposed, Error> {
        if !cuda::is_device(base as *const u8) {
            return Ok(Exposed::Host);
        }
        cuda::ipc::export(base as *const u8, size).map(Exposed::Device)
    }

    /// The words peers receive.
    pub(super) fn encode(&self) -> [u64; EXPOSED_WORDS] {
        let mut w = [0u64; EXPOSED_WORDS];
        match self {
            Exposed::Host => {}
            Exposed::Failed => w[0] = 2,
            Exposed::Device(d) => {
                w[0] = 1;
                w[1..].copy_from_slice(&desc_words(d));
            }
        }
        w
    }

    /// Reads [`Exposed::encode`]'s words.
    pub(super) fn decode(w: &[u64]) -> Exposed {
        match w.first() {
            Some(1) => words_desc(&w[1..EXPOSED_WORDS]).map_or(Exposed::Failed, Exposed::Device),
            Some(2) => Exposed::Failed,
            _ => Exposed::Host,
        }
    }
}

/// Every rank's [`Exposed`] for a window over the program's memory
/// (`size` bytes at `base` here), gathered over the window's
/// communicator: collective. A rank whose device memory could not be
/// exported (memory from a stream-ordered pool, say) fails the creation on
/// every rank, unless it is alone (it reaches its own memory without IPC).
pub(super) fn exchange(comm: &Comm, base: usize, size: usize) -> Result<Vec<Exposed>, Error> {
    let alone = comm.size() == 1;
    let (mine, why) = match Exposed::of(base, size) {
        Ok(e) => (e, None),
        Err(e) => (Exposed::Failed, Some(e)),
    };
    let mut all = vec![0u64; EXPOSED_WORDS * comm.size() as usize];
    comm.allgather(&mine.encode(), &mut all)?;
    if let Some(e) = why.filter(|_| !alone) {
        return Err(rma_error(
            ErrorClass::Win,
            format!("MPI_Win_create over device memory at {base:#x} ({size} bytes): {e}"),
        ));
    }
    let all: Vec<Exposed> = all
        .chunks_exact(EXPOSED_WORDS)
        .map(Exposed::decode)
        .collect();
    if all.iter().any(|e| !matches!(e, Exposed::Host)) && spans_hosts(comm) {
        return Err(Error::Unsupported(
            "MPI_Win_create over CUDA device memory on a communicator whose ranks span hosts \
             (device windows are reached by CUDA IPC, within one host)"
                .into(),
        ));
    }
    if let Some(r) = all
        .iter()
        .position(|e| matches!(e, Exposed::Failed))
        .filter(|_| !alone)
    {
        return Err(rma_error(
            ErrorClass::Win,
            format!("rank {r}'s device window memory could not be exported for CUDA IPC"),
        ));
    }
    Ok(all)
}

impl Win {
    /// For a dynamic window: `t` (rank `rank`) redirected to the device
    /// region attached at the owner's address `addr`, if it is one.
    pub(super) fn device_target(&self, rank: usize, t: Target, addr: usize) -> Target {
        let regions = self.inner.control.device_regions(rank);
        let Some(&(start, _, words)) = regions.iter().find(|r| addr >= r.0 && addr < r.0 + r.1)
        else {
            return t;
        };
        let way = match (t.access, words_desc(&words)) {
            (Access::Cma(pid), Some(desc)) => DeviceWay::Ipc {
                pid: pid as u32,
                desc,
                start,
            },
            _ => DeviceWay::Own,
        };
        Target {
            access: Access::Device(way),
            ..t
        }
    }

    /// Records the device region `base`, `len` that this rank attaches to
    /// a dynamic window, for peers to open (host memory: nothing to do).
    pub(super) fn attach_device(&self, base: usize, len: usize) -> Result<(), Error> {
        let desc = match Exposed::of(base, len) {
            Ok(Exposed::Device(d)) => desc_words(&d),
            Ok(_) => return Ok(()),
            // Alone, this rank reaches its own memory without a handle.
            Err(_) if self.size() == 1 => [0; DEVICE_WORDS],
            Err(e) => {
                return Err(rma_error(
                    ErrorClass::RmaAttach,
                    format!("MPI_Win_attach of device memory at {base:#x} ({len} bytes): {e}"),
                ))
            }
        };
        if spans_hosts(&self.inner.comm) {
            return Err(Error::Unsupported(
                "MPI_Win_attach of CUDA device memory to a window whose ranks span hosts \
                 (device windows are reached by CUDA IPC, within one host)"
                    .into(),
            ));
        }
        let me = self.inner.me;
        let mut regions = self.inner.control.device_regions(me);
        regions.push((base, len, desc));
        self.inner.control.publish_device_regions(me, &regions);
        Ok(())
    }

    /// Forgets the device region attached at `base`, if it is one.
    pub(super) fn detach_device(&self, base: usize) {
        let me = self.inner.me;
        let mut regions: Vec<DeviceRegion> = self.inner.control.device_regions(me);
        let before = regions.len();
        regions.retain(|r| r.0 != base);
        if regions.len() != before {
            self.inner.control.publish_device_regions(me, &regions);
        }
    }
}

/// How this process reaches a rank's window memory that `exposed`
/// describes (`own`: it is this process's; `pid`, `start`: the owner's
/// process and window base); `None` for host memory.
pub(super) fn way(
    exposed: Option<&Exposed>,
    own: bool,
    pid: i32,
    start: usize,
) -> Option<DeviceWay> {
    match exposed? {
        Exposed::Host => None,
        Exposed::Device(_) | Exposed::Failed if own => Some(DeviceWay::Own),
        Exposed::Device(desc) => Some(DeviceWay::Ipc {
            pid: pid as u32,
            desc: *desc,
            start,
        }),
        // `exchange` fails the window when a peer's memory has no handle.
        Exposed::Failed => None,
    }
}

/// Whether `comm`'s ranks are on more than one host.
fn spans_hosts(comm: &Comm) -> bool {
    let nodes = &comm.inner.shared.node_of_rank;
    let mine = nodes[comm.inner.rt.world_rank];
    comm.world_ranks().iter().any(|&w| nodes[w] != mine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposed_memory_survives_the_exchange_words() {
        let d = IpcDesc {
            handle: std::array::from_fn(|i| i as u8),
            offset: 4096 + 16,
            buffer_id: 77,
        };
        for e in [Exposed::Host, Exposed::Failed, Exposed::Device(d)] {
            let back = Exposed::decode(&e.encode());
            match (e, back) {
                (Exposed::Host, Exposed::Host) | (Exposed::Failed, Exposed::Failed) => {}
                (Exposed::Device(a), Exposed::Device(b)) => assert_eq!(a, b),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(words_desc(&desc_words(&d)), Some(d));
    }

    #[test]
    fn each_rank_reaches_device_memory_its_own_way() {
        let d = IpcDesc {
            handle: [1; 64],
            offset: 0,
            buffer_id: 5,
        };
        let dev = Exposed::Device(d);
        assert!(way(Some(&Exposed::Host), true, 1, 0).is_none());
        assert!(way(None, false, 1, 0).is_none());
        assert!(matches!(way(Some(&dev), true, 1, 0), Some(DeviceWay::Own)));
        // Alone, a rank whose memory has no handle still reaches it.
        assert!(matches!(
            way(Some(&Exposed::Failed), true, 1, 0),
            Some(DeviceWay::Own)
        ));
        match way(Some(&dev), false, 42, 0x1000) {
            Some(DeviceWay::Ipc { pid, desc, start }) => {
                assert_eq!((pid, desc, start), (42, d, 0x1000))
            }
            other => panic!("{other:?}"),
        }
        // The own way addresses the owner's bytes directly.
        assert_eq!(DeviceWay::Own.at(0x1000, 24).unwrap() as usize, 0x1018);
    }
}
