#!/usr/bin/env bash
# Builds OxMPI and runs real SPMD programs on several local ranks through oxrun:
# an MPICH-compiled C program (point-to-point and collectives, self-checking)
# and OxMPI's own Rust PMI example.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --workspace --lib --bins --examples
oxrun=target/release/oxrun
mkdir -p target/demo
echo "== oxrun -n 4 ring (Rust, OxMPI's runtime over shared memory)"
"$oxrun" -n 4 target/release/examples/ring
echo "== collectives.c built with OxMPI's mpicc, on OxMPI's libmpi.so.12"
scripts/install.sh --prefix "$PWD/target/demo/prefix" --no-build >/dev/null
target/demo/prefix/bin/mpicc -O2 -o target/demo/collectives_oxmpi tests/c/collectives.c
"$oxrun" -n 4 -l target/demo/collectives_oxmpi
echo "== the same source built with mpicc.mpich, run unmodified under oxrun"
mpicc.mpich -O2 -o target/demo/collectives_mpich tests/c/collectives.c
"$oxrun" -n 4 -l target/demo/collectives_mpich
echo "== oxrun --info"
"$oxrun" --info
