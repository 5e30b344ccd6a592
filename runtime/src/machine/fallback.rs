//! Fallback when hwloc is unavailable: the allowed CPUs from
//! `sched_getaffinity` (or the count from `available_parallelism`), grouped
//! into cores by sysfs `core_id` / `physical_package_id`, and NUMA nodes
//! counted in `/sys/devices/system/node`.

use std::path::Path;

use nix::sched::{sched_getaffinity, CpuSet};
use nix::unistd::Pid;

use super::{CoreInfo, Machine, Source};
use crate::Error;

const CPU_DIR: &str = "/sys/devices/system/cpu";
const NODE_DIR: &str = "/sys/devices/system/node";

/// Builds a topology from /proc-and-sysfs facts; `reason` says why hwloc was
/// not used and is kept in the result's [`Source`].
pub(super) fn probe(reason: String) -> Result<Machine, Error> {
    let cpus = allowed_cpus()?;
    let mut cores: Vec<CoreInfo> = Vec::new();
    // (package id, core id) of each entry in `cores`, for grouping siblings.
    let mut keys: Vec<Option<(i64, i64)>> = Vec::new();
    let mut packages: Vec<i64> = Vec::new();
    for cpu in cpus.iter().copied() {
        let package = read_id(cpu, "physical_package_id");
        let core = read_id(cpu, "core_id");
        if let Some(p) = package {
            if !packages.contains(&p) {
                packages.push(p);
            }
        }
        let key = package.zip(core);
        match key.and_then(|k| keys.iter().position(|x| *x == Some(k))) {
            Some(at) => cores[at].pus.push(cpu),
            None => {
                keys.push(key);
                cores.push(CoreInfo {
                    os_index: core.and_then(|c| usize::try_from(c).ok()),
                    pus: vec![cpu],
                });
            }
        }
    }
    Ok(Machine {
        pus: cpus.len(),
        cores,
        packages: packages.len().max(1),
        numa_nodes: count_numa_nodes(Path::new(NODE_DIR)).max(1),
        source: Source::Fallback { reason },
    })
}

/// OS indices of the CPUs this process may run on.
fn allowed_cpus() -> Result<Vec<usize>, Error> {
    if let Ok(set) = sched_getaffinity(Pid::from_raw(0)) {
        let cpus: Vec<usize> = (0..CpuSet::count())
            .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
            .collect();
        if !cpus.is_empty() {
            return Ok(cpus);
        }
    }
    let n = std::thread::available_parallelism().map_err(|source| Error::Os {
        call: "available_parallelism",
        source,
    })?;
    Ok((0..n.get()).collect())
}

/// `/sys/devices/system/cpu/cpuN/topology/<what>`, when present and >= 0.
fn read_id(cpu: usize, what: &str) -> Option<i64> {
    let path = format!("{CPU_DIR}/cpu{cpu}/topology/{what}");
    let id: i64 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    (id >= 0).then_some(id)
}

/// Number of `nodeN` entries in `dir` (0 when it cannot be read).
fn count_numa_nodes(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("node")
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
        .count()
}
