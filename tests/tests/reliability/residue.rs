//! Finding a job's processes and its `/dev/shm` segment files, and killing
//! parts of the job at chosen moments.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The variable that marks every process of one job (oxrun, agent, ranks).
pub const MARK_VAR: &str = "OXMPI_RESIDUE_MARK";

/// A small xorshift generator: random enough for kill points.
pub struct Rng(u64);

impl Rng {
    /// Seeded from the clock; prints the seed so a failure can be replayed.
    pub fn from_clock() -> Rng {
        let seed = std::env::var("OXMPI_RESIDUE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos() as u64 | 1);
        eprintln!("residue test seed: OXMPI_RESIDUE_SEED={seed}");
        Rng(seed)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Live (non-zombie) processes whose environment holds `MARK_VAR=mark`.
pub fn marked(mark: &str) -> Vec<i32> {
    let needle = format!("{MARK_VAR}={mark}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z ") || s.contains(") X "))
            .unwrap_or(true);
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if !zombie && env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// The marked processes that run the test binary itself: the ranks.
pub fn ranks(mark: &str) -> Vec<i32> {
    let me = std::env::current_exe().unwrap();
    marked(mark)
        .into_iter()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == me))
        .collect()
}

/// The marked process that is oxrun's host agent (`oxrun --proxy-fd`).
pub fn agent(mark: &str) -> Option<i32> {
    marked(mark).into_iter().find(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"--proxy-fd"))
    })
}

/// Waits until no process carries `mark`, up to `limit`; returns the survivors.
pub fn wait_gone(mark: &str, limit: Duration) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = marked(mark);
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Names in `/dev/shm` of segment files of the job oxrun `pid` ran.
pub fn job_files(oxrun_pid: u32) -> Vec<String> {
    let prefix = format!("oxmpi-kvs_{oxrun_pid}_0-");
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// Starts `oxrun -n ranks` on this test binary's `role_entry` with `env`,
/// marked with `mark`, in its own process group, output discarded.
pub fn start(oxrun: &Path, ranks: usize, role: &str, mark: &str, env: &[(&str, &str)]) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(oxrun);
    cmd.args(["-n", &ranks.to_string()])
        .arg(exe)
        .args([
            "--exact",
            "role_entry",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(oxmpi_tests::ROLE_VAR, role)
        .env(MARK_VAR, mark)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    cmd.spawn().expect("spawn oxrun")
}

/// Waits for `child` up to `limit`; kills its group and panics past it.
pub fn wait_child(child: &mut Child, limit: Duration) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the test's own child process group.
            unsafe { nix::libc::kill(-(child.id() as i32), nix::libc::SIGKILL) };
            let _ = child.wait();
            panic!("oxrun did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
