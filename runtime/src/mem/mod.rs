//! Memory kinds: host or CUDA device. [`cuda_probe`] finds the driver and
//! NVRTC with dlopen (never a panic); [`cuda`] is the device path itself:
//! which buffers are device memory, copies between the kinds, device
//! scratch and reductions run as device kernels.

pub mod cuda;
pub mod cuda_probe;

pub use cuda::MemKind;
