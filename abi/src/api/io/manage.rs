//! File manipulation (MPI 4.0 section 14.2): `MPI_File_open`, `_close`,
//! `_delete`, `_set_size`, `_preallocate`, `_get_size`, `_get_group`,
//! `_get_amode`, `_set_info`, `_get_info`, `_sync`, atomicity, and the
//! pointers' seeks and positions.

use std::ffi::{c_char, c_int, CStr};

use oxmpi::io::File;

use super::{file, offset_arg, MPI_Offset};
use crate::api::comm::group::insert_group;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Comm, MPI_File, MPI_Group, MPI_Info, FILE_NULL, INFO_NULL};
use crate::objects::info::InfoEntry;
use crate::raise::guard;
use crate::state::{self, FileEntry};

/// File-system prefixes ROMIO accepts before a name (`"ufs:/tmp/x"`).
const FS_PREFIXES: [&str; 8] = [
    "ufs:", "nfs:", "testfs:", "lustre:", "gpfs:", "pvfs2:", "panfs:", "xfs:",
];

/// A file name argument, without a file-system prefix.
///
/// # Safety
/// `filename` is NULL or a NUL-terminated string.
unsafe fn name_arg(filename: *const c_char) -> Result<String, AbiError> {
    if filename.is_null() {
        return Err(AbiError::new(Class::ARG, "`filename` is NULL"));
    }
    // SAFETY: the caller's contract.
    let name = unsafe { CStr::from_ptr(filename) }
        .to_str()
        .map_err(|_| AbiError::new(Class(22), "`filename` is not valid UTF-8"))?;
    let name = FS_PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name);
    if name.is_empty() {
        return Err(AbiError::new(Class(22), "`filename` is empty"));
    }
    Ok(name.to_owned())
}

fn info_pairs(info: MPI_Info) -> Result<Vec<(String, String)>, AbiError> {
    if info == INFO_NULL {
        return Ok(Vec::new());
    }
    Ok(crate::api::env::info::read(info)?.pairs)
}

/// `MPI_File_open`: collective over `comm`.
///
/// # Safety
/// `filename` is a NUL-terminated string; `fh` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_open(
    comm: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: *mut MPI_File,
) -> c_int {
    guard("MPI_File_open", ErrObj::File(FILE_NULL), || {
        let c = state::comm(comm)?;
        let prepared = (|| {
            let out = out_ptr(fh, "fh")?;
            // SAFETY: the caller's contract.
            let name = unsafe { name_arg(filename)? };
            Ok((out, name, info_pairs(info)?))
        })();
        let (out, name, pairs) = super::agree(&c, prepared)?;
        let f = File::open(&c, &name, amode, &pairs)?;
        let mut st = state::lock();
        let errhandler = st.file_null_errhandler;
        let slot = st.files.insert(FileEntry {
            file: f,
            errhandler,
            split: None,
            view_types: [(state::VIEW_BYTE, None), (state::VIEW_BYTE, None)],
            user_datarep: None,
        });
        // SAFETY: checked non-null.
        unsafe { *out = handles::file_handle(slot) };
        Ok(())
    })
}

/// `MPI_File_close`: collective; `*fh` becomes `MPI_FILE_NULL`.
///
/// # Safety
/// `fh` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_close(fh: *mut MPI_File) -> c_int {
    let h = if fh.is_null() {
        FILE_NULL
    } else {
        // SAFETY: the caller's contract.
        unsafe { *fh }
    };
    guard("MPI_File_close", ErrObj::File(h), || {
        let out = out_ptr(fh, "fh")?;
        file(h)?;
        let slot = handles::file_slot(h)?;
        let entry = state::lock().files.remove(slot);
        // SAFETY: checked non-null.
        unsafe { *out = FILE_NULL };
        match entry {
            Some(e) => Ok(e.file.close()?),
            None => Ok(()),
        }
    })
}

/// `MPI_File_delete`.
///
/// # Safety
/// `filename` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
    guard("MPI_File_delete", ErrObj::File(FILE_NULL), || {
        // SAFETY: the caller's contract.
        let name = unsafe { name_arg(filename)? };
        info_pairs(info)?;
        Ok(File::delete(&name)?)
    })
}

/// `MPI_File_set_size`: collective.
#[no_mangle]
pub extern "C" fn oxabi_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
    guard("MPI_File_set_size", ErrObj::File(fh), || {
        let f = file(fh)?;
        Ok(f.set_size(offset_arg(size, "size")?)?)
    })
}

/// `MPI_File_preallocate`: collective.
#[no_mangle]
pub extern "C" fn oxabi_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
    guard("MPI_File_preallocate", ErrObj::File(fh), || {
        let f = file(fh)?;
        Ok(f.preallocate(offset_arg(size, "size")?)?)
    })
}

