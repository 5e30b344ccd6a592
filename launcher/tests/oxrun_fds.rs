//! The descriptors a rank gets from oxrun: 0-2 and PMI_FD, nothing else
//! (no agent link, nothing oxrun itself inherited), and PMI_FD does not
//! reach the children of an MPI rank. Like oxrun_pmi.rs, this binary re-runs
//! itself under oxrun as the ranks (role chosen by OXRUN_TEST_ROLE).

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);
/// A descriptor the test hands oxrun without close-on-exec.
const STRAY_FD: i32 = 57;

/// The entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    if std::env::var("OXRUN_TEST_ROLE").as_deref() == Ok("mpi_child") {
        let universe = oxmpi::init().expect("MPI init");
        let pmi = std::env::var("PMI_FD").unwrap_or_default();
        let rank = universe.world().rank();
        // The child prints "[rank] pmi=N" and then its descriptors.
        let script = format!("echo \"pmi={pmi}\"; exec ls -l /proc/self/fd");
        let status = std::process::Command::new("sh")
            .args(["-c", &script])
            .status()
            .expect("run sh");
        assert!(status.success(), "rank {rank}: {status:?}");
        universe.finalize().expect("MPI finalize");
    }
}

/// oxrun with `args`, given a stray inheritable descriptor.
fn run_with_stray_fd(args: &[&str]) -> common::Outcome {
    let mut cmd = common::command(args);
    // SAFETY: dup2 between fork and exec; async-signal-safe. dup2 clears
    // close-on-exec, so oxrun inherits STRAY_FD.
    unsafe {
        cmd.pre_exec(|| {
            libc::dup2(2, STRAY_FD);
            Ok(())
        });
    }
    cmd.env_remove("RUST_BACKTRACE");
    common::run_cmd(cmd, None, LIMIT)
}

/// Per rank (from `-l` labels): the PMI_FD it printed and its open
/// descriptors (number -> target) as `ls -l /proc/self/fd` listed them,
/// leaving out the directory `ls` itself opened.
fn descriptors(stdout: &str) -> BTreeMap<u32, (String, Vec<(u32, String)>)> {
    let mut ranks: BTreeMap<u32, (String, Vec<(u32, String)>)> = BTreeMap::new();
    for line in stdout.lines() {
        let Some((label, rest)) = line.strip_prefix('[').and_then(|l| l.split_once("] ")) else {
            continue;
        };
        let Ok(rank) = label.parse::<u32>() else {
            continue;
        };
        let entry = ranks.entry(rank).or_default();
        if let Some(fd) = rest.strip_prefix("pmi=") {
            entry.0 = fd.to_string();
        } else if let Some((left, target)) = rest.split_once(" -> ") {
            let fd = left.rsplit(' ').next().and_then(|n| n.parse().ok());
            if let Some(fd) = fd.filter(|_| !target.ends_with("/fd")) {
                entry.1.push((fd, target.to_string()));
            }
        }
    }
    ranks
}

#[test]
fn ranks_hold_only_stdio_and_pmi_fd() {
    let script = "echo \"pmi=$PMI_FD\"; exec ls -l /proc/self/fd";
    let out = run_with_stray_fd(&["-n", "3", "-l", "sh", "-c", script]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let ranks = descriptors(&out.stdout);
    assert_eq!(ranks.len(), 3, "{out:?}");
    for (rank, (pmi, mut fds)) in ranks {
        let pmi: u32 = pmi.parse().expect("PMI_FD is a number");
        fds.sort();
        let numbers: Vec<u32> = fds.iter().map(|(fd, _)| *fd).collect();
        assert_eq!(
            numbers,
            vec![0, 1, 2, pmi],
            "rank {rank} holds {fds:?} (PMI_FD {pmi})"
        );
        let (_, target) = &fds[3];
        assert!(target.starts_with("socket:"), "rank {rank}: {fds:?}");
    }
}

#[test]
fn children_of_mpi_ranks_do_not_inherit_pmi_fd() {
    let mut args = vec!["-n".to_string(), "2".into(), "-l".into()];
    args.extend(common::self_as_rank("mpi_child"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_with_stray_fd(&args);
    assert_eq!(out.code, Some(0), "{out:?}");
    let ranks = descriptors(&out.stdout);
    assert_eq!(ranks.len(), 2, "{out:?}");
    for (rank, (pmi, fds)) in ranks {
        let pmi: u32 = pmi.parse().expect("PMI_FD is a number");
        assert!(
            fds.iter()
                .all(|(fd, _)| *fd != pmi && *fd != STRAY_FD as u32),
            "a child of rank {rank} holds PMI_FD {pmi} or fd {STRAY_FD}: {fds:?}"
        );
    }
}
