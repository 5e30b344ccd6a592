//! The RMA operations: `MPI_Put`, `MPI_Get`, `MPI_Accumulate`,
//! `MPI_Get_accumulate`, `MPI_Fetch_and_op`, `MPI_Compare_and_swap` and
//! the request-based `MPI_Rput`, `_Rget`, `_Raccumulate`,
//! `_Rget_accumulate` (each with its `_c` form). Every operation
//! completes before it returns, so a request-based one hands back a
//! request that is already complete.

use std::ffi::{c_int, c_void};

use oxmpi::datatype::Datatype;
use oxmpi::ops::{BuiltinOp, ElemType, Op};
use oxmpi::rma::{At, Buf};

use crate::api::coll::datatype::ty;
use crate::api::datatype::p2p::contiguous_bytes;
use crate::api::datatype::query::committed;
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, MPI_Aint, MPI_Count, MPI_Datatype, MPI_Op, MPI_Request, MPI_Win, OpRef, BUILTIN_OPS,
};
use crate::objects::request::ReqEntry;
use crate::raise::guard;
use crate::state;

fn count_arg(n: MPI_Count, arg: &str) -> Result<usize, AbiError> {
    usize::try_from(n).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("invalid `{arg}` {n}: counts cannot be negative"),
        )
    })
}

fn type_arg(h: MPI_Datatype, arg: &str) -> Result<Datatype, AbiError> {
    committed(h).map_err(|mut e| {
        e.message = format!("`{arg}`: {}", e.message);
        e
    })
}

/// A predefined operation for an accumulate (user operations are not
/// allowed in one-sided calls), and the element type it works on.
fn op_arg(op: MPI_Op, target_datatype: MPI_Datatype) -> Result<(Op, Option<ElemType>), AbiError> {
    let name = match handles::op(op)? {
        // The arithmetic on C's long double types is C's (MPI_REPLACE and
        // MPI_NO_OP move bytes, as for every type).
        OpRef::Builtin(i) if i <= 3 || i == 10 || i == 11 => {
            let t = ty(target_datatype, "target_datatype")?;
            if let Some(long_double) = crate::api::coll::long_double::op(i, &t) {
                return Ok((long_double?, t.elem));
            }
            BUILTIN_OPS[i]
        }
        OpRef::Builtin(i) => BUILTIN_OPS[i],
        OpRef::User(_) => {
            return Err(AbiError::new(
                Class::OP,
                "accumulate operations take predefined operations only, not MPI_Op_create's",
            ))
        }
    };
    let b = BuiltinOp::ALL
        .into_iter()
        .find(|b| b.mpi_name() == name)
        .ok_or_else(|| {
            AbiError::new(Class::OP, format!("{name} is not an accumulate operation"))
        })?;
    let elem = ty(target_datatype, "target_datatype")?.elem;
    Ok((Op::Builtin(b), elem))
}

/// Stores a request that is already complete (the operation is done).
///
/// # Safety
/// `request` is writable (checked non-null).
unsafe fn complete_request(request: *mut MPI_Request) {
    let entry = ReqEntry::Ready {
        status: handles::empty_status(),
        comm: handles::COMM_SELF,
    };
    let slot = state::lock().requests.insert(entry);
    // SAFETY: the caller's contract.
    unsafe { *request = handles::request_handle(slot) };
}

/// The arguments every operation has: origin buffer and target.
struct Call {
    origin: (*const c_void, MPI_Count, MPI_Datatype),
    target: (c_int, MPI_Aint, MPI_Count, MPI_Datatype),
}

/// Runs `f` with the decoded origin buffer and target.
fn with_call<R>(
    c: Call,
    f: impl FnOnce(Buf<'_>, At<'_>) -> Result<R, AbiError>,
) -> Result<R, AbiError> {
    let odt = type_arg(c.origin.2, "origin_datatype")?;
    let tdt = type_arg(c.target.3, "target_datatype")?;
    let origin = Buf {
        addr: c.origin.0.cast(),
        count: count_arg(c.origin.1, "origin_count")?,
        dt: &odt,
    };
    let at = At {
        rank: c.target.0,
        disp: c.target.1 as isize,
        count: count_arg(c.target.2, "target_count")?,
        dt: &tdt,
    };
    f(origin, at)
}

