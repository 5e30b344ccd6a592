//! Collective operations, blocking, non-blocking and persistent, over the
//! runtime's raw-byte entry points (`Comm::i*_raw`), and reduction
//! operations (`MPI_Op_create`, `MPI_Reduce_local`).
//!
//! Every collective decodes and validates its arguments before starting
//! (communicator first, then root, datatypes, counts, buffers, operation)
//! and names the argument and its value in the error; the result is a
//! [`Launch`]. Arguments MPI declares not significant on a rank (the
//! receive side of a gather away from the root, the send side of an
//! `MPI_IN_PLACE` call) are not looked at. `collective!` makes the three
//! forms of each from its one decoding function: the non-blocking one
//! starts the launch, the blocking one also waits, the persistent one
//! (`MPI_<Coll>_init`, see `persistent_coll.rs`) keeps it for `MPI_Start`.
//!
//! Datatypes: the predefined ones, as contiguous elements; built-in
//! operations run the kernels of the element type the datatype maps to
//! (an operation the type does not support is `MPI_ERR_OP`). Derived
//! datatypes move as their packed bytes (what point-to-point sends too):
//! a contiguous one straight from the program's buffer, any other packed
//! into a temporary before the operation and unpacked from it after
//! ([`Stager`]; a non-blocking call keeps its temporaries with the
//! request, a persistent one packs and unpacks them at every round). A reduction over a derived type reduces its packed basic
//! elements, so the type must be made of one predefined type underneath
//! (a vector of `MPI_DOUBLE` with `MPI_SUM` works; a struct of an int and
//! a double is `MPI_ERR_OP`). User operations get derived types only when
//! contiguous (their function sees the program's layout).
//!
//! A value-index pair type (`MPI_DOUBLE_INT`) moves as its extent when
//! predefined and as its packed size inside a derived type: ranks must not
//! mix the two forms in one collective.

use std::ffi::{c_int, c_void};

use oxmpi::coll::{Blocks, Elems, Planned};
pub use oxmpi::datatype::stage::Dir;
use oxmpi::datatype::stage::{CollStage, Placed};
use oxmpi::datatype::{BasicType, Datatype};
use oxmpi::ops::{ElemType, Op};
use oxmpi::{Comm, Request};

#[path = "coll_fast.rs"]
mod fast;

use super::datatype::lookup;
use super::datatype_query::committed;
use super::p2p::store_staged;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{
    self, MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Op, MPI_Request, OpRef, BUILTIN_OPS,
    IN_PLACE,
};
use crate::objects::launch::Launch;
use crate::objects::request::ReqEntry;
use crate::objects::stage::Stage;
use crate::raise::guard;
use crate::state::{self, UserFn, UserFnC, UserFunc, UserOp};

// ------------------------------------------------------------ datatypes

/// A datatype as the collectives use it.
#[derive(Debug, Clone)]
pub struct Ty {
    /// The C handle (handed to user operations).
    pub handle: MPI_Datatype,
    /// Bytes from one element to the next in the program's buffer.
    pub extent: usize,
    /// Bytes per element in what the runtime moves: the extent of a
    /// predefined type, the packed size of a derived one.
    pub unit: usize,
    /// The kernel type built-in operations use (`None`: user operations
    /// only); for a derived type, the one predefined type it is made of.
    pub elem: Option<ElemType>,
    /// Basic elements per element (1 for predefined types, whose pairs
    /// reduce as a whole).
    pub per: usize,
    /// The datatype's C name (`"a derived datatype"` for derived ones).
    pub name: &'static str,
    /// For a derived type: how its data is reached.
    pub derived: Option<Derived>,
}

/// A derived datatype in a collective.
#[derive(Debug, Clone)]
pub struct Derived {
    /// The committed type.
    pub dt: Datatype,
    /// Whether `count` elements are one run of packed bytes (used in
    /// place, from `true_lb`).
    pub contiguous: bool,
    /// Offset of the first data byte from the buffer address.
    pub true_lb: isize,
}

/// The kernel element type of a predefined datatype, by its C name.
pub fn elem_type(name: &str) -> Option<ElemType> {
    use ElemType::*;
    Some(match name {
        "MPI_CHAR" | "MPI_SIGNED_CHAR" | "MPI_INT8_T" | "MPI_INTEGER1" => I8,
        "MPI_UNSIGNED_CHAR" | "MPI_UINT8_T" => U8,
        "MPI_BYTE" => Byte,
        "MPI_SHORT" | "MPI_INT16_T" | "MPI_INTEGER2" => I16,
        "MPI_UNSIGNED_SHORT" | "MPI_UINT16_T" => U16,
        "MPI_INT" | "MPI_INT32_T" | "MPI_INTEGER" | "MPI_INTEGER4" => I32,
        "MPI_UNSIGNED" | "MPI_UINT32_T" => U32,
        "MPI_LONG" | "MPI_LONG_LONG_INT" | "MPI_LONG_LONG" | "MPI_INT64_T" | "MPI_AINT"
        | "MPI_OFFSET" | "MPI_COUNT" | "MPI_INTEGER8" => I64,
        "MPI_UNSIGNED_LONG" | "MPI_UNSIGNED_LONG_LONG" | "MPI_UINT64_T" => U64,
        "MPI_FLOAT" | "MPI_REAL" | "MPI_REAL4" => F32,
        "MPI_DOUBLE" | "MPI_DOUBLE_PRECISION" | "MPI_REAL8" => F64,
        "MPIX_C_FLOAT16" => F16,
        "MPIX_BFLOAT16" => Bf16,
        "MPI_C_BOOL" | "MPI_CXX_BOOL" => Bool,
        "MPI_C_FLOAT_COMPLEX" | "MPI_CXX_FLOAT_COMPLEX" | "MPI_COMPLEX" | "MPI_COMPLEX8" => {
            ComplexF32
        }
        "MPI_C_DOUBLE_COMPLEX"
        | "MPI_CXX_DOUBLE_COMPLEX"
        | "MPI_DOUBLE_COMPLEX"
        | "MPI_COMPLEX16" => ComplexF64,
        "MPI_2INT" | "MPI_2INTEGER" => TwoInt,
        "MPI_FLOAT_INT" => FloatInt,
        "MPI_DOUBLE_INT" => DoubleInt,
        "MPI_LONG_INT" => LongInt,
        "MPI_SHORT_INT" => ShortInt,
        _ => return None,
    })
}

/// Prefixes an error's message with the argument it is about.
fn about(arg: &str, mut e: AbiError) -> AbiError {
    e.message = format!("`{arg}`: {}", e.message);
    e
}

/// Decodes datatype argument `arg` (predefined, or derived and committed).
pub fn ty(h: MPI_Datatype, arg: &str) -> Result<Ty, AbiError> {
    if let Some(t) = builtin_ty(h) {
        return Ok(t.clone());
    }
    if let Some(name) = handles::datatype_name(h) {
        let info = handles::datatype(h).map_err(|e| about(arg, e))?;
        return Ok(Ty {
            handle: h,
            extent: info.extent,
            unit: info.extent,
            elem: elem_type(name),
            per: 1,
            name,
            derived: None,
        });
    }
    if handles::derived_type_slot(h).is_none() {
        return Err(about(
            arg,
            handles::datatype(h)
                .err()
                .unwrap_or_else(|| handles::bad_datatype(h)),
        ));
    }
    let dt = committed(h).map_err(|e| about(arg, e))?;
    let extent = usize::try_from(dt.extent()).map_err(|_| {
        AbiError::new(
            Class::TYPE,
            format!(
                "`{arg}` is datatype {h:#010x} with negative extent {}: not supported in \
                 collectives",
                dt.extent()
            ),
        )
    })?;
    Ok(Ty {
        handle: h,
        extent,
        unit: dt.size(),
        elem: dt.signature().uniform().and_then(BasicType::elem_type),
        per: dt.signature().len(),
        name: "a derived datatype",
        derived: Some(Derived {
            contiguous: dt.is_contiguous(),
            true_lb: dt.true_lb(),
            dt,
        }),
    })
}

