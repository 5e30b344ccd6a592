//! Checked layer over `sys`: shim return codes become `Result`s naming the
//! hwloc call that failed, and the topology handle is owned (closed on drop).

use std::ffi::{c_int, c_uint, c_void};
use std::io;
use std::ptr::NonNull;

use super::sys;
use crate::Error;

/// An open, loaded hwloc topology.
pub(super) struct Handle(NonNull<c_void>);

/// Which objects [`Handle::object`] walks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Core,
    Pu,
}

/// One object: its OS index (if hwloc knows it) and its PUs' OS indices.
pub(super) struct Object {
    pub os_index: Option<usize>,
    pub pus: Vec<usize>,
}

impl Handle {
    /// `hwloc_topology_init` + `hwloc_topology_load`.
    pub fn open() -> Result<Handle, Error> {
        let mut raw: *mut c_void = std::ptr::null_mut();
        let mut errno: c_int = 0;
        // SAFETY: both out-pointers are valid for writes; the shim writes a
        // loaded topology (or null) and an errno.
        let code = unsafe { sys::oxmpi_topo_open(&mut raw, &mut errno) };
        check(code, errno, "hwloc_topology_load")?;
        NonNull::new(raw)
            .map(Handle)
            .ok_or_else(|| topology_error("hwloc_topology_load", "returned no topology".into()))
    }

    /// Object counts per type.
    pub fn counts(&self) -> Result<sys::Counts, Error> {
        let mut counts = sys::Counts::default();
        // SAFETY: the handle is a loaded topology; `counts` is valid for writes.
        let code = unsafe { sys::oxmpi_topo_counts(self.0.as_ptr(), &mut counts) };
        check(code, 0, "hwloc_get_nbobjs_by_type")?;
        Ok(counts)
    }

    /// The object of `kind` with logical index `idx`.
    pub fn object(&self, kind: Kind, idx: usize) -> Result<Object, Error> {
        let idx = c_uint::try_from(idx).map_err(|_| {
            topology_error("hwloc_get_obj_by_type", format!("index {idx} out of range"))
        })?;
        let kind = match kind {
            Kind::Core => sys::KIND_CORE,
            Kind::Pu => sys::KIND_PU,
        };
        let mut pus: Vec<c_uint> = vec![0; 8];
        loop {
            let mut os_index: c_uint = sys::UNKNOWN_INDEX;
            let mut npus: c_uint = 0;
            let cap = c_uint::try_from(pus.len()).unwrap_or(c_uint::MAX);
            // SAFETY: the handle is a loaded topology; `pus` has room for
            // `cap` entries; the other out-pointers are valid for writes.
            let code = unsafe {
                sys::oxmpi_topo_object(
                    self.0.as_ptr(),
                    kind,
                    idx,
                    &mut os_index,
                    pus.as_mut_ptr(),
                    cap,
                    &mut npus,
                )
            };
            check(code, 0, "hwloc_get_obj_by_type")?;
            let n = npus as usize;
            if n > pus.len() {
                pus.resize(n, 0);
                continue;
            }
            pus.truncate(n);
            return Ok(Object {
                os_index: known(os_index),
                pus: pus.into_iter().filter_map(known).collect(),
            });
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle came from oxmpi_topo_open and is closed once.
        unsafe { sys::oxmpi_topo_close(self.0.as_ptr()) }
    }
}

/// The hwloc API version the loaded library reports (`hwloc_get_api_version`,
/// e.g. "2.8" for hwloc 2.9), and the release built against; `None` when
/// hwloc was not compiled in.
pub(super) fn version() -> Option<String> {
    // SAFETY: a plain query with no arguments.
    let v = unsafe { sys::oxmpi_topo_api_version() };
    let built = option_env!("OXMPI_BUILT_HWLOC_VERSION").unwrap_or("?");
    (v != 0).then(|| format!("{built}, API {}.{}", v >> 16, (v >> 8) & 0xff))
}

fn known(index: c_uint) -> Option<usize> {
    (index != sys::UNKNOWN_INDEX).then_some(index as usize)
}

fn check(code: c_int, errno: c_int, call: &'static str) -> Result<(), Error> {
    match code {
        sys::OK => Ok(()),
        sys::NOT_COMPILED => Err(Error::Topology {
            what: "hwloc",
            reason: "not found by pkg-config when oxmpi was built".into(),
        }),
        sys::INIT_FAILED => Err(Error::Os {
            call: "hwloc_topology_init",
            source: io::Error::from_raw_os_error(errno),
        }),
        sys::LOAD_FAILED => Err(Error::Os {
            call: "hwloc_topology_load",
            source: io::Error::from_raw_os_error(errno),
        }),
        sys::NO_SUCH_OBJECT => Err(topology_error(call, "no object at that index".into())),
        other => Err(topology_error(
            call,
            format!("unexpected shim code {other}"),
        )),
    }
}

fn topology_error(what: &'static str, reason: String) -> Error {
    Error::Topology { what, reason }
}
