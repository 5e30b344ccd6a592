//! File views (MPI 4.0 section 14.3): `MPI_File_set_view`,
//! `MPI_File_get_view`, and `MPI_File_get_type_extent` in the view's data
//! representation.

use std::ffi::{c_char, c_int, CStr};

use oxmpi::io::{Datarep, FileView};

use super::{file, type_arg, MPI_Offset};
use crate::api::{large_count, CountOut};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Datatype, MPI_File, MPI_Info};
use crate::raise::guard;
use crate::state::{self, ViewType};

/// `MPI_DISPLACEMENT_CURRENT`.
const DISPLACEMENT_CURRENT: MPI_Offset = -54278278;
/// `MPI_MAX_DATAREP_STRING`.
const MAX_DATAREP_STRING: usize = 128;

fn view_type(h: MPI_Datatype, arg: &str) -> Result<ViewType, AbiError> {
    type_arg(h, arg)?;
    Ok((h, crate::api::datatype::entry(h)?))
}

/// `MPI_File_set_view`: collective; both file pointers go to 0.
///
/// # Safety
/// `datarep` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> c_int {
    guard("MPI_File_set_view", ErrObj::File(fh), || {
        let f = file(fh)?;
        let prepared = (|| {
            if datarep.is_null() {
                return Err(AbiError::new(Class::ARG, "`datarep` is NULL"));
            }
            // SAFETY: the caller's contract.
            let name = unsafe { CStr::from_ptr(datarep) }
                .to_string_lossy()
                .into_owned();
            let (rep, user) = match (Datarep::parse(&name), super::datarep::find(&name)) {
                (Ok(rep), _) => (rep, None),
                (Err(_), Some(d)) if !d.converts => (Datarep::Native, Some(name)),
                (Err(_), Some(_)) => {
                    return Err(AbiError::new(
                        Class(43),
                        format!(
                            "data representation {name:?} has conversion functions: OxMPI \
                             does not call them yet"
                        ),
                    ))
                }
                (Err(e), None) => return Err(e.into()),
            };
            let disp = match disp {
                DISPLACEMENT_CURRENT => None,
                d => Some(super::offset_arg(d, "disp")?),
            };
            let (et, ft) = (view_type(etype, "etype")?, view_type(filetype, "filetype")?);
            let view = FileView::new(
                disp.unwrap_or(0),
                type_arg(etype, "etype")?,
                type_arg(filetype, "filetype")?,
                rep,
            )?;
            let hints = match info {
                handles::INFO_NULL => None,
                i => Some(crate::api::env::info::read(i)?.pairs),
            };
            Ok((user, disp, et, ft, view, hints))
        })();
        let (user, disp, et, ft, view, hints) = super::agree(f.comm(), prepared)?;
        if let Some(pairs) = hints {
            f.set_info(&pairs)?;
        }
        f.set_view(disp, view)?;
        let slot = handles::file_slot(fh)?;
        if let Some(e) = state::lock().files.get_mut(slot) {
            e.view_types = [et, ft];
            e.user_datarep = user;
        }
        Ok(())
    })
}

/// A handle for a view type: predefined ones as they are, a derived one
/// as a new handle the program frees.
fn hand_out(t: &ViewType) -> MPI_Datatype {
    match &t.1 {
        None => t.0,
        Some(e) if e.is_f90() => t.0,
        Some(e) => crate::api::datatype::insert(e.clone()),
    }
}

/// `MPI_File_get_view`.
///
/// # Safety
/// Every out-argument is writable; `datarep` has room for
/// `MPI_MAX_DATAREP_STRING` bytes.
#[no_mangle]
pub unsafe extern "C" fn oxabi_File_get_view(
    fh: MPI_File,
    disp: *mut MPI_Offset,
    etype: *mut MPI_Datatype,
    filetype: *mut MPI_Datatype,
    datarep: *mut c_char,
) -> c_int {
    guard("MPI_File_get_view", ErrObj::File(fh), || {
        let (d, e, t, r) = (
            out_ptr(disp, "disp")?,
            out_ptr(etype, "etype")?,
            out_ptr(filetype, "filetype")?,
            out_ptr(datarep, "datarep")?,
        );
        let f = file(fh)?;
        let view = f.state().view.clone();
        let slot = handles::file_slot(fh)?;
        let (types, user) = state::lock()
            .files
            .get(slot)
            .map(|e| (e.view_types.clone(), e.user_datarep.clone()))
            .ok_or_else(|| AbiError::new(Class(27), format!("file {fh:#x} is not open")))?;
        let name = user.as_deref().unwrap_or(view.datarep.name());
        let n = name.len().min(MAX_DATAREP_STRING - 1);
        // SAFETY: checked non-null; the caller's contract.
        unsafe {
            *d = view.disp as MPI_Offset;
            *e = hand_out(&types[0]);
            *t = hand_out(&types[1]);
            std::ptr::copy_nonoverlapping(name.as_ptr(), r.cast(), n);
            *r.add(n) = 0;
        }
        Ok(())
    })
}

large_count! {
    /// # Safety
    /// `extent` is writable.
    File_get_type_extent(fh: MPI_File, datatype: MPI_Datatype, extent: *mut Bytes) -> c_int {
        guard(NAME, ErrObj::File(fh), || {
            let out = out_ptr(extent, "extent")?;
            let f = file(fh)?;
            let dt = crate::api::datatype::lookup(datatype)?;
            let slot = handles::file_slot(fh)?;
            let user = state::lock().files.get(slot).and_then(|e| e.user_datarep.clone());
            if let Some(d) = user.and_then(|n| super::datarep::find(&n)) {
                // SAFETY: checked non-null.
                unsafe { *out = Bytes::from_count(d.extent(datatype)?) };
                return Ok(());
            }
            let x = match f.state().view.datarep {
                // Types of the same size in both representations keep their layout.
                Datarep::External32 if dt.size() > 0 => {
                    dt.extent() as i64 + dt.external32_size(1)? as i64 - dt.size() as i64
                }
                _ => dt.extent() as i64,
            };
            // SAFETY: checked non-null.
            unsafe { *out = Bytes::from_count(x) };
            Ok(())
        })
    }
}
