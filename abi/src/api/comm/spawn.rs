//! Spawning (MPI 4.0 section 11.8.2): `MPI_Comm_spawn`,
//! `MPI_Comm_spawn_multiple` and `MPI_Comm_get_parent`, over
//! `oxmpi::dynamic::spawn`. The command, arguments, counts and info
//! matter at the root only. Info keys: `host` (oxrun's `--host` list),
//! `wdir` (the children's working directory), `path` (where to find the
//! command); `soft` and others are accepted and ignored (every requested
//! process is started or the call fails). `array_of_errcodes` gets
//! `MPI_SUCCESS` for each child on every parent, or, when the spawn
//! failed, `MPI_ERR_SPAWN` for each requested process at the root.

use std::ffi::{c_char, c_int, CStr};

use oxmpi::bootstrap::spawn_wire::{SpawnCmd, SpawnRequest};

use crate::api::comm::inter::string_arg;
use crate::api::comm::put_new;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Info};
use crate::raise::guard;
use crate::state;

/// A NUL-terminated array of C strings (`MPI_ARGV_NULL`: none).
///
/// # Safety
/// `argv` is null or a NULL-terminated array of NUL-terminated strings.
unsafe fn strings(argv: *const *const c_char, arg: &str) -> Result<Vec<String>, AbiError> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: the caller's contract: read up to the terminating NULL.
        let p = unsafe { *argv.add(i) };
        if p.is_null() {
            break;
        }
        // SAFETY: a NUL-terminated string by the caller's contract.
        let s = unsafe { CStr::from_ptr(p) }
            .to_str()
            .map_err(|_| AbiError::new(Class::ARG, format!("`{arg}[{i}]` is not UTF-8")))?;
        out.push(s.to_string());
    }
    Ok(out)
}

fn command(
    program: *const c_char,
    args: Vec<String>,
    maxprocs: c_int,
    info: MPI_Info,
) -> Result<SpawnCmd, AbiError> {
    let program = string_arg(program, "command")?.to_string();
    if program.is_empty() {
        return Err(AbiError::new(Class::ARG, "`command` is empty"));
    }
    if maxprocs <= 0 {
        return Err(AbiError::new(
            Class::ARG,
            format!("invalid argument `maxprocs`: {maxprocs} (must be positive)"),
        ));
    }
    let info = if info == handles::INFO_NULL {
        Vec::new()
    } else {
        crate::api::env::info::read(info)?.pairs
    };
    Ok(SpawnCmd {
        program,
        args,
        maxprocs: maxprocs as u32,
        info,
    })
}

/// Runs the spawn and writes the handle and the error codes.
///
/// # Safety
/// `intercomm` is writable; `errcodes` is null or has room for `total`.
unsafe fn run(
    comm: MPI_Comm,
    root: c_int,
    req: Option<Result<SpawnRequest, AbiError>>,
    intercomm: *mut MPI_Comm,
    errcodes: *mut c_int,
) -> Result<(), AbiError> {
    let out = out_ptr(intercomm, "intercomm")?;
    let c = state::comm(comm)?;
    let launcher = state::lock().check_active()?.launcher();
    let total = req
        .as_ref()
        .and_then(|r| r.as_ref().ok())
        .map_or(0, |r| r.cmds.iter().map(|c| c.maxprocs as usize).sum());
    // A bad request at the root still runs the collective (the others
    // learn of the failure instead of waiting).
    let (req, bad) = match req {
        Some(Ok(r)) => (Some(r), None),
        Some(Err(e)) => (Some(SpawnRequest::default()), Some(e)),
        None => (None, None),
    };
    if let Some(e) = bad {
        let _ = oxmpi::dynamic::spawn::spawn(&launcher, &c, root, None);
        return Err(e);
    }
    let result = oxmpi::dynamic::spawn::spawn(&launcher, &c, root, req);
    // Every process learns the child count from a successful spawn; a
    // failed one is reported in the codes at the root.
    let (count, code) = match &result {
        Ok(inter) => (inter.remote_size()? as usize, 0),
        Err(_) => (total, Class::SPAWN.0),
    };
    if !errcodes.is_null() {
        for i in 0..count {
            // SAFETY: the caller's array holds one code per process.
            unsafe { *errcodes.add(i) = code };
        }
    }
    let new = result?;
    // SAFETY: checked non-null.
    unsafe { put_new(comm, Some(new), out) };
    Ok(())
}

/// `MPI_Comm_spawn`.
///
/// # Safety
/// At the root `command` is a string and `argv` null or a NULL-terminated
/// string array; `intercomm` is writable; `array_of_errcodes` is null or
/// holds `maxprocs` ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_spawn(
    command_: *const c_char,
    argv: *const *const c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    guard("MPI_Comm_spawn", ErrObj::Comm(comm), || {
        let c = state::comm(comm)?;
        let req = (c.rank() == root).then(|| {
            // SAFETY: the caller's contract.
            let args = unsafe { strings(argv, "argv") }?;
            Ok(SpawnRequest {
                cmds: vec![command(command_, args, maxprocs, info)?],
                preput: Vec::new(),
            })
        });
        // SAFETY: the caller's contract.
        unsafe { run(comm, root, req, intercomm, array_of_errcodes) }
    })
}

/// `MPI_Comm_spawn_multiple`: every command's processes in one new job,
/// in order.
///
/// # Safety
/// At the root the arrays hold `count` entries (`array_of_argv` may be
/// `MPI_ARGVS_NULL`); `intercomm` is writable; `array_of_errcodes` is null
/// or holds the sum of `array_of_maxprocs` ints.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_spawn_multiple(
    count: c_int,
    array_of_commands: *const *const c_char,
    array_of_argv: *const *const *const c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    guard("MPI_Comm_spawn_multiple", ErrObj::Comm(comm), || {
        let c = state::comm(comm)?;
        let req = (c.rank() == root).then(|| {
            if count <= 0 {
                return Err(AbiError::new(
                    Class::ARG,
                    format!("invalid argument `count`: {count} (must be positive)"),
                ));
            }
            for (p, name) in [
                (array_of_commands.is_null(), "array_of_commands"),
                (array_of_maxprocs.is_null(), "array_of_maxprocs"),
                (array_of_info.is_null(), "array_of_info"),
            ] {
                if p {
                    return Err(AbiError::new(
                        Class::ARG,
                        format!("`{name}` is a null pointer"),
                    ));
                }
            }
            let mut cmds = Vec::new();
            for i in 0..count as usize {
                // SAFETY: the arrays hold `count` entries (the caller's contract).
                let (program, maxprocs, info) = unsafe {
                    (
                        *array_of_commands.add(i),
                        *array_of_maxprocs.add(i),
                        *array_of_info.add(i),
                    )
                };
                let argv = if array_of_argv.is_null() {
                    std::ptr::null()
                } else {
                    // SAFETY: as above.
                    unsafe { *array_of_argv.add(i) }
                };
                // SAFETY: as above.
                let args = unsafe { strings(argv, "array_of_argv") }?;
                cmds.push(command(program, args, maxprocs, info)?);
            }
            Ok(SpawnRequest {
                cmds,
                preput: Vec::new(),
            })
        });
        // SAFETY: the caller's contract.
        unsafe { run(comm, root, req, intercomm, array_of_errcodes) }
    })
}
