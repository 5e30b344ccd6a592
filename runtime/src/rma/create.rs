//! Making windows (`MPI_Win_create`, `_allocate`, `_allocate_shared`,
//! `_create_dynamic`): collective over a private duplicate of the
//! communicator. Each rank contributes a record (pid, base, size,
//! displacement unit, its `MPI_Alloc_mem` region if the memory is in
//! one); the first rank makes the window's segment (control block, then
//! the allocated memory of every rank) and publishes its descriptor; the
//! others map it. Whether every rank managed is agreed before anyone
//! returns, so a failure on one rank is an error on all, never a hang.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::access::{Access, Target};
use super::control::{Control, ControlLayout};
use super::device;
use super::fast;
use super::memory::{allocated_region, page_size, SharedRegion};
use super::sync::EpochCell;
use super::{remote, rma_error, Flavor, Inner, Win};
use crate::comm::Comm;
use crate::error::{Error, ErrorClass};
use crate::ops::Op;

/// What one rank contributes (all u64, for one allgather).
const RECORD: usize = 7;
const NONE: u64 = u64::MAX;

/// Window memory from the program or from the window.
#[derive(Clone, Copy)]
enum Memory {
    /// `MPI_Win_create`: at this address.
    User(usize),
    /// `MPI_Win_allocate` / `_allocate_shared` (`contiguous`: ranks'
    /// memory back to back, else each on its own pages).
    Allocated { contiguous: bool },
    /// `MPI_Win_create_dynamic`.
    Dynamic,
}

impl Win {
    /// `MPI_Win_create`: `size` bytes at `base` (the program's memory) on
    /// every rank of `comm`.
    ///
    /// # Safety
    /// `base` holds `size` bytes that stay valid until the window is freed.
    pub unsafe fn create(
        comm: &Comm,
        base: *mut u8,
        size: usize,
        disp_unit: usize,
    ) -> Result<Win, Error> {
        build(
            comm,
            Flavor::Create,
            Memory::User(base as usize),
            size,
            disp_unit,
        )
    }

    /// `MPI_Win_allocate`: `size` new bytes on each rank; [`Win::local`]
    /// gives their address. Within a host every rank maps every rank's
    /// memory (each rank's on pages of its own).
    pub fn allocate(comm: &Comm, size: usize, disp_unit: usize) -> Result<Win, Error> {
        let mem = Memory::Allocated { contiguous: false };
        build(comm, Flavor::Allocate, mem, size, disp_unit)
    }

    /// `MPI_Win_allocate_shared`: one segment for the host, rank `i`'s
    /// memory right after rank `i - 1`'s unless `noncontig`
    /// (`alloc_shared_noncontig`: each on pages of its own).
    pub fn allocate_shared(
        comm: &Comm,
        size: usize,
        disp_unit: usize,
        noncontig: bool,
    ) -> Result<Win, Error> {
        let mem = Memory::Allocated {
            contiguous: !noncontig,
        };
        build(comm, Flavor::Shared, mem, size, disp_unit)
    }

    /// `MPI_Win_create_dynamic`: no memory until ranks attach regions;
    /// displacements are addresses.
    pub fn create_dynamic(comm: &Comm) -> Result<Win, Error> {
        build(comm, Flavor::Dynamic, Memory::Dynamic, 0, 1)
    }
}

fn check_args(size: usize, disp_unit: usize) -> Result<(), Error> {
    if size > isize::MAX as usize {
        return Err(rma_error(
            ErrorClass::Size,
            format!("invalid `size` {size}: larger than the address space"),
        ));
    }
    if disp_unit == 0 || disp_unit > i32::MAX as usize {
        return Err(rma_error(
            ErrorClass::Disp,
            format!("invalid `disp_unit` {disp_unit}: must be positive"),
        ));
    }
    Ok(())
}

/// The host of each rank of `comm` (a peer of another job counts as a
/// host of its own: it shares no segment with this one).
fn hosts_of(comm: &Comm) -> Vec<usize> {
    let nodes = &comm.inner.shared.node_of_rank;
    comm.world_ranks()
        .iter()
        .map(|&w| nodes.get(w).copied().unwrap_or(usize::MAX - w))
        .collect()
}

/// Every rank's `ok`, agreed: the first failure anywhere fails all.
fn agree(comm: &Comm, mine: Result<(), Error>) -> Result<(), Error> {
    let mut all = [0i32];
    comm.allreduce(&[i32::from(mine.is_ok())], &mut all, &Op::MIN)?;
    mine?;
    if all[0] == 0 {
        return Err(rma_error(
            ErrorClass::Win,
            "creating the window failed on another rank",
        ));
    }
    Ok(())
}

