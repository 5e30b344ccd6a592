//! Probes and matched probes: `MPI_Probe`, `MPI_Iprobe`, `MPI_Mprobe`,
//! `MPI_Improbe`, `MPI_Mrecv`, `MPI_Imrecv`.

use std::ffi::{c_int, c_void};

use oxmpi::Status;

use crate::api::p2p::{buf_plan, finish, status_arg, store_request};
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, MPI_Comm, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status, MessageRef,
    MESSAGE_NO_PROC, MESSAGE_NULL, PROC_NULL,
};
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::{requests, state};

/// `MPI_Probe`.
///
/// # Safety
/// `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Probe", ErrObj::Comm(comm), || {
        let status = status_arg(status)?;
        let s = state::comm(comm)?.probe(source, tag)?;
        // SAFETY: checked above.
        unsafe { handles::write_status(status, &s) };
        Ok(())
    })
}

/// `MPI_Iprobe`.
///
/// # Safety
/// `flag` is writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Iprobe", ErrObj::Comm(comm), || {
        let flag = out_ptr(flag, "flag")?;
        let status = status_arg(status)?;
        let found = state::comm(comm)?.iprobe(source, tag)?;
        // SAFETY: checked above.
        unsafe {
            *flag = c_int::from(found.is_some());
            if let Some(s) = found {
                handles::write_status(status, &s);
            }
        }
        Ok(())
    })
}

/// Stores a matched message and returns its handle.
fn store_message(msg: oxmpi::Message, source: c_int, comm: MPI_Comm) -> MPI_Message {
    if source == PROC_NULL {
        return MESSAGE_NO_PROC;
    }
    requests::insert(ReqEntry::Message { msg, comm })
}

/// `MPI_Mprobe`.
///
/// # Safety
/// `message` is writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Mprobe", ErrObj::Comm(comm), || {
        let out = out_ptr(message, "message")?;
        let status = status_arg(status)?;
        let (msg, s) = state::comm(comm)?.mprobe(source, tag)?;
        // SAFETY: checked above.
        unsafe {
            *out = store_message(msg, source, comm);
            handles::write_status(status, &s);
        }
        Ok(())
    })
}

/// `MPI_Improbe`.
///
/// # Safety
/// `flag` and `message` are writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Improbe", ErrObj::Comm(comm), || {
        let flag = out_ptr(flag, "flag")?;
        let out = out_ptr(message, "message")?;
        let status = status_arg(status)?;
        let found = state::comm(comm)?.improbe(source, tag)?;
        // SAFETY: checked above.
        unsafe {
            *flag = c_int::from(found.is_some());
            if let Some((msg, s)) = found {
                *out = store_message(msg, source, comm);
                handles::write_status(status, &s);
            }
        }
        Ok(())
    })
}

/// Takes the message a handle names out of the table (`None`: no-proc).
fn take_message(h: MPI_Message) -> Result<Option<(oxmpi::Message, MPI_Comm)>, AbiError> {
    let slot = match handles::message(h)? {
        MessageRef::NoProc => return Ok(None),
        MessageRef::Slot(s) => s,
    };
    let mut st = state::lock();
    match st.requests.remove(slot) {
        Some(ReqEntry::Message { msg, comm }) => Ok(Some((msg, comm))),
        Some(other) => {
            st.requests.put(slot, other);
            Err(AbiError::new(
                Class::REQUEST,
                format!("handle {h:#010x} is a request, not a message"),
            ))
        }
        None => Err(AbiError::new(
            Class::REQUEST,
            format!("message {h:#010x} does not exist (already received)"),
        )),
    }
}

/// The status of receiving `MPI_MESSAGE_NO_PROC`.
fn no_proc_status() -> Status {
    Status::empty()
}

large_count! {
    /// # Safety
    /// `buf` has room for `count` elements; `message` is writable; `status`
    /// is writable or ignored.
    Mrecv(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int {
        let count = wide(count);
        guard(NAME, ErrObj::None, || {
            let mh = out_ptr(message, "message")?;
            let status = status_arg(status)?;
            let t = buf_plan(buf, count, datatype)?;
            // SAFETY: checked non-null.
            let taken = take_message(unsafe { *mh })?;
            // SAFETY: checked non-null.
            unsafe { *mh = MESSAGE_NULL };
            let Some((msg, comm)) = taken else {
                // SAFETY: checked above.
                unsafe { handles::write_status(status, &no_proc_status()) };
                return Ok(());
            };
            // SAFETY: waited on before returning.
            let r = unsafe { msg.irecv_plan(&t) }
                .map_err(|e| AbiError::from(e).on(ErrObj::Comm(comm)))?;
            // SAFETY: checked above.
            unsafe { finish(r.wait(), status) }.map_err(|e| e.on(ErrObj::Comm(comm)))
        })
    }
}

large_count! {
    /// # Safety
    /// `buf` has room for `count` elements until completion; `message` and
    /// `request` are writable.
    Imrecv(
        buf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        request: *mut MPI_Request,
    ) -> c_int {
        let count = wide(count);
        guard(NAME, ErrObj::None, || {
            let mh = out_ptr(message, "message")?;
            let out = out_ptr(request, "request")?;
            let t = buf_plan(buf, count, datatype)?;
            // SAFETY: checked non-null.
            let taken = take_message(unsafe { *mh })?;
            // SAFETY: checked non-null.
            unsafe { *mh = MESSAGE_NULL };
            let entry = match taken {
                None => ReqEntry::Ready {
                    status: no_proc_status(),
                    comm: handles::COMM_SELF,
                },
                Some((msg, comm)) => {
                    // SAFETY: the caller keeps the buffer until completion.
                    let r = unsafe { msg.irecv_plan(&t) }
                        .map_err(|e| AbiError::from(e).on(ErrObj::Comm(comm)))?;
                    ReqEntry::Active { req: Some(r), comm }
                }
            };
            // SAFETY: checked non-null.
            unsafe { store_request(out, entry) };
            Ok(())
        })
    }
}
