//! GPU support queries, under both peers' names: Open MPI's
//! `MPIX_Query_cuda_support()` (also declared in `mpi-ext.h`) and MPICH's
//! `MPIX_GPU_query_support()`, `MPIX_Query_hip_support()` and
//! `MPIX_Query_ze_support()` (rows of `functions.tsv`: `PMPIX_` strong,
//! `MPIX_` weak). The answer is honest: CUDA device buffers are supported
//! when the runtime loaded a driver with a device (`OXMPI_CUDA=auto|on`),
//! which it does in `MPI_Init`; HIP and Level Zero buffers never are.

use std::ffi::c_int;

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::raise::guard;

/// `MPIX_GPU_SUPPORT_CUDA`, `_ZE`, `_HIP` (mpi.h).
const GPU_SUPPORT_CUDA: c_int = 0;
const GPU_SUPPORT_ZE: c_int = 1;
const GPU_SUPPORT_HIP: c_int = 2;

/// Whether CUDA device buffers are accepted (the driver is loaded).
fn cuda_supported() -> bool {
    oxmpi::mem::cuda::active()
}

/// `MPIX_Query_cuda_support`: 1 when CUDA device buffers may be passed to
/// every data-moving call, else 0.
#[no_mangle]
pub extern "C" fn oxabi_X_Query_cuda_support() -> c_int {
    c_int::from(cuda_supported())
}

/// `MPIX_Query_hip_support`: 0 (OxMPI takes no HIP device buffers).
#[no_mangle]
pub extern "C" fn oxabi_X_Query_hip_support() -> c_int {
    0
}

/// `MPIX_Query_ze_support`: 0 (OxMPI takes no Level Zero device buffers).
#[no_mangle]
pub extern "C" fn oxabi_X_Query_ze_support() -> c_int {
    0
}

/// `MPIX_GPU_query_support`: `*is_supported` = whether buffers of GPU kind
/// `gpu_type` (`MPIX_GPU_SUPPORT_CUDA`, `_ZE`, `_HIP`) are supported.
///
/// # Safety
/// `is_supported` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_X_GPU_query_support(
    gpu_type: c_int,
    is_supported: *mut c_int,
) -> c_int {
    guard("MPIX_GPU_query_support", ErrObj::None, || {
        let out = out_ptr(is_supported, "is_supported")?;
        let yes = match gpu_type {
            GPU_SUPPORT_CUDA => cuda_supported(),
            GPU_SUPPORT_ZE | GPU_SUPPORT_HIP => false,
            other => {
                return Err(AbiError::new(
                    Class::ARG,
                    format!("gpu_type {other} is not MPIX_GPU_SUPPORT_CUDA, _ZE or _HIP"),
                ))
            }
        };
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out = c_int::from(yes) };
        Ok(())
    })
}
