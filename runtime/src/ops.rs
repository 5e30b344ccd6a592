//! Reduction operations: the built-in ones run the kernels of
//! `oxmpi-kernels`; user operations are closures (Rust) or C function
//! pointers (through the C front end), commutative or not.

use std::sync::Arc;

pub use oxmpi_kernels::{ElemType, Op as BuiltinOp};

use crate::buffer::Scalar;
use crate::error::Error;

/// `inout = input (op) inout`, as `MPI_Reduce_local` defines it.
pub type ReduceFn = dyn Fn(&[u8], &mut [u8]) -> Result<(), Error> + Send + Sync;

/// A reduction function as schedules hold it: a built-in one lives for the
/// whole process and is lent (copying it is copying a pointer: no
/// reference count touched per call, per step), a user one is shared.
#[derive(Clone)]
pub enum Reducer {
    /// A built-in operation on an element type: its host function, never
    /// freed (the built-in operations' table), and its identity, which
    /// picks the device kernel for device buffers.
    Builtin(&'static ReduceFn, BuiltinOp, ElemType),
    /// A function shared with its operation (user operations).
    Shared(Arc<ReduceFn>),
}

impl Reducer {
    /// A shared reducer of `f`.
    pub fn shared(
        f: impl Fn(&[u8], &mut [u8]) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Reducer {
        Reducer::Shared(Arc::new(f))
    }

    /// `inout = input op inout`, a built-in operation's kernel called
    /// straight (what its closure does, without the indirect call: the
    /// small collectives' reductions are a few elements).
    #[inline]
    pub fn apply(&self, input: &[u8], inout: &mut [u8]) -> Result<(), Error> {
        match self {
            Reducer::Builtin(_, op, ty) => {
                oxmpi_kernels::reduce_applicable(*op, *ty, inout, input).map_err(not_applicable)
            }
            Reducer::Shared(f) => f(input, inout),
        }
    }
}

impl std::ops::Deref for Reducer {
    type Target = ReduceFn;

    #[inline]
    fn deref(&self) -> &ReduceFn {
        match self {
            Reducer::Builtin(f, ..) => *f,
            Reducer::Shared(f) => &**f,
        }
    }
}

/// A reduction operation (`MPI_Op`).
///
/// ```
/// use oxmpi::ops::Op;
/// let mut acc = [1i32, 2, 3];
/// oxmpi::ops::reduce_local(&[10i32, 20, 30], &mut acc, &Op::SUM)?;
/// assert_eq!(acc, [11, 22, 33]);
/// let concat_max = Op::user_typed(true, |a: &[i64], b: &mut [i64]| {
///     b.iter_mut().zip(a).for_each(|(y, x)| *y = (*y).max(*x));
/// });
/// assert!(concat_max.is_commutative());
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Clone)]
pub enum Op {
    /// A predefined operation.
    Builtin(BuiltinOp),
    /// A user-defined operation: `f(input, inout)` computes `inout = input op inout`.
    User {
        /// The function.
        f: Arc<ReduceFn>,
        /// Whether the operation is commutative (algorithms may reorder operands).
        commutative: bool,
    },
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Builtin(op) => write!(f, "{op:?}"),
            Op::User { commutative, .. } => write!(f, "User {{ commutative: {commutative} }}"),
        }
    }
}

