"""Plots a topocoll-model sweep: predicted time per algorithm against p or m.

usage: plot_sweep.py SWEEP.csv OUT.png p|m

The PNG is written with a 64-colour palette, which keeps it small.
"""
import csv
import io
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def save_small(fig, out, dpi):
    """Writes fig as a palette PNG; falls back to a plain PNG without PIL."""
    try:
        from PIL import Image
    except ImportError:
        fig.savefig(out, dpi=dpi)
        return
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    buf.seek(0)
    img = Image.open(buf).convert("RGB")
    img.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)


def main(src, out, axis):
    rows = list(csv.DictReader(open(src)))
    if not rows:
        sys.exit("plot_sweep: no rows in " + src)
    series = {}
    for r in rows:
        series.setdefault(r["algorithm"], []).append((int(r[axis]), float(r["time"])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        pts.sort()
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("p (ranks)" if axis == "p" else "m (elements per rank)")
    ax.set_ylabel("predicted time")
    r = rows[0]
    fixed = "m = " + r["m"] if axis == "p" else "p = " + r["p"]
    ax.set_title(f"{r['collective']} on {r['topology']}, network {r['network'].split('(')[0]}, {fixed}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    save_small(fig, out, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("p", "m"):
        sys.exit(__doc__)
    main(*sys.argv[1:])
