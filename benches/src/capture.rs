//! Run a whole job under a hard timeout and keep what it printed.
//!
//! Like [`crate::timing`], but for benchmarks that report through their
//! standard output: the job (a launcher and everything it starts) runs in
//! its own process group, stdout and stderr go to scratch files, and a job
//! still running at the timeout gets SIGTERM, then SIGKILL after a grace
//! period. What it printed before it was killed is kept, so a benchmark
//! that writes each figure as soon as it has it leaves partial results.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag};
use nix::unistd::Pid;

/// How long a timed-out job gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Process group of the job running now (0: none), for [`kill_job_on_signals`].
static RUNNING: AtomicI32 = AtomicI32::new(0);

extern "C" fn kill_job_and_exit(sig: nix::libc::c_int) {
    let pgid = RUNNING.load(Ordering::SeqCst);
    // SAFETY: killpg and _exit are async-signal-safe.
    unsafe {
        if pgid > 0 {
            nix::libc::killpg(pgid, nix::libc::SIGKILL);
        }
        nix::libc::_exit(128 + sig);
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP to this process kill the job running
/// now before exiting. Jobs run in their own process group, so a Ctrl-C
/// at the terminal reaches only this process; without this, the job's
/// ranks (which may spin forever) would outlive it.
pub fn kill_job_on_signals() {
    let action = SigAction::new(
        SigHandler::Handler(kill_job_and_exit),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only calls async-signal-safe functions.
        let _ = unsafe { sigaction(sig, &action) };
    }
}

/// How a captured job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself with this status.
    Exited(ExitStatus),
    /// It ran past the timeout and was killed.
    TimedOut,
}

/// Everything a captured job left behind.
#[derive(Debug, Clone)]
pub struct Captured {
    /// How it ended.
    pub ending: Ending,
    /// Wall-clock time from spawn to the launcher's exit.
    pub elapsed: Duration,
    /// Its whole standard output (lossily decoded).
    pub stdout: String,
    /// The last 2 KiB of its standard error.
    pub stderr_tail: String,
}

impl Captured {
    /// Whether the job exited by itself with status 0.
    pub fn success(&self) -> bool {
        matches!(&self.ending, Ending::Exited(s) if s.success())
    }
}

/// Runs jobs one at a time, each under the same hard timeout.
#[derive(Debug)]
pub struct Capturer {
    timeout: Duration,
    stdout_path: PathBuf,
    stderr_path: PathBuf,
}

impl Capturer {
    /// A capturer that kills any job still running after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Capturer {
            timeout,
            stdout_path: scratch_file("stdout"),
            stderr_path: scratch_file("stderr"),
        }
    }

    /// The timeout every job runs under.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `cmd` (stdin on `/dev/null`) until it exits or times out.
    pub fn run(&self, cmd: &mut Command) -> std::io::Result<Captured> {
        cmd.stdin(Stdio::null())
            .stdout(File::create(&self.stdout_path)?)
            .stderr(File::create(&self.stderr_path)?);
        let (status, elapsed, timed_out) = run_in_own_group(cmd, self.timeout)?;
        let stdout = std::fs::read(&self.stdout_path).unwrap_or_default();
        Ok(Captured {
            ending: if timed_out {
                Ending::TimedOut
            } else {
                Ending::Exited(status)
            },
            elapsed,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr_tail: tail_of(&self.stderr_path),
        })
    }
}

/// A scratch file of this process's own, `oxmpi-bench-WHAT-PID-N` in the
/// temporary directory.
pub(crate) fn scratch_file(what: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let file = format!("oxmpi-bench-{what}-{}-{n}", std::process::id());
    std::env::temp_dir().join(file)
}

/// The last 2 KiB of `path`, lossily decoded.
pub(crate) fn tail_of(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let tail = &text[text.len().saturating_sub(2048)..];
    String::from_utf8_lossy(tail).into_owned()
}

