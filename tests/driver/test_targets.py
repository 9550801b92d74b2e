"""The GPU targets table (scripts/hdb/targets.py) on synthetic results whose ratios are known."""
import json
import unittest
from pathlib import Path

from helpers import TempDirCase

from hdb import targets

import make_fixture

M = 1 << 20


def record(test, variant, size, params=None, transfer="none", kernel_s=1.0, total_s=None, gbps=None, pct=None,
           moved=None, elements=0, eps=None, status="ok", checked=True):
    """A hetdb-bench/2 result (make_fixture.record) whose medians and throughput are set to the given figures."""
    r = make_fixture.record(test, variant, size, kernel_s, params=params, transfer=transfer, status=status,
                            reason="" if status == "ok" else "synthetic failure", checked=checked)
    r["elements"] = elements
    if status != "ok":
        return r
    r["stats"]["kernel_s"]["median"] = kernel_s
    r["stats"]["total_s"]["median"] = total_s or kernel_s
    r["throughput"].update(kernel_gbps=gbps or 0.0, pct_of_peak=pct or 0.0, moved_gbps=moved or 0.0,
                           elements_per_s=eps or 0.0)
    return r


def bus_copy(test, size, transfer, gbps):
    """A bus host<->device copy as /2 records it: variant copy, all time on the bus, kernel_gbps 0."""
    r = make_fixture.bus_copy(test, size, 1e-3, transfer)
    r["throughput"]["transfer_gbps"] = gbps
    return r


