//! The built-in reduction operations and which types they apply to.

use crate::{ElemType, Group, KernelError};

/// A built-in MPI reduction operation.
///
/// All of them are commutative and associative in exact arithmetic; floating
/// point sums and products are not associative, so the collective layer
/// fixes an order when bit-identical results are wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `MPI_SUM`; integers wrap (two's complement), floats are IEEE sums.
    Sum,
    /// `MPI_PROD`; integers wrap.
    Prod,
    /// `MPI_MIN`; on floats a NaN operand gives NaN and `min(-0, +0) = -0`.
    Min,
    /// `MPI_MAX`; on floats a NaN operand gives NaN and `max(-0, +0) = +0`.
    Max,
    /// `MPI_LAND`: result is 0 or 1.
    Land,
    /// `MPI_LOR`: result is 0 or 1.
    Lor,
    /// `MPI_LXOR`: result is 0 or 1.
    Lxor,
    /// `MPI_BAND`.
    Band,
    /// `MPI_BOR`.
    Bor,
    /// `MPI_BXOR`.
    Bxor,
    /// `MPI_MINLOC`: smaller value wins; on equal values the lower index wins.
    Minloc,
    /// `MPI_MAXLOC`: larger value wins; on equal values the lower index wins.
    Maxloc,
    /// `MPI_REPLACE` (accumulate): the result is the input.
    Replace,
    /// `MPI_NO_OP` (accumulate): the result is the in-out operand unchanged.
    NoOp,
}

impl Op {
    /// Every built-in operation, in declaration order.
    pub const ALL: [Op; 14] = [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::Land,
        Op::Lor,
        Op::Lxor,
        Op::Band,
        Op::Bor,
        Op::Bxor,
        Op::Minloc,
        Op::Maxloc,
        Op::Replace,
        Op::NoOp,
    ];

    /// The MPI name, used in error messages.
    pub const fn mpi_name(self) -> &'static str {
        match self {
            Op::Sum => "MPI_SUM",
            Op::Prod => "MPI_PROD",
            Op::Min => "MPI_MIN",
            Op::Max => "MPI_MAX",
            Op::Land => "MPI_LAND",
            Op::Lor => "MPI_LOR",
            Op::Lxor => "MPI_LXOR",
            Op::Band => "MPI_BAND",
            Op::Bor => "MPI_BOR",
            Op::Bxor => "MPI_BXOR",
            Op::Minloc => "MPI_MINLOC",
            Op::Maxloc => "MPI_MAXLOC",
            Op::Replace => "MPI_REPLACE",
            Op::NoOp => "MPI_NO_OP",
        }
    }

    /// Whether the operation is commutative (every built-in one is).
    pub const fn is_commutative(self) -> bool {
        true
    }

    /// The type groups this operation is defined on (MPI 4.1 section 6.9.2;
    /// f16 / bf16 count as floating point).
    pub const fn groups(self) -> &'static [Group] {
        use Group::*;
        match self {
            Op::Sum | Op::Prod => &[Integer, Float, Complex],
            Op::Min | Op::Max => &[Integer, Float],
            Op::Land | Op::Lor | Op::Lxor => &[Integer, Logical],
            Op::Band | Op::Bor | Op::Bxor => &[Integer, Byte],
            Op::Minloc | Op::Maxloc => &[Pair],
            Op::Replace | Op::NoOp => &[Integer, Float, Complex, Logical, Byte, Pair],
        }
    }
}

/// Whether `op` is defined on `ty`, with an error naming both when it is not.
///
/// ```
/// use oxmpi_kernels::{applicable, ElemType, Op};
/// assert!(applicable(Op::Sum, ElemType::ComplexF64).is_ok());
/// assert!(applicable(Op::Max, ElemType::ComplexF64).is_err());
/// assert_eq!(
///     applicable(Op::Minloc, ElemType::F64).unwrap_err().to_string(),
///     "MPI_MINLOC is not defined for MPI_DOUBLE"
/// );
/// ```
#[inline]
pub fn applicable(op: Op, ty: ElemType) -> Result<(), KernelError> {
    // A bit per group, worked out at compile time: every reduction call
    // asks (a search of the group list costs ~25 instructions).
    const MASKS: [u8; Op::ALL.len()] = {
        let mut masks = [0u8; Op::ALL.len()];
        let mut i = 0;
        while i < Op::ALL.len() {
            let groups = Op::ALL[i].groups();
            let mut g = 0;
            while g < groups.len() {
                masks[Op::ALL[i] as usize] |= 1 << groups[g] as u8;
                g += 1;
            }
            i += 1;
        }
        masks
    };
    if MASKS[op as usize] & (1 << ty.group() as u8) != 0 {
        Ok(())
    } else {
        Err(KernelError::NotApplicable { op, ty })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applicable_is_membership_in_the_op_groups() {
        for op in Op::ALL {
            for ty in ElemType::ALL {
                assert_eq!(
                    applicable(op, ty).is_ok(),
                    op.groups().contains(&ty.group()),
                    "{op:?} on {ty:?}"
                );
            }
        }
    }
}
