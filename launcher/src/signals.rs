//! Signals as file descriptors: the event loops block the signals they care
//! about and read them from a signalfd, so no handler runs concurrently.

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// Blocks `signals` in this thread and returns a non-blocking signalfd for them.
pub fn signal_fd(signals: &[Signal]) -> nix::Result<SignalFd> {
    let mut set = SigSet::empty();
    for &s in signals {
        set.add(s);
    }
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
    SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
}

/// Reads every pending signal number from `fd`.
pub fn drain(fd: &mut SignalFd) -> Vec<i32> {
    let mut out = Vec::new();
    while let Ok(Some(info)) = fd.read_signal() {
        out.push(info.ssi_signo as i32);
    }
    out
}

/// Ignores SIGPIPE so a closed peer shows up as EPIPE, not a dead launcher.
pub fn ignore_sigpipe() {
    // SAFETY: installing SIG_IGN has no handler code to be unsafe about.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// In a freshly forked child: empty the signal mask and restore default
/// dispositions, so the program starts as if launched from a shell.
/// Async-signal-safe.
pub fn reset_in_child() {
    // SAFETY: only async-signal-safe libc calls on stack data.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        for sig in [
            libc::SIGPIPE,
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGCHLD,
            libc::SIGHUP,
        ] {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

/// The conventional name of a signal, e.g. "SIGSEGV (Segmentation fault)".
pub fn describe(sig: i32) -> String {
    let name = Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"));
    // SAFETY: strsignal returns a pointer to a static or thread-local string.
    let text = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
    format!("{name} ({})", text.to_string_lossy())
}
