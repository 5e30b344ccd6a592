//! Helpers shared by the cross-crate integration tests.
//!
//! The tests in `tests/tests/` run real multi-process jobs: C MPI programs
//! from `tests/c/`, compiled against MPICH, launched by `oxrun` (and, as a
//! reference, by MPICH's own `mpiexec.hydra`). This crate finds those tools,
//! compiles the programs once, and runs jobs with a hard timeout.
//!
//! # Running
//!
//! `cargo test -p oxmpi-tests` builds only this crate's targets and their
//! library dependencies; it does not build the `oxrun` binary of
//! `oxmpi-launcher`. Build all binaries first:
//!
//! ```text
//! cargo build --workspace && cargo test -p oxmpi-tests
//! ```
//!
//! [`oxrun`] panics with that advice when the binary is missing.
//!
//! # Environment
//!
//! - `OXRUN=/path/to/launcher` replaces `target/<profile>/oxrun` (e.g. point
//!   it at `mpiexec.hydra` to check the harness and programs on their own).
//! - MPICH (`mpicc.mpich`, `mpiexec.hydra`) must be installed; the tests fail,
//!   rather than skip, when it is not (see [`SETUP_HINT`]).
//!
//! # Isolation
//!
//! Tests run in parallel. Each job runs in its own fresh temporary directory
//! (its working directory and `TMPDIR`) and in its own process group, which
//! is killed when the job outlives its timeout.
#![deny(missing_docs)]

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

pub mod hosts;

/// What to do when MPICH is missing; part of every such failure message.
pub const SETUP_HINT: &str = "MPICH is required by these tests (CI installs it): run the \
     setup script, or install it by hand with `sudo apt-get install mpich libmpich-dev`";

/// How long a job's output pipes may stay open after the launcher exited
/// before the job counts as having left processes behind.
const OUTLIVE_GRACE: Duration = Duration::from_secs(2);

/// `target/<profile>/`: the test executable lives in its `deps/` folder.
pub fn target_profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("cannot locate the test executable");
    let deps = exe.parent().expect("test executable has no parent folder");
    let dir = if deps.file_name() == Some(OsStr::new("deps")) {
        deps.parent().expect("deps folder has no parent")
    } else {
        deps
    };
    dir.to_path_buf()
}

/// The launcher under test: `$OXRUN` if set, else `target/<profile>/oxrun`.
///
/// Panics with instructions when the binary has not been built.
pub fn oxrun() -> PathBuf {
    if let Some(path) = std::env::var_os("OXRUN") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "OXRUN={} does not name a file",
            path.display()
        );
        return path;
    }
    let path = target_profile_dir().join("oxrun");
    assert!(
        path.is_file(),
        "the oxrun binary is missing at {}: `cargo test -p oxmpi-tests` does not build it; \
         run `cargo build --workspace` (same profile as the tests) first",
        path.display()
    );
    path
}

/// Finds `name` in the directories of `$PATH`.
fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// MPICH's compiler wrapper `mpicc.mpich`, if it is on `$PATH`.
pub fn mpicc_mpich() -> Option<PathBuf> {
    find_in_path("mpicc.mpich")
}

/// MPICH's launcher `mpiexec.hydra`, if it is on `$PATH`.
pub fn mpiexec_hydra() -> Option<PathBuf> {
    find_in_path("mpiexec.hydra")
}

/// [`mpicc_mpich`], or a panic that says how to install MPICH.
pub fn require_mpicc_mpich() -> PathBuf {
    mpicc_mpich().unwrap_or_else(|| panic!("mpicc.mpich not found on PATH. {SETUP_HINT}"))
}

/// [`mpiexec_hydra`], or a panic that says how to install MPICH.
pub fn require_mpiexec_hydra() -> PathBuf {
    mpiexec_hydra().unwrap_or_else(|| panic!("mpiexec.hydra not found on PATH. {SETUP_HINT}"))
}

