"""The GPU targets table (scripts/hdb/targets.py) on synthetic results whose ratios are known."""
import json
import os
import unittest

from helpers import TempDirCase

from hdb import targets

M = 1 << 20


def record(test, variant, size, params=None, transfer="none", kernel_s=1.0, total_s=None, gbps=None, pct=None,
           moved=None, elements=0, eps=None, status="ok"):
    return {
        "id": f"{test}/{variant}@{size}", "test": test, "variant": variant, "params": params or {},
        "size_bytes": size, "transfer": transfer, "status": status, "reason": "", "elements": elements,
        "bytes": {"input": size, "min_moved": 2 * size, "transfer": 0},
        "stats": {"kernel_s": {"median": kernel_s}, "total_s": {"median": total_s or kernel_s}},
        "throughput": {"kernel_gbps": gbps, "pct_of_peak": pct, "moved_gbps": moved or 0, "elements_per_s": eps},
        "verification": {"verified": True},
    }


class TargetsTest(TempDirCase):
    def write(self, benchmark, backend, records, context=None):
        raw = os.path.join(self.tmp, "run", benchmark, "20260101-000000-gpu", "raw")
        os.makedirs(raw, exist_ok=True)
        doc = {"schema": "hetdb-bench/1", "benchmark": benchmark, "backend": backend, "context": context or {},
               "ceiling": {"memory_copy_gbps": 3000}, "results": records}
        with open(os.path.join(raw, f"{benchmark}-{backend}.json"), "w") as f:
            json.dump(doc, f)

    def evaluate(self):
        rows, docs = targets.load_rows(os.path.join(self.tmp, "run"))
        return {t["target"]: t for t in targets.evaluate(rows, docs)}

    def test_bus_is_judged_against_the_pcie_link(self):
        link = {"device": {"pcie": {"theoretical_gbps_per_direction": 63.0, "max_gen": 5, "max_width": 16}}}
        self.write("bus", "cuda", [
            record("h2d", "pinned", 256 * M, transfer="pinned", gbps=50.4),
            record("h2d", "pinned", M, transfer="pinned", gbps=20.0),
            record("h2d", "pageable", 256 * M, transfer="pageable", gbps=20.0),
            record("d2h", "pinned", 256 * M, transfer="pinned", gbps=40.0),
        ], link)
        t = self.evaluate()
        h2d, d2h = t["bus h2d pinned, % of PCIe link"], t["bus d2h pinned, % of PCIe link"]
        self.assertAlmostEqual(h2d["figure"], 80.0)
        self.assertTrue(h2d["met"])
        self.assertIn("pageable 20.0", h2d["detail"])
        self.assertAlmostEqual(d2h["figure"], 100 * 40 / 63)
        self.assertFalse(d2h["met"])

    def test_streaming_targets_prefer_tuned_at_the_largest_size_and_worst_parameters(self):
        self.write("ra", "cuda", [
            record("select", "paper", 1024 * M, pct=90),
            record("select", "tuned", 1024 * M, params={"selectivity": "0.5"}, pct=80),
            record("select", "tuned", 1024 * M, params={"selectivity": "1"}, pct=70),
            record("select", "tuned", 32 * M, pct=99),
            record("join", "paper", 256 * M, pct=45),
            record("join", "cub", 256 * M, pct=30),
            record("project", "paper", 32 * M, pct=99),  # below 256 MB: not judged
        ])
        t = self.evaluate()
        sel = t["ra select, % of device copy"]
        self.assertEqual(sel["figure"], 70)
        self.assertFalse(sel["met"])
        self.assertIn("selectivity=1", sel["detail"])
        self.assertEqual(t["ra join, % of device copy"]["figure"], 45)
        self.assertTrue(t["ra join, % of device copy"]["met"])
        self.assertIsNone(t["ra project, % of device copy"]["figure"])
        self.assertIsNone(t["ra project, % of device copy"]["met"])

    def test_speedups_compare_equal_inputs_only(self):
        self.write("tpch", "cuda", [
            record("A", "operator", 1024 * M, params={"data": "random"}, kernel_s=3.0),
            record("A", "fused", 1024 * M, params={"data": "random"}, kernel_s=1.0),
            record("A", "operator", 1024 * M, params={"data": "tpch"}, kernel_s=2.0),
            record("A", "fused", 1024 * M, params={"data": "tpch"}, kernel_s=1.6),
            record("B", "operator", 1024 * M, kernel_s=3.0),  # no fused B: not judged
        ])
        self.write("merge", "cuda", [
            record("merge", "inorder", 256 * M, transfer="pinned", total_s=3.0),
            record("merge", "overlap", 256 * M, transfer="pinned", total_s=1.5),
            record("merge", "overlap", 256 * M, transfer="pageable", total_s=0.1),
            record("delta_dict", "thrust", 256 * M, params={"type": "u32"}, elements=1000, eps=25e9),
            record("delta_dict", "thrust", 32 * M, params={"type": "u32"}, elements=10, eps=99e9),
        ])
        t = self.evaluate()
        a = t["tpch A fused vs operator-at-a-time"]
        self.assertAlmostEqual(a["figure"], 1.25)  # the least favourable data set
        self.assertFalse(a["met"])
        self.assertIsNone(t["tpch B fused vs operator-at-a-time"]["figure"])
        ov = t["overlapped chunks vs copy-compute-copy (whole merge)"]
        self.assertAlmostEqual(ov["figure"], 2.0)
        self.assertTrue(ov["met"])
        dd = t["duplicate removal (sort + unique, u32), G keys/s"]
        self.assertAlmostEqual(dd["figure"], 25.0)  # the case with the most keys
        self.assertTrue(dd["met"])

    def test_ngram_speedup_is_the_geometric_mean_over_error_levels(self):
        self.write("ngram", "cuda", [
            record("search", "gpu", 64 * M, params={"k": "0"}, total_s=1.0),
            record("search", "gpu", 64 * M, params={"k": "3"}, total_s=1.0),
            record("batch", "gpu", 64 * M, params={"k": "3"}, eps=1.5e6),
        ])
        self.write("ngram", "cpu", [
            record("search", "baseline", 64 * M, params={"k": "0"}, total_s=10.0),
            record("search", "baseline", 64 * M, params={"k": "3"}, total_s=40.0),
            record("search", "binned", 64 * M, params={"k": "0"}, total_s=4.0),
        ])
        t = self.evaluate()
        base = t["ngram gpu vs cpu baseline (geometric mean over k)"]
        self.assertAlmostEqual(base["figure"], 20.0)
        self.assertTrue(base["met"])
        self.assertAlmostEqual(t["ngram gpu vs cpu binned (geometric mean over k)"]["figure"], 4.0)
        self.assertEqual(t["ngram batched queries/s (reported)"]["figure"], 1.5e6)

    def test_failed_cases_count_as_missing_and_the_table_prints(self):
        self.write("ra", "cuda", [record("reduce", "cub", 1024 * M, pct=99, status="failed")])
        t = targets.evaluate(*targets.load_rows(os.path.join(self.tmp, "run")))
        reduce = next(x for x in t if x["target"] == "ra reduce, % of device copy")
        self.assertIsNone(reduce["met"])
        table = targets.format_table(t)
        self.assertIn("| ra reduce, % of device copy | - % | >= 75 | - | no results", table)


if __name__ == "__main__":
    unittest.main()
