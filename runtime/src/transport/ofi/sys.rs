//! Raw declarations: the libfabric shim (`shim.c`, linked statically) and the
//! libfabric entry points resolved at run time with dlsym. Nothing outside
//! `ofi::result` uses these.

use std::ffi::{c_char, c_int, c_uint};

/// Success.
pub const OK: c_int = 0;
/// libfabric's header was not found when the crate was built.
pub const NOT_COMPILED: c_int = 1;
/// `fi_getinfo` failed; the error slot holds its negative return value.
pub const GETINFO_FAILED: c_int = 2;

/// The library opened on first use (the soname of libfabric 1.x).
pub const LIBRARY: &str = "libfabric.so.1";

/// `struct fi_info`; only the shim looks inside.
#[repr(C)]
pub struct FiInfo {
    _opaque: [u8; 0],
}

/// `int fi_getinfo(uint32_t version, const char *node, const char *service,
/// uint64_t flags, const struct fi_info *hints, struct fi_info **info)`.
pub type GetinfoFn = unsafe extern "C" fn(
    version: u32,
    node: *const c_char,
    service: *const c_char,
    flags: u64,
    hints: *const FiInfo,
    info: *mut *mut FiInfo,
) -> c_int;
/// `void fi_freeinfo(struct fi_info *info)`.
pub type FreeinfoFn = unsafe extern "C" fn(info: *mut FiInfo);
/// `uint32_t fi_version(void)`.
pub type VersionFn = unsafe extern "C" fn() -> u32;
/// `const char *fi_strerror(int errnum)`.
pub type StrerrorFn = unsafe extern "C" fn(errnum: c_int) -> *const c_char;

extern "C" {
    /// The API version requested from `fi_getinfo` (FI_VERSION-encoded); 0
    /// when the header was not found at build time.
    pub fn oxmpi_ofi_api_version() -> c_uint;
    /// Lists provider names through `getinfo`/`freeinfo`; see `shim.c`.
    pub fn oxmpi_ofi_providers(
        getinfo: GetinfoFn,
        freeinfo: FreeinfoFn,
        buf: *mut c_char,
        cap: usize,
        needed: *mut usize,
        err: *mut c_int,
    ) -> c_int;
}
