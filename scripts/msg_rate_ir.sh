#!/bin/sh
# Instructions per message of small non-blocking messages (benches/c/msg_rate_ir.c),
# one rank under callgrind: what docs/ARCHITECTURE.md ("Small messages") reports.
#
#   scripts/msg_rate_ir.sh [oxmpi|mpich] RANK [WINDOWS [NAP_US]]
#
# RANK 0 is the sender, 1 the receiver (give it NAP_US, e.g. 10000, so that
# its count is the path's and not its waiting). OxMPI runs the release build
# (cargo build --release --workspace first) through an MPICH-built binary.
set -eu
lib=${1:?oxmpi or mpich}
rank=${2:?rank 0 or 1}
windows=${3:-2000}
nap=${4:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap '[ -n "${KEEP_CG:-}" ] && cp "$work/cg" "$KEEP_CG"; rm -rf "$work"' EXIT
mpicc.mpich -O2 -o "$work/rate" "$root/benches/c/msg_rate_ir.c"
cat > "$work/vg.sh" <<VG
#!/bin/sh
r=\${PMI_RANK:-0}
if [ "\$r" = "$rank" ]; then exec valgrind --tool=callgrind --callgrind-out-file=$work/cg "\$@"; fi
exec "\$@"
VG
chmod +x "$work/vg.sh"
case $lib in
  oxmpi)
    mkdir "$work/lib"
    ln -s "$root/target/release/libmpi.so" "$work/lib/libmpich.so.12"
    LD_LIBRARY_PATH="$work/lib" "$root/target/release/oxrun" -n 2 "$work/vg.sh" "$work/rate" 8 "$windows" "$nap" >/dev/null 2>&1 ;;
  mpich)
    mpiexec.mpich -n 2 "$work/vg.sh" "$work/rate" 8 "$windows" "$nap" >/dev/null 2>&1 ;;
  *) echo "oxmpi or mpich, not $lib" >&2; exit 2 ;;
esac
callgrind_annotate --inclusive=yes "$work/cg" 2>/dev/null \
  | grep -E '(^|[:/ ])P?MPI_(Isend|Irecv|Waitall) ' | grep -v '^ *\.' \
  | awk -v n=$((windows * 64)) '{gsub(",", "", $1); name=$0; sub(/ \[.*/, "", name); sub(/.*:/, "", name);
         if (!(name in s)) { s[name] = $1; t += $1 } }
       END { for (k in s) printf "%s %.0f\n", k, s[k] / n; printf "total %.0f Ir/message\n", t / n }'
# OxMPI's blocking part of a wait (the time the messages were not there yet).
callgrind_annotate --inclusive=yes "$work/cg" 2>/dev/null | grep 'requests::many::wait_taken \[' \
  | awk -v n=$((windows * 64)) '{gsub(",", "", $1); printf "of which waiting in the runtime: %.0f\n", $1 / n}'
