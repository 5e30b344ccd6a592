//! A test double for the NVIDIA CUDA driver API (`libcuda.so.1`), for
//! machines without a GPU.
//!
//! Built as a cdylib, put on the library path as `libcuda.so.1` and
//! `libcuda.so` ([`install_dir`]), it answers the driver API the way the real
//! driver does where OxMPI and cudarc can tell: device memory is not
//! accessible to the CPU (a dereference faults), pointer attributes and
//! error codes match, kernels from OxMPI's `kernels/cuda/reduce.cu` run
//! (compiled for the host), and IPC handles work between processes of one
//! host. See `README.md` for the contract and what it does not do.
//!
//! ```no_run
//! use std::path::Path;
//! let lib = oxmpi_cuda_double::find_artifact().expect("built with cargo build -p oxmpi-cuda-double");
//! oxmpi_cuda_double::install_dir(&lib, Path::new("/tmp/fake-cuda")).unwrap();
//! // Then run a program with LD_LIBRARY_PATH=/tmp/fake-cuda.
//! ```
#![deny(missing_docs)]
// The driver API's names are its C names.
#![allow(non_snake_case)]

mod guard;

pub mod abi;
mod alloc;
mod arena;
mod context;
mod copy;
pub mod device;
mod ipc;
mod kernels;
mod launch;
mod memory;
pub mod module;
mod pointer;
pub mod proc;
mod state;
mod stream;

pub use alloc::*;
pub use context::*;
pub use copy::*;
pub use device::*;
pub use ipc::*;
pub use launch::*;
pub use module::*;
pub use pointer::*;
pub use proc::*;
pub use stream::*;

use std::path::{Path, PathBuf};

/// The file cargo builds (`target/<profile>/liboxmpi_cuda_double.so`).
pub const ARTIFACT_NAME: &str = "liboxmpi_cuda_double.so";

/// Makes `dir` a driver directory: `dir/libcuda.so.1` and `dir/libcuda.so`
/// become symlinks to `artifact` (replaced atomically if present), so that
/// a process started with `LD_LIBRARY_PATH=dir` loads the double.
pub fn install_dir(artifact: &Path, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let target = artifact.canonicalize()?;
    for name in ["libcuda.so.1", "libcuda.so"] {
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&target, &tmp)?;
        std::fs::rename(&tmp, dir.join(name))?;
    }
    Ok(())
}

/// The built library: `$CUDA_DOUBLE_LIB` if set, else [`ARTIFACT_NAME`]
/// in `deps/` next to the running executable, next to it, or one directory
/// up. `deps/` comes first: cargo refreshes the copy there whenever it
/// builds this crate (also as a dependency), the one in `target/<profile>/`
/// only on `cargo build -p oxmpi-cuda-double`.
pub fn find_artifact() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CUDA_DOUBLE_LIB") {
        return Some(path.into());
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        Some(dir.join("deps")),
        Some(dir.to_path_buf()),
        dir.parent().map(Path::to_path_buf),
    ]
    .into_iter()
    .flatten()
    .map(|d| d.join(ARTIFACT_NAME))
    .find(|p| p.is_file())
}
