//! Checked layer over `sys`: opens libfabric on first use (once per process),
//! and turns shim return codes into `Result`s naming what failed, with
//! libfabric's (or the dynamic loader's) own error text.

use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

use super::sys;
use crate::Error;

/// libfabric, opened, with the entry points this module calls.
pub(super) struct Loaded {
    getinfo: sys::GetinfoFn,
    freeinfo: sys::FreeinfoFn,
    version: sys::VersionFn,
    strerror: sys::StrerrorFn,
    /// What `endpoint.c` calls.
    pub(super) entry: sys::Entry,
    /// Keeps the function pointers above valid. Never closed: the only
    /// instance lives in a static.
    _library: Library,
}

/// The outcome of the first attempt to open libfabric; the error is the
/// loader's text.
static LOADED: OnceLock<Result<Loaded, String>> = OnceLock::new();

/// Whether the shim was compiled against libfabric's header.
fn compiled_in() -> bool {
    // SAFETY: a plain query with no arguments.
    unsafe { sys::oxmpi_ofi_api_version() != 0 }
}

/// libfabric, opened on the first call; the same outcome on every later one.
/// Fails without trying when the shim was built without the header.
pub(super) fn loaded() -> Result<&'static Loaded, Error> {
    if !compiled_in() {
        return Err(not_compiled());
    }
    LOADED
        .get_or_init(|| open(sys::LIBRARY))
        .as_ref()
        .map_err(|reason| not_loadable(reason.clone()))
}

fn not_compiled() -> Error {
    Error::Fabric {
        what: "libfabric",
        reason: "its header was not found by pkg-config when oxmpi was built".into(),
    }
}

fn not_loadable(reason: String) -> Error {
    Error::Fabric {
        what: "libfabric not loadable",
        reason,
    }
}

