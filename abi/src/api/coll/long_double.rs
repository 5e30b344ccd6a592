//! Built-in reductions on C's `long double` types (`MPI_LONG_DOUBLE`,
//! `MPI_C_LONG_DOUBLE_COMPLEX`, `MPI_LONG_DOUBLE_INT`), which the kernels
//! cannot compute: Rust has no 80-bit extended type, so the arithmetic is
//! C's own, in `src/c/long_double.c`, run as the operation's function.

use std::ffi::{c_int, c_void};

use oxmpi::datatype::BasicType;
use oxmpi::ops::Op;

use crate::api::coll::datatype::Ty;
use crate::errors::{AbiError, Class};
use crate::handles::BUILTIN_OPS;

extern "C" {
    /// `inout[i] = input[i] op inout[i]` for `n` elements `stride` bytes
    /// apart; 0, or -1 for an undefined combination.
    fn oxabi_long_double_reduce(
        op: c_int,
        kind: c_int,
        stride: usize,
        input: *const c_void,
        inout: *mut c_void,
        n: usize,
    ) -> c_int;
    /// `sizeof(long double)`.
    fn oxabi_long_double_size() -> usize;
}

/// Element kinds of `long_double.c`.
const REAL: c_int = 0;
const COMPLEX: c_int = 1;
const PAIR: c_int = 2;

/// Bytes of a `long double` (the 80-bit x86-64 format, padded).
const LDBL: usize = 16;

/// The `long double` kind of `t` and the bytes of one element as the
/// operation sees it (a predefined pair type moves with its padding, a
/// packed one without); `None` for other types.
fn kind_of(t: &Ty) -> Option<(c_int, usize)> {
    match &t.derived {
        None => match t.name {
            "MPI_LONG_DOUBLE" => Some((REAL, LDBL)),
            "MPI_C_LONG_DOUBLE_COMPLEX" | "MPI_CXX_LONG_DOUBLE_COMPLEX" => {
                Some((COMPLEX, 2 * LDBL))
            }
            "MPI_LONG_DOUBLE_INT" => Some((PAIR, 2 * LDBL)),
            _ => None,
        },
        Some(d) => match d.dt.signature().uniform()? {
            BasicType::LongDouble => Some((REAL, LDBL)),
            BasicType::CLongDoubleComplex | BasicType::CxxLongDoubleComplex => {
                Some((COMPLEX, 2 * LDBL))
            }
            BasicType::LongDoubleInt => Some((PAIR, LDBL + 4)),
            _ => None,
        },
    }
}

/// Whether `t` is one of C's `long double` types (their arithmetic is [`op`]'s).
pub(crate) fn is_long_double(t: &Ty) -> bool {
    kind_of(t).is_some()
}

/// Whether built-in operation `i` (its index among the handles) is
/// defined for elements of `kind`.
fn defined(i: usize, kind: c_int) -> bool {
    match kind {
        REAL => i <= 3,              // MAX, MIN, SUM, PROD
        COMPLEX => i == 2 || i == 3, // SUM, PROD
        _ => i == 10 || i == 11,     // MINLOC, MAXLOC
    }
}

/// Built-in operation `i` on a `long double` type `t`: the operation, or
/// `MPI_ERR_OP` where MPI does not define it; `None` when `t` is not a
/// `long double` type.
pub(crate) fn op(i: usize, t: &Ty) -> Option<Result<Op, AbiError>> {
    let (kind, stride) = kind_of(t)?;
    let name = BUILTIN_OPS[i];
    if !defined(i, kind) {
        return Some(Err(AbiError::new(
            Class::OP,
            format!("{name} is not defined for datatype {}", t.name),
        )));
    }
    // SAFETY: a function of the library's own C code, without arguments.
    let size = unsafe { oxabi_long_double_size() };
    if size != LDBL {
        return Some(Err(AbiError::new(
            Class::OP,
            format!(
                "{name} on datatype {}: this platform's long double has {size} bytes where \
                 OxMPI's datatypes assume {LDBL}",
                t.name
            ),
        )));
    }
    let code = i as c_int;
    Some(Ok(Op::user(true, move |input: &[u8], inout: &mut [u8]| {
        let n = inout.len().min(input.len()) / stride;
        // SAFETY: both slices hold `n` elements of `stride` bytes; the C
        // code loads and stores through memcpy (no alignment needed).
        let rc = unsafe {
            oxabi_long_double_reduce(
                code,
                kind,
                stride,
                input.as_ptr().cast(),
                inout.as_mut_ptr().cast(),
                n,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(oxmpi::Error::InvalidOp {
                reason: format!("{name} is not defined for this long double type"),
            })
        }
    })))
}
