//! Wall-clock timing of a whole job, with a hard timeout.
//!
//! The job (a launcher and everything it starts) runs in its own process
//! group with stdin and stdout on `/dev/null`; stderr goes to a scratch file
//! that is only read when the job fails. The clock runs from just before
//! `spawn` to the moment the launcher exits.

use std::fmt;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::capture::{run_in_own_group, scratch_file, tail_of};

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
        Timer {
            timeout,
            stderr_path: scratch_file("stderr"),
        }
    }

    /// Runs `cmd` to completion and returns its wall-clock time.
    pub fn run(&self, cmd: &mut Command) -> Result<Duration, RunError> {
        let stderr = File::create(&self.stderr_path)?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let (status, elapsed, timed_out) = run_in_own_group(cmd, self.timeout)?;
        if timed_out {
            return Err(RunError::TimedOut(self.timeout));
        }
        if !status.success() {
            return Err(RunError::Failed {
                status: status.to_string(),
                stderr: tail_of(&self.stderr_path),
            });
        }
        Ok(elapsed)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::capture::sh;

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
