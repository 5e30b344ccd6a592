//! MPI_MINLOC and MPI_MAXLOC on the value-index pair structs.
//!
//! The better value wins; on equal values the pair with the lower index
//! wins (value and index together, so `-0` vs `+0` is decided by the index
//! too). A NaN value counts as better than any number for both operations
//! (it propagates, as with MPI_MIN / MPI_MAX); two NaNs tie. These rules
//! make the result independent of the reduction order.

use super::dispatch;
use crate::driver::Args;
use crate::elem::{DoubleInt, FloatInt, LongInt, Pod, ShortInt, TwoInt};
use crate::{ElemType, KernelError, Op};

/// A `{ value; int index; }` struct.
pub(crate) trait Pair: Pod {
    type V: PartialOrd + Copy;
    fn value(&self) -> Self::V;
    fn index(&self) -> i32;
}

macro_rules! pair {
    ($($t:ty => $v:ty),*) => {$(
        impl Pair for $t {
            type V = $v;
            #[inline(always)]
            fn value(&self) -> $v { self.v }
            #[inline(always)]
            fn index(&self) -> i32 { self.i }
        }
    )*};
}
pair!(FloatInt => f32, DoubleInt => f64, LongInt => std::os::raw::c_long, TwoInt => i32, ShortInt => i16);

/// `a` (input) or `b` (in-out), given whether `a`'s value is strictly better.
#[inline(always)]
fn pick<P: Pair>(a: P, b: P, a_better: bool) -> P {
    let (va, vb) = (a.value(), b.value());
    #[allow(clippy::eq_op)] // x != x is the NaN test, and is false for integers
    let (a_nan, b_nan) = (va != va, vb != vb);
    let tie = (va == vb) | (a_nan & b_nan);
    let a_wins = if tie {
        a.index() < b.index()
    } else {
        a_better | (a_nan & !b_nan)
    };
    if a_wins {
        a
    } else {
        b
    }
}

#[inline(always)]
fn minloc_pair<P: Pair>(a: P, b: P) -> P {
    pick(a, b, a.value() < b.value())
}

#[inline(always)]
fn maxloc_pair<P: Pair>(a: P, b: P) -> P {
    pick(a, b, a.value() > b.value())
}

/// MPI_MINLOC.
pub(crate) fn minloc(ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    dispatch!(Op::Minloc, ty, args, minloc_pair;
        FloatInt => FloatInt, DoubleInt => DoubleInt, LongInt => LongInt,
        TwoInt => TwoInt, ShortInt => ShortInt,
    );
    Ok(())
}

/// MPI_MAXLOC.
pub(crate) fn maxloc(ty: ElemType, args: Args<'_>) -> Result<(), KernelError> {
    dispatch!(Op::Maxloc, ty, args, maxloc_pair;
        FloatInt => FloatInt, DoubleInt => DoubleInt, LongInt => LongInt,
        TwoInt => TwoInt, ShortInt => ShortInt,
    );
    Ok(())
}
