//! Single-copy reads of a peer's memory with `process_vm_readv` (CMA).
//!
//! The kernel allows the read when the reader may ptrace the target
//! (same uid, and Yama's `ptrace_scope` permitting). Under Yama's scope 1
//! a process may only be traced by its ancestors or by a tracer it
//! declared, the declared process's descendants included: `allow_peers`
//! declares this rank's parent (the launcher's host agent, whose children
//! are the node's other ranks), so sibling ranks may read it and the
//! user's other processes still may not (`OXMPI_CMA_PTRACER=any` declares
//! every process instead, the old behaviour). Scope 0 needs nothing; 2 and
//! 3 cannot be lifted. `probe` is run once per peer at start-up, and a
//! failure disables CMA for the node.

use std::io::IoSliceMut;

use nix::errno::Errno;
use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;

use crate::Error;

/// Most iovecs one call takes (`IOV_MAX` on Linux).
const IOV_MAX: usize = 1024;
/// Most bytes asked of one call: the kernel caps a call at `MAX_RW_COUNT`
/// (2 GiB - 4 KiB) and reports less; staying under it keeps counts simple.
const MAX_CALL: usize = 1 << 30;

/// Yama's `PR_SET_PTRACER` (not exported by libc for this target).
const PR_SET_PTRACER: nix::libc::c_int = 0x5961_6d61;
/// Any process may ptrace (and so CMA-read) us.
const PR_SET_PTRACER_ANY: nix::libc::c_ulong = !0;

/// Whether single-copy reads from a peer work.
///
/// See the example on [`ShmNode::peer_pid`](super::ShmNode::peer_pid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmaStatus {
    /// Reads succeed and return the expected bytes.
    Enabled,
    /// Not usable; the text says why (for `OXMPI_DEBUG=transport`).
    Disabled(String),
}

/// Where Yama keeps its ptrace scope (absent without Yama).
const YAMA_SCOPE: &str = "/proc/sys/kernel/yama/ptrace_scope";

/// The tracer this process declares with `PR_SET_PTRACER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ptracer {
    /// Declare nothing: not needed (no Yama, scope 0) or no help (2, 3).
    Nothing,
    /// This process and its descendants (the parent: sibling ranks).
    Pid(i32),
    /// Every process (`OXMPI_CMA_PTRACER=any`).
    Any,
}

/// What to declare under Yama scope `scope` (None: no Yama), given the
/// parent's pid and whether `OXMPI_CMA_PTRACER=any`. A parent of pid 1 or
/// less (an orphan) is not declared: every process descends from init.
pub(crate) fn ptracer_for(scope: Option<u32>, parent: i32, any: bool) -> Ptracer {
    match scope {
        Some(1) if any => Ptracer::Any,
        Some(1) if parent > 1 => Ptracer::Pid(parent),
        _ => Ptracer::Nothing,
    }
}

/// Lets the node's other ranks read this one under Yama `ptrace_scope=1`
/// (see the module docs); `any` lets every process of the user do so.
/// Does nothing where Yama is absent or its scope is not 1.
pub(crate) fn allow_peers(any: bool) {
    let scope = std::fs::read_to_string(YAMA_SCOPE)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let tracer = match ptracer_for(scope, nix::unistd::getppid().as_raw(), any) {
        Ptracer::Nothing => return,
        Ptracer::Pid(pid) => pid as nix::libc::c_ulong,
        Ptracer::Any => PR_SET_PTRACER_ANY,
    };
    // SAFETY: prctl with integer arguments only; no memory is passed.
    let _ = unsafe { nix::libc::prctl(PR_SET_PTRACER, tracer, 0, 0, 0) };
}

fn os(call: &'static str, e: Errno, detail: String) -> Error {
    let base = std::io::Error::from(e);
    Error::Os {
        call,
        source: std::io::Error::new(base.kind(), format!("{detail}: {base}")),
    }
}

/// Reads the concatenation of the `remote` ranges `(address, length)` of
/// process `pid` into the front of `local`; returns the bytes read (their
/// total). Splits the work into calls of at most `IOV_MAX` ranges and 1 GiB,
/// and resumes after partial reads.
///
/// ```
/// use oxmpi::transport::shm::cma::read_from;
/// let src = *b"single copy";
/// let mut dst = [0u8; 11];
/// let me = std::process::id() as i32; // a peer's pid in real use
/// match read_from(me, &[(src.as_ptr() as usize, src.len())], &mut dst) {
///     Ok(n) => assert_eq!((n, &dst), (11, &src)),
///     Err(e) => println!("CMA is not allowed here: {e}"), // e.g. a seccomp filter
/// }
/// ```
pub fn read_from(pid: i32, remote: &[(usize, usize)], local: &mut [u8]) -> Result<usize, Error> {
    read_chunked(pid, remote, local, MAX_CALL)
}