/// The [`Ty`] of a builtin datatype handle, computed once per type (every
/// collective call asks): indexed by the handle's low byte, which is
/// unique among builtins.
fn builtin_ty(h: MPI_Datatype) -> Option<&'static Ty> {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<Option<Ty>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = vec![None; 256];
        for &(handle, name) in handles::BUILTIN_DATATYPES {
            if let Ok(info) = handles::datatype(handle) {
                t[(handle & 0xff) as usize] = Some(Ty {
                    handle,
                    extent: info.extent,
                    unit: info.extent,
                    elem: elem_type(name),
                    per: 1,
                    name,
                    derived: None,
                });
            }
        }
        t
    });
    table[(h & 0xff) as usize]
        .as_ref()
        .filter(|t| t.handle == h)
}

/// The integer types of count and displacement arguments: `int` in the
/// classic functions, `MPI_Count` / `MPI_Aint` in the `_c` (large count) ones.
pub trait Num: Copy + Into<i64> {}
impl Num for c_int {}
impl Num for i64 {}

/// Checks count argument `arg`.
fn count(n: impl Num, arg: &str) -> Result<usize, AbiError> {
    let n: i64 = n.into();
    usize::try_from(n).map_err(|_| {
        AbiError::new(
            Class::COUNT,
            format!("`{arg}` is {n}: counts cannot be negative"),
        )
    })
}

/// Bytes the runtime moves for `n` elements of `t` (count argument `arg`).
pub(crate) fn bytes(n: impl Num, t: &Ty, arg: &str) -> Result<usize, AbiError> {
    let n: i64 = n.into();
    count(n, arg)?.checked_mul(t.unit).ok_or_else(|| {
        AbiError::new(
            Class::COUNT,
            format!("`{arg}` {n} of {} overflows the address space", t.name),
        )
    })
}

// -------------------------------------------------------------- buffers

fn is_in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

fn no_in_place(arg: &str, why: &str) -> AbiError {
    AbiError::new(
        Class::BUFFER,
        format!("`{arg}` is MPI_IN_PLACE, which is not allowed {why}"),
    )
}

/// A buffer of `len` bytes that must exist: not `MPI_IN_PLACE`, not null
/// unless empty.
fn buffer(p: *const c_void, len: usize, arg: &str, why: &str) -> Result<*mut u8, AbiError> {
    if is_in_place(p) {
        return Err(no_in_place(arg, why));
    }
    if p.is_null() && len > 0 {
        return Err(AbiError::new(
            Class::BUFFER,
            format!("`{arg}` is a null pointer but must hold {len} bytes"),
        ));
    }
    Ok(p.cast_mut().cast())
}

/// Send and receive buffers that must not be the same memory (MPI
/// requires `MPI_IN_PLACE` for that).
fn not_aliased(send: *const u8, recv: *const u8, len: usize) -> Result<(), AbiError> {
    if len > 0 && std::ptr::eq(send, recv) {
        return Err(AbiError::new(
            Class::BUFFER,
            format!(
                "`sendbuf` and `recvbuf` are the same buffer ({send:p}); pass MPI_IN_PLACE \
                 as `sendbuf` to work in place"
            ),
        ));
    }
    Ok(())
}

/// The temporaries of one collective call: where the runtime reads and
/// writes for buffers of non-contiguous derived types.
#[derive(Default)]
pub struct Stager(CollStage);

impl Stager {
    /// Checks buffer argument `arg` of `len` bytes (in `t.unit`s, as
    /// [`bytes`] counts them) and returns where the runtime moves them: the
    /// program's buffer, or a packed temporary.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn buf(
        &mut self,
        p: *const c_void,
        len: usize,
        t: &Ty,
        dir: Dir,
        arg: &str,
        why: &str,
    ) -> Result<*mut u8, AbiError> {
        let q = buffer(p, len, arg, why)?;
        let Some(d) = &t.derived else {
            return Ok(q);
        };
        let placed = Placed {
            dt: d.dt.clone(),
            buf: q as usize,
            count: len / t.unit,
            len,
        };
        Ok(self.0.stage(placed, dir))
    }

    /// [`Stager::buf`] for per-rank blocks: `cs[i]` bytes (in units) at byte
    /// displacement `ds[i]` of the program's buffer, of type `tys(i)`.
    /// Returns the address and displacements the runtime uses: the
    /// program's, or a temporary holding the blocks packed one after
    /// another.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn blocks<'t>(
        &mut self,
        p: *const c_void,
        cs: &[usize],
        ds: &[usize],
        tys: &dyn Fn(usize) -> &'t Ty,
        dir: Dir,
        arg: &str,
        why: &str,
    ) -> Result<(*mut u8, Vec<usize>), AbiError> {
        let q = buffer(p, Blocks::new(cs, ds).extent(), arg, why)?;
        let in_place = |t: &Ty| match &t.derived {
            None => true,
            Some(d) => d.contiguous && d.true_lb == 0,
        };
        if (0..cs.len()).all(|i| in_place(tys(i))) {
            return Ok((q, ds.to_vec()));
        }
        let (tmp, ptr) = self.0.temp(cs.iter().sum());
        let (mut offsets, mut off) = (Vec::with_capacity(cs.len()), 0);
        for (i, (&len, &d)) in cs.iter().zip(ds).enumerate() {
            offsets.push(off);
            if len > 0 {
                let t = tys(i);
                let dt = match &t.derived {
                    Some(d) => d.dt.clone(),
                    None => lookup(t.handle)?,
                };
                let count = len / t.unit;
                if dt.pack_size(count).ok() != Some(len) {
                    return Err(AbiError::new(
                        Class::TYPE,
                        format!(
                            "`{arg}` block {i}: {} packs to other than its extent; value-index \
                             pair types cannot be mixed with derived datatypes in one call",
                            t.name
                        ),
                    ));
                }
                let placed = Placed {
                    dt,
                    buf: (q as usize).wrapping_add(d),
                    count,
                    len,
                };
                self.0.place(placed, tmp, off, dir);
            }
            off += len;
        }
        Ok((ptr, offsets))
    }

    /// Packs what the operation reads into the temporaries and starts it
    /// (for a persistent collective: at every start).
    ///
    /// # Safety
    /// The program's buffers hold their data (and stay valid until the
    /// operation completes).
    pub(crate) unsafe fn start(&mut self, l: &Launch) -> Result<Request<'static>, AbiError> {
        // SAFETY: the caller's contract.
        unsafe {
            self.0.pack()?;
            l.start()
        }
    }

    /// The temporaries to keep with a non-blocking collective's request.
    fn into_stage(self) -> Option<Stage> {
        (!self.0.is_empty()).then_some(Stage::Coll(self.0))
    }

    /// The temporaries to keep with a persistent collective's request:
    /// packed at each start, unpacked at each completion.
    pub(crate) fn into_persistent_stage(self) -> Option<Stage> {
        (!self.0.is_empty()).then_some(Stage::PersistentColl(self.0))
    }
}

/// Checks `root` and says whether this rank is it.
fn root_of(c: &Comm, root: c_int) -> Result<bool, AbiError> {
    if root < 0 || root >= c.size() {
        return Err(AbiError::new(
            Class::ROOT,
            format!(
                "invalid root {root}: the communicator has {} ranks",
                c.size()
            ),
        ));
    }
    Ok(root == c.rank())
}

