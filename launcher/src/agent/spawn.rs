//! Starting one rank: its PMI socket, output pipes, environment, process
//! group, death signal and core binding.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

use crate::proto::LaunchSpec;

/// The agent's handles on one started rank.
pub struct Started {
    /// Process id.
    pub pid: i32,
    /// Our end of the PMI socket.
    pub pmi: OwnedFd,
    /// Read ends of its stdout and stderr.
    pub stdout: OwnedFd,
    /// See `stdout`.
    pub stderr: OwnedFd,
    /// Write end of its stdin, if oxrun's stdin goes to it.
    pub stdin: Option<OwnedFd>,
}

/// Starts global rank `rank`, the `local_index`-th rank on this host.
pub fn start_rank(
    spec: &LaunchSpec,
    rank: u32,
    local_index: usize,
    cpus: Option<&[usize]>,
) -> io::Result<Started> {
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    let child_fd = theirs.as_raw_fd();
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env("PMI_FD", child_fd.to_string())
        .env("PMI_RANK", rank.to_string())
        .env("PMI_SIZE", spec.size.to_string())
        .env("PMI_JOBID", &spec.jobid)
        .env("MPI_LOCALNRANKS", spec.ranks.len().to_string())
        .env("MPI_LOCALRANKID", local_index.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !spec.cwd.is_empty() {
        cmd.current_dir(&spec.cwd);
    }
    let with_stdin = spec.forward_stdin && rank == 0;
    cmd.stdin(if with_stdin {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let cpu_set = cpus.map(|list| {
        let mut set = nix::sched::CpuSet::new();
        for &c in list {
            let _ = set.set(c);
        }
        set
    });
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe system calls on values prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            // Its own process group: signals reach the rank and its children.
            libc::setpgid(0, 0);
            // Die with the agent, so no rank outlives a killed launcher.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() == 1 {
                libc::_exit(127);
            }
            crate::signals::reset_in_child();
            // The rank gets 0-2 and its PMI socket, nothing else: no
            // descriptor of the agent's, nor any oxrun inherited.
            cloexec_above_stdio();
            // Keep the PMI socket across exec.
            let flags = libc::fcntl(child_fd, libc::F_GETFD);
            libc::fcntl(child_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            if let Some(set) = &cpu_set {
                let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), set);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot start '{}': {e}", spec.program)))?;
    drop(theirs);
    let take = |fd: Option<OwnedFd>| fd.expect("piped stream");
    let stdout = take(child.stdout.take().map(OwnedFd::from));
    let stderr = take(child.stderr.take().map(OwnedFd::from));
    let stdin = child.stdin.take().map(OwnedFd::from);
    Ok(Started {
        pid: child.id() as i32,
        pmi: ours,
        stdout,
        stderr,
        stdin,
    })
}

/// Marks every descriptor above 2 close-on-exec. Async-signal-safe (runs
/// between fork and exec): close_range(2) where the kernel has it (5.11),
/// else fcntl on each number below the descriptor limit.
fn cloexec_above_stdio() {
    // SAFETY: raw system calls with integer arguments only.
    unsafe {
        let all = libc::c_uint::MAX;
        if libc::syscall(libc::SYS_close_range, 3, all, libc::CLOSE_RANGE_CLOEXEC) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as i32
        } else {
            1024
        };
        for fd in 3..top {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Sends `sig` to a rank's whole process group (falling back to the pid).
pub fn signal_rank(pid: i32, sig: i32) {
    // SAFETY: plain kill(2) calls.
    unsafe {
        if libc::kill(-pid, sig) != 0 {
            libc::kill(pid, sig);
        }
    }
}

/// SIGKILLs what is left of a reaped rank's process group (its own
/// children). Only the group: the pid itself may already be reused.
pub fn kill_group(pid: i32) {
    // SAFETY: plain kill(2) on a process group.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}

/// Wraps a raw descriptor number inherited from the parent.
///
/// # Safety
/// `fd` must be open and owned by nobody else in this process.
pub unsafe fn adopt(fd: i32) -> OwnedFd {
    OwnedFd::from_raw_fd(fd)
}
