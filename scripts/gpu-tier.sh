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
#                 --mpi4py (stage: add mpi4py's buffer and RMA tests, run
#                   there on CuPy device arrays when python3 has CuPy;
#                   MPI4PY_TIMEOUT: seconds per test module, default 300)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
dir=""
max_bytes=$((64 << 20))
out=""
with_mpi4py=0
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) mode=stage; dir="${2:?--stage needs a directory}"; shift 2 ;;
    --from) mode=run; dir="${2:?--from needs a directory}"; shift 2 ;;
    --max-bytes) max_bytes="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --mpi4py) with_mpi4py=1; shift ;;
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
  [ "$with_mpi4py" = 1 ] && stage_mpi4py
  echo "gpu-tier: staged in $dir"
}

# mpi4py's own tests (the sdist's test/) and its binary wheels for the
# Pythons a GPU machine may have. CuPy 14 refuses to fill an unsigned array
# with -1 (the tests' "unset" value); the tests' CuPy wrapper is patched to
# wrap it as NumPy does, or every unsigned case errs before calling MPI.
stage_mpi4py() {
  local tests
  tests="$(cd scripts && python3 -c 'import mpi4py_suite; print(mpi4py_suite.sdist_tests())')"
  rm -rf "$dir/mpi4py-test" && cp -r "$tests" "$dir/mpi4py-test"
  sed -i 's/                self.array.fill(arg)$/                self.array.fill(numpy.array(arg).astype(typecode)[()])/' \
    "$dir/mpi4py-test/arrayimpl.py"
  grep -q 'fill(numpy.array(arg)' "$dir/mpi4py-test/arrayimpl.py" || { echo "gpu-tier: arrayimpl patch failed" >&2; return 1; }
  mkdir -p "$dir/wheels"
  for v in 3.10 3.11 3.12 3.13; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$v" \
      --implementation cp --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
      --platform manylinux_2_17_x86_64 -d "$dir/wheels" "mpi4py==4.1.2"
  done
}

# mpi4py's buffer and RMA tests on CuPy arrays (device memory) at 1 and 2 ranks.
run_mpi4py() {
  [ -d "$dir/mpi4py-test" ] || return 0
  if ! python3 -c 'import cupy' 2>/dev/null; then
    echo "gpu-tier: mpi4py tests skipped: python3 has no CuPy"
    return 0
  fi
  local tag site failed=0
  tag="$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
  site="$dir/site-$tag"
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$dir"/wheels/mpi4py-*-"$tag"-*.whl
  local n m log rc
  for n in 1 2; do
    for m in test_p2p_buf test_cco_buf test_cco_nb_buf test_rma test_rma_nb; do
      log="$dir/mpi4py-$n-$m.log"
      rc=0
      PYTHONPATH="$site" MPI4PY_LIBMPI="$dir/lib/libmpi.so.12" PYTHONDONTWRITEBYTECODE=1 \
        "$dir/bin/oxrun" -n "$n" --timeout "${MPI4PY_TIMEOUT:-300}" \
        python3 "$dir/mpi4py-test/main.py" -v --cupy --no-array "$m" >"$log" 2>&1 || rc=$?
      if [ $rc -eq 0 ] && ! grep -q FAILED "$log"; then
        echo "gpu-tier: mpi4py $m (CuPy) at $n ranks: PASS ($(grep -m1 '^Ran' "$log"))"
      else
        echo "gpu-tier: mpi4py $m (CuPy) at $n ranks: FAIL (log: $log)"
        grep -E '^(ERROR|FAIL):|oxrun:' "$log" | head -n 5
        failed=1
      fi
    done
  done
  return $failed
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
  run_mpi4py || failed=1
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
