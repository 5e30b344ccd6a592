//! Where the job's verdict (its one line on a failure) goes: oxrun's
//! stderr, or, for a job a rank spawned (`MPI_Comm_spawn`), the pipe the
//! parents' agent passed in [`VERDICT_FD_ENV`]: the parents' oxrun then
//! prints it as the whole job's one line.

use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Mutex;

use crate::agent::spawned::VERDICT_FD_ENV;

static PIPE: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Takes the verdict pipe named by [`VERDICT_FD_ENV`], if any, out of the
/// environment (the ranks must not see it) and out of every child's reach.
pub fn adopt() {
    let Some(fd) = std::env::var(VERDICT_FD_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    else {
        return;
    };
    std::env::remove_var(VERDICT_FD_ENV);
    // SAFETY: F_GETFD only reads the descriptor's flags; a bad number fails.
    if fd < 3 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return;
    }
    // SAFETY: the agent that started us passed this pipe end for us alone.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let _ = nix::fcntl::fcntl(
        fd,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    );
    *PIPE.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::fs::File::from(owned));
}

/// Says the job's verdict line (`oxrun: ` is prefixed on stderr).
pub fn say(line: &str) {
    let mut pipe = PIPE.lock().unwrap_or_else(|e| e.into_inner());
    let written = pipe.as_mut().is_some_and(|f| writeln!(f, "{line}").is_ok());
    if !written {
        eprintln!("oxrun: {line}");
    }
}