/// The common case: predefined contiguous types moving the same bytes on
/// both sides: `(address, bytes)`.
fn contiguous(c: &Call) -> Option<(*mut u8, usize)> {
    let (ptr, len) = contiguous_bytes(c.origin.0, c.origin.1, c.origin.2)?;
    if (c.origin.1, c.origin.2) == (c.target.2, c.target.3) {
        return Some((ptr, len));
    }
    let (_, target_len) = contiguous_bytes(c.origin.0, c.target.2, c.target.3)?;
    (len == target_len).then_some((ptr, len))
}

/// The fast path of `MPI_Put` (`get`: of `MPI_Get`): predefined
/// contiguous types to a target this process maps, on the thread's cached
/// window. It runs outside the error guard: nothing in it fails or panics
/// (it declines, and the general path runs).
#[inline(always)]
fn direct(win: MPI_Win, c: &Call, get: bool) -> bool {
    let Some((ptr, len)) = contiguous(c) else {
        return false;
    };
    let (rank, disp) = (c.target.0, c.target.1 as isize);
    super::try_cached(win, |w| {
        // SAFETY: MPI's contract: the origin buffer holds its elements
        // (writable for a get).
        unsafe {
            if get {
                w.get_direct(ptr, len, rank, disp)
            } else {
                w.put_direct(ptr, len, rank, disp)
            }
        }
    })
}

fn put(win: MPI_Win, c: Call) -> Result<(), AbiError> {
    if direct(win, &c, false) {
        return Ok(());
    }
    super::with_win(win, |w| {
        if let Some((ptr, len)) = contiguous(&c) {
            // SAFETY: MPI's contract: the origin buffer holds its elements.
            return Ok(unsafe { w.put_bytes(ptr, len, c.target.0, c.target.1 as isize) }?);
        }
        // SAFETY: MPI's contract: the origin buffer holds its elements.
        with_call(c, |o, at| unsafe { w.put(o, at) }.map_err(Into::into))
    })
}

fn get(win: MPI_Win, c: Call) -> Result<(), AbiError> {
    if direct(win, &c, true) {
        return Ok(());
    }
    super::with_win(win, |w| {
        if let Some((ptr, len)) = contiguous(&c) {
            // SAFETY: MPI's contract: the origin buffer holds its elements, writable.
            return Ok(unsafe { w.get_bytes(ptr, len, c.target.0, c.target.1 as isize) }?);
        }
        // SAFETY: MPI's contract: the origin buffer holds its elements, writable.
        with_call(c, |o, at| unsafe { w.get(o, at) }.map_err(Into::into))
    })
}

/// The common case of the accumulates: predefined contiguous types
/// moving the same bytes on every side, `op` a predefined operation:
/// done here, without datatypes (`None`: not that case).
fn accumulate_bytes(
    w: &oxmpi::rma::Win,
    c: &Call,
    result: Option<(*mut c_void, MPI_Count, MPI_Datatype)>,
    op: MPI_Op,
) -> Option<Result<(), AbiError>> {
    let (ptr, len) = contiguous(c)?;
    let result_ptr = match result {
        Some((addr, count, dt)) => {
            let (p, l) = contiguous_bytes(addr, count, dt)?;
            (l == len).then_some(p)?
        }
        None => std::ptr::null_mut(),
    };
    let Ok(OpRef::Builtin(i)) = handles::op(op) else {
        return None;
    };
    let b = BuiltinOp::ALL.get(builtin_index(i)?).copied()?;
    let target = crate::api::coll::datatype::builtin_ty(c.target.3)?;
    if crate::api::coll::long_double::is_long_double(target) {
        return None; // C's arithmetic, through op_arg
    }
    let elem = target.elem;
    // SAFETY: MPI's contract: the buffers hold their elements.
    let r = unsafe {
        w.get_accumulate_bytes(
            ptr,
            result_ptr,
            len,
            c.target.0,
            c.target.1 as isize,
            &Op::Builtin(b),
            elem,
        )
    };
    Some(r.map_err(Into::into))
}

/// The kernels' index of the predefined operation at `BUILTIN_OPS[i]`.
fn builtin_index(i: usize) -> Option<usize> {
    static TABLE: std::sync::OnceLock<Vec<Option<usize>>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        BUILTIN_OPS
            .iter()
            .map(|name| BuiltinOp::ALL.iter().position(|b| b.mpi_name() == *name))
            .collect()
    });
    t.get(i).copied().flatten()
}

