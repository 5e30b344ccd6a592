//! Info objects: `MPI_Info_create`, `_set`, `_get`, `_get_string`,
//! `_get_nkeys`, `_get_nthkey`, `_get_valuelen`, `_delete`, `_dup`,
//! `_free`, `_create_env`; `MPI_INFO_ENV` is read-only, with the standard
//! keys (`command`, `argv`, `maxprocs`, `host`, `arch`, `wdir`,
//! `thread_level`; see `env_info`). Info objects work before `MPI_Init`
//! and after `MPI_Finalize`, as MPI 4.0 allows. OxMPI takes no hints yet: programs can pass info
//! objects anywhere and they are ignored.

use std::ffi::{c_char, c_int, CStr};

use crate::api::datatype::query::write_c_string;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, InfoRef, MPI_Info, INFO_NULL};
use crate::objects::info::InfoEntry;
use crate::raise::guard;
use crate::state;

/// `MPI_MAX_INFO_KEY`.
const MAX_INFO_KEY: usize = 255;
/// `MPI_MAX_INFO_VAL`.
const MAX_INFO_VAL: usize = 1024;
/// `MPI_ERR_INFO_KEY`.
const ERR_INFO_KEY: Class = Class(29);
/// `MPI_ERR_INFO_VALUE`.
const ERR_INFO_VALUE: Class = Class(30);
/// `MPI_ERR_INFO_NOKEY`.
const ERR_INFO_NOKEY: Class = Class(31);
/// `MPI_ERR_INFO`.
const ERR_INFO: Class = Class(28);

/// The process's command line, from `/proc/self/cmdline`.
fn own_args() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The contents of `MPI_INFO_ENV` (MPI 4.0, section 11.2.2) for the
/// command line `args`: `command` and `argv` (the arguments, space
/// separated), `maxprocs` (the job's size: from the launcher before
/// `MPI_Init`), `host`, `arch`, `wdir`, and once initialized
/// `thread_level` (the level `MPI_Init_thread` asked for). `soft` and
/// `file` are not known to OxMPI's launcher and are left out.
fn env_info(args: &[String]) -> InfoEntry {
    let mut pairs = Vec::new();
    if let Some(cmd) = args.first() {
        pairs.push(("command".into(), cmd.clone()));
    }
    if args.len() > 1 {
        pairs.push(("argv".into(), args[1..].join(" ")));
    }
    let (size, level) = {
        let st = state::lock();
        let size = st.universe.as_ref().map(|u| u.world().size());
        (size, st.universe.as_ref().map(|_| st.provided))
    };
    let size = size.or_else(|| {
        std::env::var("PMI_SIZE")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .filter(|&n| n > 0)
    });
    if let Some(n) = size {
        pairs.push(("maxprocs".into(), n.to_string()));
    }
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        pairs.push(("host".into(), h.trim().to_string()));
    }
    pairs.push(("arch".into(), std::env::consts::ARCH.into()));
    if let Ok(d) = std::env::current_dir() {
        pairs.push(("wdir".into(), d.display().to_string()));
    }
    if let Some(level) = level {
        let name = ["SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE"][level.clamp(0, 3) as usize];
        pairs.push(("thread_level".into(), format!("MPI_THREAD_{name}")));
    }
    InfoEntry { pairs }
}

