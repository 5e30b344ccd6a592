//! Reduction operations: the built-in ones as kernels of the element
//! type, user ones (`MPI_Op_create`, `MPI_Op_free`, `MPI_Op_commutative`),
//! and `MPI_Reduce_local`.

use std::ffi::{c_int, c_void};

use oxmpi::datatype::stage::Dir;
use oxmpi::datatype::Datatype;
use oxmpi::ops::Op;

use crate::api::coll::buffers::{buffer, Stager};
use crate::api::coll::datatype::{about, bytes, ty, Num, Ty};
use crate::api::large_count;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Count, MPI_Datatype, MPI_Op, OpRef, BUILTIN_OPS};
use crate::raise::guard;
use crate::state::{self, UserFn, UserFnC, UserFunc, UserOp};

pub(super) const BUILTINS: [Op; 14] = [
    Op::MAX,
    Op::MIN,
    Op::SUM,
    Op::PROD,
    Op::LAND,
    Op::BAND,
    Op::LOR,
    Op::BOR,
    Op::LXOR,
    Op::BXOR,
    Op::MINLOC,
    Op::MAXLOC,
    Op::REPLACE,
    Op::NO_OP,
];

/// Index of the first built-in operation that only one-sided accumulates
/// take (`MPI_REPLACE`, then `MPI_NO_OP`: the table's last two).
pub(super) const FIRST_ONE_SIDED_OP: usize = 12;

/// The built-in operations, to be lent out without a clone.
pub(super) static BUILTIN_OP_TABLE: [Op; 14] = BUILTINS;

/// A predefined operation handle whose kernel applies to elements of
/// type `t` (the common case of a reduction, lent from a static table);
/// `None` for anything else, which [`op_for`] decodes and checks.
pub(super) fn builtin_op_for(op: MPI_Op, t: &Ty) -> Option<&'static Op> {
    let Ok(OpRef::Builtin(i)) = handles::op(op) else {
        return None;
    };
    let o = BUILTIN_OP_TABLE.get(i)?;
    match (o, t.elem, t.derived.is_none()) {
        (Op::Builtin(b), Some(elem), true)
            if i < FIRST_ONE_SIDED_OP && oxmpi_kernels::applicable(*b, elem).is_ok() =>
        {
            Some(o)
        }
        _ => None,
    }
}

/// A C user function as a runtime operation on elements of `t`: it is
/// called with the element count of each piece and the datatype handle.
/// The runtime reduces packed bytes; for a non-contiguous derived type the
/// function gets them laid out as the type says ([`in_layout`]).
pub(super) fn user_op(u: UserOp, t: &Ty) -> Op {
    let (func, handle, unit) = (u.func, t.handle, t.unit.max(1));
    let layout = t
        .derived
        .as_ref()
        .filter(|d| !d.contiguous)
        .map(|d| d.dt.clone());
    Op::user(u.commute, move |input: &[u8], inout: &mut [u8]| {
        let n = inout.len() / unit;
        let call = |a: *mut c_void, b: *mut c_void| call_user(func, handle, a, b, n);
        match &layout {
            None => call(input.as_ptr().cast_mut().cast(), inout.as_mut_ptr().cast()),
            Some(dt) => in_layout(dt, n, &input[..n * unit], &mut inout[..n * unit], call),
        }
    })
}

/// Calls a C user function on `n` elements at `a` (input) and `b` (inout).
fn call_user(
    func: UserFunc,
    handle: MPI_Datatype,
    a: *mut c_void,
    b: *mut c_void,
    n: usize,
) -> Result<(), oxmpi::Error> {
    let mut dt = handle;
    match func {
        UserFunc::Int(f) => {
            let mut len = c_int::try_from(n).map_err(|_| oxmpi::Error::InvalidArgument {
                arg: "count",
                reason: format!(
                    "{n} elements exceed what an MPI_User_function can be given; \
                     use MPI_Op_create_c"
                ),
            })?;
            // SAFETY: the function the program registered with
            // MPI_Op_create, called as MPI specifies: invec and inoutvec
            // hold `len` elements.
            unsafe { f(a, b, &mut len, &mut dt) };
        }
        UserFunc::Count(f) => {
            let mut len = n as MPI_Count;
            // SAFETY: as above (MPI_Op_create_c).
            unsafe { f(a, b, &mut len, &mut dt) };
        }
    }
    Ok(())
}

