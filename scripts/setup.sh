#!/usr/bin/env bash
# Installs what OxMPI needs on a fresh Debian 12 machine (run as root, or
# with sudo available). Safe to run again.
set -euo pipefail

packages=(
  build-essential pkg-config libclang-dev   # C shims, bindgen
  libfabric-dev libhwloc-dev                 # transports, topology
  libfabric-bin                              # fi_info, fi_pingpong (interhost benchmark's limit)
  mpich libmpich-dev                         # side-by-side runs, MPICH-built test programs
  openmpi-bin libopenmpi-dev                 # side-by-side benchmarks
  iproute2 procps                            # network-namespace test hosts, process checks
  slurmctld slurmd slurm-client munge        # srun --mpi=pmi2 test (tests/tests/slurm.rs)
  python3 python3-pip cmake                  # external-client tests (tests/tests/external_clients.rs)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# NVRTC (CUDA's run-time compiler) from PyPI, for the tier of tests that
# compiles the GPU kernels to PTX; no GPU or driver is needed for that.
nvrtc_dir="$(cd "$(dirname "$0")/.." && pwd)/target/nvrtc"
if [ ! -d "$nvrtc_dir/nvidia/cuda_nvrtc/lib" ]; then
  echo "setup: installing nvidia-cuda-nvrtc-cu12 into $nvrtc_dir"
  python3 -m pip install --quiet --disable-pip-version-check --target "$nvrtc_dir" nvidia-cuda-nvrtc-cu12 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages --target "$nvrtc_dir" nvidia-cuda-nvrtc-cu12
fi

command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup) first" >&2; exit 1; }
echo "setup: ok ($(cargo --version); $(mpiexec.hydra --version 2>/dev/null | head -1 | tr -s ' '))"
