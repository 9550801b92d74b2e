"""The CPU targets table (scripts/hdb/cpu_targets.py) on synthetic results whose ratios are known."""
import json
import unittest
from pathlib import Path

from helpers import TempDirCase

from hdb import cpu_targets, targets
from test_targets import M, record

import make_fixture


class CpuTargetsTest(TempDirCase):
    def write(self, benchmark, backend, records):
        raw = Path(self.tmp, "run", "20260101-000000-cpu-baselines", "raw")
        raw.mkdir(parents=True, exist_ok=True)
        with (raw / f"{benchmark}-{backend}.json").open("w") as f:
            json.dump(make_fixture.document(benchmark, backend, records, 30.0), f)

    def evaluate(self):
        rows, docs = targets.load_rows(Path(self.tmp, "run"))
        return {t["target"]: t for t in cpu_targets.evaluate(rows, docs)}

    def test_figures_are_the_least_favourable_at_256m(self):
        sel = {"dist": "uniform", "selectivity": 0.5}
        self.write("ra", "cpu", [
            record("select", "parallel", 256 * M, params=sel, pct=72.0, moved=21.6, kernel_s=0.02),
            record("select", "parallel", 256 * M, params={"dist": "zipf", "selectivity": 0.5}, pct=65.0, moved=19.5),
            record("select", "parallel", 32 * M, params=sel, pct=99.0),  # inside the caches: not judged
            record("sort", "parallel", 256 * M, kernel_s=0.3),
            record("sort", "tbb", 256 * M, kernel_s=0.2),
            record("sort", "pstl", 256 * M, kernel_s=0.9),
        ])
        t = self.evaluate()
        s = t["ra select parallel, % of its ceiling"]
        self.assertEqual((s["figure"], s["met"]), (65.0, False))
        self.assertIn("zipf", s["detail"])
        srt = t["ra sort parallel / best library sort (time)"]
        self.assertAlmostEqual(srt["figure"], 1.5)  # against tbb, the faster library
        self.assertTrue(srt["met"])
        self.assertIsNone(t["ra join parallel, % of its ceiling"]["figure"])  # no results: said, not guessed

    def test_cycles_opencl_and_ngram(self):
        m = record("reencode", "parallel", 256 * M, params={"type": "u32", "unique": 1.0, "delta": 1.0}, kernel_s=0.05)
        m["extra"] = {"cycles_per_tuple_per_core": {"kernel": 2.5, "2b": 2.5}}
        whole = record("merge", "parallel", 256 * M, params={"type": "u32", "unique": 1, "delta": 1}, kernel_s=0.09)
        whole["extra"] = {"cycles_per_tuple_per_core": {"kernel": 4.0, "2b": 2.5}}
        self.write("merge", "cpu", [m, whole])
        self.write("ra", "cpu", [record("join", "parallel", 256 * M, kernel_s=0.1, pct=20.0)])
        self.write("ra", "opencl", [record("join", "paper", 256 * M, kernel_s=0.5),
                                    record("join", "tuned", 256 * M, kernel_s=0.25)])
        k = []
        for lvl, mean in ((0, 8.0), (12, 2.0)):
            r = record("search", "binned", 64 * M, params={"k": lvl}, kernel_s=1.0, total_s=1.0)
            r["extra"] = {"speedup_mean_of_queries": mean, "speedup_ratio_of_totals": mean / 2}
            k += [r, record("search", "parallel", 64 * M, params={"k": lvl}, kernel_s=0.6, total_s=0.6)]
        self.write("ngram", "cpu", k)
        t = self.evaluate()
        c = t["merge reencode parallel, cycles per tuple per core (1% unique)"]
        self.assertEqual((c["figure"], c["met"]), (2.5, False))
        w = t["merge merge parallel, cycles per tuple per core (1% unique)"]
        self.assertEqual((w["figure"], w["goal"], w["met"]), (4.0, None, None))  # reported, no goal
        o = t["opencl join on PoCL / cpu parallel (time)"]
        self.assertAlmostEqual(o["figure"], 2.5)  # the faster OpenCL variant
        self.assertTrue(o["met"])
        n = t["ngram binned / baseline on GCIDE (mean of per-query speed-ups, geometric mean over k)"]
        self.assertAlmostEqual(n["figure"], 4.0)
        self.assertTrue(n["met"])
        p = t["ngram search: 1 -> all threads (binned / parallel time)"]
        self.assertAlmostEqual(p["figure"], 1 / 0.6)
        table = cpu_targets.format_table(list(t.values()), before=list(t.values()))
        self.assertIn("| before |", table.splitlines()[0])


if __name__ == "__main__":
    unittest.main()