/// Runs `f` on the packed `input` and `inout` of `n` elements of `dt`
/// unpacked into temporaries laid out as `dt` says (the addresses `f`
/// gets are where element 0 starts), then packs `inout` back.
fn in_layout(
    dt: &Datatype,
    n: usize,
    input: &[u8],
    inout: &mut [u8],
    f: impl FnOnce(*mut c_void, *mut c_void) -> Result<(), oxmpi::Error>,
) -> Result<(), oxmpi::Error> {
    let Some(span) = dt.data_span(n)? else {
        return Ok(());
    };
    let len = span.end.abs_diff(span.start);
    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
    let (pa, pb) = (
        a.as_mut_ptr().wrapping_offset(-span.start),
        b.as_mut_ptr().wrapping_offset(-span.start),
    );
    // SAFETY: `data_span` bounds every byte of `n` elements at `pa` / `pb`
    // inside `a` / `b`, which overlap neither `input` nor `inout`.
    unsafe {
        dt.unpack_raw(pa, n, 0, input)?;
        dt.unpack_raw(pb, n, 0, inout)?;
    }
    f(pa.cast(), pb.cast())?;
    // SAFETY: as above.
    unsafe { dt.pack_raw(pb, n, 0, inout) }
}

/// Decodes operation argument `op` for elements of `t`, checking that a
/// built-in one is defined for the type.
pub(super) fn op_for(op: MPI_Op, t: &Ty) -> Result<Op, AbiError> {
    match handles::op(op).map_err(|e| about("op", e))? {
        OpRef::Builtin(i) => {
            let name = BUILTIN_OPS[i];
            if matches!(name, "MPI_REPLACE" | "MPI_NO_OP") {
                return Err(AbiError::new(
                    Class::OP,
                    format!("{name} is only for one-sided accumulate operations"),
                ));
            }
            if let Some(o) = super::long_double::op(i, t) {
                return o;
            }
            let o = BUILTINS[i].clone();
            // The common case without building the reduction function
            // (the runtime asks for it again when it runs).
            if let (Op::Builtin(b), Some(ty)) = (&o, t.elem) {
                if oxmpi_kernels::applicable(*b, ty).is_ok() {
                    return Ok(o);
                }
            }
            o.reducer(t.elem).map_err(|e| {
                let hint = if t.derived.is_some() && t.elem.is_none() {
                    " (a reduction over a derived datatype reduces its basic elements: they \
                     must all be one predefined type the operation is defined for)"
                } else {
                    ""
                };
                AbiError::new(
                    Class::OP,
                    format!("{name} is not defined for datatype {}: {e}{hint}", t.name),
                )
            })?;
            Ok(o)
        }
        OpRef::User(slot) => {
            let u = state::lock().ops.get(slot).copied().ok_or_else(|| {
                AbiError::new(
                    Class::OP,
                    format!("operation {op:#010x} does not exist (freed, or never created)"),
                )
            })?;
            Ok(user_op(u, t))
        }
    }
}

/// What the reduction kernels see of `n` elements of `t` under `o`: the
/// elements themselves, or for a derived type under a built-in operation,
/// its basic elements (`(count multiplier, bytes per reduced element)`).
pub(super) fn reduce_unit(t: &Ty, o: &Op) -> (usize, usize) {
    match (&t.derived, o) {
        (Some(_), Op::Builtin(_)) if t.per > 0 => (t.per, t.unit / t.per),
        _ => (1, t.unit),
    }
}

pub(super) fn op_create(
    func: Option<UserFunc>,
    commute: c_int,
    op: *mut MPI_Op,
) -> Result<(), AbiError> {
    let out = out_ptr(op, "op")?;
    let func = func.ok_or_else(|| AbiError::new(Class::ARG, "`user_fn` is a null pointer"))?;
    let mut st = state::lock();
    st.check_active()?;
    let slot = st.ops.insert(UserOp {
        func,
        commute: commute != 0,
    });
    // SAFETY: checked non-null.
    unsafe { *out = handles::op_handle(slot) };
    Ok(())
}

/// The form of `MPI_Op_create` a count type stands for: its user
/// function type (the length an `int` or an `MPI_Count`).
pub(crate) trait OpCreateForm {
    /// `MPI_User_function` or `MPI_User_function_c`.
    type UserFn;
    /// The function as the state keeps it.
    fn user_func(f: Self::UserFn) -> UserFunc;
}

impl OpCreateForm for c_int {
    type UserFn = UserFn;
    fn user_func(f: UserFn) -> UserFunc {
        UserFunc::Int(f)
    }
}

impl OpCreateForm for MPI_Count {
    type UserFn = UserFnC;
    fn user_func(f: UserFnC) -> UserFunc {
        UserFunc::Count(f)
    }
}

large_count! {
    /// The `_c` form's user function gets an `MPI_Count` length.
    ///
    /// # Safety
    /// `op` is writable; `user_fn` is an `MPI_User_function` (`_c`).
    Op_create(
        user_fn: Option<<Count as OpCreateForm>::UserFn>,
        commute: c_int,
        op: *mut MPI_Op,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            op_create(user_fn.map(<Count as OpCreateForm>::user_func), commute, op)
        })
    }
}