/// The folder holding the C test programs (`tests/c/`).
pub fn c_source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("c")
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Serialises compilations within one test process; across processes the
/// compile-then-rename in [`build_c`] keeps the result whole.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Compiles `tests/c/<name>.c` with `compiler` into
/// `target/<profile>/c-tests/<compiler file name>/<name>` and returns that
/// path. Compiles only when the binary is missing or older than the source
/// or the shared header `oxcheck.h`. Flags: `-O1 -g -Wall -Wextra -Werror`.
///
/// Panics, showing the compiler's output, when compilation fails.
pub fn build_c(name: &str, compiler: &Path) -> PathBuf {
    let src_dir = c_source_dir();
    let source = src_dir.join(format!("{name}.c"));
    let tag = compiler
        .file_name()
        .unwrap_or_else(|| panic!("compiler path {} has no file name", compiler.display()));
    let out_dir = target_profile_dir().join("c-tests").join(tag);
    let output = out_dir.join(name);

    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let newest_input = [source.clone(), src_dir.join("oxcheck.h")]
        .iter()
        .filter_map(|p| modified(p))
        .max()
        .unwrap_or_else(|| panic!("C source {} is missing", source.display()));
    if modified(&output).is_some_and(|built| built >= newest_input) {
        return output;
    }

    fs::create_dir_all(&out_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", out_dir.display()));
    let temp = out_dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = Command::new(compiler)
        .args(["-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(&src_dir)
        .arg("-o")
        .arg(&temp)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", compiler.display()));
    if !result.status.success() {
        let _ = fs::remove_file(&temp);
        panic!(
            "{} failed to compile {} ({}):\n{}{}",
            compiler.display(),
            source.display(),
            result.status,
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    fs::rename(&temp, &output).unwrap_or_else(|e| {
        panic!(
            "cannot rename {} to {}: {e}",
            temp.display(),
            output.display()
        )
    });
    output
}

/// A fresh, empty directory under the system temporary directory, removed
/// (with its contents) when dropped.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `<tmp>/oxmpi-tests-<pid>-<n>`, unique within this machine.
    pub fn new() -> ScratchDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("oxmpi-tests-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        ScratchDir(path)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Default for ScratchDir {
    fn default() -> Self {
        ScratchDir::new()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// How a job ended.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    /// The command line, for messages.
    pub command: String,
    /// Exit code, when the launcher exited normally.
    pub code: Option<i32>,
    /// Terminating signal, when the launcher was killed by one (SIGKILL
    /// after a timeout included).
    pub signal: Option<i32>,
    /// Everything the job wrote on stdout.
    pub stdout: String,
    /// Everything the job wrote on stderr.
    pub stderr: String,
    /// From spawning the launcher to seeing it exit.
    pub elapsed: Duration,
    /// Wall-clock time at which the launcher was seen to have exited.
    pub ended_at: SystemTime,
    /// The job ran past its timeout and its process group was killed.
    pub timed_out: bool,
    /// Some process (a rank, presumably) still held the job's stdout or
    /// stderr open for a grace period after the launcher exited; whatever was
    /// left of the job's process group was then killed.
    pub outlived: bool,
}

impl JobOutcome {
    /// Exited normally with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// A multi-line account of the job for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "command: {}\nexit code: {:?}, signal: {:?}, elapsed: {:.3?}, timed out: {}, \
             left processes behind: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command,
            self.code,
            self.signal,
            self.elapsed,
            self.timed_out,
            self.outlived,
            tail(&self.stdout, 6000),
            tail(&self.stderr, 6000)
        )
    }
}

/// The last `max` bytes of `s` (at a character boundary).
fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Runs `args[0]` with arguments `args[1..]` in a fresh [`ScratchDir`] (also
/// its `TMPDIR`); see [`run_command`].
pub fn run_job<S: AsRef<OsStr>>(args: &[S], timeout: Duration) -> JobOutcome {
    let (program, rest) = args.split_first().expect("run_job needs a program");
    let scratch = ScratchDir::new();
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .current_dir(scratch.path())
        .env("TMPDIR", scratch.path());
    run_command(cmd, timeout)
}

/// Reads a pipe to its end into a shared buffer, so that whatever arrived is
/// available even if a straggler keeps the pipe open.
fn drain<R: Read + Send + 'static>(mut pipe: R) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buf);
    let handle = thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => sink.lock().unwrap().extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    (buf, handle)
}

/// Waits until every handle finished or `deadline` passed; true if all did.
fn join_until(handles: &[JoinHandle<()>], deadline: Instant) -> bool {
    while !handles.iter().all(|h| h.is_finished()) {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Runs `cmd` as the leader of a new process group with stdin closed and
/// stdout/stderr captured. If it has not exited after `timeout`, the whole
/// process group is killed with SIGKILL. If its output pipes stay open for
/// a grace period after it exits (a descendant outlived it), the group is
/// killed too and [`JobOutcome::outlived`] is set. Never hangs on the
/// launcher's descendants that stay in its process group.
///
/// Panics if the command cannot be started.
pub fn run_command(mut cmd: Command, timeout: Duration) -> JobOutcome {
    let command = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{command}`: {e}"));
    let group = Pid::from_raw(child.id() as i32);
    let (out, out_reader) = drain(child.stdout.take().expect("stdout is piped"));
    let (err, err_reader) = drain(child.stderr.take().expect("stderr is piped"));

    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the job failed") {
            break status;
        }
        if start.elapsed() >= timeout {
            // The leader is not reaped yet, so the group id is still ours.
            timed_out = true;
            let _ = killpg(group, Signal::SIGKILL);
            break child.wait().expect("waiting for the killed job failed");
        }
        thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let ended_at = SystemTime::now();

    let readers = [out_reader, err_reader];
    let outlived = !join_until(&readers, Instant::now() + OUTLIVE_GRACE);
    if outlived {
        // Stragglers still hold the pipes, so the group still exists.
        let _ = killpg(group, Signal::SIGKILL);
        join_until(&readers, Instant::now() + OUTLIVE_GRACE);
    }
    let text =
        |buf: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&buf.lock().unwrap()).into_owned();
    JobOutcome {
        command,
        code: status.code(),
        signal: status.signal(),
        stdout: text(&out),
        stderr: text(&err),
        elapsed,
        ended_at,
        timed_out,
        outlived,
    }
}

/// Environment variable naming the role a re-executed test binary plays.
pub const ROLE_VAR: &str = "OXMPI_TEST_ROLE";

/// Runs the current test binary as `ranks` ranks under `launcher`: each
/// rank runs only the test named `role_entry`, which reads [`ROLE_VAR`]
/// (set to `role`) to know what to do. `env` adds variables for the job.
pub fn role_job<K: AsRef<OsStr>, V: AsRef<OsStr>>(
    launcher: &Path,
    ranks: usize,
    role: &str,
    env: &[(K, V)],
    timeout: Duration,
) -> JobOutcome {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(launcher);
    cmd.args(["-n", &ranks.to_string()])
        .arg(exe)
        .args([
            "--exact",
            "role_entry",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(ROLE_VAR, role)
        .envs(env.iter().map(|(k, v)| (k, v)));
    run_command(cmd, timeout)
}

/// Like [`role_job`], with the ranks placed on test hosts: `ranks[i]` of
/// them on host `i` of `hosts`, started through oxrun's launch command,
/// with `extra` oxrun arguments (e.g. `--map-by node`); the role and `env`
/// travel with `-x`.
pub fn role_job_on(
    hosts: &hosts::TestHosts,
    ranks: &[usize],
    extra: &[&str],
    role: &str,
    env: &[(&str, &str)],
    timeout: Duration,
) -> JobOutcome {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(oxrun());
    cmd.args(hosts.oxrun_args(ranks))
        .args(extra)
        .args(["-x", &format!("{ROLE_VAR}={role}")]);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(exe).args([
        "--exact",
        "role_entry",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ]);
    run_command(cmd, timeout)
}

/// `launcher -n N program args...` as an argument vector for [`run_job`].
pub fn launch_args(launcher: &Path, ranks: usize, program: &Path, args: &[&str]) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec![
        launcher.into(),
        "-n".into(),
        ranks.to_string().into(),
        program.into(),
    ];
    v.extend(args.iter().map(OsString::from));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let out = run_job(
            &["sh", "-c", "echo out; echo err >&2; exit 3"],
            Duration::from_secs(10),
        );
        assert_eq!(out.code, Some(3), "{}", out.describe());
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert!(!out.timed_out && !out.outlived);
    }

    #[test]
    fn reports_signals() {
        let out = run_job(&["sh", "-c", "kill -SEGV $$"], Duration::from_secs(10));
        assert_eq!(
            out.signal,
            Some(Signal::SIGSEGV as i32),
            "{}",
            out.describe()
        );
        assert_eq!(out.code, None);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let out = run_job(
            &["sh", "-c", "sleep 30 & sleep 30; echo never"],
            Duration::from_millis(300),
        );
        assert!(out.timed_out, "{}", out.describe());
        assert_eq!(out.signal, Some(Signal::SIGKILL as i32));
        assert!(!out.outlived, "the background sleep survived the kill");
        assert!(out.elapsed < Duration::from_secs(5), "{}", out.describe());
    }

    #[test]
    fn notices_descendants_that_outlive_the_leader() {
        let out = run_job(&["sh", "-c", "sleep 30 & exit 0"], Duration::from_secs(10));
        assert!(out.success(), "{}", out.describe());
        assert!(out.outlived, "{}", out.describe());
    }

    #[test]
    fn jobs_run_in_their_own_scratch_dir() {
        let a = run_job(&["sh", "-c", "pwd; touch marker"], Duration::from_secs(10));
        let b = run_job(&["sh", "-c", "pwd; ls"], Duration::from_secs(10));
        assert_ne!(a.stdout, b.stdout);
        assert_eq!(b.stdout.lines().count(), 1, "{}", b.describe());
    }
}
