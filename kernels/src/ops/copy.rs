//! MPI_REPLACE and MPI_NO_OP (the accumulate operations), on any type:
//! plain byte copies.

use crate::driver::Args;
use crate::Op;

/// `op` is Replace (result = input / `a`) or NoOp (result = in-out / `b`).
pub(crate) fn apply(op: Op, args: Args<'_>) {
    match (op, args) {
        (Op::Replace, Args::InPlace { inout, input }) => inout.copy_from_slice(input),
        (Op::Replace, Args::Out { out, a, .. }) => out.copy_from_slice(a),
        (_, Args::InPlace { .. }) => {}
        (_, Args::Out { out, b, .. }) => out.copy_from_slice(b),
    }
}
