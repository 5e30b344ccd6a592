//! Completion calls: `MPI_Wait*`, `MPI_Test*`, `MPI_Start*`,
//! `MPI_Request_free`, `MPI_Cancel`, `MPI_Test_cancelled`.

use std::ffi::c_int;

use oxmpi::Status;

use crate::errors::{code_for, out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Request, MPI_Status, UNDEFINED};
use crate::raise::guard;
use crate::requests::{self, Outcome, Want};
use crate::state;

/// The caller's request array.
///
/// # Safety
/// `p` points to `count` requests (checked non-null when `count > 0`).
unsafe fn request_array<'a>(
    count: c_int,
    p: *mut MPI_Request,
) -> Result<&'a mut [MPI_Request], AbiError> {
    let n = usize::try_from(count)
        .map_err(|_| AbiError::new(Class::COUNT, format!("invalid count {count}: negative")))?;
    if n == 0 {
        return Ok(&mut []);
    }
    let p = out_ptr(p, "array_of_requests")?;
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// A status array argument: `MPI_STATUSES_IGNORE` or a pointer, which
/// must not be null when there are requests (MPICH's MPI_ERR_ARG too).
fn statuses_arg(n: usize, p: *mut MPI_Status) -> Result<*mut MPI_Status, AbiError> {
    if n == 0 {
        Ok(p)
    } else {
        out_ptr(p, "array_of_statuses")
    }
}

/// An output array argument of `n` entries: may be null when `n` is 0.
fn array_arg<T>(n: usize, p: *mut T, arg: &'static str) -> Result<*mut T, AbiError> {
    if n == 0 {
        Ok(p)
    } else {
        out_ptr(p, arg)
    }
}

/// A status argument of `MPI_Waitany` / `MPI_Testany`: with no requests a
/// null pointer is accepted (and nothing is written to it).
fn any_status_arg(n: usize, p: *mut MPI_Status) -> Result<*mut MPI_Status, AbiError> {
    if n == 0 && p.is_null() {
        Ok(p)
    } else {
        out_ptr(p, "status")
    }
}

/// Writes status `i` of an array (unless `MPI_STATUSES_IGNORE`).
///
/// # Safety
/// `statuses` is ignored or has room for `i + 1` statuses.
unsafe fn put_status(statuses: *mut MPI_Status, i: usize, s: &Status, error: c_int) {
    if !handles::status_ignored(statuses) && !statuses.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *statuses.add(i) = handles::c_status(s, error) };
    }
}

/// Raises a single completion's error after writing its status.
///
/// # Safety
/// `status` is ignored or writable.
unsafe fn single(s: Status, e: Option<AbiError>, status: *mut MPI_Status) -> Result<(), AbiError> {
    // SAFETY: the caller's contract.
    unsafe { handles::write_status(status, &s) };
    e.map_or(Ok(()), Err)
}

/// `MPI_Wait`.
///
/// # Safety
/// `request` is writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    guard("MPI_Wait", ErrObj::None, || {
        let h = out_ptr(request, "request")?;
        let status = out_ptr(status, "status")?;
        // SAFETY: checked non-null.
        let (s, e) = requests::wait(unsafe { &mut *h })?;
        // SAFETY: checked non-null.
        unsafe { single(s, e, status) }
    })
}

/// `MPI_Test`.
///
/// # Safety
/// `request` and `flag` are writable; `status` is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Test", ErrObj::None, || {
        let h = out_ptr(request, "request")?;
        let flag = out_ptr(flag, "flag")?;
        let status = out_ptr(status, "status")?;
        // SAFETY: checked non-null.
        requests::poll_generalized(std::slice::from_ref(unsafe { &*h }))?;
        let outcome = {
            let mut st = state::lock();
            let mut sweep = state::sweep();
            st.reap_detached_in(&mut sweep);
            // SAFETY: checked non-null.
            requests::test_one(&mut st, &mut sweep, unsafe { &mut *h })?
        };
        // SAFETY: checked non-null.
        unsafe {
            match outcome {
                Outcome::Pending => *flag = 0,
                Outcome::Inactive => {
                    *flag = 1;
                    handles::write_status(status, &handles::empty_status());
                }
                Outcome::Done(c) => {
                    *flag = 1;
                    let (s, e) = c.settle();
                    single(s, e, status)?;
                }
            }
        }
        Ok(())
    })
}

/// Collects per-request errors of a multiple completion; returns the
/// `MPI_ERR_IN_STATUS` error to raise, if any failed.
struct Errors {
    first: Option<(usize, AbiError)>,
}

impl Errors {
    fn new() -> Errors {
        Errors { first: None }
    }

