//! Data access (MPI 4.0 section 14.4): reads and writes at explicit
//! offsets, through the individual pointer and the shared one, each
//! independent and collective, blocking, non-blocking and split
//! collective. Every access runs when it is called: a non-blocking one
//! returns a request that is already complete (its status holds the
//! count), and a split collective's `_begin` does the work, its `_end`
//! hands over the status, as the standard allows.

use std::ffi::{c_int, c_void};

use oxmpi::io::data::Buf;
use oxmpi::io::File;
use oxmpi::Status;

use super::{buf_arg, file, offset_arg, MPI_Offset};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::write_status;
use crate::handles::{self, MPI_Count, MPI_Datatype, MPI_File, MPI_Request, MPI_Status};
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::state;

/// Which access.
#[derive(Debug, Clone, Copy)]
enum Op {
    Read,
    ReadAt,
    ReadShared,
    ReadAll,
    ReadAtAll,
    ReadOrdered,
    Write,
    WriteAt,
    WriteShared,
    WriteAll,
    WriteAtAll,
    WriteOrdered,
}

impl Op {
    /// Whether every rank of the file takes part.
    fn collective(self) -> bool {
        matches!(
            self,
            Op::ReadAll
                | Op::ReadAtAll
                | Op::ReadOrdered
                | Op::WriteAll
                | Op::WriteAtAll
                | Op::WriteOrdered
        )
    }
}

/// Runs access `op` on `f`.
///
/// # Safety
/// `b` is the program's buffer, valid for the access.
unsafe fn run(f: &File, op: Op, offset: u64, b: &Buf) -> Result<Status, oxmpi::Error> {
    // SAFETY: the caller's contract, for every arm.
    unsafe {
        match op {
            Op::Read => f.read(b),
            Op::ReadAt => f.read_at(offset, b),
            Op::ReadShared => f.read_shared(b),
            Op::ReadAll => f.read_all(b),
            Op::ReadAtAll => f.read_at_all(offset, b),
            Op::ReadOrdered => f.read_ordered(b),
            Op::Write => f.write(b),
            Op::WriteAt => f.write_at(offset, b),
            Op::WriteShared => f.write_shared(b),
            Op::WriteAll => f.write_all(b),
            Op::WriteAtAll => f.write_at_all(offset, b),
            Op::WriteOrdered => f.write_ordered(b),
        }
    }
}

/// Decodes the arguments and runs the access.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` for the access.
unsafe fn access(
    fh: MPI_File,
    op: Op,
    offset: Option<MPI_Offset>,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> Result<Status, AbiError> {
    let f = file(fh)?;
    let decoded = (|| {
        let offset = match offset {
            None => 0,
            Some(o) => offset_arg(o, "offset")?,
        };
        Ok((offset, buf_arg(buf, count, datatype)?))
    })();
    let (offset, b) = if op.collective() {
        super::agree(f.comm(), decoded)?
    } else {
        decoded?
    };
    // SAFETY: the caller's contract.
    Ok(unsafe { run(&f, op, offset, &b)? })
}

/// A blocking access.
///
/// # Safety
/// As [`access`]; `status` is writable or ignored.
#[allow(clippy::too_many_arguments)]
unsafe fn blocking(
    name: &'static str,
    fh: MPI_File,
    op: Op,
    offset: Option<MPI_Offset>,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    guard(name, ErrObj::File(fh), || {
        // SAFETY: the caller's contract.
        let st = unsafe { access(fh, op, offset, buf, count, datatype)? };
        // SAFETY: the caller's contract.
        unsafe { write_status(status, &st) };
        Ok(())
    })
}

/// A non-blocking access: done now, its request already complete.
///
/// # Safety
/// As [`access`]; `request` is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn nonblocking(
    name: &'static str,
    fh: MPI_File,
    op: Op,
    offset: Option<MPI_Offset>,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    guard(name, ErrObj::File(fh), || {
        let out = out_ptr(request, "request")?;
        // SAFETY: the caller's contract.
        let status = unsafe { access(fh, op, offset, buf, count, datatype)? };
        let entry = ReqEntry::Ready {
            status,
            comm: handles::COMM_SELF,
        };
        let slot = state::lock().requests.insert(entry);
        // SAFETY: checked non-null.
        unsafe { *out = handles::request_handle(slot) };
        Ok(())
    })
}

fn split_err(fh: MPI_File, why: &str) -> AbiError {
    AbiError::new(Class::OTHER, format!("file {fh:#x}: {why}"))
}

/// The `_begin` of a split collective: runs the access, keeps its status.
///
/// # Safety
/// As [`access`].
unsafe fn begin(
    name: &'static str,
    fh: MPI_File,
    op: Op,
    offset: Option<MPI_Offset>,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    guard(name, ErrObj::File(fh), || {
        let slot = handles::file_slot(fh)?;
        if state::lock()
            .files
            .get(slot)
            .is_some_and(|e| e.split.is_some())
        {
            return Err(split_err(fh, "a split collective is already active"));
        }
        // SAFETY: the caller's contract.
        let st = unsafe { access(fh, op, offset, buf, count, datatype)? };
        if let Some(e) = state::lock().files.get_mut(slot) {
            e.split = Some(Ok(st));
        }
        Ok(())
    })
}

