//! The buffer of buffered sends (MPI 4.0 section 3.6): `MPI_Buffer_attach`
//! and `MPI_Buffer_detach`.

use std::ffi::{c_int, c_void};

use crate::api::{large_count, wide, CountOut};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::objects::detached::Detached;
use crate::raise::guard;
use crate::state;

large_count! {
    /// Buffered sends copy their data themselves, so the buffer is only
    /// kept to be handed back by `MPI_Buffer_detach`.
    ///
    /// # Safety
    /// None beyond MPI's: the buffer is not accessed.
    Buffer_attach(buffer: *mut c_void, size: Count) -> c_int {
        let size = wide(size);
        guard(NAME, ErrObj::None, || {
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
}

large_count! {
    /// Waits until every buffered send has been delivered, then hands back
    /// the attached buffer (null and 0 when none is attached); an `int`
    /// size above `INT_MAX` reads `MPI_UNDEFINED` (as in MPICH;
    /// `MPI_Buffer_detach_c` gives it).
    ///
    /// # Safety
    /// `buffer_addr` and `size` are writable.
    Buffer_detach(buffer_addr: *mut c_void, size: *mut Count) -> c_int {
        guard(NAME, ErrObj::None, || {
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
            drop::<Vec<Detached>>(pending);
            let (a, n) = attached.unwrap_or((0, 0));
            // SAFETY: checked non-null.
            unsafe {
                *addr = a as *mut c_void;
                *size = Count::from_count(n);
            }
            Ok(())
        })
    }
}
