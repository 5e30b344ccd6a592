//! MPI_LAND, MPI_LOR, MPI_LXOR on integers and C `_Bool`: nonzero is true,
//! results are 0 or 1 of the operand type. `_Bool` runs as `u8`.

use crate::driver::{run, Args};
use crate::elem::Pod;
use crate::{ElemType, KernelError, Op};

/// Truth values of one integer type.
trait Logical: Pod + PartialEq {
    const ONE: Self;
}

macro_rules! logical {
    ($($t:ty),*) => {$( impl Logical for $t { const ONE: Self = 1; } )*};
}
logical!(i8, u8, i16, u16, i32, u32, i64, u64);

#[inline(always)]
fn of<T: Logical>(b: bool) -> T {
    if b {
        T::ONE
    } else {
        T::ZERO
    }
}

#[inline(always)]
fn land<T: Logical>(a: T, b: T) -> T {
    of((a != T::ZERO) & (b != T::ZERO))
}

#[inline(always)]
fn lor<T: Logical>(a: T, b: T) -> T {
    of((a != T::ZERO) | (b != T::ZERO))
}

#[inline(always)]
fn lxor<T: Logical>(a: T, b: T) -> T {
    of((a != T::ZERO) ^ (b != T::ZERO))
}

fn typed<T: Logical>(op: Op, args: Args<'_>) {
    match op {
        Op::Land => run::<T, _>(args, land),
        Op::Lor => run::<T, _>(args, lor),
        _ => run::<T, _>(args, lxor),
    }
}

/// One of the three logical operations (`op` is Land, Lor or Lxor).
pub(crate) fn apply(op: Op, ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    match ty {
        ElemType::I8 => typed::<i8>(op, args),
        ElemType::U8 | ElemType::Bool => typed::<u8>(op, args),
        ElemType::I16 => typed::<i16>(op, args),
        ElemType::U16 => typed::<u16>(op, args),
        ElemType::I32 => typed::<i32>(op, args),
        ElemType::U32 => typed::<u32>(op, args),
        ElemType::I64 => typed::<i64>(op, args),
        ElemType::U64 => typed::<u64>(op, args),
        _ => return Err(KernelError::NotApplicable { op, ty }),
    }
    Ok(())
}
