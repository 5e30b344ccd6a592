#!/bin/bash
# Issue 18's small figures side by side: benches/c/p2p.c (bandwidth: a 64-deep
# window; 8 B and 1 KiB kept) and benches/c/coll.c (8 B and 1 KiB: allreduce,
# bcast, allgather, alltoall, reduce_scatter_block, reduce, ibcast), built once
# with mpicc.mpich and run on MPICH (mpiexec.hydra) and on OxMPI (oxrun, the
# release libmpi.so as libmpich.so.12), and built with mpicc.openmpi for Open MPI;
# p2p at 2 ranks, collectives at 2 and 4 ranks, PASSES passes (default 3)
# alternating the three. Prints CSV: pass,impl,what,ranks,size,metric,value
# (impl ox / mpich / ompi). Build first: cargo build --release --workspace.
#
#   scripts/small_side_by_side.sh [PASSES] > out.csv
#   scripts/small_report.py out.csv   # table, ratios, geometric means, PNG
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rel=$root/target/release
passes=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/lib"
mpicc.mpich -O2 "$root/benches/c/p2p.c" -o "$work/p2p_mpich"
mpicc.openmpi -O2 "$root/benches/c/p2p.c" -o "$work/p2p_ompi"
mpicc.mpich -O2 "$root/benches/c/coll.c" -o "$work/coll_mpich"
mpicc.openmpi -O2 "$root/benches/c/coll.c" -o "$work/coll_ompi"
ln -s "$rel/libmpi.so" "$work/lib/libmpich.so.12"
export UCX_TLS=${UCX_TLS:-self,sm}
run() { # impl ranks program args...
  local impl=$1 n=$2 bind=""
  shift 2
  case $impl in
    ox) LD_LIBRARY_PATH=$work/lib timeout 120 "$rel/oxrun" -n "$n" "$@" ;;
    mpich)
      [ "$n" -le "$(nproc)" ] && bind="-bind-to core"
      # shellcheck disable=SC2086
      timeout 120 mpiexec.hydra $bind -n "$n" "$@" ;;
    ompi) timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$n" "$@" ;;
  esac 2>/dev/null | sed "s/^[a-z]*,/$impl,/"
}
for pass in $(seq "$passes"); do
  for impl in ox mpich ompi; do
    p=$work/p2p_mpich c=$work/coll_mpich
    [ "$impl" = ompi ] && { p=$work/p2p_ompi; c=$work/coll_ompi; }
    run "$impl" 2 "$p" bandwidth quick | grep -E ',(8|1024),bw_MBps_max' | sed "s/^/$pass,/"
    for n in 2 4; do
      run "$impl" "$n" "$c" quick allreduce bcast allgather alltoall reduce_scatter reduce ibcast sizes=8,1024 \
        | grep time_us | sed "s/^/$pass,/"
    done
  done
done