/// Per-rank counts and displacements from C arrays, in bytes (`unit`
/// bytes per element for counts, `dunit` for displacements).
///
/// # Safety
/// Non-null arrays hold `n` entries.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn blocks<C: Num, D: Num>(
    counts: *const C,
    displs: *const D,
    n: usize,
    unit: &dyn Fn(usize) -> Result<usize, AbiError>,
    dunit: &dyn Fn(usize) -> Result<usize, AbiError>,
    counts_arg: &str,
    displs_arg: &str,
) -> Result<(Vec<usize>, Vec<usize>), AbiError> {
    for (null, arg) in [
        (counts.is_null(), counts_arg),
        (displs.is_null(), displs_arg),
    ] {
        if null && n > 0 {
            return Err(AbiError::new(
                Class::ARG,
                format!("`{arg}` is a null pointer"),
            ));
        }
    }
    let (mut c, mut d) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        // SAFETY: the caller's contract.
        let (ci, di): (C, i64) = unsafe { (*counts.add(i), (*displs.add(i)).into()) };
        let ci = count(ci, &format!("{counts_arg}[{i}]"))?;
        let di = usize::try_from(di).map_err(|_| {
            AbiError::new(
                Class::ARG,
                format!("`{displs_arg}[{i}]` is {di}: negative displacements are not supported"),
            )
        })?;
        let overflow = || {
            AbiError::new(
                Class::COUNT,
                format!("block {i} of `{counts_arg}`/`{displs_arg}` overflows the address space"),
            )
        };
        c.push(ci.checked_mul(unit(i)?).ok_or_else(overflow)?);
        d.push(di.checked_mul(dunit(i)?).ok_or_else(overflow)?);
    }
    Ok((c, d))
}

/// Counts from a C array of `n` entries.
///
/// # Safety
/// A non-null `counts` holds `n` entries.
unsafe fn counts<C: Num>(counts: *const C, n: usize, arg: &str) -> Result<Vec<usize>, AbiError> {
    if counts.is_null() && n > 0 {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    (0..n)
        // SAFETY: the caller's contract.
        .map(|i| count(unsafe { *counts.add(i) }, &format!("{arg}[{i}]")))
        .collect()
}

// ------------------------------------------------------------------ ops

const BUILTINS: [Op; 14] = [
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
const FIRST_ONE_SIDED_OP: usize = 12;

/// The built-in operations, to be lent out without a clone.
static BUILTIN_OP_TABLE: [Op; 14] = BUILTINS;

/// A predefined operation handle whose kernel applies to elements of
/// type `t` (the common case of a reduction, lent from a static table);
/// `None` for anything else, which [`op_for`] decodes and checks.
fn builtin_op_for(op: MPI_Op, t: &Ty) -> Option<&'static Op> {
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
fn user_op(u: UserOp, t: &Ty) -> Op {
    let (func, handle, extent) = (u.func, t.handle, t.unit.max(1));
    Op::user(u.commute, move |input: &[u8], inout: &mut [u8]| {
        let n = inout.len() / extent;
        let mut dt = handle;
        let (a, b) = (input.as_ptr().cast_mut().cast(), inout.as_mut_ptr().cast());
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
                // MPI_Op_create, called as MPI specifies: invec and
                // inoutvec hold `len` elements.
                unsafe { f(a, b, &mut len, &mut dt) };
            }
            UserFunc::Count(f) => {
                let mut len = n as MPI_Count;
                // SAFETY: as above (MPI_Op_create_c).
                unsafe { f(a, b, &mut len, &mut dt) };
            }
        }
        Ok(())
    })
}

/// Decodes operation argument `op` for elements of `t`, checking that a
/// built-in one is defined for the type.
fn op_for(op: MPI_Op, t: &Ty) -> Result<Op, AbiError> {
    match handles::op(op).map_err(|e| about("op", e))? {
        OpRef::Builtin(i) => {
            let name = BUILTIN_OPS[i];
            if matches!(name, "MPI_REPLACE" | "MPI_NO_OP") {
                return Err(AbiError::new(
                    Class::OP,
                    format!("{name} is only for one-sided accumulate operations"),
                ));
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
            if t.derived.as_ref().is_some_and(|d| !d.contiguous) {
                return Err(AbiError::new(
                    Class::OP,
                    format!(
                        "user operation {op:#010x} on datatype {:#010x}: user operations take \
                         predefined or contiguous derived datatypes only so far",
                        t.handle
                    ),
                ));
            }
            Ok(user_op(u, t))
        }
    }
}

/// What the reduction kernels see of `n` elements of `t` under `o`: the
/// elements themselves, or for a derived type under a built-in operation,
/// its basic elements (`(count multiplier, bytes per reduced element)`).
fn reduce_unit(t: &Ty, o: &Op) -> (usize, usize) {
    match (&t.derived, o) {
        (Some(_), Op::Builtin(_)) if t.per > 0 => (t.per, t.unit / t.per),
        _ => (1, t.unit),
    }
}

fn op_create(func: Option<UserFunc>, commute: c_int, op: *mut MPI_Op) -> Result<(), AbiError> {
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

/// `MPI_Op_create`.
///
/// # Safety
/// `op` is writable; `user_fn` is an `MPI_User_function`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Op_create(
    user_fn: Option<UserFn>,
    commute: c_int,
    op: *mut MPI_Op,
) -> c_int {
    guard("MPI_Op_create", ErrObj::None, || {
        op_create(user_fn.map(UserFunc::Int), commute, op)
    })
}

/// `MPI_Op_create_c`: the user function gets an `MPI_Count` length.
///
/// # Safety
/// `op` is writable; `user_fn` is an `MPI_User_function_c`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Op_create_c(
    user_fn: Option<UserFnC>,
    commute: c_int,
    op: *mut MPI_Op,
) -> c_int {
    guard("MPI_Op_create_c", ErrObj::None, || {
        op_create(user_fn.map(UserFunc::Count), commute, op)
    })
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
unsafe fn reduce_local(
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

/// `MPI_Reduce_local`: `inoutbuf = inbuf op inoutbuf`.
///
/// # Safety
/// The buffers hold `count` elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> c_int {
    guard("MPI_Reduce_local", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe { reduce_local(inbuf, inoutbuf, count, datatype, op) }
    })
}

/// `MPI_Reduce_local_c`.
///
/// # Safety
/// The buffers hold `count` elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Reduce_local_c(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> c_int {
    guard("MPI_Reduce_local_c", ErrObj::None, || {
        // SAFETY: the caller's contract.
        unsafe { reduce_local(inbuf, inoutbuf, count, datatype, op) }
    })
}

// ----------------------------------------------------- starting each one

/// What a decoded collective becomes: a [`Launch`] kept to start now or
/// at each `MPI_Start` (non-blocking and persistent calls), or [`Ran`],
/// the blocking call done at once without boxing its plan.
pub(crate) trait Sink: Sized {
    /// Takes the collective that `plan` plans on `comm`, with the
    /// temporaries `sg` of its derived datatypes.
    ///
    /// # Safety
    /// The program's buffers named when decoding are valid: for [`Ran`],
    /// until it returns; for a [`Launch`], whenever it starts and until
    /// the operation completes.
    unsafe fn launch(
        sg: &mut Stager,
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Result<Self, AbiError>;
}

impl Sink for Launch {
    unsafe fn launch(
        _sg: &mut Stager,
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Result<Launch, AbiError> {
        Ok(Launch::new(comm, plan))
    }
}

/// A blocking collective that has run: packed, run to completion on the
/// calling thread and unpacked as soon as its arguments were decoded.
pub(crate) struct Ran;

impl Sink for Ran {
    unsafe fn launch(
        sg: &mut Stager,
        comm: &Comm,
        plan: impl for<'c> Fn(&'c Comm) -> Result<Planned<'c>, oxmpi::Error> + 'static,
    ) -> Result<Ran, AbiError> {
        // SAFETY: the caller's contract.
        unsafe {
            sg.0.pack()?;
            plan(comm)?.run()?;
            sg.0.finish()?;
        }
        Ok(Ran)
    }
}

/// What decoding a collective's arguments gives.
pub type Started = Result<Launch, AbiError>;

/// # Safety
/// None needed; `unsafe` for the uniform macro.
unsafe fn ibarrier<L: Sink>(sg: &mut Stager, comm: MPI_Comm) -> Result<L, AbiError> {
    state::with_comm(comm, |c| L::launch(sg, c, |c| c.plan_barrier()))
}

unsafe fn ibcast<N: Num, L: Sink>(
    sg: &mut Stager,
    buffer_: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        root_of(c, root)?;
        let t = ty(datatype, "datatype")?;
        let n = bytes(count, &t, "count")?;
        let p = sg.buf(buffer_, n, &t, Dir::InOut, "buffer", "in a broadcast")?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffer).
            unsafe { c.plan_bcast(p, n, root) }
        })
    })
}

