#!/usr/bin/env python3
"""Markdown summary of collectives_bench's CSV: per collective, the native MPI
time, the best topocoll variant and its ratio, Boost.MPI's ratio; then the
targets (best topocoll <= 1.0x native for >= 64 KiB, <= 1.3x for <= 1 KiB;
reduce_scatter <= 0.5x at 64 KiB and 1 MiB; >= 2x faster than Boost.MPI for
>= 64 KiB); then automatic against the best forced algorithm of its topology,
per cell (target: within 1.1x), and with --round, the same over several
runs of those cells: whether its misses stay in the same cells.

    python3 benchmark/summarize.py results.csv [--sizes 8,1024,65536,1048576,16777216]

With --block, the results block of benchmark/README.md instead (what
benchmark/regenerate writes between the results markers): the best topocoll
variant over native MPI of one run, its date and command. With --summary,
every table of a full set of runs (ratio tables of the full run, the string
run's rows, the loopback run, the targets, automatic over the rounds), which
benchmark/regenerate writes to results/summary.md (not tracked). The date and
the command come from the "# " lines at the top of each CSV's .txt twin
(np2.csv -> np2.txt), which benchmark/regenerate writes. A CSV may be
gzip-compressed (np2.csv.gz).

    python3 benchmark/summarize.py --block benchmark/results/np2.csv.gz
    python3 benchmark/summarize.py --summary benchmark/results/np4.csv --np2 benchmark/results/np2.csv \
        --strings benchmark/results/np4_strings.csv --loopback benchmark/results/loopback.csv
"""
import argparse
import collections
import csv
import gzip
import math
import os
import re
import statistics

BEGIN = "<!-- results:begin (written by benchmark/regenerate; edits here are overwritten) -->"
END = "<!-- results:end -->"
TRANSPORT = ("sendrecv_ring", "pingpong")  # the transport alone, not a collective