/// [`read_from`] with at most `max_call` bytes per system call.
fn read_chunked(
    pid: i32,
    remote: &[(usize, usize)],
    local: &mut [u8],
    max_call: usize,
) -> Result<usize, Error> {
    let total = remote
        .iter()
        .try_fold(0usize, |acc, &(_, len)| acc.checked_add(len))
        .filter(|&t| t <= local.len())
        .ok_or_else(|| {
            os(
                "process_vm_readv",
                Errno::EINVAL,
                format!("remote ranges exceed the {}-byte local buffer", local.len()),
            )
        })?;
    let mut done = 0;
    let (mut seg, mut off) = (0usize, 0usize);
    let mut iovs = Vec::with_capacity(remote.len().min(IOV_MAX));
    while done < total {
        while remote[seg].1 == off {
            (seg, off) = (seg + 1, 0);
        }
        iovs.clear();
        let (mut s, mut o, mut batch) = (seg, off, 0usize);
        while s < remote.len() && iovs.len() < IOV_MAX && batch < max_call {
            let (addr, len) = remote[s];
            let take = (len - o).min(max_call - batch);
            if take > 0 {
                iovs.push(RemoteIoVec {
                    base: addr.wrapping_add(o),
                    len: take,
                });
            }
            batch += take;
            if o + take == len {
                (s, o) = (s + 1, 0);
            } else {
                o += take;
            }
        }
        let mut dst = [IoSliceMut::new(&mut local[done..done + batch])];
        let n = match process_vm_readv(Pid::from_raw(pid), &mut dst, &iovs) {
            Ok(0) => {
                let (addr, _) = remote[seg];
                let detail = format!(
                    "pid {pid}: nothing readable at {:#x}",
                    addr.wrapping_add(off)
                );
                return Err(os("process_vm_readv", Errno::EFAULT, detail));
            }
            Ok(n) => n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(os("process_vm_readv", e, format!("pid {pid}"))),
        };
        done += n;
        let mut left = n;
        while left > 0 {
            let rest = remote[seg].1 - off;
            if left >= rest {
                (seg, off, left) = (seg + 1, 0, left - rest);
            } else {
                (off, left) = (off + left, 0);
            }
        }
    }
    Ok(done)
}

/// Reads the total length of the `local` runs `(address, len)` from
/// `addr` in process `pid` into those runs, in order (a scatter into a
/// non-contiguous buffer); returns the bytes read. Splits the work into
/// calls of at most `IOV_MAX` runs and 1 GiB, and resumes after partial
/// reads (also inside a run).
///
/// # Safety
/// Every run is valid for writes of its length and overlaps no memory
/// that Rust code holds a reference to.
pub(crate) unsafe fn read_scatter(
    pid: i32,
    addr: usize,
    local: &[(usize, usize)],
) -> Result<usize, Error> {
    use nix::libc::{c_void, iovec};
    let total = local
        .iter()
        .try_fold(0usize, |acc, &(_, len)| acc.checked_add(len))
        .ok_or_else(|| {
            os(
                "process_vm_readv",
                Errno::EINVAL,
                "local runs overflow".into(),
            )
        })?;
    let mut iovs: Vec<iovec> = Vec::with_capacity(local.len().min(IOV_MAX));
    let (mut done, mut run, mut off) = (0usize, 0usize, 0usize);
    while done < total {
        iovs.clear();
        let (mut s, mut o, mut batch) = (run, off, 0usize);
        while s < local.len() && iovs.len() < IOV_MAX && batch < MAX_CALL {
            let (base, len) = local[s];
            let take = (len - o).min(MAX_CALL - batch);
            if take > 0 {
                iovs.push(iovec {
                    iov_base: base.wrapping_add(o) as *mut c_void,
                    iov_len: take,
                });
            }
            batch += take;
            if o + take == len {
                (s, o) = (s + 1, 0);
            } else {
                o += take;
            }
        }
        let remote = iovec {
            iov_base: addr.wrapping_add(done) as *mut c_void,
            iov_len: batch,
        };
        // SAFETY: the iovecs name the caller's writable runs (its contract)
        // and one remote range; the kernel checks the remote side.
        let r = unsafe {
            nix::libc::process_vm_readv(pid, iovs.as_ptr(), iovs.len() as _, &remote, 1, 0)
        };
        let n = match r {
            0 => {
                let detail = format!(
                    "pid {pid}: nothing readable at {:#x}",
                    addr.wrapping_add(done)
                );
                return Err(os("process_vm_readv", Errno::EFAULT, detail));
            }
            n if n > 0 => n as usize,
            _ => match Errno::last() {
                Errno::EINTR => continue,
                e => return Err(os("process_vm_readv", e, format!("pid {pid}"))),
            },
        };
        done += n;
        let mut left = n;
        while left > 0 {
            let rest = local[run].1 - off;
            if left >= rest {
                (run, off, left) = (run + 1, 0, left - rest);
            } else {
                (off, left) = (off + left, 0);
            }
        }
    }
    Ok(done)
}