/// (sendbuf or `None` for `MPI_IN_PLACE`, recvbuf) of the reductions.
fn reduce_bufs(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    t: &Ty,
) -> Result<(Option<*const u8>, *mut u8), AbiError> {
    let why = "as the receive buffer of a reduction";
    if is_in_place(sendbuf) {
        let recv = sg.buf(recvbuf, n, t, Dir::InOut, "recvbuf", why)?;
        return Ok((None, recv));
    }
    let plain_recv = buffer(recvbuf, n, "recvbuf", why)?;
    let plain_send = buffer(sendbuf, n, "sendbuf", "")?;
    not_aliased(plain_send, plain_recv, n)?;
    if t.derived.is_none() {
        // A predefined type: the runtime moves the program's buffers.
        return Ok((Some(plain_send.cast_const()), plain_recv));
    }
    let recv = sg.buf(recvbuf, n, t, Dir::Out, "recvbuf", why)?;
    let send = sg.buf(sendbuf, n, t, Dir::In, "sendbuf", "")?;
    Ok((Some(send.cast_const()), recv))
}

#[allow(clippy::too_many_arguments)]
unsafe fn ireduce<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let at_root = root_of(c, root)?;
        let t = ty(datatype, "datatype")?;
        let n = bytes(count, &t, "count")?;
        let (send, recv) = if at_root {
            reduce_bufs(sg, sendbuf, recvbuf, n, &t)?
        } else {
            let why = "on a rank other than the root";
            let send = sg.buf(sendbuf, n, &t, Dir::In, "sendbuf", why)?;
            (Some(send.cast_const()), std::ptr::null_mut())
        };
        let o = op_for(op, &t)?;
        let e = elems(count, &t, &o)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_reduce(send, recv, e, &o, root) }
        })
    })
}

/// The elements a reduction of `count_` elements of `t` under `o` works on.
fn elems(count_: impl Num, t: &Ty, o: &Op) -> Result<Elems, AbiError> {
    let (per, size) = reduce_unit(t, o);
    Ok(Elems {
        count: count(count_, "count")? * per,
        size,
        ty: t.elem,
    })
}

/// The shared start of allreduce, scan and exscan.
#[allow(clippy::too_many_arguments)]
unsafe fn reduction<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    which: Reduction,
) -> Result<L, AbiError> {
    // The common case: no type or operation object made, nothing to stage.
    if let Some((c, t, o)) = predefined_reduction(comm, datatype, op) {
        let n = bytes(count, t, "count")?;
        let (send, recv) = reduce_bufs(sg, sendbuf, recvbuf, n, t)?;
        let e = elems(count, t, o)?;
        // SAFETY: forwarded contract.
        return unsafe { launch_reduction(sg, c, send, recv, e, o, which) };
    }
    state::with_comm(comm, |c| {
        let t = ty(datatype, "datatype")?;
        let n = bytes(count, &t, "count")?;
        let (send, recv) = reduce_bufs(sg, sendbuf, recvbuf, n, &t)?;
        let o = op_for(op, &t)?;
        let e = elems(count, &t, &o)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe {
                match which {
                    Reduction::All => c.plan_allreduce(send, recv, e, &o),
                    Reduction::Scan => c.plan_scan(send, recv, e, &o),
                    Reduction::Exscan => c.plan_exscan(send, recv, e, &o),
                }
            }
        })
    })
}

/// The common case of a reduction: a predefined communicator, a predefined
/// type and a built-in operation defined for it (lent from static tables).
#[inline(always)]
fn predefined_reduction(
    comm: MPI_Comm,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Option<(&'static Comm, &'static Ty, &'static Op)> {
    let c = state::predefined_comm(comm)?;
    let t = builtin_ty(datatype)?;
    Some((c, t, builtin_op_for(op, t)?))
}

/// [`reduction`]'s launch with an operation from the static table.
///
/// # Safety
/// As for [`Sink::launch`].
#[inline(always)]
unsafe fn launch_reduction<L: Sink>(
    sg: &mut Stager,
    c: &Comm,
    send: Option<*const u8>,
    recv: *mut u8,
    e: Elems,
    o: &'static Op,
    which: Reduction,
) -> Result<L, AbiError> {
    // SAFETY: the caller's contract.
    unsafe {
        L::launch(sg, c, move |c| match which {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            Reduction::All => c.plan_allreduce(send, recv, e, o),
            Reduction::Scan => c.plan_scan(send, recv, e, o),
            Reduction::Exscan => c.plan_exscan(send, recv, e, o),
        })
    }
}

#[derive(Clone, Copy)]
enum Reduction {
    All,
    Scan,
    Exscan,
}

unsafe fn iallreduce<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    // SAFETY: forwarded contract.
    unsafe {
        reduction(
            sg,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::All,
        )
    }
}

unsafe fn iscan<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    // SAFETY: forwarded contract.
    unsafe {
        reduction(
            sg,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::Scan,
        )
    }
}

unsafe fn iexscan<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    // SAFETY: forwarded contract.
    unsafe {
        reduction(
            sg,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::Exscan,
        )
    }
}

