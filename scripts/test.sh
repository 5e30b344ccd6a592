#!/usr/bin/env bash
# Runs every test: formatting, lints, then the whole workspace's tests
# (unit tests, multi-process runs through oxrun, MPICH-built C programs,
# network-namespace multi-host runs, fuzz corpora).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# Integration tests in tests/ run oxrun and link C programs against
# libmpi.so: build every library and binary first.
cargo build --workspace
# Jobs across hosts run on network-namespace test hosts, which need root.
if [ "$(id -u)" -ne 0 ]; then
  echo "test: not root: tests/tests/multihost.rs skips its jobs across hosts (namespaces need root)" >&2
fi
cargo test --workspace --no-fail-fast
# GPU tier without a GPU: compile the CUDA kernels to PTX with NVRTC (setup.sh installs it).
nvrtc_lib="$PWD/target/nvrtc/nvidia/cuda_nvrtc/lib"
[ -d "$nvrtc_lib" ] || { echo "test: NVRTC missing at $nvrtc_lib: run scripts/setup.sh" >&2; exit 1; }
LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" cargo test -p oxmpi-kernels --test nvrtc -- --ignored