/// The command line `MPI_Info_create_env` was given: `argc` strings of
/// `argv`, or the process's own when `argv` is null.
///
/// # Safety
/// A non-null `argv` holds `argc` C strings.
unsafe fn args_arg(argc: c_int, argv: *mut *mut c_char) -> Result<Vec<String>, AbiError> {
    if argv.is_null() {
        return Ok(own_args());
    }
    let n = usize::try_from(argc).map_err(|_| {
        AbiError::new(
            Class::ARG,
            format!("`argc` is {argc}: it cannot be negative"),
        )
    })?;
    (0..n)
        .map(|i| {
            // SAFETY: the caller's contract.
            let p = unsafe { *argv.add(i) };
            if p.is_null() {
                return Err(AbiError::new(
                    Class::ARG,
                    format!("`argv[{i}]` is a null pointer but `argc` is {argc}"),
                ));
            }
            // SAFETY: a C string: the caller's contract.
            Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
        .collect()
}

fn freed(h: MPI_Info) -> AbiError {
    AbiError::new(
        ERR_INFO,
        format!("info {h:#010x} does not exist (freed, or never created)"),
    )
}

/// A copy of the info object a handle names.
pub fn read(h: MPI_Info) -> Result<InfoEntry, AbiError> {
    match handles::info(h)? {
        InfoRef::Env => Ok(env_info(&own_args())),
        InfoRef::Slot(s) => state::lock().infos.get(s).cloned().ok_or_else(|| freed(h)),
    }
}

/// Changes the info object a handle names (`MPI_INFO_ENV` is read-only).
fn modify<R>(
    h: MPI_Info,
    f: impl FnOnce(&mut InfoEntry) -> Result<R, AbiError>,
) -> Result<R, AbiError> {
    match handles::info(h)? {
        InfoRef::Env => Err(AbiError::new(ERR_INFO, "MPI_INFO_ENV is read-only")),
        InfoRef::Slot(s) => {
            let mut st = state::lock();
            let e = st.infos.get_mut(s).ok_or_else(|| freed(h))?;
            f(e)
        }
    }
}

/// Sets `key` in the info object `h` for the library (an output of a call,
/// such as `mpi_hw_resource_type` after an unguided split).
pub fn set_key(h: MPI_Info, key: &str, value: &str) -> Result<(), AbiError> {
    modify(h, |e| {
        e.set(key, value);
        Ok(())
    })
}

/// Checks that an info argument is `MPI_INFO_NULL` or a live info object
/// (for calls that take hints and ignore them).
pub fn check_hints(h: MPI_Info) -> Result<(), AbiError> {
    if h == INFO_NULL {
        return Ok(());
    }
    read(h).map(|_| ())
}

/// A key argument.
///
/// # Safety
/// `p` is null or a C string.
unsafe fn key_arg(p: *const c_char) -> Result<String, AbiError> {
    if p.is_null() {
        return Err(AbiError::new(ERR_INFO_KEY, "`key` is a null pointer"));
    }
    // SAFETY: non-null; the caller's contract.
    let k = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    if k.is_empty() || k.len() > MAX_INFO_KEY {
        return Err(AbiError::new(
            ERR_INFO_KEY,
            format!(
                "invalid key `{k}`: keys have 1 to MPI_MAX_INFO_KEY ({MAX_INFO_KEY}) characters"
            ),
        ));
    }
    Ok(k)
}

pub(crate) fn store(e: InfoEntry) -> MPI_Info {
    let slot = state::lock().infos.insert(e);
    handles::info_handle(slot)
}

/// `MPI_Info_create`.
///
/// # Safety
/// `info` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_create(info: *mut MPI_Info) -> c_int {
    guard("MPI_Info_create", ErrObj::None, || {
        let out = out_ptr(info, "info")?;
        // SAFETY: checked non-null.
        unsafe { *out = store(InfoEntry::default()) };
        Ok(())
    })
}

/// `MPI_Info_create_env`: a new info object built as `MPI_INFO_ENV` would
/// be for the command line `argc` / `argv` (the process's own when `argv`
/// is null). Callable before `MPI_Init` and after `MPI_Finalize`.
///
/// # Safety
/// `info` is writable; a non-null `argv` holds `argc` C strings.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_create_env(
    argc: c_int,
    argv: *mut *mut c_char,
    info: *mut MPI_Info,
) -> c_int {
    guard("MPI_Info_create_env", ErrObj::None, || {
        let out = out_ptr(info, "info")?;
        // SAFETY: the caller's contract.
        let args = unsafe { args_arg(argc, argv) }?;
        // SAFETY: checked non-null.
        unsafe { *out = store(env_info(&args)) };
        Ok(())
    })
}

/// `MPI_Info_set`.
///
/// # Safety
/// `key` and `value` are C strings.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_set(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    guard("MPI_Info_set", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let k = unsafe { key_arg(key) }?;
        if value.is_null() {
            return Err(AbiError::new(ERR_INFO_VALUE, "`value` is a null pointer"));
        }
        // SAFETY: non-null; the caller's contract.
        let v = unsafe { CStr::from_ptr(value) }
            .to_string_lossy()
            .into_owned();
        if v.len() > MAX_INFO_VAL {
            return Err(AbiError::new(
                ERR_INFO_VALUE,
                format!(
                    "the value for `{k}` has {} characters; MPI_MAX_INFO_VAL is {MAX_INFO_VAL}",
                    v.len()
                ),
            ));
        }
        modify(info, |e| {
            e.set(&k, &v);
            Ok(())
        })
    })
}

/// `MPI_Info_get`: copies at most `valuelen` characters (plus NUL).
///
/// # Safety
/// `key` is a C string; `value` has `valuelen + 1` bytes; `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_get(
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Info_get", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let k = unsafe { key_arg(key) }?;
        let flag = out_ptr(flag, "flag")?;
        let cap = usize::try_from(valuelen)
            .map_err(|_| AbiError::new(Class::ARG, format!("invalid `valuelen` {valuelen}")))?;
        let e = read(info)?;
        match e.get(&k) {
            Some(v) => {
                let out = out_ptr(value, "value")?;
                // SAFETY: the caller's contract: valuelen + 1 bytes.
                unsafe {
                    write_c_string(out, cap + 1, v);
                    *flag = 1;
                }
            }
            // SAFETY: checked non-null.
            None => unsafe { *flag = 0 },
        }
        Ok(())
    })
}