/// Checks that a rank's own block has the size the receive side expects.
fn same_block(send: usize, recv: usize, what: &str) -> Result<(), AbiError> {
    if send != recv {
        return Err(AbiError::new(
            Class::TRUNCATE,
            format!(
                "{what}: sendcount x sendtype is {send} bytes but recvcount x recvtype is {recv} \
                 bytes"
            ),
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn igather<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let at_root = root_of(c, root)?;
        let (send, block, recv) = if at_root {
            let rt = ty(recvtype, "recvtype")?;
            let block = bytes(recvcount, &rt, "recvcount")?;
            let all = block.checked_mul(c.size() as usize).ok_or_else(|| {
                AbiError::new(
                    Class::COUNT,
                    "`recvcount` x ranks overflows the address space",
                )
            })?;
            let why = "as the root's receive buffer";
            let (send, dir) = if is_in_place(sendbuf) {
                buffer(recvbuf, all, "recvbuf", why)?;
                (None, Dir::InOut)
            } else {
                let st = ty(sendtype, "sendtype")?;
                let n = bytes(sendcount, &st, "sendcount")?;
                buffer(recvbuf, all, "recvbuf", why)?;
                same_block(n, block, "the root's own block")?;
                let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", "")?;
                (Some(send.cast_const()), Dir::Out)
            };
            let recv = sg.buf(recvbuf, all, &rt, dir, "recvbuf", why)?;
            (send, block, recv)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            let why = "on a rank other than the root";
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", why)?;
            (Some(send.cast_const()), n, std::ptr::null_mut())
        };
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_gather(send, block, recv, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn igatherv<N: Num, C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let at_root = root_of(c, root)?;
        let in_place = at_root && is_in_place(sendbuf);
        let (send, send_bytes) = if in_place {
            (None, 0)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            let why = "on a rank other than the root";
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", why)?;
            (Some(send.cast_const()), n)
        };
        if !at_root {
            return L::launch(sg, c, move |c| {
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe {
                    c.plan_gatherv(send, send_bytes, std::ptr::null_mut(), Blocks::NONE, root)
                }
            });
        }
        let rt = ty(recvtype, "recvtype")?;
        let (unit, dunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (cs, ds) = unsafe {
            blocks(
                recvcounts,
                displs,
                c.size() as usize,
                &unit,
                &dunit,
                "recvcounts",
                "displs",
            )
        }?;
        let why = "as the root's receive buffer";
        buffer(recvbuf, Blocks::new(&cs, &ds).extent(), "recvbuf", why)?;
        if send.is_some() {
            same_block(send_bytes, cs[c.rank() as usize], "the root's own block")?;
        }
        let dir = if in_place { Dir::InOut } else { Dir::Out };
        let (recv, ds) = sg.blocks(recvbuf, &cs, &ds, &|_| &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_gatherv(send, send_bytes, recv, b, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn iscatter<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let at_root = root_of(c, root)?;
        let (send, block, recv) = if at_root {
            let st = ty(sendtype, "sendtype")?;
            let block = bytes(sendcount, &st, "sendcount")?;
            let all = block.checked_mul(c.size() as usize).ok_or_else(|| {
                AbiError::new(
                    Class::COUNT,
                    "`sendcount` x ranks overflows the address space",
                )
            })?;
            let why = "as the root's send buffer";
            buffer(sendbuf, all, "sendbuf", why)?;
            let recv = if is_in_place(recvbuf) {
                None
            } else {
                let rt = ty(recvtype, "recvtype")?;
                let n = bytes(recvcount, &rt, "recvcount")?;
                same_block(block, n, "the root's own block")?;
                Some(sg.buf(recvbuf, n, &rt, Dir::Out, "recvbuf", "")?)
            };
            let send = sg.buf(sendbuf, all, &st, Dir::In, "sendbuf", why)?;
            (send.cast_const(), block, recv)
        } else {
            let rt = ty(recvtype, "recvtype")?;
            let n = bytes(recvcount, &rt, "recvcount")?;
            let why = "on a rank other than the root";
            let recv = sg.buf(recvbuf, n, &rt, Dir::Out, "recvbuf", why)?;
            (std::ptr::null(), n, Some(recv))
        };
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_scatter(send, block, recv, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn iscatterv<N: Num, C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    displs: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let at_root = root_of(c, root)?;
        let in_place = at_root && is_in_place(recvbuf);
        let (recv, recv_bytes) = if in_place {
            (None, 0)
        } else {
            let rt = ty(recvtype, "recvtype")?;
            let n = bytes(recvcount, &rt, "recvcount")?;
            let why = "on a rank other than the root";
            (Some(sg.buf(recvbuf, n, &rt, Dir::Out, "recvbuf", why)?), n)
        };
        if !at_root {
            return L::launch(sg, c, move |c| {
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe { c.plan_scatterv(std::ptr::null(), Blocks::NONE, recv, recv_bytes, root) }
            });
        }
        let st = ty(sendtype, "sendtype")?;
        let (unit, dunit) = (|_| Ok(st.unit), |_| Ok(st.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (cs, ds) = unsafe {
            blocks(
                sendcounts,
                displs,
                c.size() as usize,
                &unit,
                &dunit,
                "sendcounts",
                "displs",
            )
        }?;
        let why = "as the root's send buffer";
        buffer(sendbuf, Blocks::new(&cs, &ds).extent(), "sendbuf", why)?;
        if recv.is_some() {
            same_block(cs[c.rank() as usize], recv_bytes, "the root's own block")?;
        }
        let (send, ds) = sg.blocks(sendbuf, &cs, &ds, &|_| &st, Dir::In, "sendbuf", why)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_scatterv(send.cast_const(), b, recv, recv_bytes, root) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn iallgather<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let rt = ty(recvtype, "recvtype")?;
        let block = bytes(recvcount, &rt, "recvcount")?;
        let all = block
            .checked_mul(c.size() as usize)
            .ok_or_else(|| AbiError::new(Class::COUNT, "`recvcount` x ranks overflows"))?;
        let why = "as the receive buffer";
        buffer(recvbuf, all, "recvbuf", why)?;
        let (send, dir) = if is_in_place(sendbuf) {
            (None, Dir::InOut)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            same_block(n, block, "this rank's block")?;
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), Dir::Out)
        };
        let recv = sg.buf(recvbuf, all, &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_allgather(send, block, recv) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn iallgatherv<N: Num, C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let rt = ty(recvtype, "recvtype")?;
        let (unit, dunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (cs, ds) = unsafe {
            blocks(
                recvcounts,
                displs,
                c.size() as usize,
                &unit,
                &dunit,
                "recvcounts",
                "displs",
            )
        }?;
        let why = "as the receive buffer";
        buffer(recvbuf, Blocks::new(&cs, &ds).extent(), "recvbuf", why)?;
        let (send, send_bytes, dir) = if is_in_place(sendbuf) {
            (None, cs[c.rank() as usize], Dir::InOut)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            same_block(n, cs[c.rank() as usize], "this rank's block")?;
            let send = sg.buf(sendbuf, n, &st, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), n, Dir::Out)
        };
        let (recv, ds) = sg.blocks(recvbuf, &cs, &ds, &|_| &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let b = Blocks::new(&cs, &ds);
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_allgatherv(send, send_bytes, recv, b) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ialltoall<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcount: N,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: N,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let rt = ty(recvtype, "recvtype")?;
        let block = bytes(recvcount, &rt, "recvcount")?;
        let all = block
            .checked_mul(c.size() as usize)
            .ok_or_else(|| AbiError::new(Class::COUNT, "`recvcount` x ranks overflows"))?;
        let why = "as the receive buffer";
        let r = buffer(recvbuf, all, "recvbuf", why)?;
        let (send, dir) = if is_in_place(sendbuf) {
            (None, Dir::InOut)
        } else {
            let st = ty(sendtype, "sendtype")?;
            let n = bytes(sendcount, &st, "sendcount")?;
            same_block(n, block, "each block")?;
            not_aliased(buffer(sendbuf, all, "sendbuf", "")?, r, all)?;
            let s = sg.buf(sendbuf, all, &st, Dir::In, "sendbuf", "")?;
            (Some(s.cast_const()), Dir::Out)
        };
        let recv = sg.buf(recvbuf, all, &rt, dir, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_alltoall(send, block, recv) }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn ialltoallv<C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let p = c.size() as usize;
        let rt = ty(recvtype, "recvtype")?;
        let (runit, rdunit) = (|_| Ok(rt.unit), |_| Ok(rt.extent));
        // SAFETY: MPI's contract: one entry per rank.
        let (rc, rd) = unsafe {
            blocks(
                recvcounts,
                rdispls,
                p,
                &runit,
                &rdunit,
                "recvcounts",
                "rdispls",
            )
        }?;
        let why = "as the receive buffer";
        let rext = Blocks::new(&rc, &rd).extent();
        let r = buffer(recvbuf, rext, "recvbuf", why)?;
        if is_in_place(sendbuf) {
            let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &|_| &rt, Dir::InOut, "recvbuf", why)?;
            return L::launch(sg, c, move |c| {
                let rb = Blocks::new(&rc, &rd);
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe { c.plan_alltoallv(None, Blocks::NONE, recv, rb) }
            });
        }
        let st = ty(sendtype, "sendtype")?;
        let (sunit, sdunit) = (|_| Ok(st.unit), |_| Ok(st.extent));
        // SAFETY: as above.
        let (sc, sd) = unsafe {
            blocks(
                sendcounts,
                sdispls,
                p,
                &sunit,
                &sdunit,
                "sendcounts",
                "sdispls",
            )
        }?;
        let sext = Blocks::new(&sc, &sd).extent();
        not_aliased(buffer(sendbuf, sext, "sendbuf", "")?, r, sext.min(rext))?;
        let (send, sd) = sg.blocks(sendbuf, &sc, &sd, &|_| &st, Dir::In, "sendbuf", "")?;
        let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &|_| &rt, Dir::Out, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_alltoallv(Some(send.cast_const()), sb, recv, rb) }
        })
    })
}

/// The datatypes of an alltoallw side, decoded.
///
/// # Safety
/// A non-null `types` holds `n` entries.
pub(crate) unsafe fn types(
    types: *const MPI_Datatype,
    n: usize,
    arg: &str,
) -> Result<Vec<Ty>, AbiError> {
    if types.is_null() && n > 0 {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    (0..n)
        // SAFETY: the caller's contract.
        .map(|i| ty(unsafe { *types.add(i) }, &format!("{arg}[{i}]")))
        .collect()
}

#[allow(clippy::too_many_arguments)]
unsafe fn ialltoallw<C: Num, D: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    sendcounts: *const C,
    sdispls: *const D,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    rdispls: *const D,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let p = c.size() as usize;
        let bytes_unit = |_| Ok(1);
        // SAFETY: MPI's contract: one entry per rank.
        let rts = unsafe { types(recvtypes, p, "recvtypes") }?;
        let runit = |i: usize| Ok(rts[i].unit);
        // SAFETY: as above.
        let (rc, rd) = unsafe {
            blocks(
                recvcounts,
                rdispls,
                p,
                &runit,
                &bytes_unit,
                "recvcounts",
                "rdispls",
            )
        }?;
        let why = "as the receive buffer";
        let rext = Blocks::new(&rc, &rd).extent();
        let r = buffer(recvbuf, rext, "recvbuf", why)?;
        let rty = |i: usize| &rts[i];
        if is_in_place(sendbuf) {
            let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &rty, Dir::InOut, "recvbuf", why)?;
            return L::launch(sg, c, move |c| {
                let rb = Blocks::new(&rc, &rd);
                // SAFETY: Launch::start's contract (MPI's, on the buffers).
                unsafe { c.plan_alltoallw(None, Blocks::NONE, recv, rb) }
            });
        }
        // SAFETY: as above.
        let sts = unsafe { types(sendtypes, p, "sendtypes") }?;
        let sunit = |i: usize| Ok(sts[i].unit);
        // SAFETY: as above.
        let (sc, sd) = unsafe {
            blocks(
                sendcounts,
                sdispls,
                p,
                &sunit,
                &bytes_unit,
                "sendcounts",
                "sdispls",
            )
        }?;
        let sext = Blocks::new(&sc, &sd).extent();
        not_aliased(buffer(sendbuf, sext, "sendbuf", "")?, r, sext.min(rext))?;
        let sty = |i: usize| &sts[i];
        let (send, sd) = sg.blocks(sendbuf, &sc, &sd, &sty, Dir::In, "sendbuf", "")?;
        let (recv, rd) = sg.blocks(recvbuf, &rc, &rd, &rty, Dir::Out, "recvbuf", why)?;
        L::launch(sg, c, move |c| {
            let (sb, rb) = (Blocks::new(&sc, &sd), Blocks::new(&rc, &rd));
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_alltoallw(Some(send.cast_const()), sb, recv, rb) }
        })
    })
}

