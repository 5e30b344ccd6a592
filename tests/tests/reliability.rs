//! Reliability through the real launcher: what a job leaves behind when
//! its processes are killed at any moment. This test binary re-runs itself
//! as the ranks (role in OXMPI_TEST_ROLE).

#[path = "reliability/residue.rs"]
mod residue;
#[path = "reliability/roles.rs"]
mod roles;

use std::time::{Duration, Instant};

use residue::Rng;

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var(oxmpi_tests::ROLE_VAR) {
        roles::run(&role);
    }
}

/// One job killed at a random moment of its life: oxrun or one rank, by
/// SIGKILL or SIGTERM. Returns what it left in /dev/shm (and removes it).
fn kill_once(rng: &mut Rng, memfd: &str, n: u32, life: Duration) -> (String, Vec<String>) {
    let mark = format!("{}-{memfd}-{n}", std::process::id());
    let env = [("OXMPI_SHM_MEMFD", memfd)];
    let mut child = residue::start(&oxmpi_tests::oxrun(), 3, "init", &mark, &env);
    let pid = child.id();
    let sig = if rng.below(2) == 0 {
        nix::libc::SIGKILL
    } else {
        nix::libc::SIGTERM
    };
    let target = rng.below(3);
    let delay = Duration::from_micros(rng.below(life.as_micros() as u64 + 1));
    let start = Instant::now();
    let victim = if target == 0 {
        std::thread::sleep(delay);
        Some(pid as i32)
    } else if target == 1 {
        std::thread::sleep(delay);
        residue::agent(&mark)
    } else {
        // A rank: wait for the ranks to exist, then for the chosen moment.
        let mut found = Vec::new();
        while found.len() < 3 && child.try_wait().unwrap().is_none() {
            found = residue::ranks(&mark);
        }
        std::thread::sleep(delay.saturating_sub(start.elapsed()));
        found.get(rng.below(3) as usize).copied()
    };
    if let Some(v) = victim {
        // SAFETY: kill(2) on a process of the job this test started.
        unsafe { nix::libc::kill(v, sig) };
    }
    residue::wait_child(&mut child, Duration::from_secs(20));
    let left = residue::wait_gone(&mark, Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "processes {left:?} of job {mark} outlived it"
    );
    let files = residue::job_files(pid);
    for f in &files {
        let _ = std::fs::remove_file(std::path::Path::new("/dev/shm").join(f));
    }
    let what = format!(
        "OXMPI_SHM_MEMFD={memfd}: {} {} after {delay:?}",
        if sig == nix::libc::SIGKILL {
            "SIGKILL"
        } else {
            "SIGTERM"
        },
        ["to oxrun", "to the agent", "to a rank"][target as usize],
    );
    eprintln!("{what}: job ended {:?} after it started", start.elapsed());
    (what, files)
}

#[test]
fn killed_jobs_leave_no_shared_memory_files() {
    let mut rng = Rng::from_clock();
    // How long a whole job takes here: kill points spread over it.
    let t = Instant::now();
    let mut child = residue::start(&oxmpi_tests::oxrun(), 3, "init", "probe", &[]);
    residue::wait_child(&mut child, Duration::from_secs(60));
    assert!(
        child.wait().unwrap().success(),
        "the undisturbed job failed"
    );
    let life = t.elapsed();
    let mut leaks = Vec::new();
    for memfd in ["off", "on"] {
        for n in 0..30 {
            let (what, files) = kill_once(&mut rng, memfd, n, life);
            if !files.is_empty() {
                leaks.push(format!("{what}: left {files:?}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "{} of 60 killed jobs left segment files (job took {life:?} undisturbed):\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

/// A singleton (no launcher) aborting with 256 must not exit with status 0,
/// which is what 256's low 8 bits would give.
#[test]
fn singleton_abort_with_256_exits_non_zero() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "role_entry",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(oxmpi_tests::ROLE_VAR, "abort256")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .output()
        .expect("run the singleton");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        (out.status.code(), out.status.signal()),
        (Some(1), None),
        "MPI_Abort(256) as a singleton:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
