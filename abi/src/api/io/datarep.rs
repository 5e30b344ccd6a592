//! User data representations (`MPI_Register_datarep`, MPI 4.0 section
//! 14.5.3). A representation registered without conversion functions
//! stores data as native does, with the file extents its extent function
//! gives; one with conversion functions can be registered, and a view
//! naming it is refused with `MPI_ERR_UNSUPPORTED_DATAREP` (the
//! conversions are not called yet).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

use crate::errors::{AbiError, Class, ErrObj};
use crate::handles::{MPI_Aint, MPI_Datatype};
use crate::raise::guard;

/// `MPI_Datarep_extent_function`.
pub type ExtentFn = unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;

/// `MPI_ERR_DUP_DATAREP`.
const ERR_DUP_DATAREP: Class = Class(24);
/// `MPI_MAX_DATAREP_STRING`.
const MAX_DATAREP_STRING: usize = 128;

/// A registered representation.
#[derive(Clone)]
pub struct UserDatarep {
    name: String,
    /// Whether it converts data (read or write function given).
    pub converts: bool,
    extent_fn: ExtentFn,
    extra_state: usize,
}

impl UserDatarep {
    /// The file extent of `datatype` in this representation.
    pub fn extent(&self, datatype: MPI_Datatype) -> Result<MPI_Aint, AbiError> {
        let mut x: MPI_Aint = 0;
        // SAFETY: the function the program registered, called as MPI specifies.
        let rc = unsafe { (self.extent_fn)(datatype, &mut x, self.extra_state as *mut c_void) };
        if rc != 0 {
            return Err(AbiError::from_code(rc, "the datarep's extent function"));
        }
        Ok(x)
    }
}

static REGISTRY: Mutex<Vec<UserDatarep>> = Mutex::new(Vec::new());

/// The registered representation named `name`.
pub fn find(name: &str) -> Option<UserDatarep> {
    let reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    reg.iter().find(|d| d.name == name).cloned()
}

/// # Safety
/// `datarep` is a NUL-terminated string.
unsafe fn register(
    datarep: *const c_char,
    converts: bool,
    extent_fn: Option<ExtentFn>,
    extra_state: *mut c_void,
) -> Result<(), AbiError> {
    if datarep.is_null() {
        return Err(AbiError::new(Class::ARG, "`datarep` is NULL"));
    }
    // SAFETY: the caller's contract.
    let name = unsafe { CStr::from_ptr(datarep) }
        .to_string_lossy()
        .into_owned();
    if name.is_empty() || name.len() >= MAX_DATAREP_STRING {
        return Err(AbiError::new(
            Class::ARG,
            format!("invalid `datarep` {name:?}: 1 to 127 characters"),
        ));
    }
    let extent_fn =
        extent_fn.ok_or_else(|| AbiError::new(Class::ARG, "`dtype_file_extent_fn` is NULL"))?;
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if ["native", "internal", "external32"].contains(&name.as_str())
        || reg.iter().any(|d| d.name == name)
    {
        return Err(AbiError::new(
            ERR_DUP_DATAREP,
            format!("data representation {name:?} is already defined"),
        ));
    }
    reg.push(UserDatarep {
        name,
        converts,
        extent_fn,
        extra_state: extra_state as usize,
    });
    Ok(())
}

/// `MPI_Register_datarep`.
///
/// # Safety
/// `datarep` is a NUL-terminated string; the functions are as MPI specifies.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Register_datarep(
    datarep: *const c_char,
    read_conversion_fn: *const c_void,
    write_conversion_fn: *const c_void,
    dtype_file_extent_fn: Option<ExtentFn>,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Register_datarep", ErrObj::File(0), || {
        let converts = !read_conversion_fn.is_null() || !write_conversion_fn.is_null();
        // SAFETY: the caller's contract.
        unsafe { register(datarep, converts, dtype_file_extent_fn, extra_state) }
    })
}

/// `MPI_Register_datarep_c`.
///
/// # Safety
/// As `MPI_Register_datarep`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Register_datarep_c(
    datarep: *const c_char,
    read_conversion_fn: *const c_void,
    write_conversion_fn: *const c_void,
    dtype_file_extent_fn: Option<ExtentFn>,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        oxabi_Register_datarep(
            datarep,
            read_conversion_fn,
            write_conversion_fn,
            dtype_file_extent_fn,
            extra_state,
        )
    }
}
