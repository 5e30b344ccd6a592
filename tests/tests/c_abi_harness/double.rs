//! The CUDA driver test double (`tests/cuda-double`) and NVRTC on a
//! program's library path, shared by gpu.rs and multihost.rs.

use std::path::PathBuf;

use super::{repo_root, target_profile_dir};

/// `target/<profile>/cuda-double/` holding `libcuda.so.1` and `libcuda.so`,
/// links to the double that cargo built (`deps/` first: cargo refreshes
/// that copy on every build of the crate, the one beside it only on
/// `cargo build`).
pub fn double_dir() -> PathBuf {
    let profile = target_profile_dir();
    let name = "liboxmpi_cuda_double.so";
    let lib = [profile.join("deps").join(name), profile.join(name)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} is missing under {}: run `cargo build --workspace` (same profile as the tests) first",
                profile.display()
            )
        });
    let dir = profile.join("cuda-double");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["libcuda.so.1", "libcuda.so"] {
        let link = dir.join(name);
        if std::fs::read_link(&link).ok().as_deref() != Some(lib.as_path()) {
            let tmp = dir.join(format!(".{name}.{}", std::process::id()));
            std::os::unix::fs::symlink(&lib, &tmp).unwrap();
            std::fs::rename(&tmp, &link).unwrap();
        }
    }
    dir
}

/// NVRTC's folder, installed by `scripts/setup.sh`.
pub fn nvrtc_dir() -> PathBuf {
    let dir = repo_root().join("target/nvrtc/nvidia/cuda_nvrtc/lib");
    assert!(
        dir.is_dir(),
        "NVRTC is missing at {}: run scripts/setup.sh",
        dir.display()
    );
    dir
}