class TargetsTest(TempDirCase):
    def write(self, benchmark, backend, records, context=None):
        raw = Path(self.tmp, "run", benchmark, "20260101-000000-gpu", "raw")
        raw.mkdir(parents=True, exist_ok=True)
        doc = make_fixture.document(benchmark, backend, records, 3000.0)
        doc["context"].update(context or {})
        with (raw / f"{benchmark}-{backend}.json").open("w") as f:
            json.dump(doc, f)

    def evaluate(self):
        rows, docs = targets.load_rows(Path(self.tmp, "run"))
        return {t["target"]: t for t in targets.evaluate(rows, docs)}

    def test_bus_is_judged_against_the_pcie_link(self):
        link = {"device": {"kind": "cuda", "name": "fixture GPU",
                           "pcie": {"theoretical_gbps_per_direction": 63.0, "max_gen": 5, "max_width": 16}}}
        self.write("bus", "cuda", [
            bus_copy("h2d", 256 * M, "pinned", 50.4),
            bus_copy("h2d", M, "pinned", 20.0),
            bus_copy("h2d", 256 * M, "pageable", 20.0),
            bus_copy("d2h", 256 * M, "pinned", 40.0),
            # Kernel time is never a bus figure: a device copy at 900 GB/s does not count.
            record("device_copy", "kernel", 256 * M, gbps=900.0),
        ], link)
        t = self.evaluate()
        h2d, d2h = t["bus h2d pinned, % of PCIe link"], t["bus d2h pinned, % of PCIe link"]
        self.assertAlmostEqual(h2d["figure"], 80.0)  # from throughput.transfer_gbps; kernel_gbps is 0
        self.assertTrue(h2d["met"])
        self.assertIn("pageable 20.0", h2d["detail"])
        self.assertAlmostEqual(d2h["figure"], 100 * 40 / 63)
        self.assertFalse(d2h["met"])

    def test_unverified_results_judge_nothing(self):
        link = {"device": {"kind": "cuda", "name": "fixture GPU", "pcie": {"theoretical_gbps_per_direction": 63.0}}}
        self.write("bus", "cuda", [bus_copy("h2d", 256 * M, "pinned", 50.4)], link)
        self.write("ra", "cuda", [record("select", "tuned", 1024 * M, pct=90, checked=False)])
        t = self.evaluate()
        self.assertAlmostEqual(t["bus h2d pinned, % of PCIe link"]["figure"], 80.0)
        self.assertIsNone(t["ra select, % of its ceiling"]["figure"])

    def test_streaming_targets_prefer_tuned_at_the_largest_size_and_worst_parameters(self):
        self.write("ra", "cuda", [
            record("select", "paper", 1024 * M, pct=90),
            record("select", "tuned", 1024 * M, params={"selectivity": 0.5}, pct=80),
            record("select", "tuned", 1024 * M, params={"selectivity": 1}, pct=70),
            record("select", "tuned", 32 * M, pct=99),
            record("join", "paper", 256 * M, params={"input": "sorted"}, pct=55),
            record("join", "cub", 256 * M, params={"input": "sorted"}, pct=30),
            # from unsorted input the pass sorts too: the operator's target leaves it out
            record("join", "paper", 256 * M, params={"input": "unsorted"}, pct=5),
            record("project", "paper", 32 * M, pct=99),  # below 256 MB: not judged
        ])
        t = self.evaluate()
        sel = t["ra select, % of its ceiling"]
        self.assertEqual(sel["figure"], 70)
        self.assertFalse(sel["met"])
        self.assertIn("selectivity=1", sel["detail"])
        self.assertEqual(t["ra join, % of its ceiling"]["figure"], 55)
        self.assertEqual(t["ra join, % of its ceiling"]["goal"], 50)
        self.assertTrue(t["ra join, % of its ceiling"]["met"])
        self.assertIsNone(t["ra project, % of its ceiling"]["figure"])
        self.assertIsNone(t["ra project, % of its ceiling"]["met"])

    def test_speedups_compare_equal_inputs_only(self):
        self.write("tpch", "cuda", [
            record("A", "operator", 1024 * M, params={"data": "random"}, kernel_s=3.0),
            record("A", "fused", 1024 * M, params={"data": "random"}, kernel_s=1.0),
            record("A", "operator", 1024 * M, params={"data": "tpch", "sf": 1}, kernel_s=2.0),
            record("A", "fused", 1024 * M, params={"data": "tpch", "sf": 1}, kernel_s=1.6),
            record("B", "operator", 1024 * M, kernel_s=3.0),  # no fused B: not judged
        ])
        self.write("merge", "cuda", [
            record("merge", "inorder", 256 * M, transfer="pinned", total_s=3.0),
            record("merge", "overlap", 256 * M, transfer="pinned", total_s=1.5),
            record("merge", "overlap", 256 * M, transfer="pageable", total_s=0.1),
            record("delta_dict", "thrust", 256 * M, params={"type": "u32", "unique": 100, "delta": 1}, elements=1000,
                   eps=25e9),
            record("delta_dict", "thrust", 32 * M, params={"type": "u32", "unique": 100, "delta": 1}, elements=10,
                   eps=99e9),
            record("delta_dict", "thrust", 1024 * M, params={"type": "u64", "unique": 100, "delta": 1},
                   elements=10**6, eps=99e9),  # not u32
        ])
        t = self.evaluate()
        a = t["tpch A fused vs best non-fused plan"]
        self.assertAlmostEqual(a["figure"], 1.25)  # the least favourable data set
        self.assertIn("data=tpch;sf=1", a["detail"])
        self.assertIn("operator (the only non-fused plan)", a["detail"])
        self.assertFalse(a["met"])
        self.assertIsNone(t["tpch B fused vs best non-fused plan"]["figure"])
        ov = t["overlapped chunks vs copy-compute-copy (whole merge)"]
        self.assertAlmostEqual(ov["figure"], 2.0)
        self.assertTrue(ov["met"])
        dd = t["duplicate removal (sort + unique, u32), G keys/s"]
        self.assertAlmostEqual(dd["figure"], 25.0)  # the case with the most keys
        self.assertEqual(dd["goal"], 30)
        self.assertFalse(dd["met"])
        self.assertIn("1,000 keys", dd["detail"])
        self.assertIn("the only case with that many keys", dd["detail"])

    def test_duplicate_removal_takes_the_least_favourable_case_with_the_most_keys(self):
        u32 = {"type": "u32", "delta": 100}
        self.write("merge", "cuda", [
            record("delta_dict", "thrust", 256 * M, params={**u32, "unique": 1}, elements=1000, eps=36e9),
            record("delta_dict", "thrust", 256 * M, params={**u32, "unique": 100}, elements=1000, eps=12e9),
            record("delta_dict", "thrust", 32 * M, params={**u32, "unique": 100}, elements=10, eps=5e9),  # fewer keys
        ])
        dd = self.evaluate()["duplicate removal (sort + unique, u32), G keys/s"]
        self.assertAlmostEqual(dd["figure"], 12.0)  # not 36: every other target takes its least favourable case
        self.assertFalse(dd["met"])
        self.assertIn("thrust, 1,000 keys [delta=100;type=u32;unique=100]", dd["detail"])
        self.assertIn("most favourable 36.0 G keys/s (thrust [delta=100;type=u32;unique=1])", dd["detail"])

    def test_duplicate_removal_judges_the_variant_whose_least_favourable_case_is_fastest(self):
        u32 = {"type": "u32", "delta": 100}
        self.write("merge", "cuda", [
            record("delta_dict", "thrust", 256 * M, params={**u32, "unique": 1}, elements=1000, eps=36e9),
            record("delta_dict", "thrust", 256 * M, params={**u32, "unique": 100}, elements=1000, eps=6e9),
            record("delta_dict", "tuned", 256 * M, params={**u32, "unique": 1}, elements=1000, eps=30e9),
            record("delta_dict", "tuned", 256 * M, params={**u32, "unique": 100}, elements=1000, eps=20e9),
        ])
        dd = self.evaluate()["duplicate removal (sort + unique, u32), G keys/s"]
        self.assertAlmostEqual(dd["figure"], 20.0)  # tuned's least favourable beats thrust's 6
        self.assertIn("tuned, 1,000 keys [delta=100;type=u32;unique=100]", dd["detail"])
        self.assertIn("most favourable 30.0 G keys/s (tuned [delta=100;type=u32;unique=1])", dd["detail"])
        self.assertIn("the other variants' least favourable: thrust 6.0 G keys/s", dd["detail"])

    def merge_beyond_l2(self, l2):
        """merge 1b and 2b cases at 256M whose declared minimum bytes moved are 10M, 200M and 400M."""
        def case(test, variant, unique, moved, pct):
            r = record(test, variant, 256 * M, params={"type": "u32", "delta": 1, "unique": unique}, pct=pct)
            r["bytes"]["min_moved"] = moved
            return r
        device = {"kind": "cuda", "name": "fixture GPU", **({"l2_cache_bytes": l2} if l2 else {})}
        self.write("merge", "cuda", [
            case("dict_merge", "merge_path", 1, 10 * M, 3.0),  # inside the L2: launch latency
            case("dict_merge", "merge_path", 50, 200 * M, 20.0),
            case("dict_merge", "merge_path", 100, 400 * M, 15.0),
            case("dict_merge", "mum", 100, 400 * M, 1.0),  # not merge path
            case("reencode", "lookup", 1, 10 * M, 2.0),
            case("reencode", "lookup", 100, 400 * M, 11.0),
            case("reencode", "binsearch", 100, 400 * M, 1.0),  # no tuned case: the best (lookup) is judged
        ], {"device": device})
        return self.evaluate()

    def test_merge_1b_and_2b_judge_cases_beyond_twice_the_l2(self):
        t = self.merge_beyond_l2(50 * M)  # twice the L2: 100M; the 10M cases are left out
        mp, re = t["merge 1b merge path, % of its ceiling"], t["merge 2b re-encode, % of its ceiling"]
        self.assertAlmostEqual(mp["figure"], 15.0)
        self.assertIn("[delta=1;type=u32;unique=100]", mp["detail"])
        self.assertIn("judged on cases moving >= 100M (2x the 50M L2): 1 case at >= 256M left out", mp["detail"])
        self.assertAlmostEqual(re["figure"], 11.0)
        self.assertIn("against the copy ceiling", re["detail"])

    def test_merge_1b_and_2b_without_the_l2_judge_every_case_and_say_so(self):
        t = self.merge_beyond_l2(None)
        mp, re = t["merge 1b merge path, % of its ceiling"], t["merge 2b re-encode, % of its ceiling"]
        self.assertAlmostEqual(mp["figure"], 3.0)
        self.assertAlmostEqual(re["figure"], 2.0)
        for x in (mp, re):
            self.assertIn("the device's L2 is unknown", x["detail"])

    def test_merge_1b_with_every_case_inside_the_l2_is_not_judged(self):
        t = self.merge_beyond_l2(256 * M)  # twice the L2: 512M, more than any case moves
        mp = t["merge 1b merge path, % of its ceiling"]
        self.assertIsNone(mp["figure"])
        self.assertIn("no results: merge-cuda dict_merge at >= 256M moving >= 512M", mp["detail"])
        self.assertIn("3 cases at >= 256M left out", mp["detail"])

    def test_tpch_fused_is_compared_with_the_fastest_other_plan(self):
        self.write("tpch", "cuda", [
            record("C", "operator", 256 * M, params={"data": "random"}, kernel_s=3.0),
            record("C", "ra-paper", 256 * M, params={"data": "random"}, kernel_s=1.2),
            record("C", "ra-tuned", 256 * M, params={"data": "random"}, kernel_s=2.0),
            record("C", "fused", 256 * M, params={"data": "random"}, kernel_s=1.0),
            record("C", "operator", 256 * M, params={"data": "tpch", "sf": 1}, kernel_s=2.0),
            record("C", "ra-tuned", 256 * M, params={"data": "tpch", "sf": 1}, status="skipped"),
            record("C", "fused", 256 * M, params={"data": "tpch", "sf": 1}, kernel_s=0.5),
            record("A", "operator", 256 * M, kernel_s=2.0),
            record("A", "ra-paper", 256 * M, kernel_s=0.8),  # a plan that beats fused
            record("A", "fused", 256 * M, kernel_s=1.0),
        ])
        t = self.evaluate()
        c = t["tpch C fused vs best non-fused plan"]
        self.assertAlmostEqual(c["figure"], 1.2)  # ra-paper / fused, not operator / fused (3x)
        self.assertFalse(c["met"])
        self.assertIn("ra-paper (fastest of 3 non-fused plans) / fused at 256M [data=random]", c["detail"])
        a = t["tpch A fused vs best non-fused plan"]
        self.assertAlmostEqual(a["figure"], 0.8)
        self.assertIn("ra-paper", a["detail"])

    def test_ngram_speedup_is_the_geometric_mean_over_error_levels(self):
        self.write("ngram", "cuda", [
            record("search", "gpu", 64 * M, params={"k": 0}, total_s=1.0),
            record("search", "gpu", 64 * M, params={"k": 3}, total_s=1.0),
            record("batch", "gpu", 64 * M, params={"k": 3}, eps=1.5e6),
        ])
        self.write("ngram", "cpu", [
            record("search", "baseline", 64 * M, params={"k": 0}, total_s=10.0),
            record("search", "baseline", 64 * M, params={"k": 3}, total_s=40.0),
            record("search", "binned", 64 * M, params={"k": 0}, total_s=4.0),
        ])
        t = self.evaluate()
        paper = t["ngram gpu vs cpu baseline, the paper's (geometric mean over k)"]
        self.assertAlmostEqual(paper["figure"], 20.0)
        self.assertTrue(paper["met"])
        best = t["ngram best GPU vs best CPU (geometric mean over k)"]
        self.assertAlmostEqual(best["figure"], (4.0 * 40) ** 0.5)  # binned at k=0, baseline at k=3
        self.assertIn("fastest CPU: binned (1 of 2), baseline (1 of 2)", best["detail"])
        self.assertEqual(t["ngram batched queries/s (reported)"]["figure"], 1.5e6)

    def test_ngram_best_gpu_variant_against_the_best_cpu_implementation(self):
        self.write("ngram", "cuda", [
            record("search", "gpu", 64 * M, params={"k": 0}, total_s=1.0),
            record("search", "gpu", 64 * M, params={"k": 3}, total_s=1.0),
            record("search", "gpu-segmented", 64 * M, params={"k": 0}, total_s=0.5),
            record("search", "gpu-segmented", 64 * M, params={"k": 3}, total_s=2.0),
            record("search", "hybrid", 64 * M, params={"k": 0}, total_s=3.0),
            # the cuda executable's baseline is the host's search, no GPU variant
            record("search", "baseline", 64 * M, params={"k": 0}, total_s=0.01),
            record("search", "gpu-segmented", 128 * M, params={"k": 0}, total_s=0.5),  # no CPU beside it
        ])
        self.write("ngram", "cpu", [
            record("search", "baseline", 64 * M, params={"k": 0}, total_s=10.0),
            record("search", "baseline", 64 * M, params={"k": 3}, total_s=40.0),
            record("search", "binned", 64 * M, params={"k": 0}, total_s=4.0),
            record("search", "parallel", 64 * M, params={"k": 0}, total_s=2.0),
            record("search", "parallel", 64 * M, params={"k": 3}, total_s=8.0),
        ])
        t = self.evaluate()
        best = t["ngram best GPU vs best CPU (geometric mean over k)"]
        self.assertAlmostEqual(best["figure"], (4.0 * 8.0) ** 0.5)  # parallel / gpu-segmented at k=0, / gpu at k=3
        self.assertTrue(best["met"])
        self.assertEqual(best["goal"], 5)
        self.assertIn("2 error levels at 64M", best["detail"])
        self.assertIn("fastest GPU: gpu-segmented (1 of 2), gpu (1 of 2); fastest CPU: parallel", best["detail"])
        paper = t["ngram gpu vs cpu baseline, the paper's (geometric mean over k)"]
        self.assertAlmostEqual(paper["figure"], 20.0)  # (10 * 40) ** 0.5: gpu and baseline only
        self.assertEqual(paper["goal"], 20)
        self.assertNotIn("binned (geometric mean over k)", " ".join(t))  # the old gpu vs binned target is gone

    def test_failed_cases_count_as_missing_and_the_table_prints(self):
        self.write("ra", "cuda", [record("reduce", "cub", 1024 * M, pct=99, status="failed")])
        t = targets.evaluate(*targets.load_rows(Path(self.tmp, "run")))
        reduce = next(x for x in t if x["target"] == "ra reduce, % of its ceiling")
        self.assertIsNone(reduce["met"])
        table = targets.format_table(t)
        self.assertIn("| ra reduce, % of its ceiling | - % | >= 75 | - | no results", table)


if __name__ == "__main__":
    unittest.main()
