#!/usr/bin/env python3
"""Markdown summary of collectives_bench's CSV: per collective, the native MPI
time, the best topocoll variant and its ratio, Boost.MPI's ratio; then the
targets (best topocoll <= 1.0x native for >= 64 KiB, <= 1.3x for <= 1 KiB;
reduce_scatter <= 0.5x at 64 KiB and 1 MiB; >= 2x faster than Boost.MPI for
>= 64 KiB).

    python3 benchmark/summarize.py results.csv [--sizes 8,1024,65536,1048576,16777216]
"""
import argparse
import collections
import csv
import math


def human(b):
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1024:
        return f"{b >> 10} KiB"
    return f"{b} B"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--sizes", default="8,1024,65536,1048576,16777216")
    args = ap.parse_args()
    want_sizes = [int(s) for s in args.sizes.split(",")]

    # (coll, type, bytes) -> {"native": t, "boost": t, "topo": [(t, name)]}
    data = collections.defaultdict(lambda: {"native": math.nan, "boost": math.nan, "floor": math.nan, "topo": []})
    bad = []
    p = "?"
    with open(args.csv, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["collective"], r["type"], int(r["bytes_per_rank"]))
            t = float(r["median_us"])
            p = r["p"]
            if r["verified"] != "1":
                bad.append(f'{r["collective"]} {r["type"]} {r["impl"]} {r["algorithm"]} {human(key[2])}')
            if r["impl"] == "MPI":
                data[key]["native"] = t
            elif r["impl"] == "Boost.MPI":
                data[key]["boost"] = t
            elif r["impl"] == "floor":  # a reference (strings), not an implementation
                data[key]["floor"] = t
            else:
                data[key]["topo"].append((t, f'{r["topology"]} {r["algorithm"]}'.strip()))

    colls = []
    for (c, ty, _) in data:
        if (c, ty) not in colls:
            colls.append((c, ty))

    print(f"p = {p}. Per cell: best topocoll median us (variant), ratio to native MPI / to Boost.MPI.\n")
    sizes = [s for s in want_sizes if any(k[2] == s for k in data)]
    print("| collective | type | " + " | ".join(human(s) for s in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for c, ty in colls:
        cells = []
        for s in sizes:
            d = data.get((c, ty, s))
            if not d or not d["topo"]:
                cells.append("-")
                continue
            t, name = min(d["topo"])
            rn = f'{t / d["native"]:.2f}x' if not math.isnan(d["native"]) else "-"
            rb = f'{t / d["boost"]:.2f}x' if not math.isnan(d["boost"]) else "-"
            nat = f'native {d["native"]:.1f}' if not math.isnan(d["native"]) else f'Boost {d["boost"]:.1f}'
            cells.append(f"{t:.1f} ({name}); {nat}; **{rn}** / {rb}")
        print(f"| {c} | {ty} | " + " | ".join(cells) + " |")

    print("\nTargets (best topocoll variant per size):\n")
    print("| collective | type | worst ratio <= 1 KiB (target 1.3) | worst ratio >= 64 KiB (target 1.0) | "
          "worst vs Boost >= 64 KiB (target 0.5) |")
    print("|---|---|---|---|---|")
    for c, ty in colls:
        if c in ("sendrecv_ring", "pingpong"):  # the transport alone, not a collective
            continue
        small, large, boost = [], [], []
        for (cc, tt, s), d in data.items():
            if (cc, tt) != (c, ty) or not d["topo"]:
                continue
            t, name = min(d["topo"])
            if not math.isnan(d["native"]):
                if s <= 1024:
                    small.append((t / d["native"], s, name))
                if s >= 65536:
                    large.append((t / d["native"], s, name))
            if not math.isnan(d["boost"]) and s >= 65536:
                fl = d["floor"] / d["boost"] if not math.isnan(d["floor"]) else math.nan
                boost.append((t / d["boost"], s, name, fl))

        def worst(v, limit):
            if not v:
                return "-"
            r, s, name, *fl = max(v)
            floor = f"; floor {fl[0]:.2f}x" if fl and not math.isnan(fl[0]) else ""
            return f'{r:.2f}x at {human(s)} ({name}{floor}) {"met" if r <= limit else "MISSED"}'

        print(f"| {c} | {ty} | {worst(small, 1.3)} | {worst(large, 1.0)} | {worst(boost, 0.5)} |")

    for s in (65536, 1048576):
        d = data.get(("reduce_scatter", "double", s))
        if d and d["topo"] and not math.isnan(d["native"]):
            t, name = min(d["topo"])
            r = t / d["native"]
            print(f'\nreduce_scatter at {human(s)}: {r:.2f}x native ({name}; target 0.5: {"met" if r <= 0.5 else "MISSED"})')
    if bad:
        print("\nWRONG RESULTS: " + "; ".join(bad))


if __name__ == "__main__":
    main()
