//! Checked layer over `sys`: shim return codes become `Result`s naming the
//! libfabric call that failed, with libfabric's own error text.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::io;

use super::sys;
use crate::Error;

/// The provider name of every `fi_info` entry `fi_getinfo` returns, in its
/// order, duplicates included; empty when it finds nothing.
pub(super) fn provider_names() -> Result<Vec<String>, Error> {
    let mut buf: Vec<u8> = vec![0; 4096];
    loop {
        let mut needed: usize = 0;
        let mut err: c_int = 0;
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and the
        // shim never writes past the capacity it is given; the other
        // out-pointers are valid for writes.
        let code = unsafe {
            sys::oxmpi_ofi_providers(
                buf.as_mut_ptr().cast::<c_char>(),
                buf.len(),
                &mut needed,
                &mut err,
            )
        };
        check(code, err)?;
        if needed > buf.len() {
            buf.resize(needed, 0);
            continue;
        }
        buf.truncate(needed);
        let text = String::from_utf8_lossy(&buf);
        return Ok(text.lines().map(str::to_owned).collect());
    }
}

/// The loaded library's version as "major.minor"; `None` when libfabric was
/// not compiled in.
pub(super) fn library_version() -> Option<String> {
    // SAFETY: a plain query with no arguments.
    decode(unsafe { sys::oxmpi_ofi_library_version() })
}

/// The API version requested from `fi_getinfo`, as "major.minor".
pub(super) fn api_version() -> Option<String> {
    // SAFETY: a plain query with no arguments.
    decode(unsafe { sys::oxmpi_ofi_api_version() })
}

fn decode(v: c_uint) -> Option<String> {
    (v != 0).then(|| format!("{}.{}", v >> 16, v & 0xffff))
}

fn check(code: c_int, err: c_int) -> Result<(), Error> {
    match code {
        sys::OK => Ok(()),
        sys::NOT_COMPILED => Err(Error::Os {
            call: "libfabric",
            source: io::Error::new(
                io::ErrorKind::Unsupported,
                "libfabric was not found by pkg-config when oxmpi was built",
            ),
        }),
        sys::GETINFO_FAILED => Err(Error::Os {
            call: "fi_getinfo",
            source: io::Error::other(format!("{} ({err})", strerror(err))),
        }),
        other => Err(Error::Os {
            call: "fi_getinfo",
            source: io::Error::other(format!("unexpected shim code {other}")),
        }),
    }
}

fn strerror(code: c_int) -> String {
    // SAFETY: fi_strerror returns a pointer to a static NUL-terminated
    // string (or null, handled below).
    let text = unsafe { sys::oxmpi_ofi_strerror(code) };
    if text.is_null() {
        return "unknown libfabric error".into();
    }
    // SAFETY: non-null, NUL-terminated and static, per fi_strerror.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}
