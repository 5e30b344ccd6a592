//! What oxrun_multihost's tests share: two test hosts (network namespaces
//! on a private bridge, from `oxmpi_tests::hosts`), oxrun started on them,
//! and the checks of where a process runs.

pub mod jobs;
pub mod roles;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use oxmpi_tests::hosts::TestHosts;

use crate::common::{command, run_cmd, Outcome};

pub const LIMIT: Duration = Duration::from_secs(30);
/// How fast a failure or a lost controller must end the job.
pub const PROMPT: Duration = Duration::from_secs(2);

/// Two test hosts (`hosts[0]`, `hosts[1]`), reached with `ip netns exec`
/// (the launch command of these tests: no private hostname or /dev/shm).
/// Everything is removed on drop, also when the test fails.
pub struct TestNet {
    /// The hosts' (and their namespaces') names.
    pub hosts: [String; 2],
    /// What every host name starts with.
    pub id: String,
    /// Scratch directory of this test.
    pub dir: PathBuf,
    fixture: TestHosts,
}

impl TestNet {
    pub fn new() -> TestNet {
        let fixture = TestHosts::new(2).unwrap_or_else(|e| {
            panic!(
                "cannot build the test hosts: {e}\n(these tests need root and iproute2's \
                 'ip netns'; CI provides both)"
            )
        });
        TestNet {
            hosts: [fixture.names()[0].clone(), fixture.names()[1].clone()],
            id: fixture.name_prefix().to_string(),
            dir: fixture.dir().to_path_buf(),
            fixture,
        }
    }

    /// oxrun arguments that make the namespaces the job's remote hosts.
    fn oxrun_args(&self, hosts: &str) -> Vec<String> {
        vec![
            "--launcher-cmd".into(),
            "ip netns exec".into(),
            "--control-addr".into(),
            self.fixture.control_addr().into(),
            "--host".into(),
            hosts.into(),
        ]
    }

    /// `a:2,b:2` with the namespace names filled in for `a` and `b`.
    fn host_list(&self, pattern: &str) -> String {
        pattern
            .split(',')
            .map(|item| {
                let (name, slots) = item.split_once(':').unwrap_or((item, ""));
                let name = match name {
                    "a" => self.hosts[0].as_str(),
                    "b" => self.hosts[1].as_str(),
                    other => other,
                };
                if slots.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}:{slots}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Writes an executable shell script into this test's directory.
    pub fn script(&self, name: &str, body: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// Cuts host `i`'s link (or mends it).
    pub fn set_link(&self, i: usize, up: bool) {
        self.fixture.set_link(i, up).unwrap();
    }

    /// Live (not zombie) processes on either host.
    fn live_processes(&self) -> Vec<i32> {
        (0..2)
            .flat_map(|i| self.fixture.processes_on(i))
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| !s.contains(") Z "))
            })
            .collect()
    }

    /// Waits until neither test host has a process left, up to `limit`;
    /// returns the survivors.
    pub fn wait_hosts_empty(&self, limit: Duration) -> Vec<i32> {
        let start = Instant::now();
        loop {
            let left = self.live_processes();
            if left.is_empty() || start.elapsed() > limit {
                return left;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// (device, inode) of a network namespace file.
pub fn netns_id(path: &str) -> (u64, u64) {
    let m = std::fs::metadata(path).unwrap_or_else(|e| panic!("stat {path}: {e}"));
    (m.dev(), m.ino())
}

pub fn netns_of_pid(pid: i32) -> Option<(u64, u64)> {
    let m = std::fs::metadata(format!("/proc/{pid}/ns/net")).ok()?;
    Some((m.dev(), m.ino()))
}

pub fn oxrun_cmd(net: &TestNet, hosts: &str, rest: &[&str]) -> Command {
    oxrun_cmd_via(net, "ip netns exec", hosts, rest)
}

/// oxrun on the test hosts with another launch command.
pub fn oxrun_cmd_via(net: &TestNet, launcher: &str, hosts: &str, rest: &[&str]) -> Command {
    let mut args = net.oxrun_args(&net.host_list(hosts));
    args[1] = launcher.to_string();
    args.extend(rest.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = command(&refs);
    cmd.env_remove("RUST_BACKTRACE");
    cmd
}

pub fn oxrun(net: &TestNet, hosts: &str, rest: &[&str]) -> Outcome {
    run_cmd(oxrun_cmd(net, hosts, rest), None, LIMIT)
}

pub fn oxrun_lines(out: &Outcome) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("oxrun:"))
        .collect()
}

pub fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.sort();
    lines
}
