#!/usr/bin/env bash
# Builds OxMPI and runs real SPMD programs on several local ranks through oxrun:
# an MPICH-compiled C program (point-to-point and collectives, self-checking)
# and OxMPI's own Rust PMI example.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --workspace --bins --examples
oxrun=target/release/oxrun
mkdir -p target/demo
mpicc.mpich -O2 -o target/demo/collectives tests/c/collectives.c
echo "== oxrun -n 4 -l collectives (C, built with mpicc.mpich)"
"$oxrun" -n 4 -l target/demo/collectives
echo "== oxrun -n 4 pmi_hello (Rust, OxMPI's PMI client)"
"$oxrun" -n 4 target/release/examples/pmi_hello
echo "== oxrun --info"
"$oxrun" --info
