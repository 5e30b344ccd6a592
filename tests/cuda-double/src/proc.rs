//! `cuGetProcAddress` (over the double's own export table) and the error
//! strings. All of these work before `cuInit`.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use crate::abi::{code, CUresult, ERRORS};
use crate::guard::{driver_api, put};

/// `CU_GET_PROC_ADDRESS_SUCCESS`.
const SYMBOL_FOUND: c_int = 0;
/// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`.
const SYMBOL_NOT_FOUND: c_int = 1;

/// Every exported entry point by name.
pub fn export_table() -> &'static BTreeMap<&'static str, usize> {
    static TABLE: OnceLock<BTreeMap<&'static str, usize>> = OnceLock::new();
    TABLE.get_or_init(|| {
        [
            crate::device::exports(),
            crate::context::exports(),
            crate::alloc::exports(),
            crate::copy::exports(),
            crate::pointer::exports(),
            crate::stream::exports(),
            crate::module::exports(),
            crate::launch::exports(),
            crate::ipc::exports(),
            exports(),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
}

/// What `cuGetProcAddress(name, version)` resolves to: the `_v2` entry
/// point where there is one (as current drivers do), else `name` itself.
fn resolve(name: &str, version: c_int) -> Option<usize> {
    let table = export_table();
    // cuGetProcAddress_v2 has one more parameter; older callers get v1.
    let wants_v2 = name != "cuGetProcAddress" || version >= 12000;
    let versioned = format!("{name}_v2");
    wants_v2
        .then(|| table.get(versioned.as_str()))
        .flatten()
        .or_else(|| table.get(name))
        .copied()
}

/// Looks `symbol` up and writes the function (or null) to `pfn`.
///
/// # Safety
/// `symbol` must be null or NUL-terminated; `pfn` null or writable.
unsafe fn get_proc(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
) -> Result<bool, CUresult> {
    if symbol.is_null() || pfn.is_null() {
        return Err(code::INVALID_VALUE);
    }
    let name = CStr::from_ptr(symbol).to_str().unwrap_or("");
    let found = resolve(name, version);
    put(pfn, found.unwrap_or(0) as *mut c_void)?;
    Ok(found.is_some())
}

/// The `(name, description)` of a code.
fn error_text(error: CUresult) -> Option<(&'static str, &'static str)> {
    ERRORS
        .iter()
        .find(|(c, _, _)| *c == error)
        .map(|&(_, name, text)| (name, text))
}

driver_api! {
    /// `cuGetExportTable`: the driver's private tables, which the double
    /// does not have. NVRTC loads `libcuda.so.1`, calls `cuInit` and asks
    /// for one; NOT_FOUND (with a null table) makes it go on without,
    /// where a missing symbol made it dereference a null table.
    fn cuGetExportTable(table: *mut *const c_void, _id: *const c_void) {
        if !table.is_null() {
            put(table, std::ptr::null())?;
        }
        Err(code::NOT_FOUND)
    }

    /// `cuGetProcAddress` (CUDA 11.3 signature): `NOT_FOUND` for names the
    /// double does not export.
    fn cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, _flags: u64) {
        match get_proc(symbol, pfn, version)? {
            true => Ok(()),
            false => Err(code::NOT_FOUND),
        }
    }

    /// `cuGetProcAddress_v2` (CUDA 12): also reports the lookup's status.
    fn cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        _flags: u64,
        status: *mut c_int,
    ) {
        let found = get_proc(symbol, pfn, version)?;
        if !status.is_null() {
            put(status, if found { SYMBOL_FOUND } else { SYMBOL_NOT_FOUND })?;
        }
        match found {
            true => Ok(()),
            false => Err(code::NOT_FOUND),
        }
    }

    /// `cuGetErrorName`: `INVALID_VALUE` (and a null string) for unknown codes.
    fn cuGetErrorName(error: CUresult, text: *mut *const c_char) {
        let name = error_text(error).map(|(name, _)| name);
        put(text, name.map_or(std::ptr::null(), |s| s.as_ptr().cast()))?;
        name.map(drop).ok_or(code::INVALID_VALUE)
    }

    /// `cuGetErrorString`: `INVALID_VALUE` (and a null string) for unknown codes.
    fn cuGetErrorString(error: CUresult, text: *mut *const c_char) {
        let desc = error_text(error).map(|(_, desc)| desc);
        put(text, desc.map_or(std::ptr::null(), |s| s.as_ptr().cast()))?;
        desc.map(drop).ok_or(code::INVALID_VALUE)
    }
}
