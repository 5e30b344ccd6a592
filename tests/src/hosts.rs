//! Test hosts without a cluster: network namespaces on a private bridge.
//!
//! [`TestHosts::new`] makes `n` namespaces, each joined by a veth pair to a
//! bridge in the root namespace (a private /24 of 10.232-239.x.0), and a
//! launch command for `oxrun --launcher-cmd` that runs a command "on" a
//! host: inside its namespace, with its own hostname, SysV IPC and a
//! private tmpfs on /dev/shm, as a separate machine would have (without
//! that, shared memory would reach across the fake hosts). Everything is
//! removed on drop, also when the test fails; objects left by a test
//! process killed outright are swept by the next fixture.
//!
//! Needs root and iproute2; [`TestHosts::new`] says so in its error. The
//! suites here skip with that message when not root; the launcher's
//! (launcher/tests/oxrun_multihost.rs, which reach the hosts with plain
//! `ip netns exec`) fail with it.

use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

static NEXT: AtomicUsize = AtomicUsize::new(0);
static SWEEP: Once = Once::new();

/// Runs `ip ARGS`; the error names the command and what it printed.
fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run 'ip': {e} (is iproute2 installed?)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "'ip {}' failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Why these tests cannot run here, or None when they can.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { nix::libc::geteuid() };
    if euid != 0 {
        return Some(format!(
            "network-namespace test hosts need root (running as uid {euid}); CI runs them as root"
        ));
    }
    if Command::new("unshare").arg("--version").output().is_err() {
        return Some("network-namespace test hosts need util-linux's unshare".into());
    }
    None
}

/// Our objects are named `t<pid hex>-<n>...`; the pid in a name.
fn owner_pid(name: &str) -> Option<i32> {
    let (pid, _) = name.strip_prefix('t')?.split_once('-')?;
    i32::from_str_radix(pid, 16).ok()
}

/// Removes namespaces and links of test processes that died without
/// running their destructors (SIGKILL), or of an earlier process that had
/// our pid (this runs before we make any).
fn sweep_stale() {
    let me = std::process::id() as i32;
    let stale = |name: &str| {
        owner_pid(name).is_some_and(|pid| pid == me || !Path::new(&format!("/proc/{pid}")).exists())
    };
    if let Ok(list) = ip(&["-o", "link", "show"]) {
        for line in list.lines() {
            let Some(name) = line.split(": ").nth(1) else {
                continue;
            };
            let name = name.split('@').next().unwrap_or(name);
            if stale(name) {
                let _ = ip(&["link", "del", name]);
            }
        }
    }
    if let Ok(list) = ip(&["netns", "list"]) {
        for line in list.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            if stale(name) {
                kill_all_in(name);
                let _ = ip(&["netns", "del", name]);
            }
        }
    }
}