def open_csv(path):
    """A CSV, plain or gzip-compressed (NAME.csv.gz, as benchmark/results keeps np2)."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def human(b):
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1024:
        return f"{b >> 10} KiB"
    return f"{b} B"


def load(path):
    """(coll, type, bytes) -> {"native", "boost", "floor": t, "topo": [(t, name)]}, p, wrong rows."""
    data = collections.defaultdict(lambda: {"native": math.nan, "boost": math.nan, "floor": math.nan, "topo": []})
    bad = []
    p = "?"
    with open_csv(path) as f:
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
    return data, p, bad


def groups(data, types=None):
    out = []
    for (c, ty, _) in data:
        if (c, ty) not in out and (types is None or ty in types):
            out.append((c, ty))
    return out


def best(d):
    return min(d["topo"]) if d and d["topo"] else None


def ratio(a, b):
    return a / b if not math.isnan(b) and b > 0 else math.nan


def fmt(r):
    return "-" if math.isnan(r) else f"{r:.2f}"


def targets(data, colls):
    """Rows of the targets table: worst best-variant ratio per range, per collective."""
    rows = []
    for c, ty in colls:
        if c in TRANSPORT:
            continue
        small, large, boost = [], [], []
        for (cc, tt, s), d in data.items():
            if (cc, tt) != (c, ty) or not d["topo"]:
                continue
            t, name = best(d)
            if not math.isnan(d["native"]):
                if s <= 1024:
                    small.append((t / d["native"], s, name))
                if s >= 65536:
                    large.append((t / d["native"], s, name))
            if not math.isnan(d["boost"]) and s >= 65536:
                boost.append((t / d["boost"], s, name, ratio(d["floor"], d["boost"])))

        def worst(v, limit):
            if not v:
                return "-"
            r, s, name, *fl = max(v)
            floor = f"; floor {fl[0]:.2f}x" if fl and not math.isnan(fl[0]) else ""
            return f'{r:.2f}x at {human(s)} ({name}{floor}) {"met" if r <= limit else "MISSED"}'

        rows.append(f"| {c} | {ty} | {worst(small, 1.3)} | {worst(large, 1.0)} | {worst(boost, 0.5)} |")
    return rows


def auto_cells(path):
    """(collective, type, topology, size) -> (the forced algorithms' medians,
    automatic's median, the forced algorithms whose schedule automatic ran, or
    None where the CSV has no auto_takes column), for the cells that have
    forced contenders."""
    cells = collections.defaultdict(dict)
    takes = {}
    with open_csv(path) as f:
        for r in csv.DictReader(f):
            if r["impl"].startswith("topocoll") and r["topology"]:
                key = (r["collective"], r["type"], r["topology"], int(r["bytes_per_rank"]))
                cells[key][r["algorithm"]] = float(r["median_us"])
                if r["algorithm"] == "auto" and r.get("auto_takes"):
                    takes[key] = r["auto_takes"].split("+")
    out = {}
    for key, algos in cells.items():
        forced = {a: t for a, t in algos.items() if "auto" not in a}
        if "auto" in algos and forced:
            out[key] = (forced, algos["auto"], takes.get(key))
    return out


def automatic_choice(path, limit=1.1):
    """automatic against the best forced algorithm of its topology, per cell
    (collective, type, size, topology) that has forced contenders: table rows,
    the count within `limit`, the cells counted, the misses, and the cells
    where automatic ran another algorithm's schedule than the best's (from the
    CSV's auto_takes column: the forced algorithms whose schedule automatic's
    is; an older CSV without it marks nothing)."""
    cells = auto_cells(path)
    sizes = sorted({k[3] for k in cells})
    rows, n, ok, misses, other = [], 0, 0, [], 0
    for c, ty, topo in dict.fromkeys(k[:3] for k in cells):
        line = []
        for s in sizes:
            if (c, ty, topo, s) not in cells:
                line.append("-")
                continue
            forced, auto, took = cells[(c, ty, topo, s)]
            a, t = min(forced.items(), key=lambda x: x[1])
            r = auto / t
            elsewhere = took is not None and a not in took
            n += 1
            ok += r <= limit
            other += elsewhere
            if r > limit:
                ran = (f"; automatic ran {'+'.join(took)}" if elsewhere
                       else "; the same schedule" if took else "")
                misses.append(f"{c} {ty} {topo} {human(s)}: {r:.2f}x ({a} {t:.1f} us{ran})")
            text = f"**{r:.2f}**" if r > limit else f"{r:.2f}"
            line.append(text + ("*" if elsewhere else ""))
        if any(x != "-" for x in line):
            name = c if ty == "double" else f"{c}, {ty}"
            rows.append(f"| {name} | {topo} | " + " | ".join(line) + " |")
    head = ["| collective | topology | " + " | ".join(human(s) for s in sizes) + " |",
            "|---|---|" + "---|" * len(sizes)]
    has_takes = any(took is not None for _, _, took in cells.values())
    return head + rows, ok, n, misses, (other if has_takes else None)


def automatic_lines(path, limit=1.1):
    rows, ok, n, misses, other = automatic_choice(path, limit)
    out = [f"**automatic / the best forced algorithm of its topology** (bold: above {limit}x; "
           f"{ok} of {n} cells within {limit}x):", ""]
    if other is not None:
        out += [f"A star marks a cell where automatic ran another algorithm's schedule than the "
                f"fastest forced one's ({other} of {n}); in a cell without one it ran the same "
                f"schedule, and the ratio is the run's noise between two contenders running the "
                f"same calls.", ""]
    out += rows
    if misses:
        out += ["", "Above " + f"{limit}x: " + "; ".join(misses) + "."]
    return out


def repeated_runs(paths, limit=1.1):
    """automatic over several runs of the same cells, each with its calibration:
    (steady cells, their cell-runs within `limit`, their misses; the other
    cells, their cell-runs within `limit`, how many of their misses ran the
    fastest one's schedule; the cells whose median ratio over the runs is above
    `limit`). A cell is steady when one forced algorithm is the fastest by more
    than `limit` over every other in every run; where there is one forced
    algorithm, automatic is the other contender (e.g. the Ring's scatter: the
    tree is not forced there, only the pipeline)."""
    runs = [auto_cells(p) for p in paths]
    keys = [k for k in runs[0] if all(k in r for r in runs[1:])]
    steady, steady_ok, steady_miss = 0, 0, []
    other, other_ok, other_same, high = 0, 0, 0, []
    for k in keys:
        winners, margins, ratios, same = set(), [], [], []
        for forced, auto, took in (r[k] for r in runs):
            both = forced if len(forced) > 1 else dict(forced, auto=auto)
            a, t = min(both.items(), key=lambda x: x[1])
            winners.add(a)
            margins.append(min(u for b, u in both.items() if b != a) / t)
            ratios.append(auto / min(forced.values()))
            same.append(took is not None and a in took)
        within = sum(r <= limit for r in ratios)
        name = f"{k[0]} {k[2]} {human(k[3])}"
        if len(winners) == 1 and min(margins) > limit:
            steady += 1
            steady_ok += within
            steady_miss += [f"{name} {r:.2f}x" + (" (its schedule)" if sm else "")
                            for r, sm in zip(ratios, same) if r > limit]
        else:
            other += 1
            other_ok += within
            other_same += sum(s for r, s in zip(ratios, same) if r > limit)
        med = statistics.median(ratios)
        if med > limit:
            high.append(f"{name} {med:.2f}x")
    return steady, steady_ok, steady_miss, other, other_ok, other_same, high


def repeated_lines(paths, limit=1.1):
    n = len(paths)
    steady, steady_ok, steady_miss, other, other_ok, other_same, high = repeated_runs(paths, limit)
    names = ", ".join(f"`{os.path.basename(p)}`" for p in paths)
    out = [f"**automatic over {n} runs** ({names}; each calibrates anew): in {steady} cells one "
           f"forced algorithm was the fastest by more than {limit}x in every run, and automatic was "
           f"within {limit}x of it in {steady_ok} of their {steady * n} cell-runs"
           + (f" (above: {'; '.join(steady_miss)}; \"its schedule\": automatic ran the fastest "
              f"one's)" if steady_miss else "") + ". "
           f"In the other {other} cells the fastest changed between runs or led by {limit}x or less; "
           f"there automatic was within {limit}x in {other_ok} of {other * n} cell-runs, and "
           f"{other_same} of the {other * n - other_ok} others ran the fastest one's schedule. "
           + (f"Cells whose median ratio over the runs is above {limit}x: {'; '.join(high)}."
              if high else f"No cell's median ratio over the runs is above {limit}x.")]
    return out


def core_targets(data):
    """A core per rank: the cells above 1.10x native at 8 B - 1 KiB or above
    1.0x from 64 KiB (the best topocoll variant of each)."""
    over = []
    for (c, ty, s), d in sorted(data.items()):
        if c in TRANSPORT or not d["topo"] or math.isnan(d["native"]) or 1024 < s < 65536:
            continue
        t, name = best(d)
        r = t / d["native"]
        if r > (1.10 if s <= 1024 else 1.0):
            over.append(f"{c} {human(s)} {r:.2f}x ({name})")
    return ["Over target: " + ("; ".join(over) if over else "none") + "."]


def reduce_scatter_lines(data):
    out = []
    for s in (65536, 1048576):
        d = data.get(("reduce_scatter", "double", s))
        if d and d["topo"] and not math.isnan(d["native"]):
            t, name = best(d)
            r = t / d["native"]
            out.append(f'reduce_scatter at {human(s)}: {r:.2f}x native ({name}; target 0.5: {"met" if r <= 0.5 else "MISSED"})')
    return out


def plain(args):
    data, p, bad = load(args.csv)
    want_sizes = [int(s) for s in args.sizes.split(",")]
    colls = groups(data)
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
            t, name = best(d)
            rn = f'{t / d["native"]:.2f}x' if not math.isnan(d["native"]) else "-"
            rb = f'{t / d["boost"]:.2f}x' if not math.isnan(d["boost"]) else "-"
            nat = f'native {d["native"]:.1f}' if not math.isnan(d["native"]) else f'Boost {d["boost"]:.1f}'
            cells.append(f"{t:.1f} ({name}); {nat}; **{rn}** / {rb}")
        print(f"| {c} | {ty} | " + " | ".join(cells) + " |")

    print("\nTargets (best topocoll variant per size):\n")
    print("| collective | type | worst ratio <= 1 KiB (target 1.3) | worst ratio >= 64 KiB (target 1.0) | "
          "worst vs Boost >= 64 KiB (target 0.5) |")
    print("|---|---|---|---|---|")
    for row in targets(data, colls):
        print(row)
    for line in reduce_scatter_lines(data):
        print("\n" + line)
    print()
    print("\n".join(automatic_lines(args.csv)))
    if args.round:
        print("\n" + "\n".join(repeated_lines([args.csv] + args.round)))
    if bad:
        print("\nWRONG RESULTS: " + "; ".join(bad))


def header(csv_path):
    """The "# key: value" lines at the top of the CSV's .txt twin (or .head)."""
    meta = {}
    base = os.path.splitext(csv_path[:-3] if csv_path.endswith(".gz") else csv_path)[0]
    txt = base + ".txt"
    if not os.path.exists(txt):
        txt = base + ".head"  # the .txt's header alone, which benchmark/results keeps
    if os.path.exists(txt):
        with open(txt) as f:
            for line in f:
                if not line.startswith("# "):
                    break
                k, _, v = line[2:].partition(":")
                meta[k.strip()] = v.strip()
    return meta