/// `MPI_Info_get_string` (MPI-4): `*buflen` in: buffer size; out: the
/// value's length plus one.
///
/// # Safety
/// `key` is a C string; `value` has `*buflen` bytes; `buflen` and `flag`
/// are readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Info_get_string", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let k = unsafe { key_arg(key) }?;
        let flag = out_ptr(flag, "flag")?;
        let buflen = out_ptr(buflen, "buflen")?;
        let e = read(info)?;
        // SAFETY: checked non-null pointers; the caller's contract.
        unsafe {
            match e.get(&k) {
                Some(v) => {
                    let cap = usize::try_from(*buflen).unwrap_or(0);
                    if cap > 0 {
                        write_c_string(out_ptr(value, "value")?, cap, v);
                    }
                    *buflen = c_int::try_from(v.len() + 1).unwrap_or(c_int::MAX);
                    *flag = 1;
                }
                None => *flag = 0,
            }
        }
        Ok(())
    })
}

/// `MPI_Info_get_valuelen`.
///
/// # Safety
/// `key` is a C string; `valuelen` and `flag` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_get_valuelen(
    info: MPI_Info,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Info_get_valuelen", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let k = unsafe { key_arg(key) }?;
        let flag = out_ptr(flag, "flag")?;
        let len = out_ptr(valuelen, "valuelen")?;
        let e = read(info)?;
        // SAFETY: checked non-null.
        unsafe {
            match e.get(&k) {
                Some(v) => {
                    *len = v.len() as c_int;
                    *flag = 1;
                }
                None => *flag = 0,
            }
        }
        Ok(())
    })
}

/// `MPI_Info_get_nkeys`.
///
/// # Safety
/// `nkeys` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> c_int {
    guard("MPI_Info_get_nkeys", ErrObj::None, || {
        let out = out_ptr(nkeys, "nkeys")?;
        let n = read(info)?.pairs.len();
        // SAFETY: checked non-null.
        unsafe { *out = n as c_int };
        Ok(())
    })
}

/// `MPI_Info_get_nthkey`.
///
/// # Safety
/// `key` has `MPI_MAX_INFO_KEY + 1` bytes.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_get_nthkey(
    info: MPI_Info,
    n: c_int,
    key: *mut c_char,
) -> c_int {
    guard("MPI_Info_get_nthkey", ErrObj::None, || {
        let out = out_ptr(key, "key")?;
        let e = read(info)?;
        let k = usize::try_from(n)
            .ok()
            .and_then(|i| e.pairs.get(i))
            .ok_or_else(|| {
                AbiError::new(
                    Class::ARG,
                    format!("invalid `n` {n}: the info has {} keys", e.pairs.len()),
                )
            })?;
        // SAFETY: the caller's contract.
        unsafe { write_c_string(out, MAX_INFO_KEY + 1, &k.0) };
        Ok(())
    })
}

/// `MPI_Info_delete`.
///
/// # Safety
/// `key` is a C string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_delete(info: MPI_Info, key: *const c_char) -> c_int {
    guard("MPI_Info_delete", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let k = unsafe { key_arg(key) }?;
        modify(info, |e| {
            let i = e.pairs.iter().position(|(x, _)| *x == k).ok_or_else(|| {
                AbiError::new(ERR_INFO_NOKEY, format!("the info has no key `{k}`"))
            })?;
            e.pairs.remove(i);
            Ok(())
        })
    })
}

/// `MPI_Info_dup`.
///
/// # Safety
/// `newinfo` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> c_int {
    guard("MPI_Info_dup", ErrObj::None, || {
        let out = out_ptr(newinfo, "newinfo")?;
        let e = read(info)?;
        // SAFETY: checked non-null.
        unsafe { *out = store(e) };
        Ok(())
    })
}

/// `MPI_Info_free`: sets the handle to `MPI_INFO_NULL`.
///
/// # Safety
/// `info` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Info_free(info: *mut MPI_Info) -> c_int {
    guard("MPI_Info_free", ErrObj::None, || {
        let p = out_ptr(info, "info")?;
        // SAFETY: checked non-null.
        let h = unsafe { *p };
        match handles::info(h)? {
            InfoRef::Env => {
                return Err(AbiError::new(ERR_INFO, "MPI_INFO_ENV cannot be freed"));
            }
            InfoRef::Slot(s) => {
                state::lock().infos.remove(s).ok_or_else(|| freed(h))?;
            }
        }
        // SAFETY: checked non-null.
        unsafe { *p = INFO_NULL };
        Ok(())
    })
}