impl Op {
    /// `MPI_SUM`.
    ///
    /// ```
    /// use oxmpi::ops::{reduce_local, Op};
    /// let input = [0b1100u32, 5];
    /// let apply = |op: &Op| {
    ///     let mut acc = [0b1010u32, 3]; // acc = input op acc
    ///     reduce_local(&input, &mut acc, op).unwrap();
    ///     acc
    /// };
    /// assert_eq!(apply(&Op::SUM), [0b10110, 8]);
    /// assert_eq!(apply(&Op::PROD), [120, 15]);
    /// assert_eq!(apply(&Op::MIN), [0b1010, 3]);
    /// assert_eq!(apply(&Op::MAX), [0b1100, 5]);
    /// assert_eq!(apply(&Op::LAND), [1, 1]);
    /// assert_eq!(apply(&Op::LOR), [1, 1]);
    /// assert_eq!(apply(&Op::LXOR), [0, 0]);
    /// assert_eq!(apply(&Op::BAND), [0b1000, 1]);
    /// assert_eq!(apply(&Op::BOR), [0b1110, 7]);
    /// assert_eq!(apply(&Op::BXOR), [0b0110, 6]);
    /// assert_eq!(apply(&Op::REPLACE), [0b1100, 5]);
    /// assert_eq!(apply(&Op::NO_OP), [0b1010, 3]);
    /// ```
    pub const SUM: Op = Op::Builtin(BuiltinOp::Sum);
    /// `MPI_PROD`.
    ///
    /// See the example on [`Op::SUM`].
    pub const PROD: Op = Op::Builtin(BuiltinOp::Prod);
    /// `MPI_MIN`.
    ///
    /// See the example on [`Op::SUM`].
    pub const MIN: Op = Op::Builtin(BuiltinOp::Min);
    /// `MPI_MAX`.
    ///
    /// See the example on [`Op::SUM`].
    pub const MAX: Op = Op::Builtin(BuiltinOp::Max);
    /// `MPI_LAND`.
    ///
    /// See the example on [`Op::SUM`].
    pub const LAND: Op = Op::Builtin(BuiltinOp::Land);
    /// `MPI_LOR`.
    ///
    /// See the example on [`Op::SUM`].
    pub const LOR: Op = Op::Builtin(BuiltinOp::Lor);
    /// `MPI_LXOR`.
    ///
    /// See the example on [`Op::SUM`].
    pub const LXOR: Op = Op::Builtin(BuiltinOp::Lxor);
    /// `MPI_BAND`.
    ///
    /// See the example on [`Op::SUM`].
    pub const BAND: Op = Op::Builtin(BuiltinOp::Band);
    /// `MPI_BOR`.
    ///
    /// See the example on [`Op::SUM`].
    pub const BOR: Op = Op::Builtin(BuiltinOp::Bor);
    /// `MPI_BXOR`.
    ///
    /// See the example on [`Op::SUM`].
    pub const BXOR: Op = Op::Builtin(BuiltinOp::Bxor);
    /// `MPI_MINLOC`.
    ///
    /// ```
    /// use oxmpi::ops::{ElemType, Op};
    /// // `MPI_2INT` elements: (value, index) pairs of i32.
    /// let pairs = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
    /// let minloc = Op::MINLOC.reducer(Some(ElemType::TwoInt))?;
    /// let mut acc = pairs(&[7, 0, 2, 0]);
    /// minloc(&pairs(&[5, 1, 2, 1]), &mut acc)?;
    /// assert_eq!(acc, pairs(&[5, 1, 2, 0])); // smaller value wins; a tie keeps the lower index
    /// let maxloc = Op::MAXLOC.reducer(Some(ElemType::TwoInt))?;
    /// maxloc(&pairs(&[9, 3, 1, 3]), &mut acc)?;
    /// assert_eq!(acc, pairs(&[9, 3, 2, 0]));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub const MINLOC: Op = Op::Builtin(BuiltinOp::Minloc);
    /// `MPI_MAXLOC`.
    ///
    /// See the example on [`Op::MINLOC`].
    pub const MAXLOC: Op = Op::Builtin(BuiltinOp::Maxloc);
    /// `MPI_REPLACE`.
    ///
    /// See the example on [`Op::SUM`].
    pub const REPLACE: Op = Op::Builtin(BuiltinOp::Replace);
    /// `MPI_NO_OP`.
    ///
    /// See the example on [`Op::SUM`].
    pub const NO_OP: Op = Op::Builtin(BuiltinOp::NoOp);

    /// A user operation on raw bytes: `f(input, inout)`.
    ///
    /// ```
    /// use oxmpi::ops::{reduce_local, Op};
    /// // A bytewise maximum on raw bytes, whatever the element type.
    /// let bytemax = Op::user(true, |input, inout| {
    ///     inout.iter_mut().zip(input).for_each(|(y, x)| *y = (*y).max(*x));
    ///     Ok(())
    /// });
    /// let mut acc = [1u8, 9, 3];
    /// reduce_local(&[4u8, 2, 8], &mut acc, &bytemax)?;
    /// assert_eq!(acc, [4, 9, 8]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn user(
        commutative: bool,
        f: impl Fn(&[u8], &mut [u8]) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Op {
        Op::User {
            f: Arc::new(f),
            commutative,
        }
    }

    /// A user operation on typed elements: `f(input, inout)`.
    ///
    /// ```
    /// use oxmpi::ops::{reduce_local, Op};
    /// // Not commutative: inout = input * 10 + inout ("appends a digit").
    /// let append = Op::user_typed(false, |a: &[u64], b: &mut [u64]| {
    ///     b.iter_mut().zip(a).for_each(|(y, x)| *y += x * 10);
    /// });
    /// assert!(!append.is_commutative());
    /// let mut acc = [2u64];
    /// reduce_local(&[1u64], &mut acc, &append)?;
    /// assert_eq!(acc, [12]);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn user_typed<T: Scalar>(
        commutative: bool,
        f: impl Fn(&[T], &mut [T]) + Send + Sync + 'static,
    ) -> Op {
        Op::user(commutative, move |input: &[u8], inout: &mut [u8]| {
            let size = std::mem::size_of::<T>();
            let n = inout.len() / size.max(1);
            // Copies keep the closure free of alignment assumptions about the buffers.
            let a: Vec<T> = (0..n).map(|i| read_elem(input, i)).collect();
            let mut b: Vec<T> = (0..n).map(|i| read_elem(inout, i)).collect();
            f(&a, &mut b);
            for (i, v) in b.iter().enumerate() {
                write_elem(inout, i, *v);
            }
            Ok(())
        })
    }

    /// Whether operands may be combined in any order.
    ///
    /// See the examples on [`Op`] and [`Op::user_typed`].
    pub fn is_commutative(&self) -> bool {
        match self {
            Op::Builtin(_) => true,
            Op::User { commutative, .. } => *commutative,
        }
    }

    /// The reduction function for elements of type `ty` (`None`: a type the
    /// kernels do not know, allowed only for user operations).
    ///
    /// ```
    /// use oxmpi::ops::{ElemType, Op};
    /// let sum = Op::SUM.reducer(Some(ElemType::I32))?;
    /// let mut inout = 5i32.to_ne_bytes();
    /// sum(&7i32.to_ne_bytes(), &mut inout)?;
    /// assert_eq!(i32::from_ne_bytes(inout), 12);
    /// // Built-in operations need a type they are defined for.
    /// assert!(Op::BAND.reducer(Some(ElemType::F64)).is_err());
    /// assert!(Op::SUM.reducer(None).is_err());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub fn reducer(&self, ty: Option<ElemType>) -> Result<Reducer, Error> {
        match self {
            Op::User { f, .. } => Ok(Reducer::Shared(Arc::clone(f))),
            Op::Builtin(op) => {
                let op = *op;
                let Some(ty) = ty else {
                    return Err(untyped(op));
                };
                if let Err(e) = oxmpi_kernels::applicable(op, ty) {
                    return Err(not_applicable(e));
                }
                Ok(builtin_reducer(op, ty))
            }
        }
    }
}

