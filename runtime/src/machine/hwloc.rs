//! The facts [`Machine`] needs, read from the system hwloc through the
//! `hwloc2` crate (cargo feature `hwloc`).
//!
//! NUMA nodes are counted from the root object's nodeset, not with
//! `objects_with_type(NUMANode)`: hwloc2 2.2 maps hwloc 2.x's virtual depths
//! wrongly and panics on that type (checked against Debian 12's hwloc 2.9).

use std::ffi::c_uint;

use hwloc2::{ObjectType, Topology as Hwloc, TopologyObject};

use super::{CoreInfo, Machine, Source};
use crate::Error;

/// hwloc's "unknown OS index" (`HWLOC_UNKNOWN_INDEX`).
const UNKNOWN_INDEX: c_uint = c_uint::MAX;

// hwloc2 does not wrap this query; the library is linked by hwloc2.
extern "C" {
    fn hwloc_get_api_version() -> c_uint;
}

/// Probes with hwloc. Fails (and the caller falls back) when hwloc cannot
/// load the topology or reports no PUs.
pub(super) fn probe() -> Result<Machine, Error> {
    let hwloc = Hwloc::new().ok_or_else(load_error)?;
    let pus = objects(&hwloc, ObjectType::PU);
    if pus.is_empty() {
        return Err(Error::Machine {
            what: "hwloc_get_nbobjs_by_type",
            reason: "hwloc reported 0 PUs".into(),
        });
    }
    // Some platforms expose no core objects; each PU then stands for a core.
    let mut cores = objects(&hwloc, ObjectType::Core);
    if cores.is_empty() {
        cores = pus.clone();
    }
    let cores = cores
        .iter()
        .map(|core| CoreInfo {
            os_index: known(core.os_index()),
            pus: pus_inside(core, &pus),
        })
        .collect();
    let numa_nodes = hwloc
        .object_at_root()
        .nodeset()
        .map_or(0, |set| set.weight());
    Ok(Machine {
        cores,
        pus: pus.len(),
        packages: objects(&hwloc, ObjectType::Package).len().max(1),
        // -1 (an infinite set) or 0 where hwloc knows no node: a machine has one.
        numa_nodes: usize::try_from(numa_nodes).unwrap_or(0).max(1),
        source: Source::Hwloc { version: version() },
    })
}

/// The objects of `kind` in logical order; none where hwloc has the type at
/// no depth or at several.
fn objects(hwloc: &Hwloc, kind: ObjectType) -> Vec<&TopologyObject> {
    hwloc.objects_with_type(&kind).unwrap_or_default()
}

/// OS indices of the PUs (from `pus`, in logical order) whose cpuset lies
/// inside `obj`'s, as `hwloc_get_next_obj_inside_cpuset_by_type` walks them.
fn pus_inside(obj: &TopologyObject, pus: &[&TopologyObject]) -> Vec<usize> {
    let Some(set) = obj.cpuset() else {
        return Vec::new();
    };
    pus.iter()
        .filter(|pu| {
            pu.cpuset()
                .is_some_and(|own| !own.is_empty() && own.into_iter().all(|cpu| set.is_set(cpu)))
        })
        .filter_map(|pu| known(pu.os_index()))
        .collect()
}

fn known(index: c_uint) -> Option<usize> {
    (index != UNKNOWN_INDEX).then_some(index as usize)
}

/// The release built against and the loaded library's API version, e.g.
/// "2.9.0, API 2.8" (hwloc reports only its API version at run time).
fn version() -> String {
    // SAFETY: a plain query with no arguments.
    let api = unsafe { hwloc_get_api_version() };
    let built = option_env!("OXMPI_BUILT_HWLOC_VERSION").unwrap_or("?");
    format!("{built}, API {}.{}", api >> 16, (api >> 8) & 0xff)
}

/// hwloc2 reports a failed `hwloc_topology_init` or `_load` as `None`;
/// errno says why when hwloc set it.
fn load_error() -> Error {
    let source = std::io::Error::last_os_error();
    if source.raw_os_error().unwrap_or(0) == 0 {
        return Error::Machine {
            what: "hwloc_topology_load",
            reason: "hwloc could not load the topology".into(),
        };
    }
    Error::Os {
        call: "hwloc_topology_load",
        source,
    }
}
