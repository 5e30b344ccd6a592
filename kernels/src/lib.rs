//! OxMPI reduction kernels.
//!
//! The CPU tier is generic Rust: one zip loop per operation, monomorphised
//! per element type, that LLVM vectorises ([`reduce`], [`reduce3`]). The GPU
//! tier is CUDA C source compiled at run time with NVRTC by the runtime
//! ([`gpu`]); this crate has no CUDA dependency.
//!
//! Buffers are byte slices in native endianness and C layout; they need not
//! be aligned. Which operation applies to which type follows the MPI
//! standard ([`applicable`]); semantics that the standard leaves open (NaN
//! in MIN / MAX, ties in MINLOC / MAXLOC, integer overflow) are documented
//! on [`Op`] and chosen so that every reduction order gives the same result.
//!
//! ```
//! use oxmpi_kernels::{reduce, ElemType, Op};
//! let mut acc: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
//! let inc: Vec<u8> = [0.5f64, -4.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
//! reduce(Op::Sum, ElemType::F64, &mut acc, &inc).unwrap();
//! assert_eq!(f64::from_ne_bytes(acc[8..].try_into().unwrap()), -2.0);
//! ```
#![deny(missing_docs)]

mod driver;
mod elem;
mod error;
pub mod gpu;
pub mod half;
mod op;
mod ops;
mod types;

#[cfg(test)]
mod tests;

pub use error::KernelError;
pub use op::{applicable, Op};
pub use types::{ElemType, Group};

use driver::Args;

/// `inout = input (op) inout`, elementwise over `ty` elements.
///
/// Both slices must have the same length, a multiple of `ty.size()`; they
/// may have any alignment. On error nothing is written.
///
/// ```
/// use oxmpi_kernels::{reduce, ElemType, Op};
/// let mut acc = [0b1100u8, 7];
/// reduce(Op::Bxor, ElemType::U8, &mut acc, &[0b1010, 7]).unwrap();
/// assert_eq!(acc, [0b0110, 0]);
/// assert!(reduce(Op::Sum, ElemType::I32, &mut [0u8; 6], &[0u8; 6]).is_err());
/// ```
pub fn reduce(op: Op, ty: ElemType, inout: &mut [u8], input: &[u8]) -> Result<(), KernelError> {
    applicable(op, ty)?;
    reduce_applicable(op, ty, inout, input)
}

/// [`reduce`] for a pair the caller has found [`applicable`] once (and
/// keeps, say, in a table of reducers): only the lengths are checked, so
/// a call on a few elements spends its instructions on them.
///
/// ```
/// use oxmpi_kernels::{applicable, reduce_applicable, ElemType, Op};
/// applicable(Op::Sum, ElemType::F32).unwrap();
/// let mut acc = 1.5f32.to_ne_bytes();
/// reduce_applicable(Op::Sum, ElemType::F32, &mut acc, &2.0f32.to_ne_bytes()).unwrap();
/// assert_eq!(f32::from_ne_bytes(acc), 3.5);
/// ```
pub fn reduce_applicable(
    op: Op,
    ty: ElemType,
    inout: &mut [u8],
    input: &[u8],
) -> Result<(), KernelError> {
    check_lengths(ty, inout.len(), &[input.len()])?;
    ops::apply(op, ty, Args::InPlace { inout, input })
}

/// `out = a (op) b`, elementwise, leaving both inputs untouched.
///
/// Same result as copying `b` to `out` and then `reduce(op, ty, out, a)`
/// (so `Replace` gives `a` and `NoOp` gives `b`), in one pass. All three
/// slices must have the same length, a multiple of `ty.size()`.
///
/// ```
/// use oxmpi_kernels::{reduce3, ElemType, Op};
/// let (a, b) = (5i32.to_ne_bytes(), (-7i32).to_ne_bytes());
/// let mut out = [0u8; 4];
/// reduce3(Op::Min, ElemType::I32, &mut out, &a, &b).unwrap();
/// assert_eq!(i32::from_ne_bytes(out), -7);
/// ```
pub fn reduce3(
    op: Op,
    ty: ElemType,
    out: &mut [u8],
    a: &[u8],
    b: &[u8],
) -> Result<(), KernelError> {
    check(op, ty, out.len(), &[a.len(), b.len()])?;
    ops::apply(op, ty, Args::Out { out, a, b })
}

/// Validates the op / type pair and the operand lengths.
fn check(op: Op, ty: ElemType, out: usize, inputs: &[usize]) -> Result<(), KernelError> {
    applicable(op, ty)?;
    check_lengths(ty, out, inputs)
}

/// Validates the operand lengths.
#[inline]
fn check_lengths(ty: ElemType, out: usize, inputs: &[usize]) -> Result<(), KernelError> {
    if out % ty.size() != 0 {
        return Err(KernelError::Length { ty, len: out });
    }
    match inputs.iter().find(|&&len| len != out) {
        Some(&input) => Err(KernelError::Mismatch { out, input }),
        None => Ok(()),
    }
}
