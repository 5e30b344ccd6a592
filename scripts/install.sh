#!/usr/bin/env bash
# Installs OxMPI under a prefix:
#   bin/      oxrun, mpirun and mpiexec (links to oxrun), mpicc, mpicxx
#   include/  mpi.h, mpio.h (the MPICH ABI), mpi-ext.h (GPU queries)
#   lib/      libmpi.so.12 (soname libmpi.so.12), libmpi.so, libmpich.so.12
#             and libmpich.so (links to it); pkgconfig/mpi.pc, mpich.pc
#
# usage: scripts/install.sh --prefix DIR [--debug] [--no-build]
#   --debug     install the dev-profile build (target/debug) instead of release
#   --no-build  do not run cargo; install what target/<profile> holds
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: install.sh --prefix DIR [--debug] [--no-build]"
prefix=""
profile=release
build=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --debug) profile=debug; shift ;;
    --no-build) build=no; shift ;;
    *) echo "install.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix DIR is required ($usage)" >&2; exit 2; }

if [ $build = yes ]; then
  if [ $profile = release ]; then
    cargo build --release -p oxmpi-launcher -p oxmpi-abi
  else
    cargo build -p oxmpi-launcher -p oxmpi-abi
  fi
fi
target="target/$profile"
for f in "$target/oxrun" "$target/libmpi.so"; do
  [ -f "$f" ] || { echo "install.sh: $f is missing (build it, or drop --no-build)" >&2; exit 1; }
done
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"

install -d "$prefix/bin" "$prefix/include" "$prefix/lib/pkgconfig"
install -m 0755 "$target/oxrun" "$prefix/bin/oxrun"
ln -sf oxrun "$prefix/bin/mpirun"
ln -sf oxrun "$prefix/bin/mpiexec"
install -m 0755 abi/wrappers/mpicc "$prefix/bin/mpicc"
install -m 0755 abi/wrappers/mpicc "$prefix/bin/mpicxx"

install -m 0644 abi/include/mpi.h abi/include/mpio.h abi/include/mpi-ext.h "$prefix/include/"

install -m 0755 "$target/libmpi.so" "$prefix/lib/libmpi.so.12"
ln -sf libmpi.so.12 "$prefix/lib/libmpi.so"
ln -sf libmpi.so.12 "$prefix/lib/libmpich.so.12"
ln -sf libmpi.so.12 "$prefix/lib/libmpich.so"

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
pc() { # name description version
  cat > "$prefix/lib/pkgconfig/$1.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: $1
Description: $2
Version: $3
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmpi
PC
}
pc mpi "OxMPI $version, an MPI library with the MPICH ABI (libmpi.so.12)" "$version"
# Version: the MPICH release whose ABI this is, for `mpich >= X` checks.
pc mpich "OxMPI $version, binary compatible with MPICH 4.0.2 (libmpi.so.12)" "4.0.2"

echo "installed OxMPI in $prefix: bin/{oxrun,mpirun,mpiexec,mpicc,mpicxx}, include/{mpi.h,mpio.h,mpi-ext.h}, lib/{libmpi.so.12,libmpi.so,libmpich.so.12,libmpich.so}, lib/pkgconfig/{mpi,mpich}.pc"
