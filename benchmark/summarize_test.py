#!/usr/bin/env python3
"""summarize.py's sorting of automatic over repeated runs, on CSVs written here."""
import csv
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402

FIELDS = ["collective", "type", "bytes_per_rank", "p", "impl", "topology", "algorithm", "reps",
          "median_us", "min_us", "native_median_us", "boost_median_us", "ratio_native",
          "ratio_boost", "verified", "auto_takes"]


def write_run(path, cells):
    """cells: (collective, topology, bytes) -> ({forced: us}, auto us, auto_takes)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for (coll, topo, n), (forced, auto, takes) in cells.items():
            for algo, us in list(forced.items()) + [("auto", auto)]:
                w.writerow({"collective": coll, "type": "double", "bytes_per_rank": n, "p": 4,
                            "impl": f"topocoll {topo}", "topology": topo, "algorithm": algo,
                            "reps": 5, "median_us": us, "min_us": us, "native_median_us": 1,
                            "boost_median_us": 1, "ratio_native": 1, "ratio_boost": 1,
                            "verified": 1, "auto_takes": takes if algo == "auto" else ""})


class RepeatedRuns(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        bc, rd = ("broadcast", "Ring", 1024), ("reduce", "Ring", 1024)
        ag = ("all_gather", "Mesh<2>", 65536)
        sc, ga, gk = ("scatter", "Ring", 256), ("gather", "Ring", 256), ("gather", "Ring", 1024)
        runs = [
            # broadcast: the tree by 2x in both runs (steady); automatic on it both times.
            # reduce: the tree by 1.5x in both runs (steady); automatic ran the tree and took
            #   1.3x in the second run.
            # all_gather: the fold wins the first run, the tree the second; automatic ran the
            #   tree both times: 1.2x in the first run.
            # scatter, gather: one forced algorithm, the pipeline; automatic (the tree) is the
            #   other contender. The pipeline wins scatter by 2x in both runs (steady, 2 misses);
            #   the tree wins gather by 2x in both (steady, within); at 1 KiB the two are within
            #   1.1x of each other (not steady).
            {bc: ({"tree": 100, "pipelined": 200}, 105, "tree"),
             rd: ({"tree": 100, "pipelined": 150}, 100, "tree"),
             ag: ({"fold": 100, "tree": 120}, 120, "tree"),
             sc: ({"pipelined": 5}, 10, "tree"), ga: ({"pipelined": 10}, 5, "tree"),
             gk: ({"pipelined": 10}, 10.5, "tree")},
            {bc: ({"tree": 110, "pipelined": 220}, 100, "tree"),
             rd: ({"tree": 100, "pipelined": 150}, 130, "tree"),
             ag: ({"fold": 120, "tree": 100}, 100, "tree"),
             sc: ({"pipelined": 5}, 10, "tree"), ga: ({"pipelined": 10}, 5, "tree"),
             gk: ({"pipelined": 10}, 9, "tree")},
        ]
        self.paths = []
        for i, cells in enumerate(runs):
            self.paths.append(os.path.join(self.dir.name, f"run{i}.csv"))
            write_run(self.paths[-1], cells)

    def tearDown(self):
        self.dir.cleanup()

    def test_steady_cells_and_the_others(self):
        steady, steady_ok, steady_miss, other, other_ok, other_same, high = \
            summarize.repeated_runs(self.paths)
        self.assertEqual((steady, steady_ok), (4, 5))
        self.assertEqual(steady_miss, ["reduce Ring 1 KiB 1.30x (its schedule)",
                                       "scatter Ring 256 B 2.00x", "scatter Ring 256 B 2.00x"])
        self.assertEqual((other, other_ok, other_same), (2, 3, 0))
        self.assertEqual(high, ["reduce Ring 1 KiB 1.15x", "scatter Ring 256 B 2.00x"])

    def test_one_run_alone_is_the_table(self):
        rows, ok, n, misses, elsewhere = summarize.automatic_choice(self.paths[0])
        self.assertEqual((ok, n, elsewhere), (4, 6, 4))
        self.assertEqual(misses, ["all_gather double Mesh<2> 64 KiB: 1.20x (fold 100.0 us; "
                                  "automatic ran tree)",
                                  "scatter double Ring 256 B: 2.00x (pipelined 5.0 us; "
                                  "automatic ran tree)"])


if __name__ == "__main__":
    unittest.main()
