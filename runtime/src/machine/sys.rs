//! Raw declarations of the hwloc shim (`shim.c`). Nothing outside
//! `machine::result` calls these.

use std::ffi::{c_int, c_uint, c_void};

/// Success.
pub const OK: c_int = 0;
/// hwloc was not found when the crate was built.
pub const NOT_COMPILED: c_int = 1;
/// `hwloc_topology_init` failed; the error slot holds errno.
pub const INIT_FAILED: c_int = 2;
/// `hwloc_topology_load` failed; the error slot holds errno.
pub const LOAD_FAILED: c_int = 3;
/// No object at that logical index.
pub const NO_SUCH_OBJECT: c_int = 4;

/// Walk cores.
pub const KIND_CORE: c_int = 0;
/// Walk PUs.
pub const KIND_PU: c_int = 1;

/// hwloc's "unknown OS index" (`HWLOC_UNKNOWN_INDEX`).
pub const UNKNOWN_INDEX: c_uint = c_uint::MAX;

/// Object counts; -1 where hwloc has the type at several depths.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    pub pus: c_int,
    pub cores: c_int,
    pub packages: c_int,
    pub numa_nodes: c_int,
}

extern "C" {
    pub fn oxmpi_topo_open(out: *mut *mut c_void, err: *mut c_int) -> c_int;
    pub fn oxmpi_topo_close(topo: *mut c_void);
    pub fn oxmpi_topo_api_version() -> c_uint;
    pub fn oxmpi_topo_counts(topo: *mut c_void, counts: *mut Counts) -> c_int;
    pub fn oxmpi_topo_object(
        topo: *mut c_void,
        kind: c_int,
        idx: c_uint,
        os_index: *mut c_uint,
        pus: *mut c_uint,
        cap: c_uint,
        npus: *mut c_uint,
    ) -> c_int;
}
