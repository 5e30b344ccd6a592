#!/usr/bin/env bash
# Installs OxMPI under a prefix: bin/oxrun plus bin/mpirun and bin/mpiexec
# links to it.   usage: scripts/install.sh --prefix DIR
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    *) echo "install.sh: unknown argument '$1' (usage: install.sh --prefix DIR)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }

cargo build --release -p oxmpi-launcher
install -d "$prefix/bin"
install -m 0755 target/release/oxrun "$prefix/bin/oxrun"
ln -sf oxrun "$prefix/bin/mpirun"
ln -sf oxrun "$prefix/bin/mpiexec"
echo "installed oxrun, mpirun, mpiexec in $prefix/bin"