fn build(
    parent: &Comm,
    flavor: Flavor,
    mem: Memory,
    size: usize,
    disp_unit: usize,
) -> Result<Win, Error> {
    parent.check_live()?;
    // Arguments are checked on every rank before the first collective, and
    // agreed on, so one rank's bad argument does not leave the others waiting.
    let checked = check_args(size, disp_unit);
    let comm = parent.dup()?;
    agree(&comm, checked)?;
    let n = comm.size() as usize;
    let me = comm.rank() as usize;
    // One segment per host, made by its first rank.
    let hosts = hosts_of(&comm);
    let here = |r: usize| hosts[r] == hosts[me];
    let leader = (0..n).find(|&r| here(r)).unwrap_or(me);
    // This rank's record.
    let (base_arg, alloc) = match mem {
        Memory::User(b) => (b, allocated_region(b, size)),
        _ => (0, None),
    };
    let mut record = [NONE; RECORD];
    record[0] = u64::from(std::process::id());
    record[1] = base_arg as u64;
    record[2] = size as u64;
    record[3] = disp_unit as u64;
    if let Some((fd, len, offset)) = alloc {
        (record[4], record[5], record[6]) = (fd as u64, len as u64, offset as u64);
    }
    let mut all = vec![0u64; RECORD * n];
    comm.allgather(&record, &mut all)?;
    let rec = |r: usize| &all[r * RECORD..(r + 1) * RECORD];
    let on_device = match mem {
        Memory::User(b) => device::exchange(&comm, b, size)?,
        _ => Vec::new(),
    };

    // The segment: control block, then (allocated windows) each rank's memory.
    let layout = ControlLayout::new(n);
    let page = page_size();
    let mut offsets = vec![0usize; n];
    let mut end = layout.bytes().next_multiple_of(page);
    if let Memory::Allocated { contiguous } = mem {
        for (r, off) in offsets.iter_mut().enumerate().filter(|(r, _)| here(*r)) {
            *off = end;
            let sz = rec(r)[2] as usize;
            end = if contiguous {
                end + sz
            } else {
                (end + sz).next_multiple_of(page)
            };
        }
    }
    let total = end;
    let made = if me == leader {
        SharedRegion::create(total, "a window segment").map(Some)
    } else {
        Ok(None)
    };
    let mut published = [0u64; 2];
    if let Ok(Some(seg)) = &made {
        published = [u64::from(std::process::id()), seg.fd() as u64];
    }
    let ok = made.as_ref().map(|_| ());
    agree(
        &comm,
        ok.map_err(|e| rma_error(ErrorClass::NoMem, e.to_string())),
    )?;
    let mut every = vec![0u64; 2 * n];
    comm.allgather(&published, &mut every)?;
    let (pid, fd) = (every[2 * leader], every[2 * leader + 1]);
    let segment = match made? {
        Some(seg) => Ok(seg),
        None => SharedRegion::open(pid as u32, fd as i32, total),
    };
    let opened = segment.as_ref().map(|_| ()).map_err(clone_error);
    agree(&comm, opened)?;
    // Every rank has mapped the segment: no descriptor is needed any more.
    let mut segment = segment?;
    segment.close_file();

    // How this rank reaches each rank's memory.
    let mut peer_maps = Vec::new();
    let mut targets = Vec::with_capacity(n);
    for (r, &offset) in offsets.iter().enumerate() {
        let x = rec(r);
        let (pid, base, sz, unit) = (x[0] as i32, x[1] as usize, x[2] as usize, x[3] as usize);
        let target = match mem {
            _ if !here(r) => Target {
                base,
                size: sz,
                disp_unit: unit,
                access: Access::Remote,
            },
            Memory::Allocated { .. } => {
                let at = segment.base() as usize + offset;
                Target {
                    base: at,
                    size: sz,
                    disp_unit: unit,
                    access: Access::Mapped(at),
                }
            }
            Memory::Dynamic => Target {
                base: 0,
                size: 0,
                disp_unit: 1,
                access: if r == me {
                    Access::Mapped(0)
                } else {
                    Access::Cma(pid)
                },
            },
            Memory::User(_) => {
                let access = if let Some(way) = device::way(on_device.get(r), r == me, pid, base) {
                    Access::Device(way)
                } else if r == me {
                    Access::Mapped(base)
                } else if x[4] != NONE {
                    // The peer's memory is an MPI_Alloc_mem region: map it.
                    match SharedRegion::open(pid as u32, x[4] as i32, x[5] as usize) {
                        Ok(mut region) => {
                            region.close_file();
                            let at = region.base() as usize + x[6] as usize;
                            peer_maps.push(region);
                            Access::Mapped(at)
                        }
                        Err(_) => Access::Cma(pid),
                    }
                } else {
                    Access::Cma(pid)
                };
                Target {
                    base,
                    size: sz,
                    disp_unit: unit,
                    access,
                }
            }
        };
        targets.push(target);
    }
    if matches!(mem, Memory::Allocated { .. }) {
        // Allocated windows report the address this process maps.
        targets[me].base = targets[me].mapped().unwrap_or(0);
    }
    let control = Control::at(&segment, layout);
    let spans_hosts = (0..n).any(|r| !here(r));
    let mut started = Ok(());
    let win = Win {
        inner: Arc::new_cyclic(|weak| Inner {
            remote: spans_hosts
                .then(|| remote::Link::start(&comm, weak.clone(), flavor != Flavor::Dynamic))
                .and_then(|made| made.map_err(|e| started = Err(e)).ok()),
            comm,
            flavor,
            me,
            direct: fast::Direct::table(flavor, &targets),
            atomics: matches!(mem, Memory::Allocated { .. }) && !spans_hosts,
            targets,
            control,
            _segment: segment,
            _peer_maps: peer_maps,
            epoch: EpochCell::new(n),
            attached: Mutex::new(Vec::new()),
            freed: AtomicBool::new(false),
        }),
    };
    if let Err(e) = agree(&win.inner.comm, started) {
        // No request can come now: end this rank's service, if it started.
        if let Some(link) = &win.inner.remote {
            let _ = link.stop();
        }
        return Err(e);
    }
    // Nobody operates on the window before every rank has it.
    win.inner.comm.barrier()?;
    Ok(win)
}

fn clone_error(e: &Error) -> Error {
    rma_error(ErrorClass::Win, e.to_string())
}