/// Writes `v` to an out-argument named `arg`.
///
/// # Safety
/// `p` is writable (checked non-null).
unsafe fn put<T>(p: *mut T, arg: &'static str, v: T) -> Result<(), AbiError> {
    let out = out_ptr(p, arg)?;
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *out = v };
    Ok(())
}

/// `MPI_File_get_size`.
///
/// # Safety
/// `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_size(fh: MPI_File, size: *mut MPI_Offset) -> c_int {
    guard("MPI_File_get_size", ErrObj::File(fh), || {
        let n = file(fh)?.size()?;
        // SAFETY: the caller's contract.
        unsafe { put(size, "size", n as MPI_Offset) }
    })
}

/// `MPI_File_get_group`: a new group of the ranks that opened the file.
///
/// # Safety
/// `group` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_group(fh: MPI_File, group: *mut MPI_Group) -> c_int {
    guard("MPI_File_get_group", ErrObj::File(fh), || {
        out_ptr(group, "group")?;
        let g = file(fh)?.comm().group();
        // SAFETY: the caller's contract.
        unsafe { put(group, "group", insert_group(g)) }
    })
}

/// `MPI_File_get_amode`.
///
/// # Safety
/// `amode` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_amode(fh: MPI_File, amode: *mut c_int) -> c_int {
    guard("MPI_File_get_amode", ErrObj::File(fh), || {
        let m = file(fh)?.amode();
        // SAFETY: the caller's contract.
        unsafe { put(amode, "amode", m) }
    })
}

/// `MPI_File_set_info`: collective; the hints understood are applied.
#[no_mangle]
pub extern "C" fn oxabi_File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
    guard("MPI_File_set_info", ErrObj::File(fh), || {
        let f = file(fh)?;
        Ok(f.set_info(&info_pairs(info)?)?)
    })
}

/// `MPI_File_get_info`: a new info object with the hints in use.
///
/// # Safety
/// `info_used` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> c_int {
    guard("MPI_File_get_info", ErrObj::File(fh), || {
        out_ptr(info_used, "info_used")?;
        let pairs = file(fh)?.state().hints.pairs();
        let h = crate::api::env::info::store(InfoEntry { pairs });
        // SAFETY: the caller's contract.
        unsafe { put(info_used, "info_used", h) }
    })
}

/// `MPI_File_sync`: collective.
#[no_mangle]
pub extern "C" fn oxabi_File_sync(fh: MPI_File) -> c_int {
    guard("MPI_File_sync", ErrObj::File(fh), || Ok(file(fh)?.sync()?))
}

/// `MPI_File_set_atomicity`: collective.
#[no_mangle]
pub extern "C" fn oxabi_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
    guard("MPI_File_set_atomicity", ErrObj::File(fh), || {
        Ok(file(fh)?.set_atomicity(flag != 0)?)
    })
}

/// `MPI_File_get_atomicity`.
///
/// # Safety
/// `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> c_int {
    guard("MPI_File_get_atomicity", ErrObj::File(fh), || {
        let a = file(fh)?.state().atomic;
        // SAFETY: the caller's contract.
        unsafe { put(flag, "flag", c_int::from(a)) }
    })
}

/// `MPI_File_seek`.
#[no_mangle]
pub extern "C" fn oxabi_File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    guard("MPI_File_seek", ErrObj::File(fh), || {
        Ok(file(fh)?.seek(offset, whence)?)
    })
}

/// `MPI_File_seek_shared`: collective.
#[no_mangle]
pub extern "C" fn oxabi_File_seek_shared(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    guard("MPI_File_seek_shared", ErrObj::File(fh), || {
        Ok(file(fh)?.seek_shared(offset, whence)?)
    })
}

/// `MPI_File_get_position`: the individual pointer, in etypes.
///
/// # Safety
/// `offset` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
    guard("MPI_File_get_position", ErrObj::File(fh), || {
        let p = file(fh)?.position()?;
        // SAFETY: the caller's contract.
        unsafe { put(offset, "offset", p as MPI_Offset) }
    })
}

/// `MPI_File_get_position_shared`.
///
/// # Safety
/// `offset` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_position_shared(
    fh: MPI_File,
    offset: *mut MPI_Offset,
) -> c_int {
    guard("MPI_File_get_position_shared", ErrObj::File(fh), || {
        let p = file(fh)?.position_shared()?;
        // SAFETY: the caller's contract.
        unsafe { put(offset, "offset", p as MPI_Offset) }
    })
}

/// `MPI_File_get_byte_offset`: where etype `offset` of the view lies.
///
/// # Safety
/// `disp` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_byte_offset(
    fh: MPI_File,
    offset: MPI_Offset,
    disp: *mut MPI_Offset,
) -> c_int {
    guard("MPI_File_get_byte_offset", ErrObj::File(fh), || {
        let f = file(fh)?;
        let at = offset_arg(offset, "offset")?;
        let b = f.state().view.byte_offset(at)?;
        // SAFETY: the caller's contract.
        unsafe { put(disp, "disp", b as MPI_Offset) }
    })
}