/// The `_end` of a split collective: the status of its `_begin`.
///
/// # Safety
/// `status` is writable or ignored.
unsafe fn end(name: &'static str, fh: MPI_File, status: *mut MPI_Status) -> c_int {
    guard(name, ErrObj::File(fh), || {
        file(fh)?;
        let slot = handles::file_slot(fh)?;
        let r = state::lock()
            .files
            .get_mut(slot)
            .and_then(|e| e.split.take())
            .ok_or_else(|| split_err(fh, "no split collective was begun"))?;
        let st = r?;
        // SAFETY: the caller's contract.
        unsafe { write_status(status, &st) };
        Ok(())
    })
}

/// Defines the blocking, non-blocking and split forms of the accesses.
macro_rules! accesses {
    (blocking $buf:ty: $($name:ident $op:ident,)*) => {$(
        large_count! {
            /// # Safety
            /// `buf` holds `count` elements; `status` is writable or ignored.
            $name(fh: MPI_File, buf: $buf, count: Count, datatype: MPI_Datatype,
                  status: *mut MPI_Status) -> c_int {
                unsafe { blocking(NAME, fh, Op::$op, None, buf as _, wide(count),
                                  datatype, status) }
            }
        }
    )*};
    (blocking_at $buf:ty: $($name:ident $op:ident,)*) => {$(
        large_count! {
            /// # Safety
            /// `buf` holds `count` elements; `status` is writable or ignored.
            $name(fh: MPI_File, offset: MPI_Offset, buf: $buf, count: Count,
                  datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
                unsafe { blocking(NAME, fh, Op::$op, Some(offset), buf as _, wide(count), datatype,
                                  status) }
            }
        }
    )*};
    (nonblocking $buf:ty: $($name:ident $op:ident,)*) => {$(
        large_count! {
            /// # Safety
            /// `buf` holds `count` elements; `request` is writable.
            $name(fh: MPI_File, buf: $buf, count: Count, datatype: MPI_Datatype,
                  request: *mut MPI_Request) -> c_int {
                unsafe { nonblocking(NAME, fh, Op::$op, None, buf as _, wide(count),
                                     datatype, request) }
            }
        }
    )*};
    (nonblocking_at $buf:ty: $($name:ident $op:ident,)*) => {$(
        large_count! {
            /// # Safety
            /// `buf` holds `count` elements; `request` is writable.
            $name(fh: MPI_File, offset: MPI_Offset, buf: $buf, count: Count,
                  datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
                unsafe { nonblocking(NAME, fh, Op::$op, Some(offset), buf as _, wide(count), datatype,
                                     request) }
            }
        }
    )*};
    (begin $buf:ty: $($name:ident $op:ident,)*) => {$(
        large_count! {
            /// # Safety
            /// `buf` holds `count` elements.
            $name(fh: MPI_File, buf: $buf, count: Count, datatype: MPI_Datatype) -> c_int {
                unsafe { begin(NAME, fh, Op::$op, None, buf as _, wide(count), datatype) }
            }
        }
    )*};
    (begin_at $buf:ty: $($name:ident $op:ident,)*) => {$(
        large_count! {
            /// # Safety
            /// `buf` holds `count` elements.
            $name(fh: MPI_File, offset: MPI_Offset, buf: $buf, count: Count,
                  datatype: MPI_Datatype) -> c_int {
                unsafe { begin(NAME, fh, Op::$op, Some(offset), buf as _, wide(count), datatype) }
            }
        }
    )*};
    (end $buf:ty: $($name:ident $mpi:literal,)*) => {$(
        /// The end of a split collective.
        ///
        /// # Safety
        /// `status` is writable or ignored.
        #[no_mangle]
        pub unsafe extern "C" fn $name(fh: MPI_File, _buf: $buf, status: *mut MPI_Status)
            -> c_int {
            unsafe { end($mpi, fh, status) }
        }
    )*};
}

accesses!(blocking *mut c_void:
    File_read Read, File_read_all ReadAll, File_read_shared ReadShared,
    File_read_ordered ReadOrdered,);
accesses!(blocking *const c_void:
    File_write Write, File_write_all WriteAll, File_write_shared WriteShared,
    File_write_ordered WriteOrdered,);
accesses!(blocking_at *mut c_void: File_read_at ReadAt, File_read_at_all ReadAtAll,);
accesses!(blocking_at *const c_void: File_write_at WriteAt, File_write_at_all WriteAtAll,);
accesses!(nonblocking *mut c_void:
    File_iread Read, File_iread_all ReadAll, File_iread_shared ReadShared,);
accesses!(nonblocking *const c_void:
    File_iwrite Write, File_iwrite_all WriteAll, File_iwrite_shared WriteShared,);
accesses!(nonblocking_at *mut c_void: File_iread_at ReadAt, File_iread_at_all ReadAtAll,);
accesses!(nonblocking_at *const c_void: File_iwrite_at WriteAt, File_iwrite_at_all WriteAtAll,);
accesses!(begin *mut c_void: File_read_all_begin ReadAll, File_read_ordered_begin ReadOrdered,);
accesses!(begin *const c_void:
    File_write_all_begin WriteAll, File_write_ordered_begin WriteOrdered,);
accesses!(begin_at *mut c_void: File_read_at_all_begin ReadAtAll,);
accesses!(begin_at *const c_void: File_write_at_all_begin WriteAtAll,);
accesses!(end *mut c_void:
    oxabi_File_read_all_end "MPI_File_read_all_end",
    oxabi_File_read_at_all_end "MPI_File_read_at_all_end",
    oxabi_File_read_ordered_end "MPI_File_read_ordered_end",);
accesses!(end *const c_void:
    oxabi_File_write_all_end "MPI_File_write_all_end",
    oxabi_File_write_at_all_end "MPI_File_write_at_all_end",
    oxabi_File_write_ordered_end "MPI_File_write_ordered_end",);