def ratio_table(out, data, colls, sizes, against, label):
    out.append(f"| {label} | " + " | ".join(human(s) for s in sizes) + " |")
    out.append("|---|" + "---|" * len(sizes))
    for c, ty in colls:
        cells = []
        for s in sizes:
            d = data.get((c, ty, s))
            b = best(d)
            if not b:
                cells.append("-")
                continue
            r = ratio(b[0], d[against])
            cell = fmt(r)
            if against == "boost" and not math.isnan(d["floor"]):
                cell += f" [{fmt(ratio(d['floor'], d['boost']))}]"
            cells.append(cell)
        if any(x != "-" for x in cells):
            name = c if ty == "double" else f"{c}, {ty}"
            out.append(f"| {name} | " + " | ".join(cells) + " |")


def readme_block(args):
    """The README's one table: best topocoll variant / native MPI of one run
    (the p = 2 run), between the results markers."""
    meta = header(args.csv)
    data, p, bad = load(args.csv)
    out = [BEGIN, "",
           f"Measured {meta.get('date', '?')}; p = {p}, a core per rank (`--bind-to core`), "
           "barrier-separated calls; medians, `double`. Each cell is the best topocoll variant's "
           "median time over native MPI's (below 1.00: topocoll is faster). The command:", "",
           "```sh", meta.get("command", "(command not recorded)"), "```", ""]
    ratio_table(out, data, groups(data, types={"double"}), sorted({k[2] for k in data}), "native",
                "collective")
    out += ["", "Targets: <= 1.10x at 8 B - 1 KiB, <= 1.0x from 64 KiB. " + core_targets(data)[0]]
    if bad:
        out += ["", "WRONG RESULTS: " + "; ".join(bad)]
    out += ["", END]
    print("\n".join(out))


