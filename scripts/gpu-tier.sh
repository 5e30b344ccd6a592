#!/usr/bin/env bash
# The GPU tier on a machine with a CUDA GPU and driver: device buffers
# through the C ABI (tests/c_abi/gpu_{buffers,calls,colls,rma}.c at 1-4 ranks,
# every result checked) and the device benchmarks (benches/c/gpu_bench.c, nccl-tests
# style, at 2 and 4 ranks). Without a GPU, the same programs run on the
# CUDA driver test double in `cargo test -p oxmpi-tests --test gpu`.
#
# usage: scripts/gpu-tier.sh                build here (release) and run
#        scripts/gpu-tier.sh --stage DIR    build, and put in DIR what a run needs
#        scripts/gpu-tier.sh --from DIR     run from a staged DIR (no cargo there)
#        options: --max-bytes N (benchmark sizes up to N, default 64 MiB)
#                 --out FILE (benchmark lines also go to FILE)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
dir=""
max_bytes=$((64 << 20))
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) mode=stage; dir="${2:?--stage needs a directory}"; shift 2 ;;
    --from) mode=run; dir="${2:?--from needs a directory}"; shift 2 ;;
    --max-bytes) max_bytes="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    *) echo "gpu-tier: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$dir" ] || dir="target/gpu-tier"

stage() {
  # Without the hwloc feature: the staged binaries need no libhwloc on the
  # GPU machine (hardware facts come from sysfs there). libfabric is never
  # linked (dlopen), so nothing else is to leave out.
  cargo build --release -p oxmpi-launcher -p oxmpi-abi --no-default-features
  scripts/install.sh --prefix "$dir" --no-build
  dir="$(cd "$dir" && pwd)"
  for prog in gpu_buffers gpu_calls gpu_colls gpu_rma; do
    "$dir/bin/mpicc" -O2 -Wall -I tests/c_abi -o "$dir/bin/$prog" "tests/c_abi/$prog.c"
  done
  "$dir/bin/mpicc" -O2 -Wall -Wextra -Werror -o "$dir/bin/gpu_bench" benches/c/gpu_bench.c
  echo "gpu-tier: staged in $dir"
}

# A folder with libnvrtc.so for cudarc, from whatever CUDA install is there.
nvrtc_dir() {
  local found
  found="$(ls /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda*/lib64/libnvrtc.so* \
    /usr/lib/x86_64-linux-gnu/libnvrtc.so* \
    "$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null)"/lib/python3*/site-packages/nvidia/*/lib/libnvrtc.so* \
    2>/dev/null | grep -v builtins | head -n 1 || true)"
  [ -n "$found" ] || return 0
  mkdir -p "$dir/nvrtc"
  ln -sf "$found" "$dir/nvrtc/libnvrtc.so"
  echo "$dir/nvrtc:$(dirname "$found")"
}

run() {
  dir="$(cd "$dir" && pwd)"
  local extra
  extra="$(nvrtc_dir)"
  export LD_LIBRARY_PATH="$dir/lib${extra:+:$extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu-tier: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  "$dir/bin/oxrun" --info | grep -E '^(cuda|nvrtc)' || true
  local failed=0
  for prog in gpu_buffers gpu_calls gpu_colls gpu_rma; do
    for n in 1 2 3 4; do
      if "$dir/bin/oxrun" -n "$n" --timeout 300 "$dir/bin/$prog" | grep -q "^PASS $prog"; then
        echo "gpu-tier: $prog at $n ranks: PASS"
      else
        echo "gpu-tier: $prog at $n ranks: FAIL"
        failed=1
      fi
    done
  done
  for n in 2 4; do
    "$dir/bin/oxrun" -n "$n" --timeout 300 "$dir/bin/gpu_bench" "$max_bytes" | tee -a "${out:-/dev/null}"
  done
  return $failed
}

case $mode in
  stage) stage ;;
  run) run ;;
  all) stage && run ;;
esac
