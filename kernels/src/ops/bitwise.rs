//! MPI_BAND, MPI_BOR, MPI_BXOR on integers and MPI_BYTE. Bitwise operations
//! do not care about element boundaries, so every type runs the byte loop
//! (which LLVM vectorises to full-width vector operations, with no
//! alignment requirement).

use crate::driver::{run, Args};
use crate::{applicable, ElemType, KernelError, Op};

/// One of the three bitwise operations (`op` is Band, Bor or Bxor).
pub(crate) fn apply(op: Op, ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    applicable(op, ty)?;
    match op {
        Op::Band => run::<u8, _>(args, |a, b| a & b),
        Op::Bor => run::<u8, _>(args, |a, b| a | b),
        _ => run::<u8, _>(args, |a, b| a ^ b),
    }
    Ok(())
}
