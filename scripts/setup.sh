#!/usr/bin/env bash
# Installs what OxMPI needs on a fresh Debian 12 machine (run as root, or
# with sudo available). Safe to run again.
set -euo pipefail

packages=(
  build-essential pkg-config libclang-dev   # C shims, bindgen
  libfabric-dev libhwloc-dev                 # transports, topology
  mpich libmpich-dev                         # side-by-side runs, MPICH-built test programs
  openmpi-bin libopenmpi-dev                 # side-by-side benchmarks
  iproute2 procps                            # network-namespace test hosts, process checks
  slurmctld slurmd slurm-client munge        # srun --mpi=pmi2 test (tests/tests/slurm.rs)
  python3 python3-pip
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

command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup) first" >&2; exit 1; }
echo "setup: ok ($(cargo --version); $(mpiexec.hydra --version 2>/dev/null | head -1 | tr -s ' '))"
