//! One file per operation family; `apply` routes an [`Op`] to its family.
//!
//! Each family maps an [`ElemType`] to the Rust element type and scalar
//! function the generic driver runs. The scalar functions take
//! `(input, inout)` in MPI's argument order.

use crate::driver::Args;
use crate::{ElemType, KernelError, Op};

mod arith;
mod bitwise;
mod copy;
mod loc;
mod logical;
mod minmax;

/// `run::<T>(args, f)` for each listed type, NotApplicable for the rest.
macro_rules! dispatch {
    ($op:expr, $ty:expr, $args:expr, $f:path; $($variant:ident => $t:ty),* $(,)?) => {
        match $ty {
            $(ElemType::$variant => $crate::driver::run::<$t, _>($args, $f),)*
            #[allow(unreachable_patterns)]
            _ => return Err(KernelError::NotApplicable { op: $op, ty: $ty }),
        }
    };
}
pub(crate) use dispatch;

/// Runs `op` on `ty` over validated operands.
pub(crate) fn apply(op: Op, ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    match op {
        Op::Sum => arith::sum(ty, args),
        Op::Prod => arith::prod(ty, args),
        Op::Min => minmax::min(ty, args),
        Op::Max => minmax::max(ty, args),
        Op::Land | Op::Lor | Op::Lxor => logical::apply(op, ty, args),
        Op::Band | Op::Bor | Op::Bxor => bitwise::apply(op, ty, args),
        Op::Minloc => loc::minloc(ty, args),
        Op::Maxloc => loc::maxloc(ty, args),
        Op::Replace | Op::NoOp => {
            copy::apply(op, args);
            Ok(())
        }
    }
}
