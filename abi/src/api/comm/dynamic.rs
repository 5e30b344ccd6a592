//! Ports (MPI 4.0 section 11.8.2): `MPI_Open_port`, `MPI_Close_port`,
//! `MPI_Comm_accept`, `MPI_Comm_connect` and `MPI_Comm_join`, over
//! `oxmpi::dynamic` (within a job or between separately started jobs); the
//! name service (11.8.3): `MPI_Publish_name`, `MPI_Unpublish_name`,
//! `MPI_Lookup_name`, through the launcher (per job, or shared by jobs
//! through `oxrun --name-dir`). The info arguments are
//! checked and otherwise ignored (no keys are defined).

use std::ffi::{c_char, c_int};

use crate::api::comm::inter::string_arg;
use crate::api::comm::put_new;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_Info, COMM_SELF};
use crate::raise::guard;
use crate::state;

/// `MPI_MAX_PORT_NAME` (mpi.h).
const MAX_PORT_NAME: usize = 256;

fn check_info(info: MPI_Info) -> Result<(), AbiError> {
    if info != handles::INFO_NULL {
        crate::api::env::info::read(info)?;
    }
    Ok(())
}

fn job() -> Result<String, AbiError> {
    Ok(state::lock().check_active()?.job_id())
}

/// `MPI_Open_port`: a name of at most `MPI_MAX_PORT_NAME - 1` bytes.
///
/// # Safety
/// `port_name` has room for `MPI_MAX_PORT_NAME` bytes.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Open_port(info: MPI_Info, port_name: *mut c_char) -> c_int {
    guard("MPI_Open_port", ErrObj::None, || {
        let out = out_ptr(port_name, "port_name")?;
        check_info(info)?;
        let job = job()?;
        let name = oxmpi::dynamic::open_port(&job, &state::comm(COMM_SELF)?)?;
        if name.len() >= MAX_PORT_NAME {
            let _ = oxmpi::dynamic::close_port(&job, &state::comm(COMM_SELF)?, &name);
            return Err(AbiError::new(
                Class::INTERN,
                format!("port name {name:?} is longer than MPI_MAX_PORT_NAME - 1"),
            ));
        }
        // SAFETY: the caller's buffer holds MPI_MAX_PORT_NAME bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr().cast::<c_char>(), out, name.len());
            *out.add(name.len()) = 0;
        }
        Ok(())
    })
}

/// `MPI_Close_port`: `MPI_ERR_PORT` for a name that is not an open port of
/// this process.
///
/// # Safety
/// `port_name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Close_port(port_name: *const c_char) -> c_int {
    guard("MPI_Close_port", ErrObj::None, || {
        let name = string_arg(port_name, "port_name")?;
        oxmpi::dynamic::close_port(&job()?, &state::comm(COMM_SELF)?, name)?;
        Ok(())
    })
}

/// The port name at the root; elsewhere it may be anything (even null).
fn port_at(root: c_int, comm: &oxmpi::Comm, port_name: *const c_char) -> Result<String, AbiError> {
    if comm.rank() == root {
        Ok(string_arg(port_name, "port_name")?.to_string())
    } else {
        Ok(String::new())
    }
}

/// One side of a port connection (`MPI_Comm_accept` / `_connect`, by
/// `side`): the arguments checked, the intercommunicator handed out.
///
/// # Safety
/// As for those calls.
unsafe fn port_side(
    name: &'static str,
    side: fn(&str, &oxmpi::Comm, &str, i32) -> Result<oxmpi::Comm, oxmpi::Error>,
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard(name, ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let c = state::comm(comm)?;
        let port = port_at(root, &c, port_name)?;
        if c.rank() == root {
            check_info(info)?;
        }
        let new = side(&job()?, &c, &port, root)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, Some(new), out) };
        Ok(())
    })
}

/// `MPI_Comm_accept`: collective over `comm`; `port_name` and `info`
/// matter at `root` only.
///
/// # Safety
/// `port_name` is a NUL-terminated string at the root; `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_accept(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        port_side(
            "MPI_Comm_accept",
            oxmpi::dynamic::accept,
            port_name,
            info,
            root,
            comm,
            newcomm,
        )
    }
}

/// `MPI_Comm_connect`: collective over `comm`; `port_name` and `info`
/// matter at `root` only.
///
/// # Safety
/// `port_name` is a NUL-terminated string at the root; `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_connect(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        port_side(
            "MPI_Comm_connect",
            oxmpi::dynamic::connect,
            port_name,
            info,
            root,
            comm,
            newcomm,
        )
    }
}

/// `MPI_Comm_join`: an intercommunicator with the process at the other
/// end of the connected socket `fd`.
///
/// # Safety
/// `intercomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> c_int {
    guard("MPI_Comm_join", ErrObj::None, || {
        let out = out_ptr(intercomm, "intercomm")?;
        let new = oxmpi::dynamic::join(&job()?, &state::comm(COMM_SELF)?, fd)?;
        // SAFETY: checked non-null.
        unsafe { put_new(COMM_SELF, Some(new), out) };
        Ok(())
    })
}

/// `MPI_Publish_name`: `MPI_ERR_SERVICE` when the service is published.
///
/// # Safety
/// `service_name` and `port_name` are NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Publish_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
) -> c_int {
    guard("MPI_Publish_name", ErrObj::None, || {
        let service = string_arg(service_name, "service_name")?;
        let port = string_arg(port_name, "port_name")?;
        check_info(info)?;
        let st = state::lock();
        st.check_active()?.publish_name(service, port)?;
        Ok(())
    })
}

/// `MPI_Unpublish_name`: `MPI_ERR_SERVICE` when the service is not published.
///
/// # Safety
/// `service_name` and `port_name` are NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Unpublish_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
) -> c_int {
    guard("MPI_Unpublish_name", ErrObj::None, || {
        let service = string_arg(service_name, "service_name")?;
        string_arg(port_name, "port_name")?;
        check_info(info)?;
        let st = state::lock();
        st.check_active()?.unpublish_name(service)?;
        Ok(())
    })
}

/// `MPI_Lookup_name`: `MPI_ERR_NAME` when nothing is published under the
/// service.
///
/// # Safety
/// `service_name` is a NUL-terminated string; `port_name` has room for
/// `MPI_MAX_PORT_NAME` bytes.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Lookup_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *mut c_char,
) -> c_int {
    guard("MPI_Lookup_name", ErrObj::None, || {
        let service = string_arg(service_name, "service_name")?;
        let out = out_ptr(port_name, "port_name")?;
        check_info(info)?;
        let port = state::lock().check_active()?.lookup_name(service)?;
        let n = port.len().min(MAX_PORT_NAME - 1);
        // SAFETY: the caller's buffer holds MPI_MAX_PORT_NAME bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(port.as_ptr().cast::<c_char>(), out, n);
            *out.add(n) = 0;
        }
        Ok(())
    })
}
