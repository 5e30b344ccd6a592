//! Memory kinds: host, CUDA device (probed with dlopen, never a panic).

pub mod cuda_probe;
