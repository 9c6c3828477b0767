#!/usr/bin/python3
"""Predicted against measured: the tables of model_check's CSV files.

    benchmark/model_check.py FILE.csv [FILE.csv ...] > report.md

For each file (one transport at one p):
  - measured / predicted per collective and size: the median over the cells
    of every topology and algorithm, with the range;
  - per topology, how well the model orders the algorithms of one collective
    and size: the rank correlation (Spearman) between predicted and measured
    times where three or more algorithms apply, the share of algorithm pairs
    the model orders as measured (every group of two or more), and how often
    the predicted fastest is within 1.1x of the measured fastest.
automatic is left out of the ordering: it is one of the forced algorithms.
"""
import argparse
import csv
import itertools
from collections import defaultdict

import numpy as np


def ranks(v):
    """Ranks from 1, ties sharing their mean rank."""
    v = np.asarray(v, dtype=float)
    order = v.argsort(kind="stable")
    r = np.empty(len(v))
    r[order] = np.arange(1, len(v) + 1)
    for x in np.unique(v):
        tie = v == x
        r[tie] = r[tie].mean()
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def concordant_pairs(pred, meas):
    pairs = list(itertools.combinations(range(len(pred)), 2))
    same = sum((pred[i] - pred[j]) * (meas[i] - meas[j]) > 0 for i, j in pairs)
    return same, len(pairs)


def human(b):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b // size} {unit}"
    return f"{b} B"


def ratio_table(rows):
    by = defaultdict(list)
    for r in rows:
        by[(r["collective"], int(r["bytes"]))].append(
            float(r["measured_us"]) / float(r["predicted_us"]))
    sizes = sorted({b for _, b in by})
    out = ["| collective | " + " | ".join(human(b) for b in sizes) + " |",
           "| --- |" + " ---: |" * len(sizes)]
    for k in dict.fromkeys(r["collective"] for r in rows):
        cells = []
        for b in sizes:
            v = by.get((k, b))
            cells.append(f"{np.median(v):.2g} ({min(v):.2g}–{max(v):.2g})" if v else "")
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    return out


def ordering_table(rows):
    groups = defaultdict(list)
    for r in rows:
        if r["algorithm"] != "automatic":
            groups[(r["topology"], r["collective"], r["bytes"])].append(
                (float(r["predicted_us"]), float(r["measured_us"])))
    per_topo = defaultdict(lambda: {"rho": [], "same": 0, "pairs": 0, "best": 0, "groups": 0})
    for (topo, _, _), g in groups.items():
        if len(g) < 2:
            continue
        pred, meas = [x[0] for x in g], [x[1] for x in g]
        t = per_topo[topo]
        if len(g) >= 3:
            t["rho"].append(spearman(pred, meas))
        same, n = concordant_pairs(pred, meas)
        t["same"] += same
        t["pairs"] += n
        t["groups"] += 1
        t["best"] += meas[int(np.argmin(pred))] <= 1.1 * min(meas)
    out = ["| topology | groups | Spearman (groups of ≥ 3) | pairs ordered as measured "
           "| predicted best within 1.1× |", "| --- | ---: | ---: | ---: | ---: |"]
    for topo, t in per_topo.items():
        rho = [x for x in t["rho"] if not np.isnan(x)]
        rho_s = f"{np.mean(rho):.2f} over {len(rho)}" if rho else "–"
        out.append(f"| {topo} | {t['groups']} | {rho_s} | {t['same']}/{t['pairs']} "
                   f"({t['same'] / t['pairs']:.0%}) | {t['best']}/{t['groups']} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for path in args.files:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        r0 = rows[0]
        print(f"### {r0['transport']}, p = {r0['p']}\n")
        print(f"Calibrated: t_s {float(r0['t_s_us']):.3g} µs, t_w {float(r0['t_w_us_per_byte']):.3g}"
              f" µs/B, busy_ts {float(r0['busy_ts']):.3g}, busy_tw {float(r0['busy_tw']):.3g}.\n")
        print("Measured / predicted, median over topologies and algorithms (range):\n")
        print("\n".join(ratio_table(rows)) + "\n")
        print("How the model orders each topology's algorithms (one group: a collective at one "
              "size):\n")
        print("\n".join(ordering_table(rows)) + "\n")


if __name__ == "__main__":
    main()
