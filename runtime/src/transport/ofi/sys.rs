//! Raw declarations of the libfabric shim (`shim.c`). Nothing outside
//! `ofi::result` calls these.

use std::ffi::{c_char, c_int, c_uint};

/// Success.
pub const OK: c_int = 0;
/// libfabric was not found when the crate was built.
pub const NOT_COMPILED: c_int = 1;
/// `fi_getinfo` failed; the error slot holds its negative return value.
pub const GETINFO_FAILED: c_int = 2;

extern "C" {
    pub fn oxmpi_ofi_library_version() -> c_uint;
    pub fn oxmpi_ofi_api_version() -> c_uint;
    pub fn oxmpi_ofi_providers(
        buf: *mut c_char,
        cap: usize,
        needed: *mut usize,
        err: *mut c_int,
    ) -> c_int;
    pub fn oxmpi_ofi_strerror(code: c_int) -> *const c_char;
}
