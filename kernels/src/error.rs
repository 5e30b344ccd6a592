//! The one error type of this crate.
//!
//! Policy: every entry point validates its arguments first and returns a
//! [`KernelError`] naming what was wrong and with which value; outputs are
//! written only when validation succeeded. Nothing here panics on bad input.

use std::fmt;

use crate::{ElemType, Op};

/// Why a reduction was refused.
///
/// ```
/// use oxmpi_kernels::{applicable, ElemType, Op};
/// let err = applicable(Op::Band, ElemType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "MPI_BAND is not defined for MPI_FLOAT");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelError {
    /// The MPI standard does not define `op` on `ty` (e.g. `MPI_BAND` on `MPI_FLOAT`).
    NotApplicable {
        /// The operation asked for.
        op: Op,
        /// The element type it was asked on.
        ty: ElemType,
    },
    /// A buffer is not a whole number of elements.
    Length {
        /// The element type.
        ty: ElemType,
        /// The offending buffer length in bytes.
        len: usize,
    },
    /// The operands have different lengths.
    Mismatch {
        /// Length of the output (or in-out) buffer in bytes.
        out: usize,
        /// Length of the offending input buffer in bytes.
        input: usize,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KernelError::NotApplicable { op, ty } => {
                write!(f, "{} is not defined for {}", op.mpi_name(), ty.mpi_name())
            }
            KernelError::Length { ty, len } => write!(
                f,
                "a buffer of {len} bytes is not a whole number of {} elements ({} bytes each)",
                ty.mpi_name(),
                ty.size()
            ),
            KernelError::Mismatch { out, input } => write!(
                f,
                "reduction operands differ in length: output {out} bytes, input {input} bytes"
            ),
        }
    }
}

impl std::error::Error for KernelError {}