fn accumulate(win: MPI_Win, c: Call, op: MPI_Op) -> Result<(), AbiError> {
    super::with_win(win, |w| {
        if let Some(r) = accumulate_bytes(w, &c, None, op) {
            return r;
        }
        let (op, elem) = op_arg(op, c.target.3)?;
        // SAFETY: MPI's contract: the origin buffer holds its elements.
        with_call(c, |o, at| {
            unsafe { w.accumulate(o, at, &op, elem) }.map_err(Into::into)
        })
    })
}

fn get_accumulate(
    win: MPI_Win,
    c: Call,
    result: (*mut c_void, MPI_Count, MPI_Datatype),
    op: MPI_Op,
) -> Result<(), AbiError> {
    super::with_win(win, |w| {
        if let Some(r) = accumulate_bytes(w, &c, Some(result), op) {
            return r;
        }
        let (op, elem) = op_arg(op, c.target.3)?;
        let rdt = type_arg(result.2, "result_datatype")?;
        let r = Buf {
            addr: result.0.cast_const().cast(),
            count: count_arg(result.1, "result_count")?,
            dt: &rdt,
        };
        // SAFETY: MPI's contract: the buffers hold their elements.
        with_call(c, |o, at| {
            unsafe { w.get_accumulate(o, Some(r), at, &op, elem) }.map_err(Into::into)
        })
    })
}

large_count! {
    /// `MPI_Put`: writes the origin's data into the target's window.
    ///
    /// # Safety
    /// `origin_addr` holds `origin_count` elements of `origin_datatype`.
    Put(
        origin_addr: *const c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        win: MPI_Win,
    ) -> c_int {
        let call = Call {
            origin: (origin_addr, wide(origin_count), origin_datatype),
            target: (target_rank, target_disp, wide(target_count), target_datatype),
        };
        if direct(win, &call, false) {
            return 0;
        }
        guard(NAME, ErrObj::Win(win), || put(win, call))
    }
}

large_count! {
    /// `MPI_Get`: reads the target's window into the origin buffer.
    ///
    /// # Safety
    /// `origin_addr` holds `origin_count` elements of `origin_datatype`, writable.
    Get(
        origin_addr: *mut c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        win: MPI_Win,
    ) -> c_int {
        let call = Call {
            origin: (origin_addr.cast_const(), wide(origin_count), origin_datatype),
            target: (target_rank, target_disp, wide(target_count), target_datatype),
        };
        if direct(win, &call, true) {
            return 0;
        }
        guard(NAME, ErrObj::Win(win), || get(win, call))
    }
}

large_count! {
    /// `MPI_Accumulate`: combines the origin's data into the target's
    /// window with a predefined operation (atomically per element).
    ///
    /// # Safety
    /// `origin_addr` holds `origin_count` elements of `origin_datatype`.
    Accumulate(
        origin_addr: *const c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        op: MPI_Op,
        win: MPI_Win,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            accumulate(win, Call {
                origin: (origin_addr, wide(origin_count), origin_datatype),
                target: (target_rank, target_disp, wide(target_count), target_datatype),
            }, op)
        })
    }
}

large_count! {
    /// `MPI_Get_accumulate`: the target's data before the operation goes
    /// to the result buffer.
    ///
    /// # Safety
    /// The origin and result buffers hold their elements (result writable).
    Get_accumulate(
        origin_addr: *const c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        result_addr: *mut c_void,
        result_count: Count,
        result_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        op: MPI_Op,
        win: MPI_Win,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            get_accumulate(win, Call {
                origin: (origin_addr, wide(origin_count), origin_datatype),
                target: (target_rank, target_disp, wide(target_count), target_datatype),
            }, (result_addr, wide(result_count), result_datatype), op)
        })
    }
}

/// `MPI_Fetch_and_op`: `MPI_Get_accumulate` of one element.
///
/// # Safety
/// `origin_addr` and `result_addr` each hold one element of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    guard("MPI_Fetch_and_op", ErrObj::Win(win), || {
        let call = Call {
            origin: (origin_addr, 1, datatype),
            target: (target_rank, target_disp, 1, datatype),
        };
        get_accumulate(win, call, (result_addr, 1, datatype), op)
    })
}