unsafe fn ireduce_scatter<C: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const C,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let t = ty(datatype, "datatype")?;
        // SAFETY: MPI's contract: one entry per rank.
        let cs = unsafe { counts(recvcounts, c.size() as usize, "recvcounts") }?;
        let total: usize = cs.iter().sum();
        let total_bytes = total
            .checked_mul(t.unit)
            .ok_or_else(|| AbiError::new(Class::COUNT, "`recvcounts` sum overflows"))?;
        let mine = cs[c.rank() as usize] * t.unit;
        let why = "as the receive buffer";
        let (send, recv) = if is_in_place(sendbuf) {
            let recv = sg.buf(recvbuf, total_bytes, &t, Dir::InOut, "recvbuf", why)?;
            (None, recv)
        } else {
            let r = buffer(recvbuf, mine, "recvbuf", why)?;
            not_aliased(buffer(sendbuf, total_bytes, "sendbuf", "")?, r, mine)?;
            let recv = sg.buf(recvbuf, mine, &t, Dir::Out, "recvbuf", why)?;
            let send = sg.buf(sendbuf, total_bytes, &t, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), recv)
        };
        let o = op_for(op, &t)?;
        let (per, size) = reduce_unit(&t, &o);
        let cs: Vec<usize> = cs.iter().map(|&n| n * per).collect();
        let elem = t.elem;
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_reduce_scatter(send, recv, &cs, size, elem, &o) }
        })
    })
}