/// `MPI_Op_free`: sets `*op` to `MPI_OP_NULL`. Operations already started
/// with it finish.
///
/// # Safety
/// `op` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Op_free(op: *mut MPI_Op) -> c_int {
    guard("MPI_Op_free", ErrObj::None, || {
        let p = out_ptr(op, "op")?;
        // SAFETY: checked non-null.
        let h = unsafe { *p };
        match handles::op(h).map_err(|e| about("op", e))? {
            OpRef::Builtin(i) => Err(AbiError::new(
                Class::OP,
                format!("{} is predefined and cannot be freed", BUILTIN_OPS[i]),
            )),
            OpRef::User(slot) => {
                state::lock().ops.remove(slot).ok_or_else(|| {
                    AbiError::new(
                        Class::OP,
                        format!("operation {h:#010x} does not exist (already freed?)"),
                    )
                })?;
                // SAFETY: checked non-null.
                unsafe { *p = handles::OP_NULL };
                Ok(())
            }
        }
    })
}

/// `MPI_Op_commutative`.
///
/// # Safety
/// `commute` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Op_commutative(op: MPI_Op, commute: *mut c_int) -> c_int {
    guard("MPI_Op_commutative", ErrObj::None, || {
        let out = out_ptr(commute, "commute")?;
        let c = match handles::op(op).map_err(|e| about("op", e))? {
            OpRef::Builtin(_) => true,
            OpRef::User(slot) => {
                state::lock()
                    .ops
                    .get(slot)
                    .ok_or_else(|| {
                        AbiError::new(
                            Class::OP,
                            format!("operation {op:#010x} does not exist (freed?)"),
                        )
                    })?
                    .commute
            }
        };
        // SAFETY: checked non-null.
        unsafe { *out = c_int::from(c) };
        Ok(())
    })
}

/// `inoutbuf = inbuf op inoutbuf` (`MPI_Reduce_local` and its `_c` form).
///
/// # Safety
/// The buffers hold `count` elements of `datatype`.
pub(super) unsafe fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: impl Num,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Result<(), AbiError> {
    state::lock().check_active()?;
    let t = ty(datatype, "datatype")?;
    let n = bytes(count, &t, "count")?;
    let why = "in MPI_Reduce_local";
    buffer(inbuf, n, "inbuf", why)?;
    buffer(inoutbuf, n, "inoutbuf", why)?;
    let f = op_for(op, &t)?.reducer(t.elem)?;
    let mut sg = Stager::default();
    let a = sg.buf(inbuf, n, &t, Dir::In, "inbuf", why)?;
    let b = sg.buf(inoutbuf, n, &t, Dir::InOut, "inoutbuf", why)?;
    if n == 0 {
        return Ok(());
    }
    if oxmpi::mem::cuda::is_device(a) || oxmpi::mem::cuda::is_device(b) {
        // Device memory: through host copies of both operands.
        let (mut input, mut inout) = (vec![0u8; n], vec![0u8; n]);
        // SAFETY: MPI's contract: both hold `n` bytes.
        unsafe {
            oxmpi::mem::cuda::copy(input.as_mut_ptr(), a, n)?;
            oxmpi::mem::cuda::copy(inout.as_mut_ptr(), b, n)?;
        }
        f(&input, &mut inout)?;
        // SAFETY: as above.
        unsafe { oxmpi::mem::cuda::copy(b, inout.as_ptr(), n) }?;
        // SAFETY: the program's buffer is there.
        return Ok(unsafe { sg.0.finish() }?);
    }
    // SAFETY: MPI's contract: both hold `count` elements (or are packed
    // temporaries of them).
    let (input, inout) = unsafe {
        (
            std::slice::from_raw_parts(a, n),
            std::slice::from_raw_parts_mut(b, n),
        )
    };
    f(input, inout)?;
    // SAFETY: the program's buffer is there.
    unsafe { sg.0.finish() }?;
    Ok(())
}

large_count! {
    /// `inoutbuf = inbuf op inoutbuf`.
    ///
    /// # Safety
    /// The buffers hold `count` elements of `datatype`.
    Reduce_local(
        inbuf: *const c_void,
        inoutbuf: *mut c_void,
        count: Count,
        datatype: MPI_Datatype,
        op: MPI_Op,
    ) -> c_int {
        guard(NAME, ErrObj::None, || {
            // SAFETY: the caller's contract.
            unsafe { reduce_local(inbuf, inoutbuf, count, datatype, op) }
        })
    }
}