/// `MPI_Compare_and_swap`: the target element becomes the origin's if it
/// equals the compare element; the result gets its old value.
///
/// # Safety
/// The three buffers each hold one element of `datatype` (result writable).
#[no_mangle]
pub unsafe extern "C" fn oxabi_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> c_int {
    guard("MPI_Compare_and_swap", ErrObj::Win(win), || {
        let fast = crate::api::coll::datatype::builtin_ty(datatype)
            .and_then(|t| Some((t.elem?, contiguous_bytes(origin_addr, 1, datatype)?.1)));
        if let Some((elem, len)) = fast {
            let done = super::with_win(win, |w| {
                // SAFETY: MPI's contract for the three buffers.
                Ok(unsafe {
                    w.compare_and_swap_direct(
                        origin_addr.cast(),
                        compare_addr.cast(),
                        result_addr.cast(),
                        len,
                        elem,
                        target_rank,
                        target_disp as isize,
                    )
                })
            })?;
            if done {
                return Ok(());
            }
        }
        let w = super::win(win)?;
        let dt = type_arg(datatype, "datatype")?;
        if dt.basic_type().is_none() {
            return Err(AbiError::new(
                Class::TYPE,
                "MPI_Compare_and_swap takes one predefined datatype",
            ));
        }
        // SAFETY: MPI's contract for the three buffers.
        unsafe {
            w.compare_and_swap(
                origin_addr.cast(),
                compare_addr.cast(),
                result_addr.cast(),
                &dt,
                target_rank,
                target_disp as isize,
            )?
        };
        Ok(())
    })
}

large_count! {
    /// `MPI_Rput`: `MPI_Put` with a request (complete when returned).
    ///
    /// # Safety
    /// As for `MPI_Put`; `request` is writable.
    Rput(
        origin_addr: *const c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            let out = out_ptr(request, "request")?;
            super::win(win)?.check_passive(target_rank)?;
            put(win, Call {
                origin: (origin_addr, wide(origin_count), origin_datatype),
                target: (target_rank, target_disp, wide(target_count), target_datatype),
            })?;
            // SAFETY: checked non-null.
            unsafe { complete_request(out) };
            Ok(())
        })
    }
}

large_count! {
    /// `MPI_Rget`: `MPI_Get` with a request (complete when returned).
    ///
    /// # Safety
    /// As for `MPI_Get`; `request` is writable.
    Rget(
        origin_addr: *mut c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            let out = out_ptr(request, "request")?;
            super::win(win)?.check_passive(target_rank)?;
            get(win, Call {
                origin: (origin_addr.cast_const(), wide(origin_count), origin_datatype),
                target: (target_rank, target_disp, wide(target_count), target_datatype),
            })?;
            // SAFETY: checked non-null.
            unsafe { complete_request(out) };
            Ok(())
        })
    }
}

large_count! {
    /// `MPI_Raccumulate`: `MPI_Accumulate` with a request.
    ///
    /// # Safety
    /// As for `MPI_Accumulate`; `request` is writable.
    Raccumulate(
        origin_addr: *const c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        op: MPI_Op,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            let out = out_ptr(request, "request")?;
            super::win(win)?.check_passive(target_rank)?;
            accumulate(win, Call {
                origin: (origin_addr, wide(origin_count), origin_datatype),
                target: (target_rank, target_disp, wide(target_count), target_datatype),
            }, op)?;
            // SAFETY: checked non-null.
            unsafe { complete_request(out) };
            Ok(())
        })
    }
}

large_count! {
    /// `MPI_Rget_accumulate`: `MPI_Get_accumulate` with a request.
    ///
    /// # Safety
    /// As for `MPI_Get_accumulate`; `request` is writable.
    Rget_accumulate(
        origin_addr: *const c_void,
        origin_count: Count,
        origin_datatype: MPI_Datatype,
        result_addr: *mut c_void,
        result_count: Count,
        result_datatype: MPI_Datatype,
        target_rank: c_int,
        target_disp: MPI_Aint,
        target_count: Count,
        target_datatype: MPI_Datatype,
        op: MPI_Op,
        win: MPI_Win,
        request: *mut MPI_Request,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            let out = out_ptr(request, "request")?;
            super::win(win)?.check_passive(target_rank)?;
            get_accumulate(win, Call {
                origin: (origin_addr, wide(origin_count), origin_datatype),
                target: (target_rank, target_disp, wide(target_count), target_datatype),
            }, (result_addr, wide(result_count), result_datatype), op)?;
            // SAFETY: checked non-null.
            unsafe { complete_request(out) };
            Ok(())
        })
    }
}