    /// The code for the status of request `i` (`MPI_SUCCESS` or the
    /// error's); the lowest failed index is the one reported.
    fn code(&mut self, i: usize, e: Option<AbiError>) -> c_int {
        match e {
            None => 0,
            Some(e) => {
                let code = code_for(&e);
                if self.first.as_ref().is_none_or(|(j, _)| i < *j) {
                    self.first = Some((i, e));
                }
                code
            }
        }
    }

    fn result(self) -> Result<(), AbiError> {
        match self.first {
            None => Ok(()),
            Some((i, e)) => {
                let mut err = AbiError::new(
                    Class::IN_STATUS,
                    format!("request {i} failed: {}", e.message),
                );
                err.raise_on = e.raise_on;
                Err(err)
            }
        }
    }
}

/// `MPI_Waitall`.
///
/// # Safety
/// `array_of_requests` has `count` requests; `array_of_statuses` is
/// ignored or has room for `count` statuses.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Waitall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    guard("MPI_Waitall", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(count, array_of_requests) }?;
        let array_of_statuses = statuses_arg(hs.len(), array_of_statuses)?;
        let mut errors = Errors::new();
        requests::complete(hs, Want::All, true, |i, s, e| {
            let code = errors.code(i, e);
            // SAFETY: the caller's contract.
            unsafe { put_status(array_of_statuses, i, &s, code) };
        })?;
        errors.result()
    })
}

/// `MPI_Testall`: completes all requests if all are complete, none otherwise.
///
/// # Safety
/// As [`oxabi_Waitall`]; `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Testall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    guard("MPI_Testall", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(count, array_of_requests) }?;
        let array_of_statuses = statuses_arg(hs.len(), array_of_statuses)?;
        let flag = out_ptr(flag, "flag")?;
        let mut errors = Errors::new();
        let all = requests::test_all(hs, |i, s, e| {
            let code = errors.code(i, e);
            // SAFETY: the caller's contract.
            unsafe { put_status(array_of_statuses, i, &s, code) };
        })?;
        // SAFETY: checked non-null.
        unsafe { *flag = c_int::from(all) };
        errors.result()
    })
}

/// `MPI_Waitany`.
///
/// # Safety
/// `array_of_requests` has `count` requests; `indx` is writable; `status`
/// is writable or ignored.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Waitany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    indx: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Waitany", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(count, array_of_requests) }?;
        let indx = out_ptr(indx, "indx")?;
        let status = any_status_arg(hs.len(), status)?;
        let (i, s, e) = wait_one(hs)?;
        // SAFETY: checked non-null.
        unsafe {
            *indx = i;
            single(s, e, status)
        }
    })
}

/// `MPI_Testany`.
///
/// # Safety
/// As [`oxabi_Waitany`]; `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Testany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    indx: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Testany", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(count, array_of_requests) }?;
        let indx = out_ptr(indx, "indx")?;
        let flag = out_ptr(flag, "flag")?;
        let status = any_status_arg(hs.len(), status)?;
        let mut found = None;
        let active = requests::complete(hs, Want::One, false, |i, s, e| found = Some((i, s, e)))?;
        // SAFETY: checked non-null.
        unsafe {
            *flag = c_int::from(found.is_some() || !active);
            match found {
                Some((i, s, e)) => {
                    *indx = i as c_int;
                    single(s, e, status)
                }
                None => {
                    *indx = UNDEFINED;
                    if !active {
                        handles::write_status(status, &handles::empty_status());
                    }
                    Ok(())
                }
            }
        }
    })
}

/// `MPI_Waitany`'s completion: the index (`MPI_UNDEFINED` when none is
/// active), status and error of the request completed.
fn wait_one(hs: &mut [MPI_Request]) -> Result<(c_int, Status, Option<AbiError>), AbiError> {
    let mut found = None;
    requests::complete(hs, Want::One, true, |i, s, e| found = Some((i, s, e)))?;
    Ok(match found {
        Some((i, s, e)) => (i as c_int, s, e),
        None => (UNDEFINED, handles::empty_status(), None),
    })
}