unsafe fn ireduce_scatter_block<N: Num, L: Sink>(
    sg: &mut Stager,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: N,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> Result<L, AbiError> {
    state::with_comm(comm, |c| {
        let t = ty(datatype, "datatype")?;
        let mine = bytes(recvcount, &t, "recvcount")?;
        let total = mine
            .checked_mul(c.size() as usize)
            .ok_or_else(|| AbiError::new(Class::COUNT, "`recvcount` x ranks overflows"))?;
        let why = "as the receive buffer";
        let (send, recv) = if is_in_place(sendbuf) {
            let recv = sg.buf(recvbuf, total, &t, Dir::InOut, "recvbuf", why)?;
            (None, recv)
        } else {
            let r = buffer(recvbuf, mine, "recvbuf", why)?;
            not_aliased(buffer(sendbuf, total, "sendbuf", "")?, r, mine)?;
            let recv = sg.buf(recvbuf, mine, &t, Dir::Out, "recvbuf", why)?;
            let send = sg.buf(sendbuf, total, &t, Dir::In, "sendbuf", "")?;
            (Some(send.cast_const()), recv)
        };
        let o = op_for(op, &t)?;
        let (per, size) = reduce_unit(&t, &o);
        let e = Elems {
            count: count(recvcount, "recvcount")? * per,
            size,
            ty: t.elem,
        };
        L::launch(sg, c, move |c| {
            // SAFETY: Launch::start's contract (MPI's, on the buffers).
            unsafe { c.plan_reduce_scatter_block(send, recv, e, &o) }
        })
    })
}

// ------------------------------------------------- the exported forms

/// The body of a blocking collective: decodes the arguments with
/// `decode`, which runs it ([`Ran`]: packs, runs, unpacks what arrived).
pub(crate) fn blocking(
    decode: impl FnOnce(&mut Stager) -> Result<Ran, AbiError>,
) -> Result<(), AbiError> {
    decode(&mut Stager::default()).map(|Ran| ())
}

/// The body of a non-blocking collective: decodes the arguments with
/// `decode`, starts, and hands back a request (keeping the temporaries
/// with it; its completion unpacks them).
///
/// # Safety
/// The buffers stay valid until the request completes; `request` is
/// writable.
pub(crate) unsafe fn nonblocking(
    comm: MPI_Comm,
    request: *mut MPI_Request,
    decode: impl FnOnce(&mut Stager) -> Started,
) -> Result<(), AbiError> {
    let out = out_ptr(request, "request")?;
    let mut sg = Stager::default();
    let l = decode(&mut sg)?;
    // SAFETY: the caller's contract.
    let req = unsafe { sg.start(&l) }?;
    let entry = ReqEntry::Active {
        req: Some(req),
        comm,
    };
    // SAFETY: checked non-null.
    unsafe { store_staged(out, entry, sg.into_stage()) };
    Ok(())
}

/// Defines, from a decode function `$start` taking X's parameters (see
/// [`Started`]): `oxabi_X` (start and wait), `oxabi_IX` (start, hand back
/// a request) and `oxabi_X_init` (a persistent request, see
/// [`super::persistent_coll`]). Used for the neighborhood collectives too.
///
/// With `fast = F`, the blocking function first offers its arguments to
/// `F` (same parameters after the MPI name), which handles the common case
/// or returns `None` (see `coll_fast.rs`).
macro_rules! collective {
    ($name:literal, $iname:literal, $initname:literal, $f:ident, $if:ident, $initf:ident,
     $start:path, $comm:ident, ($($p:ident: $t:ty),*), fast = $fast:path) => {
        $crate::api::coll::collective!(@emit $name, $iname, $initname, $f, $if, $initf, $start,
            $comm, ($($p: $t),*), {
                // SAFETY: the caller's contract, forwarded.
                if let Some(rc) = unsafe { $fast($name, $($p),*) } {
                    return rc;
                }
            });
    };
    ($name:literal, $iname:literal, $initname:literal, $f:ident, $if:ident, $initf:ident,
     $start:path, $comm:ident, ($($p:ident: $t:ty),*)) => {
        $crate::api::coll::collective!(@emit $name, $iname, $initname, $f, $if, $initf, $start,
            $comm, ($($p: $t),*), {});
    };
    (@emit $name:literal, $iname:literal, $initname:literal, $f:ident, $if:ident, $initf:ident,
     $start:path, $comm:ident, ($($p:ident: $t:ty),*), $fast_path:block) => {
        #[doc = concat!("`", $name, "`.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $f($($p: $t),*) -> ::std::ffi::c_int {
            $fast_path
            $crate::raise::guard($name, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                $crate::api::coll::blocking(|sg| unsafe { $start(sg, $($p),*) })
            })
        }

        #[doc = concat!("`", $iname, "`.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments;
        /// buffers stay valid until the request completes; `request` is
        /// writable.
        #[no_mangle]
        pub unsafe extern "C" fn $if(
            $($p: $t,)*
            request: *mut $crate::handles::MPI_Request,
        ) -> ::std::ffi::c_int {
            $crate::raise::guard($iname, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                unsafe {
                    $crate::api::coll::nonblocking($comm, request, |sg| $start(sg, $($p),*))
                }
            })
        }

        #[doc = concat!("`", $initname, "`: a persistent request that `MPI_Start` launches as `",
                        $iname, "` with these arguments.")]
        ///
        /// # Safety
        /// Buffers and arrays hold what MPI specifies for the arguments
        /// whenever the request is started, until it is freed; `request`
        /// is writable.
        #[no_mangle]
        pub unsafe extern "C" fn $initf(
            $($p: $t,)*
            info: $crate::handles::MPI_Info,
            request: *mut $crate::handles::MPI_Request,
        ) -> ::std::ffi::c_int {
            $crate::raise::guard($initname, $crate::errors::ErrObj::Comm($comm), || {
                // SAFETY: the caller's contract, forwarded.
                unsafe {
                    $crate::api::persistent_coll::init($comm, info, request, |sg| {
                        $start(sg, $($p),*)
                    })
                }
            })
        }
    };
}
pub(crate) use collective;

collective!("MPI_Barrier", "MPI_Ibarrier", "MPI_Barrier_init", oxabi_Barrier, oxabi_Ibarrier, oxabi_Barrier_init, ibarrier, comm,
    (comm: MPI_Comm));
collective!("MPI_Bcast", "MPI_Ibcast", "MPI_Bcast_init", oxabi_Bcast, oxabi_Ibcast, oxabi_Bcast_init, ibcast, comm,
    (buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Reduce", "MPI_Ireduce", "MPI_Reduce_init", oxabi_Reduce, oxabi_Ireduce, oxabi_Reduce_init, ireduce, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, root: c_int, comm: MPI_Comm));
collective!("MPI_Allreduce", "MPI_Iallreduce", "MPI_Allreduce_init", oxabi_Allreduce, oxabi_Iallreduce, oxabi_Allreduce_init, iallreduce,
    comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm), fast = fast::allreduce);
collective!("MPI_Scan", "MPI_Iscan", "MPI_Scan_init", oxabi_Scan, oxabi_Iscan, oxabi_Scan_init, iscan, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Exscan", "MPI_Iexscan", "MPI_Exscan_init", oxabi_Exscan, oxabi_Iexscan, oxabi_Exscan_init, iexscan, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Gather", "MPI_Igather", "MPI_Gather_init", oxabi_Gather, oxabi_Igather, oxabi_Gather_init, igather, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Gatherv", "MPI_Igatherv", "MPI_Gatherv_init", oxabi_Gatherv, oxabi_Igatherv, oxabi_Gatherv_init, igatherv, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int,
     comm: MPI_Comm));
collective!("MPI_Scatter", "MPI_Iscatter", "MPI_Scatter_init", oxabi_Scatter, oxabi_Iscatter, oxabi_Scatter_init, iscatter, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Scatterv", "MPI_Iscatterv", "MPI_Scatterv_init", oxabi_Scatterv, oxabi_Iscatterv, oxabi_Scatterv_init, iscatterv, comm,
    (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int,
     sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype,
     root: c_int, comm: MPI_Comm));
collective!("MPI_Allgather", "MPI_Iallgather", "MPI_Allgather_init", oxabi_Allgather, oxabi_Iallgather, oxabi_Allgather_init, iallgather,
    comm, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype,
     recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Allgatherv", "MPI_Iallgatherv", "MPI_Allgatherv_init", oxabi_Allgatherv, oxabi_Iallgatherv, oxabi_Allgatherv_init,
    iallgatherv, comm, (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype,
     recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int,
     recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoall", "MPI_Ialltoall", "MPI_Alltoall_init", oxabi_Alltoall, oxabi_Ialltoall, oxabi_Alltoall_init, ialltoall, comm,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void,
     recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallv", "MPI_Ialltoallv", "MPI_Alltoallv_init", oxabi_Alltoallv, oxabi_Ialltoallv, oxabi_Alltoallv_init, ialltoallv,
    comm, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int,
     sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int,
     rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw_init", oxabi_Alltoallw, oxabi_Ialltoallw, oxabi_Alltoallw_init, ialltoallw,
    comm, (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int,
     sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int,
     rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Reduce_scatter", "MPI_Ireduce_scatter", "MPI_Reduce_scatter_init", oxabi_Reduce_scatter, oxabi_Ireduce_scatter, oxabi_Reduce_scatter_init, ireduce_scatter, comm, (sendbuf: *const c_void,
     recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op,
     comm: MPI_Comm));
collective!("MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", "MPI_Reduce_scatter_block_init", oxabi_Reduce_scatter_block, oxabi_Ireduce_scatter_block, oxabi_Reduce_scatter_block_init, ireduce_scatter_block, comm,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype,
     op: MPI_Op, comm: MPI_Comm));

