#!/usr/bin/env bash
# Runs every test: formatting, lints, then the whole workspace's tests
# (unit tests, multi-process runs through oxrun, MPICH-built C programs,
# network-namespace multi-host runs, the GPU tier on the CUDA driver double,
# fuzz corpora).
#
# usage: scripts/test.sh            the full tier (what CI runs)
#        scripts/test.sh --quick    the inner loop, a few minutes: format, lints,
#                                   unit tests, loom model checks, single-host
#                                   multi-rank suites
set -euo pipefail
cd "$(dirname "$0")/.."

quick=no
case "${1:-}" in
  --quick) quick=yes ;;
  "") ;;
  *) echo "test.sh: unknown argument '$1' (usage: test.sh [--quick])" >&2; exit 2 ;;
esac

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# Integration tests in tests/ run oxrun and link C programs against
# libmpi.so: build every library and binary first.
cargo build --workspace
# Model checks of the lock-free primitives (runtime/sync: the shm ring and
# doorbell protocols, the engine lock) under loom, in a target directory of
# their own (`--cfg loom` would rebuild everything in target/).
model_checks() {
  RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p oxmpi-sync --release --test loom
}
if [ $quick = yes ]; then
  cargo test --workspace --lib --bins
  model_checks
  cargo test -p oxmpi-tests --test p2p_semantics --test comm_communicators --test gpu
  echo "test: quick tier passed (the full tier: scripts/test.sh)"
  exit 0
fi
# Jobs across hosts run on network-namespace test hosts, which need root.
if [ "$(id -u)" -ne 0 ]; then
  echo "test: not root: tests/tests/multihost.rs skips its jobs across hosts (namespaces need root)" >&2
fi
cargo test --workspace --no-fail-fast
model_checks
# GPU tier without a GPU: compile the CUDA kernels to PTX with NVRTC (setup.sh installs it).
nvrtc_lib="$PWD/target/nvrtc/nvidia/cuda_nvrtc/lib"
[ -d "$nvrtc_lib" ] || { echo "test: NVRTC missing at $nvrtc_lib: run scripts/setup.sh" >&2; exit 1; }
LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" cargo test -p oxmpi-kernels --test nvrtc -- --ignored