def summary(args):
    out = []
    runs = [(what, path) for what, path in (("p = 2", args.np2), ("p = 2, loops", args.np2_loop)) if path]
    runs.append(("full run", args.csv))
    runs += [("automatic again", path) for path in args.round]
    if args.strings:
        runs.append(("strings", args.strings))
    if args.loopback:
        runs.append(("loopback", args.loopback))
    metas = [(what, path, header(path)) for what, path in runs]
    dates = sorted({m.get("date", "?") for _, _, m in metas})
    where = os.path.relpath(os.path.dirname(os.path.abspath(args.csv)))
    out.append(f"Measured {', '.join(dates)}; the files are in `{where}/`. The commands:")
    out.append("")
    out.append("```sh")
    for what, path, m in metas:
        base = os.path.splitext(os.path.basename(path))[0]
        out.append(f"# {what}: {base}.csv, {base}.txt; {m.get('date', '?')}")
        out.append(m.get("command", "(command not recorded)"))
    out.append("```")

    bad = []
    for path, mode in ((args.np2, "barrier-separated calls"), (args.np2_loop, "loops of back-to-back calls")):
        if path:
            d2, p2, bad2 = load(path)
            bad += bad2
            out.append("")
            out.append(f"**A core per rank: best topocoll variant / native MPI**, p = {p2}, "
                       f"`--bind-to core`, {mode} (medians, `double`; targets: "
                       "<= 1.10x at 8 B - 1 KiB, <= 1.0x from 64 KiB):")
            out.append("")
            ratio_table(out, d2, groups(d2, types={"double"}), sorted({k[2] for k in d2}), "native",
                        "collective")
            out.append("")
            out += core_targets(d2)

    data, p, bad4 = load(args.csv)
    bad += bad4
    colls = groups(data, types={"double"})
    sizes = sorted({k[2] for k in data})
    out.append("")
    out.append(f"**Oversubscribed: best topocoll variant / native MPI** (medians, `double`, p = {p} "
               "on 2 cores; sendrecv_ring and pingpong: `mpi::Comm` / plain MPI):")
    out.append("")
    ratio_table(out, data, colls, sizes, "native", "collective")

    big = [s for s in sizes if s >= 1024]
    boost_colls = [(c, ty) for c, ty in colls
                   if c not in TRANSPORT and any(not math.isnan(d["boost"]) for k, d in data.items() if k[:2] == (c, ty))]
    out.append("")
    out.append("**Best topocoll variant / Boost.MPI's value call**, `std::vector<double>` "
               "(Boost.MPI has no reduce_scatter, exclusive scan or all_to_all_v):")
    out.append("")
    ratio_table(out, data, boost_colls, big, "boost", "collective")

    all_targets = targets(data, colls)
    rs = reduce_scatter_lines(data)
    if args.strings:
        sdata, _, sbad = load(args.strings)
        bad += sbad
        scolls = groups(sdata, types=None)
        scolls = [g for g in scolls if g[1] != "double"]
        ssizes = sorted({k[2] for k in sdata if k[1] != "double"})
        out.append("")
        out.append("**Strings: best topocoll variant / Boost.MPI** [floor row / Boost.MPI] "
                   "(string: vectors of 32-character strings; one long string: one `std::string` of that size):")
        out.append("")
        ratio_table(out, sdata, scolls, ssizes, "boost", "collective")
        all_targets += targets(sdata, scolls)

    out.append("")
    out.append("**Targets** (the best topocoll variant at each size; the worst cell of each range):")
    out.append("")
    out.append("| collective | type | <= 1 KiB: <= 1.3x native | >= 64 KiB: <= 1.0x native | "
               ">= 64 KiB: <= 0.5x Boost.MPI |")
    out.append("|---|---|---|---|---|")
    out += all_targets
    out.append("")
    for line in rs:
        out.append(f"* {line}")
    out.append("")
    out += automatic_lines(args.csv)
    if args.round:
        out += [""] + repeated_lines([args.csv] + args.round)

    if args.loopback:
        rows = collections.OrderedDict()
        lsizes = set()
        with open_csv(args.loopback) as f:
            for r in csv.DictReader(f):
                n = int(r["bytes"])
                lsizes.add(n)
                rows.setdefault(r["what"], {})[n] = (float(r["gbytes_per_s"]), float(r["efficiency"]),
                                                     float(r["time_us"]))
        lsizes = sorted(lsizes)
        out.append("")
        out.append("**Loopback transport** (`loopback_bench`): GB/s and share of `memcpy`'s GB/s "
                   "(below 1 KiB: time per message); target >= 70 % for point-to-point messages "
                   ">= 1 MiB:")
        out.append("")
        out.append("| what | " + " | ".join(human(s) for s in lsizes) + " |")
        out.append("|---|" + "---|" * len(lsizes))
        for what, cells in rows.items():
            def cell(s):
                if s not in cells:
                    return "-"
                g, e, us = cells[s]
                return f"{us:.2f} us" if s < 1024 else f"{g:.1f} ({e * 100:.0f} %)"

            out.append(f"| `{what}` | " + " | ".join(cell(s) for s in lsizes) + " |")
        worst = [(e, n, w) for w, cells in rows.items() if w.startswith("p2p stream") and "poll off" not in w
                 for n, (_, e, _) in cells.items() if n >= 1 << 20]
        if worst:
            e, n, w = min(worst)
            out.append("")
            out.append(f"* lowest point-to-point efficiency >= 1 MiB: {e * 100:.0f} % ({w}, {human(n)}; "
                       f'target 70 %: {"met" if e >= 0.7 else "MISSED"})')

    if bad:
        out.append("")
        out.append("**WRONG RESULTS**: " + "; ".join(bad))
    print("\n".join(out))


