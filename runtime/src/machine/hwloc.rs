//! Safe layer: reads the facts `Machine` needs out of a loaded hwloc topology.

use super::result::{Handle, Kind};
use super::{CoreInfo, Machine, Source};
use crate::Error;

/// Probes with hwloc. Fails (and the caller falls back) when hwloc is not
/// compiled in, cannot load the topology, or reports no PUs.
pub(super) fn probe() -> Result<Machine, Error> {
    let handle = Handle::open()?;
    let counts = handle.counts()?;
    let npus = usize::try_from(counts.pus).unwrap_or(0);
    if npus == 0 {
        return Err(Error::Topology {
            what: "hwloc_get_nbobjs_by_type",
            reason: format!("hwloc reported {} PUs", counts.pus),
        });
    }
    // Some platforms expose no core objects; each PU then stands for a core.
    let (kind, ncores) = match usize::try_from(counts.cores) {
        Ok(n) if n > 0 => (Kind::Core, n),
        _ => (Kind::Pu, npus),
    };
    let mut cores = Vec::with_capacity(ncores);
    for idx in 0..ncores {
        let obj = handle.object(kind, idx)?;
        cores.push(CoreInfo {
            os_index: obj.os_index,
            pus: obj.pus,
        });
    }
    let version = super::result::version().unwrap_or_else(|| "unknown".into());
    Ok(Machine {
        cores,
        pus: npus,
        packages: at_least_one(counts.packages),
        numa_nodes: at_least_one(counts.numa_nodes),
        source: Source::Hwloc { version },
    })
}

/// hwloc reports 0 packages on some platforms and -1 for a type at several
/// depths; a machine has at least one of each.
fn at_least_one(count: i32) -> usize {
    usize::try_from(count).unwrap_or(0).max(1)
}
