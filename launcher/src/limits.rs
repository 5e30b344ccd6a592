//! Up-front bounds on rank counts, so that an absurd `-n` is one clear
//! line, never a huge allocation, a panic or a fork storm.

/// Most ranks one job may have: the PMI job-size bound the runtime accepts
/// (`oxmpi::bootstrap::mapping`, 2^24).
pub const MAX_RANKS: usize = 1 << 24;

/// The smallest limit on how many processes this host will start for us,
/// and where it comes from; `None` when nothing is known.
pub fn local_process_limit() -> Option<(usize, String)> {
    let mut limits: Vec<(usize, String)> = Vec::new();
    for path in ["/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"] {
        if let Some(n) = read_number(path) {
            limits.push((n, path.to_string()));
        }
    }
    if let Some(path) = cgroup_pids_max() {
        if let Some(n) = read_number(&path) {
            limits.push((n, path));
        }
    }
    // SAFETY: geteuid takes no arguments; getrlimit writes into our struct.
    unsafe {
        // The kernel does not apply RLIMIT_NPROC to root.
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::geteuid() != 0
            && libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) == 0
            && rl.rlim_cur != libc::RLIM_INFINITY
        {
            let n = usize::try_from(rl.rlim_cur).unwrap_or(usize::MAX);
            limits.push((n, "RLIMIT_NPROC (ulimit -u)".to_string()));
        }
    }
    limits.into_iter().min_by_key(|(n, _)| *n)
}

/// Fails with one line when `ranks` processes cannot be started here.
pub fn check_local(ranks: usize) -> Result<(), String> {
    match local_process_limit() {
        Some((limit, source)) if ranks > limit => Err(format!(
            "cannot start {ranks} ranks on this host: more than its limit of {limit} processes ({source})"
        )),
        _ => Ok(()),
    }
}

fn read_number(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `pids.max` of this process's cgroup (v2), if there is one.
fn cgroup_pids_max() -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let dir = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(format!(
        "/sys/fs/cgroup{}/pids.max",
        dir.trim_end_matches('/')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_over_the_host_limit_is_refused_by_name() {
        let Some((limit, source)) = local_process_limit() else {
            panic!("no process limit found on this host");
        };
        assert!(check_local(limit).is_ok());
        let err = check_local(limit + 1).unwrap_err();
        assert!(
            err.contains(&(limit + 1).to_string()) && err.contains(&source),
            "{err}"
        );
    }
}
