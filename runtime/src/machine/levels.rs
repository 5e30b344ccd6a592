//! Hardware levels for `MPI_Comm_split_type` with `MPI_COMM_TYPE_HW_GUIDED`
//! and `MPI_COMM_TYPE_HW_UNGUIDED` (MPI 4.0, section 7.4.2): the objects of
//! each level on this host as CPU lists, and which one holds this process.
//!
//! Read once from sysfs, the same facts hwloc reads on Linux (and without
//! its NUMA-depth quirk, see `hwloc.rs`): packages from `physical_package_id`,
//! NUMA nodes from `/sys/devices/system/node/node*/cpulist` (one node holding
//! every CPU when the kernel lists none, as hwloc does), caches from
//! `cache/index*/shared_cpu_list` (L1 is the data cache), cores from
//! `core_cpus_list`. A process holds an object when every CPU it may run on
//! is in it: an unbound process is in its node and in no smaller object.

use std::sync::OnceLock;

use nix::sched::{sched_getaffinity, CpuSet};
use nix::unistd::Pid;

const CPU_DIR: &str = "/sys/devices/system/cpu";
const NODE_DIR: &str = "/sys/devices/system/node";

/// A hardware level, named as `mpi_hw_resource_type` values name them:
/// `mpi_shared_memory` for the node, hwloc's type names for the others.
///
/// ```
/// use oxmpi::machine::HwLevel;
/// assert_eq!(HwLevel::from_name("l3cache"), Some(HwLevel::L3Cache)); // any case
/// assert_eq!(HwLevel::from_name("mpi_shared_memory"), Some(HwLevel::Node));
/// assert_eq!(HwLevel::NumaNode.name(), "NUMANode");
/// assert_eq!(HwLevel::from_name("Socket"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HwLevel {
    /// The node: the processes that can share memory.
    Node,
    /// A package (socket).
    Package,
    /// A NUMA node.
    NumaNode,
    /// A level-3 cache.
    L3Cache,
    /// A level-2 cache.
    L2Cache,
    /// A level-1 data cache.
    L1Cache,
    /// A core.
    Core,
    /// A processing unit (hardware thread).
    Pu,
}

impl HwLevel {
    /// Every level, the largest objects first (the order
    /// `MPI_COMM_TYPE_HW_UNGUIDED` tries them in).
    pub const ALL: [HwLevel; 8] = [
        HwLevel::Node,
        HwLevel::Package,
        HwLevel::NumaNode,
        HwLevel::L3Cache,
        HwLevel::L2Cache,
        HwLevel::L1Cache,
        HwLevel::Core,
        HwLevel::Pu,
    ];

    /// The `mpi_hw_resource_type` value of this level.
    ///
    /// See the example on [`HwLevel`].
    pub fn name(self) -> &'static str {
        match self {
            HwLevel::Node => "mpi_shared_memory",
            HwLevel::Package => "Package",
            HwLevel::NumaNode => "NUMANode",
            HwLevel::L3Cache => "L3Cache",
            HwLevel::L2Cache => "L2Cache",
            HwLevel::L1Cache => "L1Cache",
            HwLevel::Core => "Core",
            HwLevel::Pu => "PU",
        }
    }

    /// The level an `mpi_hw_resource_type` value names (case does not
    /// matter); `None` for a value OxMPI does not know.
    ///
    /// See the example on [`HwLevel`].
    pub fn from_name(name: &str) -> Option<HwLevel> {
        HwLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The index of the object of this level on this host that holds every
    /// CPU this process may run on; `None` when no object does (the
    /// process is not bound inside one), or the host reports none. The
    /// node is always object 0.
    ///
    /// ```
    /// use oxmpi::machine::HwLevel;
    /// assert_eq!(HwLevel::Node.locate(), Some(0));
    /// if let Some(core) = HwLevel::Core.locate() {
    ///     println!("bound inside core {core}");
    /// }
    /// ```
    pub fn locate(self) -> Option<usize> {
        let mine = allowed_cpus();
        if mine.is_empty() {
            return (self == HwLevel::Node).then_some(0);
        }
        host()
            .objects(self)
            .iter()
            .position(|obj| mine.iter().all(|cpu| obj.binary_search(cpu).is_ok()))
    }
}

/// The objects of every level on this host, each a sorted CPU list.
struct Levels {
    by_level: Vec<Vec<Vec<usize>>>,
}

impl Levels {
    fn objects(&self, level: HwLevel) -> &[Vec<usize>] {
        let i = HwLevel::ALL.iter().position(|&l| l == level).unwrap_or(0);
        &self.by_level[i]
    }
}

fn host() -> &'static Levels {
    static LEVELS: OnceLock<Levels> = OnceLock::new();
    LEVELS.get_or_init(|| {
        let cpus = online_cpus();
        let by_level = HwLevel::ALL.iter().map(|&l| objects_of(l, &cpus)).collect();
        Levels { by_level }
    })
}