#[cold]
fn untyped(op: BuiltinOp) -> Error {
    Error::InvalidOp {
        reason: format!("{} needs an element type it is defined for", op_name(op)),
    }
}

#[cold]
fn not_applicable(e: oxmpi_kernels::KernelError) -> Error {
    Error::InvalidOp {
        reason: e.to_string(),
    }
}

/// The reduction closure of a built-in op on a type, made once per pair
/// (collectives ask for it on every call) and never freed: a lock-free
/// table indexed by the pair, lending `'static` references.
fn builtin_reducer(op: BuiltinOp, ty: ElemType) -> Reducer {
    const OPS: usize = BuiltinOp::ALL.len();
    const TYPES: usize = ElemType::ALL.len();
    static TABLE: [std::sync::OnceLock<Box<ReduceFn>>; OPS * TYPES] =
        [const { std::sync::OnceLock::new() }; OPS * TYPES];
    let f = TABLE[op as usize * TYPES + ty as usize].get_or_init(|| {
        Box::new(move |input: &[u8], inout: &mut [u8]| {
            // Made only for a pair `Op::reducer` found applicable.
            oxmpi_kernels::reduce_applicable(op, ty, inout, input).map_err(not_applicable)
        })
    });
    Reducer::Builtin(&**f, op, ty)
}

fn op_name(op: BuiltinOp) -> String {
    format!("MPI_{}", format!("{op:?}").to_uppercase())
}

fn read_elem<T: Scalar>(bytes: &[u8], i: usize) -> T {
    let size = std::mem::size_of::<T>();
    // SAFETY: T is Scalar (any bit pattern valid); the range is inside `bytes`.
    unsafe { std::ptr::read_unaligned(bytes[i * size..(i + 1) * size].as_ptr().cast()) }
}

fn write_elem<T: Scalar>(bytes: &mut [u8], i: usize, v: T) {
    let size = std::mem::size_of::<T>();
    // SAFETY: as above.
    unsafe { std::ptr::write_unaligned(bytes[i * size..(i + 1) * size].as_mut_ptr().cast(), v) }
}

/// `inout = input op inout` on local buffers (`MPI_Reduce_local`).
///
/// ```
/// use oxmpi::ops::{reduce_local, Op};
/// let mut acc = [1.5f64, -2.0];
/// reduce_local(&[0.5, 4.0], &mut acc, &Op::MAX)?;
/// assert_eq!(acc, [1.5, 4.0]);
/// let err = reduce_local(&[1.0f32], &mut [2.0f32], &Op::BAND).unwrap_err();
/// assert_eq!(err.class(), oxmpi::ErrorClass::Op);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn reduce_local<T: Scalar>(input: &[T], inout: &mut [T], op: &Op) -> Result<(), Error> {
    if input.len() != inout.len() {
        return Err(Error::InvalidArgument {
            arg: "count",
            reason: format!("input has {} elements, inout {}", input.len(), inout.len()),
        });
    }
    let f = op.reducer(T::ELEM)?;
    let (ip, il) = crate::buffer::bytes_of(input);
    let (op_ptr, ol) = crate::buffer::bytes_of_mut(inout);
    // SAFETY: views of the two typed slices as bytes.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(ip, il),
            std::slice::from_raw_parts_mut(op_ptr, ol),
        )
    };
    f(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_pair_has_its_own_cached_reducer() {
        let addr = |r: &Reducer| -> *const () { std::ptr::from_ref::<ReduceFn>(&**r).cast() };
        let mut seen = Vec::new();
        for op in BuiltinOp::ALL {
            for ty in ElemType::ALL {
                let f = builtin_reducer(op, ty);
                assert!(matches!(f, Reducer::Builtin(..)), "built-ins are lent");
                assert_eq!(addr(&f), addr(&builtin_reducer(op, ty)));
                assert!(!seen.contains(&addr(&f)));
                seen.push(addr(&f));
            }
        }
    }
}