/// Writes `local` into process `pid` at `addr` (one contiguous range), in
/// calls of at most 1 GiB, resuming after partial writes.
pub(crate) fn write_to(pid: i32, addr: usize, local: &[u8]) -> Result<usize, Error> {
    let mut done = 0;
    while done < local.len() {
        let take = (local.len() - done).min(MAX_CALL);
        let src = [std::io::IoSlice::new(&local[done..done + take])];
        let dst = [RemoteIoVec {
            base: addr.wrapping_add(done),
            len: take,
        }];
        match nix::sys::uio::process_vm_writev(Pid::from_raw(pid), &src, &dst) {
            Ok(0) => {
                let detail = format!(
                    "pid {pid}: nothing writable at {:#x}",
                    addr.wrapping_add(done)
                );
                return Err(os("process_vm_writev", Errno::EFAULT, detail));
            }
            Ok(n) => done += n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(os("process_vm_writev", e, format!("pid {pid}"))),
        }
    }
    Ok(done)
}

/// Checks once whether `len` bytes at `addr` in `peer` can be read and equal
/// `expect`.
pub(crate) fn probe(peer: i32, addr: usize, expect: &[u8]) -> CmaStatus {
    let mut got = vec![0u8; expect.len()];
    match read_from(peer, &[(addr, expect.len())], &mut got) {
        Ok(_) if got == expect => CmaStatus::Enabled,
        Ok(_) => CmaStatus::Disabled(format!("pid {peer}: probe read wrong bytes")),
        Err(e) => CmaStatus::Disabled(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> i32 {
        std::process::id() as i32
    }

    #[test]
    fn the_parent_is_declared_only_under_scope_1() {
        // No Yama, or scope 0: nothing to lift; 2 and 3 cannot be lifted.
        for scope in [None, Some(0), Some(2), Some(3)] {
            assert_eq!(ptracer_for(scope, 4242, false), Ptracer::Nothing);
            assert_eq!(ptracer_for(scope, 4242, true), Ptracer::Nothing);
        }
        assert_eq!(ptracer_for(Some(1), 4242, false), Ptracer::Pid(4242));
        // Orphaned: init would make every process a tracer.
        assert_eq!(ptracer_for(Some(1), 1, false), Ptracer::Nothing);
        assert_eq!(ptracer_for(Some(1), 0, false), Ptracer::Nothing);
        // Opt-in: anyone, as before.
        assert_eq!(ptracer_for(Some(1), 4242, true), Ptracer::Any);
    }

    #[test]
    fn gathers_many_ranges_across_iov_max() {
        let src: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        // 3000 one-byte ranges, read back to front: more than IOV_MAX.
        let ranges: Vec<(usize, usize)> = (0..src.len())
            .rev()
            .map(|i| (src.as_ptr() as usize + i, 1))
            .chain([(src.as_ptr() as usize, 0)])
            .collect();
        let mut dst = vec![0u8; 3000];
        assert_eq!(read_from(me(), &ranges, &mut dst).unwrap(), 3000);
        assert!(dst.iter().eq(src.iter().rev()));
    }

    #[test]
    fn small_calls_resume_where_the_last_stopped() {
        let src: Vec<u8> = (0..100u8).collect();
        let base = src.as_ptr() as usize;
        let ranges = [(base + 90, 10), (base, 0), (base, 45), (base + 50, 13)];
        let mut dst = vec![0u8; 70];
        assert_eq!(read_chunked(me(), &ranges, &mut dst, 7).unwrap(), 68);
        let want: Vec<u8> = (90..100).chain(0..45).chain(50..63).collect();
        assert_eq!(&dst[..68], &want[..]);
    }

    #[test]
    fn scatters_into_many_runs_across_iov_max() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
        let mut dst = vec![0u8; 3 * 2500];
        // 2500 two-byte runs, one in every three bytes of `dst`, and an empty run.
        let base = dst.as_mut_ptr() as usize;
        let runs: Vec<(usize, usize)> = (0..2500)
            .map(|k| (base + 3 * k, 2))
            .chain([(base, 0)])
            .collect();
        // SAFETY: the runs are inside `dst`, which no reference covers meanwhile.
        let n = unsafe { read_scatter(me(), src.as_ptr() as usize, &runs) }.unwrap();
        assert_eq!(n, 5000);
        for k in 0..2500 {
            assert_eq!(&dst[3 * k..3 * k + 2], &src[2 * k..2 * k + 2], "run {k}");
            assert_eq!(dst[3 * k + 2], 0);
        }
        // SAFETY: as above; the remote range is unmapped.
        let e = unsafe { read_scatter(me(), 8, &runs[..1]) }.unwrap_err();
        assert!(e.to_string().contains("process_vm_readv"), "{e}");
    }

    #[test]
    fn errors_name_the_problem() {
        let mut dst = [0u8; 4];
        let e = read_from(me(), &[(0x1000, 8)], &mut dst).unwrap_err();
        assert!(e.to_string().contains("4-byte local buffer"), "{e}");
        let e = read_from(me(), &[(8, 4)], &mut dst).unwrap_err();
        assert!(e.to_string().contains("process_vm_readv"), "{e}");
        assert!(matches!(probe(me(), 8, b"abcd"), CmaStatus::Disabled(_)));
        let word = *b"probe!";
        assert_eq!(
            probe(me(), word.as_ptr() as usize, &word),
            CmaStatus::Enabled
        );
    }
}