def cores_runs(folder):
    """benchmark/cores' CSVs in `folder`: {(np, binary): [paths, by round]}."""
    runs = collections.defaultdict(list)
    for name in sorted(os.listdir(folder)):
        m = re.fullmatch(r"np(\d+)_(bin-\w+)_r(\d+)\.csv(\.gz)?", name)
        if m:
            runs[(int(m[1]), m[2])].append((int(m[3]), os.path.join(folder, name)))
    return {k: [p for _, p in sorted(v)] for k, v in sorted(runs.items())}


def auto_ratios(path):
    """(collective, bytes) -> (best topology's automatic / native, that topology), one run."""
    out = {}
    for key, d in load(path)[0].items():
        c, ty, s = key
        autos = [(t, n) for t, n in d["topo"] if n.endswith(" auto")]
        if ty != "double" or c in TRANSPORT or not autos or math.isnan(d["native"]):
            continue
        t, n = min(autos)
        out[(c, s)] = (t / d["native"], n.removesuffix(" auto"))
    return out


def cores_table(paths):
    """The best topology at default options over native: the median over the
    runs with its range, per cell; and the geometric mean of the medians."""
    per_run = [auto_ratios(p) for p in paths]
    keys = [k for k in per_run[0] if all(k in r for r in per_run[1:])]
    sizes = sorted({s for _, s in keys})
    colls = list(dict.fromkeys(c for c, _ in keys))
    out = ["| collective | " + " | ".join(human(s) for s in sizes) + " |",
           "|---|" + "---|" * len(sizes)]
    medians = []
    for c in colls:
        cells = []
        for s in sizes:
            if (c, s) not in keys:
                cells.append("-")
                continue
            rs = [r[(c, s)][0] for r in per_run]
            med = statistics.median(rs)
            medians.append(med)
            top = collections.Counter(r[(c, s)][1] for r in per_run).most_common(1)[0][0]
            spread = f" [{min(rs):.2f}-{max(rs):.2f}]" if len(rs) > 1 else ""
            over = med > (1.10 if s <= 1024 else 1.0)
            cells.append((f"**{med:.2f}**" if over else f"{med:.2f}") + spread + f" {top}")
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    gm = math.exp(statistics.fmean(math.log(m) for m in medians)) if medians else math.nan
    out += ["", f"Geometric mean over the {len(medians)} cells: {gm:.2f}. Bold: above the "
            "target (1.10 up to 1 KiB, 1.0 from 64 KiB)."]
    return out