/// dlopen(`name`, RTLD_NOW | RTLD_LOCAL) and dlsym the entry points; the
/// error is dlerror's text.
fn open(name: &str) -> Result<Loaded, String> {
    // SAFETY: opening libfabric runs its initialisers and those of the
    // provider libraries it depends on; they make no assumptions about this
    // process beyond what any C program provides.
    let library =
        unsafe { Library::open(Some(name), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| e.to_string())?;
    // SAFETY: each type in `sys` is the C prototype of the symbol it is
    // resolved from (<rdma/fabric.h>, <rdma/fi_errno.h>; the shim checks the
    // two it shares against the header). dlsym returns the default symbol
    // version, the one a program linked against this header would bind to;
    // libfabric only appends to `struct fi_info` in later versions.
    unsafe {
        let getinfo = *library
            .get::<sys::GetinfoFn>(b"fi_getinfo\0")
            .map_err(|e| e.to_string())?;
        let freeinfo = *library
            .get::<sys::FreeinfoFn>(b"fi_freeinfo\0")
            .map_err(|e| e.to_string())?;
        let version = *library
            .get::<sys::VersionFn>(b"fi_version\0")
            .map_err(|e| e.to_string())?;
        let strerror = *library
            .get::<sys::StrerrorFn>(b"fi_strerror\0")
            .map_err(|e| e.to_string())?;
        let dupinfo = *library
            .get::<sys::DupinfoFn>(b"fi_dupinfo\0")
            .map_err(|e| e.to_string())?;
        let fabric = *library
            .get::<sys::FabricFn>(b"fi_fabric\0")
            .map_err(|e| e.to_string())?;
        Ok(Loaded {
            getinfo,
            freeinfo,
            version,
            strerror,
            entry: sys::Entry {
                getinfo,
                freeinfo,
                dupinfo,
                fabric,
            },
            _library: library,
        })
    }
}

/// The provider name of every `fi_info` entry `fi_getinfo` returns, in its
/// order, duplicates included; empty when it finds nothing.
pub(super) fn provider_names() -> Result<Vec<String>, Error> {
    let lib = loaded()?;
    let mut buf: Vec<u8> = vec![0; 4096];
    loop {
        let mut needed: usize = 0;
        let mut err: c_int = 0;
        // SAFETY: `getinfo`/`freeinfo` are libfabric's, kept valid by the
        // static library; `buf` is valid for `buf.len()` bytes of writes,
        // and the shim never writes past the capacity it is given; the
        // other out-pointers are valid for writes.
        let code = unsafe {
            sys::oxmpi_ofi_providers(
                lib.getinfo,
                lib.freeinfo,
                buf.as_mut_ptr().cast::<c_char>(),
                buf.len(),
                &mut needed,
                &mut err,
            )
        };
        check(lib, code, err)?;
        if needed > buf.len() {
            buf.resize(needed, 0);
            continue;
        }
        buf.truncate(needed);
        let text = String::from_utf8_lossy(&buf);
        return Ok(text.lines().map(str::to_owned).collect());
    }
}

/// The loaded library's version as "major.minor" (`fi_version`).
pub(super) fn library_version() -> Result<String, Error> {
    let lib = loaded()?;
    // SAFETY: libfabric's fi_version, kept valid by the static library; no
    // arguments.
    let v = unsafe { (lib.version)() };
    decode(v).ok_or_else(|| Error::Fabric {
        what: "fi_version",
        reason: "returned 0".into(),
    })
}

/// The API version requested from `fi_getinfo`, as "major.minor"; `None`
/// when the header was not found at build time. Does not open libfabric.
pub(super) fn api_version() -> Option<String> {
    // SAFETY: a plain query with no arguments.
    decode(unsafe { sys::oxmpi_ofi_api_version() })
}

fn decode(v: u32) -> Option<String> {
    (v != 0).then(|| format!("{}.{}", v >> 16, v & 0xffff))
}

fn check(lib: &Loaded, code: c_int, err: c_int) -> Result<(), Error> {
    match code {
        sys::OK => Ok(()),
        sys::GETINFO_FAILED => Err(Error::Fabric {
            what: "fi_getinfo",
            reason: format!("{} ({err})", strerror(lib, err)),
        }),
        // Unreachable in practice: `loaded` refuses first.
        sys::NOT_COMPILED => Err(not_compiled()),
        other => Err(Error::Fabric {
            what: "fi_getinfo",
            reason: format!("unexpected shim code {other}"),
        }),
    }
}

/// libfabric's text for a (negative) return code.
pub(super) fn strerror(lib: &Loaded, code: c_int) -> String {
    // SAFETY: libfabric's fi_strerror, kept valid by the static library; it
    // takes any int and returns a pointer to a static NUL-terminated string
    // (or null, handled below).
    let text = unsafe { (lib.strerror)(code.checked_abs().unwrap_or(c_int::MAX)) };
    if text.is_null() {
        return "unknown libfabric error".into();
    }
    // SAFETY: non-null, NUL-terminated and static, per fi_strerror.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_reported_with_the_loader_text() {
        let Err(reason) = open("liboxmpi-no-such-fabric.so.1") else {
            panic!("opened a library that does not exist");
        };
        assert!(reason.contains("liboxmpi-no-such-fabric.so.1"), "{reason}");
        let text = not_loadable(reason.clone()).to_string();
        assert_eq!(text, format!("libfabric not loadable: {reason}"));
    }

    #[test]
    fn a_missing_symbol_is_reported_with_the_loader_text() {
        // The C library is always present and has no fi_getinfo.
        let Err(reason) = open("libc.so.6") else {
            panic!("libc has fi_getinfo?");
        };
        assert!(reason.contains("fi_getinfo"), "{reason}");
    }

    #[test]
    fn versions_decode_as_major_minor() {
        assert_eq!(decode((1 << 16) | 17).as_deref(), Some("1.17"));
        assert_eq!(decode(0), None);
    }
}