// The large-count (`_c`) forms: `MPI_Count` counts, `MPI_Aint` displacements.
collective!("MPI_Bcast_c", "MPI_Ibcast_c", "MPI_Bcast_init_c", oxabi_Bcast_c, oxabi_Ibcast_c, oxabi_Bcast_init_c, ibcast, comm, (buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Reduce_c", "MPI_Ireduce_c", "MPI_Reduce_init_c", oxabi_Reduce_c, oxabi_Ireduce_c, oxabi_Reduce_init_c, ireduce, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm));
collective!("MPI_Allreduce_c", "MPI_Iallreduce_c", "MPI_Allreduce_init_c", oxabi_Allreduce_c, oxabi_Iallreduce_c, oxabi_Allreduce_init_c, iallreduce, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm), fast = fast::allreduce);
collective!("MPI_Scan_c", "MPI_Iscan_c", "MPI_Scan_init_c", oxabi_Scan_c, oxabi_Iscan_c, oxabi_Scan_init_c, iscan, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Exscan_c", "MPI_Iexscan_c", "MPI_Exscan_init_c", oxabi_Exscan_c, oxabi_Iexscan_c, oxabi_Exscan_init_c, iexscan, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Gather_c", "MPI_Igather_c", "MPI_Gather_init_c", oxabi_Gather_c, oxabi_Igather_c, oxabi_Gather_init_c, igather, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Gatherv_c", "MPI_Igatherv_c", "MPI_Gatherv_init_c", oxabi_Gatherv_c, oxabi_Igatherv_c, oxabi_Gatherv_init_c, igatherv, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Scatter_c", "MPI_Iscatter_c", "MPI_Scatter_init_c", oxabi_Scatter_c, oxabi_Iscatter_c, oxabi_Scatter_init_c, iscatter, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Scatterv_c", "MPI_Iscatterv_c", "MPI_Scatterv_init_c", oxabi_Scatterv_c, oxabi_Iscatterv_c, oxabi_Scatterv_init_c, iscatterv, comm, (sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm));
collective!("MPI_Allgather_c", "MPI_Iallgather_c", "MPI_Allgather_init_c", oxabi_Allgather_c, oxabi_Iallgather_c, oxabi_Allgather_init_c, iallgather, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Allgatherv_c", "MPI_Iallgatherv_c", "MPI_Allgatherv_init_c", oxabi_Allgatherv_c, oxabi_Iallgatherv_c, oxabi_Allgatherv_init_c, iallgatherv, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoall_c", "MPI_Ialltoall_c", "MPI_Alltoall_init_c", oxabi_Alltoall_c, oxabi_Ialltoall_c, oxabi_Alltoall_init_c, ialltoall, comm, (sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallv_c", "MPI_Ialltoallv_c", "MPI_Alltoallv_init_c", oxabi_Alltoallv_c, oxabi_Ialltoallv_c, oxabi_Alltoallv_init_c, ialltoallv, comm, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Alltoallw_c", "MPI_Ialltoallw_c", "MPI_Alltoallw_init_c", oxabi_Alltoallw_c, oxabi_Ialltoallw_c, oxabi_Alltoallw_init_c, ialltoallw, comm, (sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm));
collective!("MPI_Reduce_scatter_c", "MPI_Ireduce_scatter_c", "MPI_Reduce_scatter_init_c", oxabi_Reduce_scatter_c, oxabi_Ireduce_scatter_c, oxabi_Reduce_scatter_init_c, ireduce_scatter, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));
collective!("MPI_Reduce_scatter_block_c", "MPI_Ireduce_scatter_block_c", "MPI_Reduce_scatter_block_init_c", oxabi_Reduce_scatter_block_c, oxabi_Ireduce_scatter_block_c, oxabi_Reduce_scatter_block_init_c, ireduce_scatter_block, comm, (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sided_operations_come_last_in_the_table() {
        assert_eq!(
            &BUILTIN_OPS[FIRST_ONE_SIDED_OP..],
            ["MPI_REPLACE", "MPI_NO_OP"]
        );
        assert_eq!(BUILTIN_OPS.len(), BUILTIN_OP_TABLE.len());
    }

    #[test]
    fn only_predefined_pairs_take_the_static_operation_path() {
        let float = builtin_ty(
            handles::BUILTIN_DATATYPES
                .iter()
                .find(|d| d.1 == "MPI_FLOAT")
                .unwrap()
                .0,
        )
        .expect("MPI_FLOAT is predefined");
        let sum = 0x5800_0001 + 2; // MPI_SUM
        assert!(builtin_op_for(sum, float).is_some());
        let replace = 0x5800_0001 + FIRST_ONE_SIDED_OP as MPI_Op;
        assert!(
            builtin_op_for(replace, float).is_none(),
            "MPI_REPLACE is one-sided only"
        );
        let band = 0x5800_0001 + 5; // MPI_BAND: not defined for floats
        assert!(builtin_op_for(band, float).is_none());
    }

    #[test]
    fn basic_datatypes_map_to_kernel_types() {
        let find = |name: &str| {
            handles::BUILTIN_DATATYPES
                .iter()
                .map(|d| d.0)
                .chain(handles::PAIR_DATATYPES.iter().map(|d| d.0))
                .find(|&h| handles::datatype_name(h) == Some(name))
                .unwrap()
        };
        for (name, elem, size) in [
            ("MPI_INT", ElemType::I32, 4),
            ("MPI_LONG", ElemType::I64, 8),
            ("MPI_FLOAT", ElemType::F32, 4),
            ("MPI_DOUBLE", ElemType::F64, 8),
            ("MPI_C_BOOL", ElemType::Bool, 1),
            ("MPI_BYTE", ElemType::Byte, 1),
            ("MPI_2INT", ElemType::TwoInt, 8),
            ("MPI_DOUBLE_INT", ElemType::DoubleInt, 16),
            ("MPI_SHORT_INT", ElemType::ShortInt, 8),
            ("MPI_UNSIGNED_LONG", ElemType::U64, 8),
        ] {
            let t = ty(find(name), "datatype").unwrap();
            assert_eq!((t.elem, t.extent, t.name), (Some(elem), size, name));
        }
        assert_eq!(elem_type("MPI_LONG_DOUBLE"), None);
        let e = ty(handles::DATATYPE_NULL, "sendtype").unwrap_err();
        assert_eq!(e.class, Class::TYPE);
        assert!(e.message.contains("`sendtype`"), "{}", e.message);
    }

    #[test]
    fn ops_must_fit_the_type() {
        let float = ty(0x4c00_040a, "datatype").unwrap();
        let band = 0x5800_0006;
        let e = op_for(band, &float).unwrap_err();
        assert_eq!(e.class, Class::OP);
        assert!(e.message.contains("MPI_BAND") && e.message.contains("MPI_FLOAT"));
        assert!(op_for(0x5800_0003, &float).is_ok());
        let int = ty(0x4c00_0405, "datatype").unwrap();
        assert!(op_for(band, &int).is_ok());
        assert_eq!(op_for(0x5800_000d, &int).unwrap_err().class, Class::OP);
        assert_eq!(op_for(handles::OP_NULL, &int).unwrap_err().class, Class::OP);
    }

    #[test]
    fn argument_checks_name_the_argument() {
        let e = count(-3, "recvcount").unwrap_err();
        assert_eq!(e.class, Class::COUNT);
        assert!(e.message.contains("`recvcount` is -3"));
        let in_place = IN_PLACE as *const c_void;
        let e = buffer(in_place, 4, "recvbuf", "here").unwrap_err();
        assert_eq!(e.class, Class::BUFFER);
        let e = buffer(std::ptr::null(), 4, "sendbuf", "").unwrap_err();
        assert!(e.message.contains("`sendbuf`"));
        let x = 5u8;
        assert_eq!(not_aliased(&x, &x, 1).unwrap_err().class, Class::BUFFER);
        let cs = [1, 2];
        let ds = [0, -1];
        let unit = |_| Ok(4);
        // SAFETY: two entries each.
        let e = unsafe { blocks(cs.as_ptr(), ds.as_ptr(), 2, &unit, &unit, "c", "d") };
        assert!(e.unwrap_err().message.contains("`d[1]` is -1"));
        let ds = [0, 1];
        // SAFETY: as above.
        let (c, d) =
            unsafe { blocks(cs.as_ptr(), ds.as_ptr(), 2, &unit, &unit, "c", "d") }.unwrap();
        assert_eq!((c, d), (vec![4, 8], vec![0, 4]));
    }
}