/// The objects of `level`, from sysfs, sorted by their first CPU.
fn objects_of(level: HwLevel, cpus: &[usize]) -> Vec<Vec<usize>> {
    let per_cpu = |f: &dyn Fn(usize) -> Option<Vec<usize>>| -> Vec<Vec<usize>> {
        let mut objs: Vec<Vec<usize>> = cpus.iter().filter_map(|&c| f(c)).collect();
        objs.sort();
        objs.dedup();
        objs
    };
    match level {
        HwLevel::Node => vec![cpus.to_vec()],
        HwLevel::Pu => cpus.iter().map(|&c| vec![c]).collect(),
        HwLevel::Package => {
            let id = |c: usize| read(&format!("{CPU_DIR}/cpu{c}/topology/physical_package_id"));
            let mut ids: Vec<_> = cpus.iter().map(|&c| id(c)).collect();
            ids.sort();
            ids.dedup();
            let mut objs: Vec<Vec<usize>> = ids
                .iter()
                .map(|i| cpus.iter().copied().filter(|&c| id(c) == *i).collect())
                .collect();
            objs.sort();
            objs
        }
        HwLevel::NumaNode => {
            let mut objs: Vec<Vec<usize>> = std::fs::read_dir(NODE_DIR)
                .map(|d| {
                    d.filter_map(Result::ok)
                        .filter(|e| e.file_name().to_string_lossy().starts_with("node"))
                        .filter_map(|e| read(&format!("{}/cpulist", e.path().display())))
                        .map(|l| parse_list(&l))
                        .filter(|l| !l.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            if objs.is_empty() {
                objs.push(cpus.to_vec());
            }
            objs.sort();
            objs
        }
        HwLevel::Core => per_cpu(&|c| {
            let dir = format!("{CPU_DIR}/cpu{c}/topology");
            read(&format!("{dir}/core_cpus_list"))
                .or_else(|| read(&format!("{dir}/thread_siblings_list")))
                .map(|l| parse_list(&l))
        }),
        HwLevel::L3Cache | HwLevel::L2Cache | HwLevel::L1Cache => {
            let want = match level {
                HwLevel::L3Cache => "3",
                HwLevel::L2Cache => "2",
                _ => "1",
            };
            per_cpu(&|c| cache_of(c, want))
        }
    }
}

/// The CPUs sharing `cpu`'s cache of level `level` (for level 1, the data
/// or unified cache).
fn cache_of(cpu: usize, level: &str) -> Option<Vec<usize>> {
    let dir = std::fs::read_dir(format!("{CPU_DIR}/cpu{cpu}/cache")).ok()?;
    dir.filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .find(|p| {
            let field = |f: &str| read(&format!("{}/{f}", p.display()));
            field("level").as_deref() == Some(level)
                && field("type").is_some_and(|t| t != "Instruction")
        })
        .and_then(|p| read(&format!("{}/shared_cpu_list", p.display())))
        .map(|l| parse_list(&l))
        .filter(|l| !l.is_empty())
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// A kernel CPU list ("0-3,8,10-11"), sorted; malformed parts are skipped.
fn parse_list(list: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let mut ends = part.splitn(2, '-').map(|x| x.trim().parse::<usize>());
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), None) => out.push(a),
            (Some(Ok(a)), Some(Ok(b))) if a <= b => out.extend(a..=b),
            _ => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The host's online CPUs.
fn online_cpus() -> Vec<usize> {
    match read(&format!("{CPU_DIR}/online")).map(|l| parse_list(&l)) {
        Some(l) if !l.is_empty() => l,
        _ => (0..super::online_cpus()).collect(),
    }
}

/// The CPUs this process may run on (empty when unknown).
fn allowed_cpus() -> Vec<usize> {
    sched_getaffinity(Pid::from_raw(0))
        .map(|set| {
            (0..CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_list("5"), [5]);
        assert_eq!(parse_list(""), Vec::<usize>::new());
        assert_eq!(parse_list("3-1,x,2"), [2]);
    }

    #[test]
    fn levels_partition_the_host_and_nest_in_the_node() {
        let all = online_cpus();
        for level in HwLevel::ALL {
            let objs = host().objects(level);
            for obj in objs {
                assert!(obj.iter().all(|c| all.contains(c)), "{level:?}: {obj:?}");
            }
            // No CPU in two objects of one level.
            let mut seen: Vec<usize> = objs.iter().flatten().copied().collect();
            let n = seen.len();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n, "{level:?} objects overlap: {objs:?}");
        }
        assert_eq!(HwLevel::Node.locate(), Some(0));
        // A process is in a PU only when bound to one CPU, then in its core.
        if HwLevel::Pu.locate().is_some() && !host().objects(HwLevel::Core).is_empty() {
            assert!(HwLevel::Core.locate().is_some());
        }
    }
}
