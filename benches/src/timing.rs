//! Wall-clock timing of a whole job, with a hard timeout.
//!
//! The job (a launcher and everything it starts) runs in its own process
//! group with stdin and stdout on `/dev/null`; stderr goes to a scratch file
//! that is only read when the job fails. The clock runs from just before
//! `spawn` to the moment the launcher exits.

use std::fmt;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag};
use nix::unistd::Pid;

/// How long a timed-out job gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Why a timed run produced no sample.
#[derive(Debug)]
pub enum RunError {
    /// The program could not be started or waited for.
    Io(std::io::Error),
    /// The job exited unsuccessfully.
    Failed {
        /// Exit status, as the standard library prints it.
        status: String,
        /// The end of its standard error.
        stderr: String,
    },
    /// The job ran past its timeout and was killed.
    TimedOut(Duration),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Io(e) => write!(f, "{e}"),
            RunError::Failed { status, stderr } => write!(f, "{status}; stderr:\n{stderr}"),
            RunError::TimedOut(t) => write!(f, "timed out after {t:?} (job killed)"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<std::io::Error> for RunError {
    fn from(e: std::io::Error) -> Self {
        RunError::Io(e)
    }
}

/// Runs commands one at a time, each under the same hard timeout.
#[derive(Debug)]
pub struct Timer {
    timeout: Duration,
    stderr_path: PathBuf,
}

impl Timer {
    /// A timer that kills any job still running after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("oxmpi-bench-stderr-{}-{n}", std::process::id());
        Timer {
            timeout,
            stderr_path: std::env::temp_dir().join(name),
        }
    }

    /// Runs `cmd` to completion and returns its wall-clock time.
    pub fn run(&self, cmd: &mut Command) -> Result<Duration, RunError> {
        let stderr = File::create(&self.stderr_path)?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn()?;
        let pid = Pid::from_raw(child.id() as i32);
        let (done, wake) = mpsc::channel::<()>();
        let timeout = self.timeout;
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
        let status = child.wait()?;
        waited.map_err(std::io::Error::from)?;
        if timed_out {
            return Err(RunError::TimedOut(self.timeout));
        }
        if !status.success() {
            return Err(RunError::Failed {
                status: status.to_string(),
                stderr: self.stderr_tail(),
            });
        }
        Ok(elapsed)
    }

    /// The last 2 KiB of the latest job's standard error.
    fn stderr_tail(&self) -> String {
        let text = std::fs::read(&self.stderr_path).unwrap_or_default();
        let tail = &text[text.len().saturating_sub(2048)..];
        String::from_utf8_lossy(tail).into_owned()
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn times_a_successful_job() {
        let t = Timer::new(Duration::from_secs(10));
        let took = t.run(&mut sh("sleep 0.05")).unwrap();
        assert!(took >= Duration::from_millis(50), "{took:?}");
    }

    #[test]
    fn reports_failure_with_stderr() {
        let t = Timer::new(Duration::from_secs(10));
        let err = t.run(&mut sh("echo boom >&2; exit 3")).unwrap_err();
        assert!(matches!(&err, RunError::Failed { stderr, .. } if stderr.contains("boom")));
    }

    #[test]
    fn kills_a_job_past_its_timeout() {
        let t = Timer::new(Duration::from_millis(100));
        let start = Instant::now();
        let err = t.run(&mut sh("sleep 30 & sleep 30")).unwrap_err();
        assert!(matches!(err, RunError::TimedOut(_)), "{err}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
