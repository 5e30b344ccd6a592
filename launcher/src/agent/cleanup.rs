//! What an agent leaves behind when it ends, however it ends (the job
//! finished, failed, was killed, or oxrun died): no live rank, and no
//! `/dev/shm` segment file of the job on this host's nodes. A node leader
//! killed between creating its named segment (`OXMPI_SHM_MEMFD=off`) and
//! unlinking it once its peers attached would otherwise leave the file.

use std::time::{Duration, Instant};

use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// How long to wait for SIGKILLed ranks to be reaped.
const REAP_LIMIT: Duration = Duration::from_secs(2);

/// The nodes (as the ranks number them) that `ranks` of the job run on,
/// from the job's `PMI_process_mapping`; node 0 when it does not parse.
pub fn nodes_of(process_mapping: &str, size: u32, ranks: &[u32]) -> Vec<usize> {
    let mut nodes: Vec<usize> =
        match oxmpi::bootstrap::mapping::decode(process_mapping, size as usize) {
            Ok(node_of_rank) => ranks
                .iter()
                .filter_map(|&r| node_of_rank.get(r as usize).copied())
                .collect(),
            Err(_) => vec![0],
        };
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// SIGKILLs every rank in `alive` (pids) and reaps them, for up to
/// [`REAP_LIMIT`]; returns the pids still not reaped.
pub fn kill_and_reap(alive: &[i32]) -> Vec<i32> {
    for &pid in alive {
        super::spawn::signal_rank(pid, libc::SIGKILL);
    }
    let mut left = alive.to_vec();
    let start = Instant::now();
    while !left.is_empty() && start.elapsed() < REAP_LIMIT {
        left.retain(|&pid| {
            matches!(
                waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
                Ok(WaitStatus::StillAlive)
            )
        });
        if !left.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    left
}

/// Ends the job on this host: kills and reaps the ranks in `alive`, then
/// removes the job's segment files of `nodes`. Files are removed only once
/// no rank can create one any more (every rank reaped).
pub fn finish(jobid: &str, nodes: &[usize], alive: &[i32]) {
    let left = kill_and_reap(alive);
    if !left.is_empty() {
        eprintln!(
            "oxrun agent: ranks with pids {left:?} did not die within {REAP_LIMIT:?} of SIGKILL"
        );
    }
    oxmpi::transport::shm::remove_job_files(jobid, nodes);
}

/// Waits until none of `pids` (not our children: the ranks of an agent
/// that died) is alive any more, for up to `limit`; returns the survivors.
pub fn wait_dead(pids: &[i32], limit: Duration) -> Vec<i32> {
    let mut left = pids.to_vec();
    let start = Instant::now();
    loop {
        left.retain(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.contains(") Z ") && !s.contains(") X "))
        });
        if left.is_empty() || start.elapsed() >= limit {
            return left;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_from_the_mapping() {
        let mapping = oxmpi::bootstrap::mapping::encode(&[0, 0, 1, 1, 2]);
        assert_eq!(nodes_of(&mapping, 5, &[2, 3]), vec![1]);
        assert_eq!(nodes_of(&mapping, 5, &[4, 0, 1]), vec![0, 2]);
        assert_eq!(nodes_of("garbage", 5, &[1]), vec![0]);
    }

    #[test]
    fn killed_children_are_reaped() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert!(kill_and_reap(&[pid]).is_empty());
        // Reaped: the pid is no longer our child.
        assert!(child.try_wait().is_err());
        assert!(wait_dead(&[pid], Duration::ZERO).is_empty());
    }

    #[test]
    fn live_processes_are_waited_for() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert_eq!(wait_dead(&[pid], Duration::from_millis(20)), vec![pid]);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(wait_dead(&[pid], Duration::from_secs(1)).is_empty());
    }
}
