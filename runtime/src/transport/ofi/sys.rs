//! Raw declarations: the libfabric shim (`shim.c`, linked statically) and the
//! libfabric entry points resolved at run time with dlsym. Nothing outside
//! `ofi::result` uses these.

use std::ffi::{c_char, c_int, c_uint, c_void};

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

/// `struct fi_info *fi_dupinfo(const struct fi_info *info)`.
pub type DupinfoFn = unsafe extern "C" fn(info: *const FiInfo) -> *mut FiInfo;
/// `int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
/// void *context)`; the attribute and fabric types stay opaque here.
pub type FabricFn = unsafe extern "C" fn(
    attr: *mut c_void,
    fabric: *mut *mut c_void,
    context: *mut c_void,
) -> c_int;

/// The exported entry points `endpoint.c` needs (`struct oxmpi_ofi_entry`).
#[repr(C)]
pub struct Entry {
    /// `fi_getinfo`.
    pub getinfo: GetinfoFn,
    /// `fi_freeinfo`.
    pub freeinfo: FreeinfoFn,
    /// `fi_dupinfo`.
    pub dupinfo: DupinfoFn,
    /// `fi_fabric`.
    pub fabric: FabricFn,
}

/// One completion (`struct oxmpi_ofi_completion`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    /// The context the operation was posted with.
    pub context: *mut c_void,
    /// `FI_SEND`, `FI_RECV`, ... bits.
    pub flags: u64,
    /// Bytes received (receives).
    pub len: u64,
    /// The message's tag (receives).
    pub tag: u64,
}

/// Most completions one [`oxmpi_ofi_poll`] returns.
pub const POLL_MAX: usize = 16;
/// `FI_EAGAIN`: try again later.
pub const FI_EAGAIN: isize = 11;
/// `FI_ENODATA`: no entry matched.
pub const FI_ENODATA: isize = 61;
/// `FI_ETOOSMALL`: a buffer was too small.
pub const FI_ETOOSMALL: isize = 257;
/// `FI_EAVAIL`: an error completion is waiting.
pub const FI_EAVAIL: isize = 259;

/// `FI_MR_LOCAL`: buffers of data calls must be registered, and their
/// descriptors passed.
pub const FI_MR_LOCAL: u64 = 1 << 2;
/// `FI_MR_VIRT_ADDR`: remote addresses are virtual addresses (else offsets
/// into the registration).
pub const FI_MR_VIRT_ADDR: u64 = 1 << 4;
/// `FI_MR_PROV_KEY`: the provider chooses registration keys.
pub const FI_MR_PROV_KEY: u64 = 1 << 6;
/// Access flag: the source of sends.
pub const FI_SEND: u64 = 1 << 11;
/// Access flag: the target of receives.
pub const FI_RECV: u64 = 1 << 10;
/// Access flag: the target of local RMA reads.
pub const FI_READ: u64 = 1 << 8;
/// Access flag: read by peers' RMA reads.
pub const FI_REMOTE_READ: u64 = 1 << 12;

/// An open endpoint (`struct oxmpi_ofi_ep`); only the shim looks inside.
#[repr(C)]
pub struct RawEndpoint {
    _opaque: [u8; 0],
}

extern "C" {
    /// Opens an RDM endpoint with tagged, send-after-send ordered messages;
    /// see `endpoint.c`.
    pub fn oxmpi_ofi_open(
        fns: *const Entry,
        prov: *const c_char,
        iface: *const c_char,
        addr: *const c_char,
        rma: c_int,
        cq_size: usize,
        out: *mut *mut RawEndpoint,
        desc: *mut c_char,
        cap: usize,
    ) -> c_int;
    /// Closes everything `oxmpi_ofi_open` opened.
    pub fn oxmpi_ofi_close(e: *mut RawEndpoint);
    /// Closes the endpoint alone (ending every posted operation).
    pub fn oxmpi_ofi_close_ep(e: *mut RawEndpoint);
    /// The provider's inject size (sends this small complete at once).
    pub fn oxmpi_ofi_inject_size(e: *const RawEndpoint) -> usize;
    /// The registration modes the provider requires (`FI_MR_*`).
    pub fn oxmpi_ofi_mr_mode(e: *const RawEndpoint) -> u64;
    /// Whether the endpoint does RMA reads both ways.
    pub fn oxmpi_ofi_can_read(e: *const RawEndpoint) -> c_int;
    /// `fi_mr_reg` (bound and enabled under `FI_MR_ENDPOINT`).
    pub fn oxmpi_ofi_mr_reg(
        e: *mut RawEndpoint,
        buf: *const c_void,
        len: usize,
        access: u64,
        key: u64,
        mr: *mut *mut c_void,
        mr_desc: *mut *mut c_void,
        mr_key: *mut u64,
    ) -> c_int;
    /// Closes a registration.
    pub fn oxmpi_ofi_mr_close(mr: *mut c_void) -> c_int;
    /// The completion queue's wait descriptor, or -1.
    pub fn oxmpi_ofi_wait_fd(e: *const RawEndpoint) -> c_int;
    /// The endpoint's address (`fi_getname`).
    pub fn oxmpi_ofi_getname(e: *mut RawEndpoint, addr: *mut c_void, len: *mut usize) -> c_int;
    /// Inserts a peer's address (`fi_av_insert`).
    pub fn oxmpi_ofi_insert(e: *mut RawEndpoint, addr: *const c_void, fi_addr: *mut u64) -> c_int;
    /// `fi_tsend`.
    pub fn oxmpi_ofi_tsend(
        e: *mut RawEndpoint,
        buf: *const c_void,
        len: usize,
        mr_desc: *mut c_void,
        dest: u64,
        tag: u64,
        context: *mut c_void,
    ) -> isize;
    /// `fi_tinject`.
    pub fn oxmpi_ofi_tinject(
        e: *mut RawEndpoint,
        buf: *const c_void,
        len: usize,
        dest: u64,
        tag: u64,
    ) -> isize;
    /// `fi_trecv` from any source.
    pub fn oxmpi_ofi_trecv(
        e: *mut RawEndpoint,
        buf: *mut c_void,
        len: usize,
        mr_desc: *mut c_void,
        tag: u64,
        ignore: u64,
        context: *mut c_void,
    ) -> isize;
    /// `fi_read`.
    #[allow(clippy::too_many_arguments)] // fi_read's own arguments
    pub fn oxmpi_ofi_read(
        e: *mut RawEndpoint,
        buf: *mut c_void,
        len: usize,
        mr_desc: *mut c_void,
        src: u64,
        addr: u64,
        key: u64,
        context: *mut c_void,
    ) -> isize;
    /// Reads completions; see `endpoint.c`.
    pub fn oxmpi_ofi_poll(
        e: *mut RawEndpoint,
        out: *mut Completion,
        max: usize,
        err_context: *mut *mut c_void,
        err: *mut c_int,
        errbuf: *mut c_char,
        errcap: usize,
    ) -> isize;
    /// `fi_trywait` on the completion queue: 0 when blocking is safe.
    pub fn oxmpi_ofi_trywait(e: *mut RawEndpoint) -> c_int;
}
