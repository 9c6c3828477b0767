#!/usr/bin/env python3
"""Plots collectives_bench's CSV: for every (collective, element type), median
time against bytes per rank, one line per implementation (topocoll topology and
algorithm, native MPI, Boost.MPI), log-log, into one PNG each.

    python3 benchmark/plot.py results.csv [--out DIR] [--types T1,T2] [--dpi N]

Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import collections
import csv
import os
import sys


def label(row):
    if row["impl"] in ("MPI", "Boost.MPI", "floor"):
        return f'{row["impl"]} ({row["algorithm"]})'
    return f'{row["topology"]} {row["algorithm"]}'


def save_small(fig, path, dpi):
    """The PNG with a 256-colour palette (a third of the size, the same lines)."""
    try:
        import io
        from PIL import Image
    except ImportError:
        fig.savefig(path, dpi=dpi)
        return
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    buf.seek(0)
    Image.open(buf).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
        path, optimize=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default="plots", help="directory for the PNGs (default: plots)")
    ap.add_argument("--types", help="only these element types, comma-separated (default: all)")
    ap.add_argument("--dpi", type=int, default=80, help="resolution of the PNGs (default: 80)")
    args = ap.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # A pyenv/venv python first in PATH may lack the distribution's package.
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__)] + sys.argv[1:])
        sys.exit("plot.py needs matplotlib: apt-get install python3-matplotlib (or pip install matplotlib)")

    types = set(args.types.split(",")) if args.types else None
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    procs = {}
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            if types is not None and row["type"] not in types:
                continue
            key = (row["collective"], row["type"])
            groups[key][label(row)].append((int(row["bytes_per_rank"]), float(row["median_us"]),
                                            row["impl"]))
            procs[key] = row["p"]

    os.makedirs(args.out, exist_ok=True)
    for (coll, typ), lines in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(9, 6))
        for name, pts in sorted(lines.items()):
            pts.sort()
            impl = pts[0][2]
            style = dict(linewidth=1.2, marker=".", alpha=0.8)
            if impl == "MPI":
                style.update(color="black", linewidth=2.5, marker="o", alpha=1.0)
            elif impl == "Boost.MPI":
                style.update(color="gray", linewidth=2.5, linestyle="--", marker="s", alpha=1.0)
            elif impl == "floor":  # a reference: native bytes + string writes
                style.update(color="brown", linewidth=1.5, linestyle="-.", marker="x", alpha=1.0)
            elif "auto" in name:
                style.update(linewidth=2.0)
            else:
                style.update(linestyle=":")
            ax.plot([b for b, _, _ in pts], [t for _, t, _ in pts], label=name, **style)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("median time (us), slowest rank")
        ax.set_title(f"{coll} <{typ}>, p = {procs[(coll, typ)]}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        path = os.path.join(args.out, f"{coll}_{typ}.png".replace(" ", "_"))
        fig.tight_layout()
        save_small(fig, path, args.dpi)
        plt.close(fig)
        print(path)


if __name__ == "__main__":
    main()