/// Pids of the processes inside namespace `ns`.
fn pids_in(ns: &str) -> Vec<i32> {
    ip(&["netns", "pids", ns])
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn kill_all_in(ns: &str) {
    for pid in pids_in(ns) {
        // SAFETY: kill(2) of a process inside our own test namespace.
        unsafe { nix::libc::kill(pid, nix::libc::SIGKILL) };
    }
}

/// `n` test hosts on one bridge; see the module docs.
pub struct TestHosts {
    id: String,
    names: Vec<String>,
    ips: Vec<String>,
    ctl_ip: String,
    links: Vec<String>,
    dir: PathBuf,
    launch: PathBuf,
}

impl TestHosts {
    /// Builds `n` hosts; the error says why they cannot be built.
    pub fn new(n: usize) -> Result<TestHosts, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        SWEEP.call_once(sweep_stale);
        let k = NEXT.fetch_add(1, Ordering::SeqCst);
        let id = format!("t{:x}-{k}", std::process::id());
        let dir = std::env::temp_dir().join(format!("oxmpi-hosts-{id}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut hosts = TestHosts {
            names: (0..n).map(|i| format!("{id}h{i}")).collect(),
            ips: Vec::new(),
            ctl_ip: String::new(),
            links: Vec::new(),
            launch: dir.join("on-host"),
            dir,
            id: id.clone(),
        };
        hosts.build(&id)?;
        hosts.write_launcher()?;
        Ok(hosts)
    }

    fn build(&mut self, id: &str) -> Result<(), String> {
        let bridge = format!("{id}br");
        {
            let _lock = SubnetLock::take()?;
            let prefix = free_subnet()?;
            ip(&["link", "add", &bridge, "type", "bridge"])?;
            self.links.push(bridge.clone());
            self.ctl_ip = format!("{prefix}.1");
            ip(&[
                "addr",
                "add",
                &format!("{}/24", self.ctl_ip),
                "dev",
                &bridge,
            ])?;
            ip(&["link", "set", &bridge, "up"])?;
            self.ips = (0..self.names.len())
                .map(|i| format!("{prefix}.{}", i + 2))
                .collect();
        }
        for (name, addr) in self.names.clone().iter().zip(self.ips.clone()) {
            let (outer, inner) = (format!("{name}o"), format!("{name}i"));
            ip(&["netns", "add", name])?;
            ip(&[
                "link", "add", &outer, "type", "veth", "peer", "name", &inner, "netns", name,
            ])?;
            self.links.push(outer.clone());
            ip(&["link", "set", &outer, "master", &bridge, "up"])?;
            ip(&[
                "-n",
                name,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                &inner,
            ])?;
            ip(&["-n", name, "link", "set", &inner, "up"])?;
            ip(&["-n", name, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    fn write_launcher(&self) -> Result<(), String> {
        let body = "#!/bin/sh\n\
            # oxrun's launch command for a test host: runs the command inside\n\
            # namespace $1 with its own hostname, SysV IPC and /dev/shm.\n\
            host=\"$1\"; shift\n\
            exec ip netns exec \"$host\" unshare --uts --ipc --mount --propagation private \\\n\
              sh -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && hostname \"$0\" && exec \"$@\"' \\\n\
              \"$host\" \"$@\"\n";
        std::fs::write(&self.launch, body).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&self.launch, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())
    }

    /// The launch command: `COMMAND HOST PROGRAM ARGS...` runs PROGRAM
    /// on test host HOST (what oxrun's `--launcher-cmd` takes).
    pub fn launch_command(&self) -> &Path {
        &self.launch
    }

    /// The bridge's own address (the root namespace's side of the link).
    pub fn control_addr(&self) -> &str {
        &self.ctl_ip
    }

    /// Host `i`'s address on the bridge.
    pub fn addr(&self, i: usize) -> &str {
        &self.ips[i]
    }

    /// The hosts' names (what `--host` takes).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// oxrun arguments placing `ranks[i]` ranks on host `i` (0: the host
    /// is left out): the launch command, the controller's address on the
    /// bridge, the host list, the total `-n`, no core binding (the fake
    /// hosts share the cores), and the ranks' cache directory in the
    /// fixture's (the fake hosts' names key the collective cost-model
    /// cache, which would otherwise pile up in the user's home).
    pub fn oxrun_args(&self, ranks: &[usize]) -> Vec<String> {
        let list: Vec<String> = ranks
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, n)| format!("{}:{n}", self.names[i]))
            .collect();
        vec![
            "--launcher-cmd".into(),
            self.launch.to_string_lossy().into_owned(),
            "--control-addr".into(),
            self.ctl_ip.clone(),
            "--host".into(),
            list.join(","),
            "-n".into(),
            ranks.iter().sum::<usize>().to_string(),
            "--bind-to".into(),
            "none".into(),
            "--env".into(),
            format!("XDG_CACHE_HOME={}", self.dir.join("cache").display()),
        ]
    }

    /// Bytes received by host `i`'s end of the link (its veth inside the
    /// namespace): what crossed the network to it.
    pub fn rx_bytes(&self, i: usize) -> u64 {
        let link = format!("{}i", self.names[i]);
        let out =
            ip(&["-n", &self.names[i], "-s", "-j", "link", "show", &link]).unwrap_or_default();
        // "..."rx":{"bytes":N,... in iproute2's JSON.
        out.split("\"rx\":{\"bytes\":")
            .nth(1)
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    /// Takes host `i`'s end of its link down (inside its namespace: no FIN,
    /// no RST reaches anyone, as with a cut cable), or up again.
    pub fn set_link(&self, i: usize, up: bool) -> Result<(), String> {
        let link = format!("{}i", self.names[i]);
        let state = if up { "up" } else { "down" };
        ip(&["-n", &self.names[i], "link", "set", &link, state]).map(|_| ())
    }

    /// Processes still running inside any of the hosts.
    pub fn leftover_processes(&self) -> Vec<i32> {
        self.names.iter().flat_map(|n| pids_in(n)).collect()
    }

    /// Processes running inside host `i`.
    pub fn processes_on(&self, i: usize) -> Vec<i32> {
        pids_in(&self.names[i])
    }

    /// What every host name (and every other object of this fixture)
    /// starts with.
    pub fn name_prefix(&self) -> &str {
        &self.id
    }

    /// A scratch directory of this fixture's own, removed on drop.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        for ns in &self.names {
            kill_all_in(ns);
        }
        for link in self.links.iter().rev() {
            let _ = ip(&["link", "del", link]);
        }
        for ns in &self.names {
            let _ = ip(&["netns", "del", ns]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An exclusive lock, shared by every test process, while a subnet is
/// picked and claimed.
struct SubnetLock(std::fs::File);

impl SubnetLock {
    fn take() -> Result<SubnetLock, String> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("oxmpi-test-hosts.lock"))
            .map_err(|e| format!("subnet lock: {e}"))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { nix::libc::flock(file.as_raw_fd(), nix::libc::LOCK_EX) } != 0 {
            return Err(format!("flock: {}", std::io::Error::last_os_error()));
        }
        Ok(SubnetLock(file))
    }
}

impl Drop for SubnetLock {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { nix::libc::flock(self.0.as_raw_fd(), nix::libc::LOCK_UN) };
    }
}

/// A /24 in 10.232.0.0 - 10.239.255.0 that no route here uses.
fn free_subnet() -> Result<String, String> {
    let seed = std::process::id() as usize;
    for attempt in 0..256 {
        let k = (seed + attempt * 97) % (8 * 256);
        let candidate = format!("10.{}.{}", 232 + k / 256, k % 256);
        let net = format!("{candidate}.0/24");
        let inside = ip(&["-4", "route", "show", "table", "all", "root", &net])?;
        let around = ip(&["-4", "route", "show", "table", "all", "match", &net])?;
        let used = !inside.trim().is_empty()
            || around
                .lines()
                .any(|l| !l.starts_with("default") && !l.starts_with("broadcast"));
        if !used {
            return Ok(candidate);
        }
    }
    Err("no free 10.232-239.x.0/24 subnet".into())
}
