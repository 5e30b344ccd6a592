//! Generalized requests (MPI 4.0, 13.2): `MPI_Grequest_start` and
//! `MPI_Grequest_complete`. The request and when its callbacks run are in
//! [`crate::objects::generalized`]; waits, tests, `MPI_Request_free`,
//! `MPI_Cancel` and `MPI_Request_get_status` handle them with every other
//! request.

use std::ffi::{c_int, c_void};

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Request};
use crate::objects::generalized::{Callbacks, CancelFn, FreeFn, Grequest, QueryFn};
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::{requests, state};

/// `MPI_Grequest_start`: a new active request that completes when the
/// program calls `MPI_Grequest_complete`. A null callback does nothing.
///
/// # Safety
/// The callbacks are functions of the types MPI specifies (or null);
/// `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Grequest_start(
    query_fn: Option<QueryFn>,
    free_fn: Option<FreeFn>,
    cancel_fn: Option<CancelFn>,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    guard("MPI_Grequest_start", ErrObj::None, || {
        let out = out_ptr(request, "request")?;
        state::lock().check_active()?;
        let callbacks = Callbacks {
            query_fn,
            free_fn,
            cancel_fn,
            poll_fn: None,
            extra_state: extra_state as usize,
        };
        let g = Grequest {
            callbacks,
            complete: false,
            freed: false,
        };
        // SAFETY: checked non-null.
        unsafe { *out = requests::insert(ReqEntry::Generalized(g)) };
        Ok(())
    })
}

/// `MPI_Grequest_complete`: the operation is done; the next wait or test
/// completes the request. A request the program already freed is released
/// now (its `free_fn` runs, and its error is this call's).
#[no_mangle]
pub extern "C" fn oxabi_Grequest_complete(request: MPI_Request) -> c_int {
    guard("MPI_Grequest_complete", ErrObj::None, || {
        if handles::request_ticket(request).is_some() {
            return Err(not_generalized(request));
        }
        let slot = handles::request_slot(request)?.ok_or_else(|| {
            AbiError::new(
                Class::REQUEST,
                "invalid request MPI_REQUEST_NULL for argument `request`",
            )
        })?;
        let mut st = state::lock();
        let g = match st.requests.get_mut(slot) {
            Some(ReqEntry::Generalized(g)) => g,
            Some(_) => return Err(not_generalized(request)),
            None => return Err(requests::bad_entry(request)),
        };
        if g.complete {
            return Err(AbiError::new(
                Class::REQUEST,
                format!("generalized request {request:#010x} is already complete"),
            ));
        }
        g.complete = true;
        if !g.freed {
            return Ok(());
        }
        let callbacks = g.callbacks;
        st.requests.remove(slot);
        drop(st);
        callbacks.free()
    })
}

/// The error for a request that is not a generalized one.
fn not_generalized(request: MPI_Request) -> AbiError {
    AbiError::new(
        Class::REQUEST,
        format!("request {request:#010x} is not a generalized request"),
    )
}