def cores(args):
    """Every table of benchmark/cores' runs: per process count and binary."""
    for (np_, binary), paths in cores_runs(args.cores).items():
        meta = header(paths[0])
        print(f"### p = {np_}, {binary}: {len(paths)} runs\n")
        print(f"Measured {meta.get('date', '?')} on {meta.get('machine', '?')}; "
              f"binary {meta.get('binary', '?')}. The command of the first run:\n")
        print(f"```sh\n{meta.get('command', '?')}\n```\n")
        print("Best topology with automatic / native MPI, median over the runs [range], "
              "and the topology that was best most often:\n")
        print("\n".join(cores_table(paths)) + "\n")
        print("\n".join(automatic_lines(paths[0])) + "\n")
        if len(paths) > 1:
            print("\n".join(repeated_lines(paths)) + "\n")
        bad = [b for p in paths for b in load(p)[2]]
        if bad:
            print("WRONG RESULTS: " + "; ".join(bad) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="?")
    ap.add_argument("--sizes", default="8,1024,65536,1048576,16777216")
    ap.add_argument("--block", action="store_true",
                    help="print benchmark/README.md's results block: CSV's table against native MPI")
    ap.add_argument("--summary", action="store_true",
                    help="print every table of a full set of runs (results/summary.md)")
    ap.add_argument("--strings", help="with --summary: the string run's CSV")
    ap.add_argument("--loopback", help="with --summary: loopback_bench's CSV")
    ap.add_argument("--np2", help="with --summary: the p = 2 run, a core per rank, barrier-separated")
    ap.add_argument("--np2-loop", help="with --summary: the p = 2 run in loop mode")
    ap.add_argument("--round", action="append", default=[],
                    help="another run of the same cells (repeatable): automatic over all the runs")
    ap.add_argument("--cores", metavar="DIR",
                    help="every table of benchmark/cores' runs in DIR (np<N>_<bin>_r<K>.csv)")
    args = ap.parse_args()
    if args.cores:
        cores(args)
    elif not args.csv:
        ap.error("a CSV, or --cores DIR")
    elif args.block:
        readme_block(args)
    elif args.summary:
        summary(args)
    else:
        plain(args)


if __name__ == "__main__":
    main()