/// Completes every finished request of `hs` (`MPI_Testsome`; with
/// `block`, `MPI_Waitsome`: at least one) and writes the number completed
/// to `outcount` (`MPI_UNDEFINED` if none is active), also when some failed
/// (`MPI_ERR_IN_STATUS`).
///
/// # Safety
/// `outcount` is writable; `indices` has room for `hs.len()` ints;
/// `statuses` is ignored or has room for `hs.len()` statuses.
unsafe fn some(
    hs: &mut [MPI_Request],
    block: bool,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> Result<(), AbiError> {
    let mut errors = Errors::new();
    let mut n = 0;
    let active = requests::complete(hs, Want::Some, block, |i, s, e| {
        let code = errors.code(i, e);
        // SAFETY: the caller's contract.
        unsafe {
            *indices.add(n) = i as c_int;
            put_status(statuses, n, &s, code);
        }
        n += 1;
    });
    // SAFETY: the caller's contract.
    unsafe {
        *outcount = if active.as_ref().is_ok_and(|&a| !a) {
            UNDEFINED
        } else {
            n as c_int
        }
    };
    active?;
    errors.result()
}

/// `MPI_Waitsome`.
///
/// # Safety
/// `array_of_requests` has `incount` requests; `outcount` is writable;
/// `array_of_indices` has room for `incount` ints; `array_of_statuses` is
/// ignored or has room for `incount` statuses.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Waitsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    guard("MPI_Waitsome", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(incount, array_of_requests) }?;
        let array_of_statuses = statuses_arg(hs.len(), array_of_statuses)?;
        let out = out_ptr(outcount, "outcount")?;
        let indices = array_arg(hs.len(), array_of_indices, "array_of_indices")?;
        // SAFETY: the caller's contract; `out` checked non-null.
        unsafe { some(hs, true, out, indices, array_of_statuses) }
    })
}

/// `MPI_Testsome`.
///
/// # Safety
/// As [`oxabi_Waitsome`].
#[no_mangle]
pub unsafe extern "C" fn oxabi_Testsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    guard("MPI_Testsome", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(incount, array_of_requests) }?;
        let array_of_statuses = statuses_arg(hs.len(), array_of_statuses)?;
        let out = out_ptr(outcount, "outcount")?;
        let indices = array_arg(hs.len(), array_of_indices, "array_of_indices")?;
        // SAFETY: the caller's contract; `out` checked non-null.
        unsafe { some(hs, false, out, indices, array_of_statuses) }
    })
}

/// `MPI_Request_free`.
///
/// # Safety
/// `request` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Request_free(request: *mut MPI_Request) -> c_int {
    guard("MPI_Request_free", ErrObj::None, || {
        let h = out_ptr(request, "request")?;
        // SAFETY: checked non-null.
        requests::free(unsafe { &mut *h })
    })
}

/// `MPI_Cancel`.
///
/// # Safety
/// `request` is readable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cancel(request: *mut MPI_Request) -> c_int {
    guard("MPI_Cancel", ErrObj::None, || {
        let h = out_ptr(request, "request")?;
        // SAFETY: checked non-null.
        requests::cancel(unsafe { *h })
    })
}

/// `MPI_Start`.
///
/// # Safety
/// `request` is readable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Start(request: *mut MPI_Request) -> c_int {
    guard("MPI_Start", ErrObj::None, || {
        let h = out_ptr(request, "request")?;
        // SAFETY: checked non-null.
        requests::start(unsafe { *h })
    })
}

/// `MPI_Startall`.
///
/// # Safety
/// `array_of_requests` has `count` requests.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Startall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
) -> c_int {
    guard("MPI_Startall", ErrObj::None, || {
        // SAFETY: the caller's contract.
        let hs = unsafe { request_array(count, array_of_requests) }?;
        hs.iter().try_for_each(|&h| requests::start(h))
    })
}

/// `MPI_Test_cancelled`.
///
/// # Safety
/// `status` is readable; `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Test_cancelled(
    status: *const MPI_Status,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Test_cancelled", ErrObj::None, || {
        let flag = out_ptr(flag, "flag")?;
        // SAFETY: the caller's contract.
        let status = unsafe { crate::api::p2p::status::status_in(status) }?;
        // SAFETY: checked non-null.
        unsafe { *flag = c_int::from(handles::status_cancelled(status)) };
        Ok(())
    })
}

/// `MPI_Request_get_status`: whether the request has completed, and its
/// status, without freeing or deactivating it (a later wait or test
/// completes it as usual). A receive with a non-contiguous datatype is
/// unpacked into the program's buffer by that later completion.
///
/// # Safety
/// `flag` is writable; `status` is writable or `MPI_STATUS_IGNORE`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    guard("MPI_Request_get_status", ErrObj::None, || {
        let flag = out_ptr(flag, "flag")?;
        let status = out_ptr(status, "status")?;
        let found = requests::peek(request)?;
        // SAFETY: checked non-null.
        unsafe { *flag = c_int::from(found.is_some()) };
        match found {
            Some(Ok(s)) => {
                // SAFETY: checked non-null; writable or ignored.
                unsafe { handles::write_status(status, &s) };
                Ok(())
            }
            Some(Err(e)) => Err(e),
            None => Ok(()),
        }
    })
}
