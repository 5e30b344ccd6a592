//! Communicator queries for the C front end (rank, size, names), the
//! barrier, and the buffered-send buffer.

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::api::env::put_string;
use crate::errors::{guard, out_ptr, AbiError, Class, ErrObj};
use crate::handles::MPI_Comm;
use crate::state;

/// `MPI_MAX_OBJECT_NAME`.
const MAX_OBJECT_NAME: usize = 128;

/// `MPI_Comm_rank`.
///
/// # Safety
/// `rank` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
    guard("MPI_Comm_rank", ErrObj::Comm(comm), || {
        let out = out_ptr(rank, "rank")?;
        let r = state::lock().comm_entry(comm)?.comm.rank();
        // SAFETY: checked non-null.
        unsafe { *out = r };
        Ok(())
    })
}

/// `MPI_Comm_size`.
///
/// # Safety
/// `size` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    guard("MPI_Comm_size", ErrObj::Comm(comm), || {
        let out = out_ptr(size, "size")?;
        let n = state::lock().comm_entry(comm)?.comm.size();
        // SAFETY: checked non-null.
        unsafe { *out = n };
        Ok(())
    })
}

/// `MPI_Comm_get_name`.
///
/// # Safety
/// `comm_name` has `MPI_MAX_OBJECT_NAME` bytes; `resultlen` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_get_name(
    comm: MPI_Comm,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_name", ErrObj::Comm(comm), || {
        let name = state::lock().comm_entry(comm)?.name.clone();
        // SAFETY: the caller's contract.
        unsafe { put_string(&name, comm_name, MAX_OBJECT_NAME, resultlen) }
    })
}

/// `MPI_Comm_set_name` (names longer than `MPI_MAX_OBJECT_NAME - 1` bytes are cut).
///
/// # Safety
/// `comm_name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> c_int {
    guard("MPI_Comm_set_name", ErrObj::Comm(comm), || {
        if comm_name.is_null() {
            return Err(AbiError::new(Class::ARG, "`comm_name` is a null pointer"));
        }
        // SAFETY: non-null, NUL-terminated: the caller's contract.
        let bytes = unsafe { CStr::from_ptr(comm_name) }.to_bytes();
        let bytes = &bytes[..bytes.len().min(MAX_OBJECT_NAME - 1)];
        let name = String::from_utf8_lossy(bytes).into_owned();
        state::lock().comm_entry_mut(comm)?.name = name;
        Ok(())
    })
}

/// `MPI_Barrier`.
#[no_mangle]
pub extern "C" fn oxabi_Barrier(comm: MPI_Comm) -> c_int {
    guard("MPI_Barrier", ErrObj::Comm(comm), || {
        state::comm(comm)?.barrier()?;
        Ok(())
    })
}

/// `MPI_Buffer_attach`: buffered sends copy their data themselves, so the
/// buffer is only kept to be handed back by `MPI_Buffer_detach`.
#[no_mangle]
pub extern "C" fn oxabi_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    guard("MPI_Buffer_attach", ErrObj::None, || {
        if size < 0 {
            return Err(AbiError::new(
                Class::ARG,
                format!("invalid buffer size {size}: negative"),
            ));
        }
        let mut st = state::lock();
        if st.bsend_buffer.is_some() {
            return Err(AbiError::new(
                Class::BUFFER,
                "a buffer is already attached; detach it first",
            ));
        }
        st.bsend_buffer = Some((buffer as usize, size));
        Ok(())
    })
}

/// `MPI_Buffer_detach`: waits until every buffered send has been delivered.
///
/// # Safety
/// `buffer_addr` and `size` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    guard("MPI_Buffer_detach", ErrObj::None, || {
        let addr = out_ptr(buffer_addr.cast::<*mut c_void>(), "buffer_addr")?;
        let size = out_ptr(size, "size")?;
        let (pending, attached) = {
            let mut st = state::lock();
            let (buffered, rest) = std::mem::take(&mut st.detached)
                .into_iter()
                .partition(|d| d.data.is_some());
            st.detached = rest;
            (buffered, st.bsend_buffer.take())
        };
        // Dropping a runtime request waits for it.
        drop::<Vec<state::Detached>>(pending);
        let (a, n) = attached.unwrap_or((0, 0));
        // SAFETY: checked non-null.
        unsafe {
            *addr = a as *mut c_void;
            *size = n;
        }
        Ok(())
    })
}
