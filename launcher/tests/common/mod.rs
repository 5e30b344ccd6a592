//! Running oxrun from tests with a hard time limit, so no test can hang.
#![allow(dead_code)]

pub mod pmi;

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished oxrun reported.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code (None when killed by a signal).
    pub code: Option<i32>,
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
}

/// Path of the oxrun binary built for these tests.
pub fn oxrun() -> &'static str {
    env!("CARGO_BIN_EXE_oxrun")
}

/// A Command for oxrun with `args`, in its own process group.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(oxrun());
    cmd.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    cmd.process_group(0);
    cmd
}

/// Runs oxrun with `args`, killing its process group after `limit`.
pub fn run(args: &[&str], limit: Duration) -> Outcome {
    run_cmd(command(args), None, limit)
}

/// Runs a prepared command, feeding `input` on stdin if given.
pub fn run_cmd(mut cmd: Command, input: Option<&[u8]>, limit: Duration) -> Outcome {
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn oxrun");
    if let Some(data) = input {
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(data).unwrap();
    }
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the test's own child process group.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("oxrun did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Outcome {
        code: status.code(),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
        elapsed: start.elapsed(),
    }
}

/// Pids of live processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true);
            if text.contains(marker) && !zombie {
                found.push(pid);
            }
        }
    }
    found
}

/// Waits until no process carries `marker`, up to `limit`; returns the survivors.
pub fn wait_gone(marker: &str, limit: Duration) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = processes_with(marker);
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the file at `path` has `n` lines (the ranks that write one
/// each have started), failing after `limit`.
pub fn wait_for_lines(path: &std::path::Path, n: usize, limit: Duration) {
    let start = Instant::now();
    while std::fs::read_to_string(path)
        .map(|s| s.lines().count())
        .unwrap_or(0)
        < n
    {
        assert!(start.elapsed() < limit, "ranks did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// oxrun arguments that re-run this test binary as a rank playing `role`
/// (its `role_entry` test reads OXRUN_TEST_ROLE).
pub fn self_as_rank(role: &str) -> Vec<String> {
    vec![
        "-x".into(),
        format!("OXRUN_TEST_ROLE={role}"),
        std::env::current_exe().unwrap().to_string_lossy().into(),
        "--exact".into(),
        "role_entry".into(),
        "--nocapture".into(),
        "--test-threads=1".into(),
        "-q".into(),
    ]
}
