//! GPU tier: CUDA C source for the device reduction kernels, compiled at run
//! time with NVRTC by the runtime (this crate has no CUDA dependency).
//!
//! Conventions the runtime relies on:
//! - every kernel is `extern "C"` (unmangled) and named
//!   `oxmpi_<op>_<type>` (in place: `inout[i] = in[i] op inout[i]`) or
//!   `oxmpi_<op>3_<type>` (`out[i] = a[i] op b[i]`), see [`kernel_name`];
//! - parameters are `(T* inout, const T* in, unsigned long long n)` and
//!   `(T* out, const T* a, const T* b, unsigned long long n)`, `n` counted
//!   in elements; the loop is grid-stride, so any grid works (e.g. 256
//!   threads per block, `min(ceil(n / 256), 32 * SMs)` blocks);
//! - the source includes no headers, so it compiles with no include path;
//!   compile with NVRTC's defaults (no `-ftz=true`, no `--use_fast_math`)
//!   so results are bit-identical to the CPU kernels except for NaN
//!   payloads (GPUs return a canonical NaN): integers wrap, float
//!   MIN / MAX propagate NaN and order signed zeros, f16 / bf16 compute in
//!   f32 and round to nearest even with the same code as [`crate::half`].
//!
//! ```
//! use oxmpi_kernels::gpu::{kernel_name, Form};
//! use oxmpi_kernels::{ElemType, Op};
//! assert_eq!(kernel_name(Op::Sum, ElemType::Bf16, Form::InPlace).as_deref(), Some("oxmpi_sum_bf16"));
//! assert_eq!(kernel_name(Op::Max, ElemType::F64, Form::Out).as_deref(), Some("oxmpi_max3_f64"));
//! assert_eq!(kernel_name(Op::Land, ElemType::I32, Form::InPlace), None);
//! ```

use crate::{ElemType, Op};

/// The CUDA C source of every kernel, for NVRTC.
pub const SOURCE: &str = include_str!("../cuda/reduce.cu");

/// File name to give NVRTC for the source (shows up in its diagnostics).
pub const SOURCE_NAME: &str = "oxmpi_reduce.cu";

/// Operations that have device kernels.
pub const OPS: [Op; 4] = [Op::Sum, Op::Prod, Op::Min, Op::Max];

/// Element types that have device kernels.
pub const TYPES: [ElemType; 6] = [
    ElemType::F32,
    ElemType::F64,
    ElemType::I32,
    ElemType::I64,
    ElemType::F16,
    ElemType::Bf16,
];

/// Which operands a kernel takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// `(T* inout, const T* in, n)`: `inout = in op inout`.
    InPlace,
    /// `(T* out, const T* a, const T* b, n)`: `out = a op b`.
    Out,
}

/// The kernel computing `op` on `ty` in `form`, or `None` if there is no
/// device kernel for the pair (the caller then stages through the host).
pub fn kernel_name(op: Op, ty: ElemType, form: Form) -> Option<String> {
    let op_tag = match op {
        Op::Sum => "sum",
        Op::Prod => "prod",
        Op::Min => "min",
        Op::Max => "max",
        _ => return None,
    };
    let ty_tag = match ty {
        ElemType::F32 => "f32",
        ElemType::F64 => "f64",
        ElemType::I32 => "i32",
        ElemType::I64 => "i64",
        ElemType::F16 => "f16",
        ElemType::Bf16 => "bf16",
        _ => return None,
    };
    let arity = match form {
        Form::InPlace => "",
        Form::Out => "3",
    };
    Some(format!("oxmpi_{op_tag}{arity}_{ty_tag}"))
}

/// Every kernel name in the source: [`OPS`] x [`TYPES`] x both forms.
pub fn kernel_names() -> Vec<String> {
    let mut names = Vec::with_capacity(OPS.len() * TYPES.len() * 2);
    for op in OPS {
        for ty in TYPES {
            for form in [Form::InPlace, Form::Out] {
                names.extend(kernel_name(op, ty, form));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_defines_every_listed_kernel() {
        let names = kernel_names();
        assert_eq!(names.len(), 48);
        for name in &names {
            // Each name is passed literally to the defining macro, once.
            let needle = format!("{name},");
            assert_eq!(
                SOURCE.matches(&needle).count(),
                1,
                "{name} missing from reduce.cu"
            );
        }
        // And the source defines nothing the Rust side does not list.
        let defined = SOURCE
            .lines()
            .filter(|l| l.starts_with("OX_KERNELS("))
            .count();
        assert_eq!(defined * 2, names.len());
    }

    #[test]
    fn device_ops_are_applicable_on_the_host() {
        for op in OPS {
            for ty in TYPES {
                assert!(crate::applicable(op, ty).is_ok());
            }
        }
    }
}
