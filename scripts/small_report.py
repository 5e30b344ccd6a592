#!/usr/bin/env python3
"""Issue 18's report from scripts/small_side_by_side.sh's CSV.

Per figure the best of the passes (smallest time; for the message rate the
largest bandwidth, turned into microseconds per message), OxMPI's ratio to
the faster peer (at 4 ranks on 2 cores to Open MPI only: MPICH's busy
polling does not finish there), and the geometric mean of the ratios per
rank count. Prints a Markdown table; with --png FILE and matplotlib, also
a bar chart of the ratios.

usage: scripts/small_report.py OUT.csv [--png FILE]
"""

import argparse
import csv
import math
import sys
from collections import defaultdict

IMPLS = ("ox", "mpich", "ompi")


def best_figures(path):
    """{(what, ranks, size): {impl: microseconds}} from the CSV's passes."""
    best = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) != 7 or row[0] == "pass":
                continue
            _, impl, what, ranks, size, metric, value = row
            v = float(value)
            if metric == "bw_MBps_max":
                what = "message rate"
                v = int(size) / v if v > 0 else math.inf  # bytes / (MB/s) = us
            elif metric != "time_us":
                continue
            key = (what, int(ranks), int(size))
            best[key][impl] = min(best[key].get(impl, math.inf), v)
    return best


def ratio(ranks, figures):
    peers = ["ompi"] if ranks > 2 else ["mpich", "ompi"]
    times = [figures[p] for p in peers if p in figures and math.isfinite(figures[p])]
    ox = figures.get("ox")
    if ox is None or not times:
        return None
    return ox / min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--png")
    args = ap.parse_args()
    best = best_figures(args.csv)
    order = sorted(best, key=lambda k: (k[1], k[0] != "message rate", k[0], k[2]))
    print("| figure | ranks | OxMPI | MPICH | Open MPI | OxMPI / faster peer |")
    print("|---|--:|--:|--:|--:|--:|")
    ratios = defaultdict(list)
    bars = []
    for key in order:
        what, ranks, size = key
        figs = best[key]
        r = ratio(ranks, figs)
        cells = []
        for impl in IMPLS:
            v = figs.get(impl)
            spins = impl == "mpich" and ranks > 2
            cells.append("(spins)" if spins else "-" if v is None else f"{v:.3g}")
        name = f"{what.replace('reduce_scatter', 'reduce_scatter_block')} {size if size < 1024 else str(size // 1024) + ' Ki'}B"
        print(f"| {name} | {ranks} | {' | '.join(cells)} | {'-' if r is None else f'{r:.2f}'} |")
        if r is not None:
            ratios[ranks].append(r)
            bars.append((f"{name} ({ranks})", r))
    print()
    for ranks, rs in sorted(ratios.items()):
        geo = math.exp(sum(map(math.log, rs)) / len(rs))
        worst = max(rs)
        print(f"{ranks} ranks: geometric mean of OxMPI / faster peer {geo:.2f} over {len(rs)} "
              f"figures; worst {worst:.2f}; within 1.25x: {sum(r <= 1.25 for r in rs)} of {len(rs)}")
    if args.png:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("small_report: no matplotlib: no PNG (python3 -m pip install matplotlib)",
                  file=sys.stderr)
            return
        fig, ax = plt.subplots(figsize=(10, 0.28 * len(bars) + 1))
        names = [b[0] for b in bars]
        values = [b[1] for b in bars]
        ax.barh(names, values, color=["tab:green" if v <= 1.0 else "tab:orange" if v <= 1.25
                                      else "tab:red" for v in values])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.axvline(1.25, color="grey", linestyle="--", linewidth=0.8)
        ax.invert_yaxis()
        ax.set_xlabel("OxMPI time / faster peer's time (lower is better)")
        ax.set_title("Small messages: OxMPI against the faster of MPICH and Open MPI")
        fig.tight_layout()
        fig.savefig(args.png, dpi=100)


if __name__ == "__main__":
    main()
