//! The buffer of buffered sends (MPI 4.0 section 3.6): `MPI_Buffer_attach`
//! and `MPI_Buffer_detach`.

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{MPI_Count, UNDEFINED};
use crate::raise::guard;
use crate::state;
use std::ffi::{c_int, c_void};

/// The body of `MPI_Buffer_attach` and `MPI_Buffer_attach_c`: buffered
/// sends copy their data themselves, so the buffer is only kept to be
/// handed back by `MPI_Buffer_detach`.
fn buffer_attach(name: &'static str, buffer: *mut c_void, size: MPI_Count) -> c_int {
    guard(name, ErrObj::None, || {
        if size < 0 {
            return Err(AbiError::new(
                Class::ARG,
                format!("invalid buffer size {size} for argument `size`: negative"),
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

/// `MPI_Buffer_attach`.
#[no_mangle]
pub extern "C" fn oxabi_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    buffer_attach("MPI_Buffer_attach", buffer, size.into())
}

/// `MPI_Buffer_attach_c`: the large-count form.
#[no_mangle]
pub extern "C" fn oxabi_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
    buffer_attach("MPI_Buffer_attach_c", buffer, size)
}

/// The body of `MPI_Buffer_detach` and `MPI_Buffer_detach_c`: waits until
/// every buffered send has been delivered, then hands back the attached
/// buffer (null and 0 when none is attached), its size converted by `conv`
/// to the caller's type.
///
/// # Safety
/// `buffer_addr` and `size` are writable.
unsafe fn buffer_detach<T>(
    name: &'static str,
    buffer_addr: *mut c_void,
    size: *mut T,
    conv: fn(MPI_Count) -> T,
) -> c_int {
    guard(name, ErrObj::None, || {
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
        drop::<Vec<crate::objects::detached::Detached>>(pending);
        let (a, n) = attached.unwrap_or((0, 0));
        // SAFETY: checked non-null.
        unsafe {
            *addr = a as *mut c_void;
            *size = conv(n);
        }
        Ok(())
    })
}

/// `MPI_Buffer_detach`: a size above `INT_MAX` reads `MPI_UNDEFINED` (as
/// in MPICH; `MPI_Buffer_detach_c` gives it).
///
/// # Safety
/// `buffer_addr` and `size` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        buffer_detach("MPI_Buffer_detach", buffer_addr, size, |n| {
            c_int::try_from(n).unwrap_or(UNDEFINED)
        })
    }
}

/// `MPI_Buffer_detach_c`: the large-count form.
///
/// # Safety
/// `buffer_addr` and `size` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Buffer_detach_c(
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { buffer_detach("MPI_Buffer_detach_c", buffer_addr, size, |n| n) }
}
