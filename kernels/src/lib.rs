//! OxMPI reduction kernels: CPU reference kernels now, GPU kernels (NVRTC) later.
#![deny(missing_docs)]
