//! The host's hardware as this process sees it: cores, PUs, packages, NUMA
//! nodes, and the binding sets built from them; the hardware levels
//! communicators split by ([`HwLevel`], `levels.rs`). (MPI's process topologies,
//! Cartesian and graph, are [`crate::topo`].)
//!
//! The only source of locality facts in the runtime. [`Machine::probe`]
//! asks the system hwloc (the `hwloc2` crate, in `hwloc.rs`, when the cargo
//! feature `hwloc` is on, as it is by default) and, when hwloc is left out or
//! fails, falls back to `sched_getaffinity` and sysfs (`fallback`), recording
//! why in [`Machine::source`]. Only the PUs this process may run on are
//! counted (hwloc's default, and the affinity mask in the fallback), so
//! binding sets never name a CPU the launcher cannot bind to.

mod fallback;
#[cfg(feature = "hwloc")]
mod hwloc;
mod levels;

pub use levels::HwLevel;

use std::fmt;

use crate::Error;

/// One core: its OS index and the OS indices of its PUs (hardware threads).
///
/// ```
/// use oxmpi::machine::{CoreInfo, Machine};
/// let machine = Machine::probe()?;
/// if let Some(first) = machine.cores().first() {
///     let first: &CoreInfo = first;
///     assert!(!first.pus.is_empty()); // the CPUs to bind a rank to this core
///     println!("core {:?}: PUs {:?}", first.os_index, first.pus);
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreInfo {
    /// The core's OS index; `None` where the OS does not say.
    pub os_index: Option<usize>,
    /// OS indices of the core's PUs, as `sched_setaffinity` takes them.
    pub pus: Vec<usize>,
}

/// Where the facts came from.
///
/// ```
/// use oxmpi::machine::{Machine, Source};
/// match Machine::probe()?.source() {
///     Source::Hwloc { version } => println!("hwloc {version}"),
///     Source::Fallback { reason } => println!("sysfs, because {reason}"),
/// }
/// assert!(matches!(Machine::probe_fallback()?.source(), Source::Fallback { .. }));
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The system hwloc.
    Hwloc {
        /// The release built against and the loaded library's API version,
        /// e.g. "2.9.0, API 2.8".
        version: String,
    },
    /// `sched_getaffinity` and sysfs, because hwloc could not be used.
    Fallback {
        /// Why hwloc was not used.
        reason: String,
    },
}

/// The host's processing resources, as seen by this process.
///
/// ```
/// use oxmpi::machine::Machine;
/// let machine = Machine::probe()?;
/// assert!(machine.pus() >= machine.cores().len());
/// assert!(machine.packages() >= 1 && machine.numa_nodes() >= 1);
/// println!("{machine}"); // e.g. "8 cores, 16 PUs, 1 packages, 1 NUMA nodes (hwloc 2.9.0, API 2.8)"
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Machine {
    cores: Vec<CoreInfo>,
    pus: usize,
    packages: usize,
    numa_nodes: usize,
    source: Source,
}

impl Machine {
    /// Probes with hwloc, falling back to sysfs facts (and saying so in
    /// [`Machine::source`]) when hwloc fails. Fails only when even the
    /// fallback cannot learn how many CPUs there are. Never panics.
    ///
    /// See the example on [`Machine`].
    pub fn probe() -> Result<Machine, Error> {
        #[cfg(feature = "hwloc")]
        let why = match hwloc::probe() {
            Ok(machine) => return Ok(machine),
            Err(e) => e.to_string(),
        };
        #[cfg(not(feature = "hwloc"))]
        let why = "oxmpi was built without its `hwloc` feature";
        fallback::probe(format!("hwloc unavailable: {why}"))
    }

    /// Probes without hwloc: `sched_getaffinity` and sysfs only.
    ///
    /// ```
    /// use oxmpi::machine::Machine;
    /// let sysfs = Machine::probe_fallback()?; // sched_getaffinity and sysfs, no hwloc
    /// assert!(sysfs.pus() >= 1);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn probe_fallback() -> Result<Machine, Error> {
        fallback::probe("hwloc skipped on request".into())
    }

    /// The cores, in hwloc's logical order (cores of a package are adjacent).
    ///
    /// See the examples on [`Machine`] and [`CoreInfo`].
    pub fn cores(&self) -> &[CoreInfo] {
        &self.cores
    }

    /// Number of PUs (hardware threads) this process may use.
    ///
    /// See the example on [`Machine`].
    pub fn pus(&self) -> usize {
        self.pus
    }

    /// Number of packages (sockets); at least 1.
    ///
    /// See the example on [`Machine`].
    pub fn packages(&self) -> usize {
        self.packages
    }

    /// Number of NUMA nodes; at least 1.
    ///
    /// See the example on [`Machine`].
    pub fn numa_nodes(&self) -> usize {
        self.numa_nodes
    }

    /// Where these facts came from.
    ///
    /// See the example on [`Source`].
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// For rank `i` in `0..nranks`, the PU list of core `i mod ncores`
    /// (compact placement); the launcher passes it to `sched_setaffinity`.
    /// Sets are disjoint while `nranks <= ncores`. With no cores known every
    /// set is empty, meaning "do not bind".
    ///
    /// ```
    /// use oxmpi::machine::Machine;
    /// let machine = Machine::probe()?;
    /// let n = machine.cores().len();
    /// let sets = machine.core_sets_round_robin(n + 1); // one rank more than cores
    /// assert_eq!(sets.len(), n + 1);
    /// assert_eq!(sets[n], sets[0]); // wraps around to core 0
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn core_sets_round_robin(&self, nranks: usize) -> Vec<Vec<usize>> {
        if self.cores.is_empty() {
            return vec![Vec::new(); nranks];
        }
        (0..nranks)
            .map(|rank| self.cores[rank % self.cores.len()].pus.clone())
            .collect()
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cores, {} PUs, {} packages, {} NUMA nodes",
            self.cores.len(),
            self.pus,
            self.packages,
            self.numa_nodes
        )?;
        match &self.source {
            Source::Hwloc { version } => write!(f, " (hwloc {version})"),
            Source::Fallback { reason } => write!(f, " (sysfs fallback: {reason})"),
        }
    }
}

/// Online CPUs of the host, not this process's affinity mask: a rank bound
/// to one core still has peers running on the others, so this is what
/// says whether a node's ranks outnumber its cores.
///
/// ```
/// assert!(oxmpi::machine::online_cpus() >= 1);
/// ```
pub fn online_cpus() -> usize {
    // SAFETY: sysconf takes no pointers.
    unsafe { nix::libc::sysconf(nix::libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize
}

#[cfg(test)]
mod tests;
