#!/usr/bin/env python3
"""Plot the point-to-point comparison written by the `p2p` runner.

    python3 benches/plot/p2p_plot.py benches/results/p2p.csv benches/results/p2p.png

Reads `impl,mode,ranks,size,metric,value` lines (plus one `status` line per
job) and draws six log-log panels: 2-rank ping-pong latency and bandwidth
(with the memcpy reference), streaming bandwidth, multi-pair aggregate
bandwidth, ping-pong latency with more ranks than cores, and OxMPI's ratios
to the other two. Exits with status 3 when matplotlib is missing.
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
        "p2p_plot: matplotlib is missing; install it with `pip install matplotlib`\n"
    )
    sys.exit(3)

IMPLS = [("oxmpi", "OxMPI", "tab:red"), ("mpich", "MPICH", "tab:blue"),
         ("openmpi", "Open MPI", "tab:green")]


def load(path):
    """(impl, mode, ranks, metric) -> {size: value}; (impl, mode, ranks) -> status."""
    data = defaultdict(dict)
    status = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["impl"], row["mode"], int(row["ranks"]))
            if row["metric"] == "status":
                status[key] = row["value"]
                continue
            data[key + (row["metric"],)][int(row["size"])] = float(row["value"])
    return data, status


def series(data, imp, mode, ranks, metric, positive=True):
    points = sorted(data.get((imp, mode, ranks, metric), {}).items())
    return [(s, v) for s, v in points if not positive or (s > 0 and v > 0)]


def size_axis(ax):
    ticks = [1, 64, 1024, 64 << 10, 1 << 20, 16 << 20]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ticks)
    ax.set_xticklabels(["1 B", "64 B", "1 KiB", "64 KiB", "1 MiB", "16 MiB"])
    ax.set_xlabel("message size")
    ax.grid(True, which="major", alpha=0.3)


def label(name, status, key):
    st = status.get(key, "ok")
    return name if st == "ok" else f"{name} ({'did not finish' if st == 'dnf' else st})"


def draw(ax, data, status, mode, ranks, metric, style="-", suffix=""):
    for imp, name, color in IMPLS:
        pts = series(data, imp, mode, ranks, metric)
        key = (imp, mode, ranks)
        if not pts and key not in status:
            continue
        xs, ys = zip(*pts) if pts else ([], [])
        ax.plot(xs, ys, style, color=color, marker=".", markersize=4,
                label=label(name + suffix, status, key))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: p2p_plot.py RESULTS.csv OUT.png")
    data, status = load(sys.argv[1])
    fig, axes = plt.subplots(2, 3, figsize=(17, 10))
    (a, b, c), (d, e, f) = axes

    draw(a, data, status, "latency", 2, "lat_us_median")
    a.set_title("Ping-pong latency, 2 ranks (half round trip, median)")
    a.set_ylabel("µs")

    draw(b, data, status, "latency", 2, "bw_MBps_median")
    pts = series(data, "rust", "memcpy", 1, "warm_MBps_median")
    if pts:
        b.plot(*zip(*pts), "--", color="gray", label="one memcpy (warm)")
    b.set_title("Ping-pong bandwidth, 2 ranks (size / half round trip)")
    b.set_ylabel("MB/s")

    draw(c, data, status, "bandwidth", 2, "bw_MBps_median")
    c.set_title("Streaming bandwidth, 2 ranks (window of 64)")
    c.set_ylabel("MB/s")

    ranks = sorted({k[2] for k in data if k[1] == "multipair"} |
                   {k[2] for k in status if k[1] == "multipair"})
    for i, n in enumerate(ranks):
        draw(d, data, status, "multipair", n, "bw_MBps_median",
             style="-" if i == 0 else ":", suffix=f", {n} ranks")
    d.set_title("Multi-pair streaming, aggregate bandwidth")
    d.set_ylabel("MB/s")

    over = sorted({k[2] for k in status if k[1] == "latency" and k[2] > 2}, reverse=True)
    for i, n in enumerate(over):
        draw(e, data, status, "latency", n, "lat_us_median",
             style="-" if i == 0 else ":", suffix=f", {n} ranks")
    pts = series(data, "oxmpi", "latency", 2, "lat_us_median")
    if pts:
        e.plot(*zip(*pts), "--", color="tab:red", alpha=0.4, label="OxMPI, 2 ranks")
    e.set_title("Ping-pong latency with more ranks than cores")
    e.set_ylabel("µs")

    ox = dict(series(data, "oxmpi", "latency", 2, "lat_us_median", positive=False))
    best = {}
    for imp in ("mpich", "openmpi"):
        for s, v in series(data, imp, "latency", 2, "lat_us_median", positive=False):
            best[s] = min(v, best.get(s, v))
    lat_ratio = [(s, ox[s] / best[s]) for s in sorted(ox) if s in best and s > 0]
    if lat_ratio:
        f.plot(*zip(*lat_ratio), "-", marker=".", color="tab:red",
               label="latency: OxMPI / faster of the two (lower is better)")
    mp = dict(series(data, "mpich", "latency", 2, "bw_MBps_median"))
    oxbw = dict(series(data, "oxmpi", "latency", 2, "bw_MBps_median"))
    bw_ratio = [(s, oxbw[s] / mp[s]) for s in sorted(oxbw) if s in mp]
    if bw_ratio:
        f.plot(*zip(*bw_ratio), "-", marker=".", color="tab:purple",
               label="ping-pong MB/s: OxMPI / MPICH (higher is better)")
    mp = dict(series(data, "mpich", "bandwidth", 2, "bw_MBps_median"))
    oxbw = dict(series(data, "oxmpi", "bandwidth", 2, "bw_MBps_median"))
    st_ratio = [(s, oxbw[s] / mp[s]) for s in sorted(oxbw) if s in mp]
    if st_ratio:
        f.plot(*zip(*st_ratio), ":", marker=".", color="tab:purple",
               label="streaming MB/s: OxMPI / MPICH")
    f.axhline(1.0, color="black", linewidth=0.8)
    f.set_title("OxMPI ratios, 2 ranks")
    f.set_ylabel("ratio")

    for ax in axes.flat:
        size_axis(ax)
        ax.legend(fontsize=8)
    fig.suptitle("OxMPI vs MPICH vs Open MPI, shared memory, one host "
                 "(benches/results/p2p.md)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
