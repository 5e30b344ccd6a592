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

/// Why an unrelated process's read cannot show the restriction here, if so:
/// no Yama, a scope other than 1, or CAP_SYS_PTRACE (which bypasses Yama).
fn yama_untestable() -> Option<String> {
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope");
    let scope = match scope {
        Err(_) => return Some("Yama is absent (no /proc/sys/kernel/yama/ptrace_scope)".into()),
        Ok(s) if s.trim() != "1" => return Some(format!("Yama ptrace_scope is {}", s.trim())),
        Ok(s) => s,
    };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    const CAP_SYS_PTRACE: u32 = 19;
    (cap_eff & (1 << CAP_SYS_PTRACE) != 0).then(|| {
        format!(
            "ptrace_scope is {} but this test has CAP_SYS_PTRACE",
            scope.trim()
        )
    })
}

/// Runs the `ptrace` job; returns the exit status of an unrelated process
/// (a child of this harness, not of oxrun's agent) reading rank 0.
fn unrelated_read(env: &[(&str, &str)]) -> Option<i32> {
    let scratch = oxmpi_tests::ScratchDir::new();
    let file = scratch.path().join("target");
    let file_s = file.to_str().unwrap().to_string();
    let mut all = vec![(roles::TARGET_FILE_VAR, file_s.as_str())];
    all.extend_from_slice(env);
    let exe = std::env::current_exe().unwrap();
    let job = std::thread::spawn({
        let all: Vec<(String, String)> = all
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move || {
            oxmpi_tests::role_job(
                &oxmpi_tests::oxrun(),
                2,
                "ptrace",
                &all,
                Duration::from_secs(60),
            )
        }
    });
    let start = Instant::now();
    while !file.exists() && !job.is_finished() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = std::fs::read_to_string(&file).ok().map(|target| {
        std::process::Command::new(&exe)
            .args([
                "--exact",
                "role_entry",
                "--nocapture",
                "--test-threads=1",
                "-q",
            ])
            .env(oxmpi_tests::ROLE_VAR, "cma_read")
            .env(roles::TARGET_VAR, target)
            .status()
            .expect("run the reader")
            .code()
            .unwrap_or(-1)
    });
    std::fs::write(format!("{file_s}.done"), "").unwrap();
    let out = job.join().unwrap();
    assert!(out.success(), "the ptrace job failed:\n{}", out.describe());
    status
}

/// Under Yama ptrace_scope=1 a rank declares its launcher agent as tracer:
/// a sibling rank reads it with CMA, an unrelated process of the same user
/// cannot (unless OXMPI_CMA_PTRACER=any). Where Yama cannot restrict
/// anything the sibling read is still checked and the test says why the
/// rest is not.
#[test]
fn only_sibling_ranks_may_read_a_rank_with_cma() {
    let status = unrelated_read(&[("OXMPI_RNDV_PROTOCOL", "cma")]);
    match yama_untestable() {
        Some(why) => {
            eprintln!("{why}: the unrelated reader is not restricted here (status {status:?})")
        }
        None => {
            assert_eq!(
                status,
                Some(roles::DENIED),
                "an unrelated process read a rank"
            );
            let any = unrelated_read(&[("OXMPI_CMA_PTRACER", "any")]);
            assert_eq!(
                any,
                Some(0),
                "OXMPI_CMA_PTRACER=any: the unrelated read failed"
            );
        }
    }
}

/// 10,000 eager-sized (64 KiB) messages that arrive before their receives:
/// the receiver's peak RSS stays under 128 MB (the sender switches to
/// rendezvous once its eager credit at the receiver is spent).
#[test]
fn unexpected_eager_messages_do_not_grow_the_receiver_unbounded() {
    let out = oxmpi_tests::role_job(
        &oxmpi_tests::oxrun(),
        2,
        "unexpected_flood",
        &[] as &[(&str, &str)],
        Duration::from_secs(120),
    );
    assert!(out.success(), "{}", out.describe());
}