/// Runs `cmd` (its standard streams already set) in a process group of its
/// own, which gets SIGTERM at `timeout`, SIGKILL after a grace period, and
/// SIGKILL again once the launcher is gone (whatever outlived it). The
/// exit status, the wall-clock time from spawn to the launcher's exit, and
/// whether it timed out.
pub(crate) fn run_in_own_group(
    cmd: &mut Command,
    timeout: Duration,
) -> std::io::Result<(ExitStatus, Duration, bool)> {
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = Pid::from_raw(child.id() as i32);
    RUNNING.store(pid.as_raw(), Ordering::SeqCst);
    let (done, wake) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || {
        if wake.recv_timeout(timeout) != Err(RecvTimeoutError::Timeout) {
            return false;
        }
        let _ = killpg(pid, Signal::SIGTERM);
        if wake.recv_timeout(GRACE) == Err(RecvTimeoutError::Timeout) {
            let _ = killpg(pid, Signal::SIGKILL);
        }
        true
    });
    // Wait without reaping: the zombie keeps the group id ours until the
    // watchdog is done, so it can never signal a recycled group.
    let waited = waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT);
    let elapsed = start.elapsed();
    drop(done);
    let timed_out = watchdog.join().unwrap_or(false);
    if timed_out {
        let _ = killpg(pid, Signal::SIGKILL);
    }
    RUNNING.store(0, Ordering::SeqCst);
    let status = child.wait()?;
    waited.map_err(std::io::Error::from)?;
    Ok((status, elapsed, timed_out))
}

impl Drop for Capturer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.stdout_path);
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}

/// Processes whose executable is one of `programs` (this process
/// excepted): left behind by a killed job when a launcher moved its ranks
/// out of the job's process group.
pub fn survivors(programs: &[&Path]) -> Vec<Pid> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let wanted: Vec<PathBuf> = programs
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != std::process::id() as i32)
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| wanted.contains(&exe))
        })
        .map(Pid::from_raw)
        .collect()
}

/// Kills (SIGKILL, one by one by pid) the [`survivors`] of `programs` and
/// returns how many there were.
pub fn kill_survivors(programs: &[&Path]) -> usize {
    let pids = survivors(programs);
    for &pid in &pids {
        let _ = kill(pid, Signal::SIGKILL);
    }
    if !pids.is_empty() {
        thread::sleep(Duration::from_millis(200));
    }
    pids.len()
}

/// Share of all CPUs' time spent busy (not idle or waiting for I/O) over
/// `window`, from `/proc/stat`; `None` where that cannot be read. Taken
/// while no job of ours runs, it is the load other programs put on the
/// machine.
pub fn cpu_busy(window: Duration) -> Option<f64> {
    fn sample() -> Option<(u64, u64)> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let line = text.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let idle = v.get(3)? + v.get(4).unwrap_or(&0);
        Some((v.iter().sum(), idle))
    }
    let (t0, i0) = sample()?;
    thread::sleep(window);
    let (t1, i1) = sample()?;
    let total = t1.checked_sub(t0).filter(|&t| t > 0)?;
    let idle = i1.saturating_sub(i0).min(total);
    Some(1.0 - idle as f64 / total as f64)
}

/// `sh -c SCRIPT`, for the tests of the runners.
#[cfg(test)]
pub(crate) fn sh(script: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_stdout_of_a_finished_job() {
        let c = Capturer::new(Duration::from_secs(10));
        let out = c.run(&mut sh("echo a; echo b >&2; echo c")).unwrap();
        assert!(out.success());
        assert_eq!(out.stdout, "a\nc\n");
        assert_eq!(out.stderr_tail, "b\n");
    }

    #[test]
    fn reports_failure() {
        let c = Capturer::new(Duration::from_secs(10));
        let out = c.run(&mut sh("exit 3")).unwrap();
        assert!(!out.success());
        assert!(matches!(out.ending, Ending::Exited(s) if s.code() == Some(3)));
    }

    #[test]
    fn busy_share_is_a_fraction() {
        let b = cpu_busy(Duration::from_millis(50)).unwrap();
        assert!((0.0..=1.0).contains(&b), "{b}");
    }

    #[test]
    fn keeps_partial_stdout_of_a_killed_job() {
        let c = Capturer::new(Duration::from_millis(300));
        let start = Instant::now();
        let out = c.run(&mut sh("echo early; sleep 30 & sleep 30")).unwrap();
        assert_eq!(out.ending, Ending::TimedOut);
        assert_eq!(out.stdout, "early\n");
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
