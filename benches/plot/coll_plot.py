#!/usr/bin/env python3
"""Plot the collective comparison written by the `coll` runner.

    python3 benches/plot/coll_plot.py benches/results/coll.csv benches/results/coll.png

Reads `impl,coll,ranks,size,metric,value` lines (plus `status` lines per
job and `algo` lines, which are skipped) and draws one log-log panel per
collective (rows) and rank count (columns): time per call against size
for OxMPI, MPICH and Open MPI. A job that did not finish is marked in the
legend. Exits with status 3 when matplotlib is missing.
"""

import csv
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.stderr.write(
        "coll_plot: matplotlib is missing; install it with `pip install matplotlib`\n"
    )
    sys.exit(3)

IMPLS = [("oxmpi", "OxMPI", "tab:red"), ("mpich", "MPICH", "tab:blue"),
         ("openmpi", "Open MPI", "tab:green")]
COLLS = ["allreduce", "bcast", "allgather", "alltoall", "reduce_scatter"]


def load(path):
    """(impl, coll, ranks) -> {size: time_us}; (impl, ranks) -> status."""
    times = defaultdict(dict)
    status = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            metric = row["metric"]
            if metric == "status":
                status[(row["impl"], int(row["ranks"]))] = row["value"]
            elif metric == "time_us":
                key = (row["impl"], row["coll"], int(row["ranks"]))
                times[key][int(row["size"])] = float(row["value"])
    return times, status


def size_axis(ax):
    ticks = [8, 512, 32 << 10, 2 << 20, 64 << 20]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ticks)
    ax.set_xticklabels(["8 B", "512 B", "32 KiB", "2 MiB", "64 MiB"])
    ax.grid(True, which="major", alpha=0.3)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: coll_plot.py RESULTS.csv OUT.png")
    times, status = load(sys.argv[1])
    ranks = sorted({r for (_, _, r) in times} | {r for (_, r) in status})
    if not ranks:
        sys.exit("coll_plot: no figures in " + sys.argv[1])
    fig, axes = plt.subplots(len(COLLS), len(ranks), squeeze=False,
                             figsize=(4.2 * len(ranks), 3.0 * len(COLLS)))
    for i, coll in enumerate(COLLS):
        for j, r in enumerate(ranks):
            ax = axes[i][j]
            size_axis(ax)
            ax.set_title(f"{coll}, {r} ranks", fontsize=10)
            if j == 0:
                ax.set_ylabel("time per call (µs)")
            if i == len(COLLS) - 1:
                ax.set_xlabel("size (per-rank buffer, nccl-tests)")
            for imp, name, color in IMPLS:
                pts = sorted(times.get((imp, coll, r), {}).items())
                st = status.get((imp, r), "ok")
                label = name if st == "ok" else f"{name} ({'did not finish' if st == 'dnf' else st})"
                if not pts:
                    if st != "ok":
                        ax.plot([], [], color=color, label=label)
                    continue
                xs, ys = zip(*pts)
                ax.plot(xs, ys, "-", color=color, marker=".", markersize=4, label=label)
            ax.legend(fontsize=7)
    fig.suptitle("Collectives: time per call, OxMPI vs MPICH vs Open MPI (lower is better)")
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
