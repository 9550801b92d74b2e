"""The CPU regression gate (scripts/hdb/regression.py, issue 51) on synthetic documents whose ratios
are known, and its committed configuration."""
import json
import stat
import unittest
from pathlib import Path

from helpers import REPO, TempDirCase, script

from hdb import regression
from hdb.util import UsageError

M = 1 << 20
SIZE = 256 * M
GATE = {
    "factor": 1.5, "size": "256M", "anchor": "copy",
    "cases": {
        "copy": {"test": "project", "variant": "parallel", "params": {"key": 32}},
        "filter": {"test": "select", "variant": "parallel", "params": {"key": 32, "selectivity": 0.5}},
        "sort": {"test": "sort", "variant": "parallel", "params": {"key": 32}},
    },
    "machines": [
        {"cpu": "Test CPU", "avx512": True, "source": "a test",
         "ratios": {"copy": {"to_ceiling": 0.8}, "filter": {"to_ceiling": 0.4, "to_anchor": 0.5},
                    "sort": {"to_ceiling": 0.04, "to_anchor": 0.05}}},
        {"cpu": "Other CPU", "avx512": False, "source": "another test",
         "ratios": {"copy": {"to_ceiling": 0.6}, "filter": {"to_ceiling": 0.2, "to_anchor": 0.3},
                    "sort": {"to_ceiling": 0.06, "to_anchor": 0.1}}},
    ],
}


def result(test, variant, params, seconds, moved=10**9, size=SIZE, ceiling=None, status="ok"):
    r = {"test": test, "variant": variant, "params": params, "size_bytes": size, "status": status,
         "bytes": {"input": moved, "min_moved": moved, "transfer": 0},
         # The fastest pass counts: the slow one is noise.
         "trials": [{"kernel_s": seconds}, {"kernel_s": 3 * seconds}]}
    if ceiling is not None:
        r["throughput"] = {"ceiling_gbps": ceiling}
    return r


def document(copy_s=1 / 16, filter_s=1 / 8, sort_s=1.25, ceiling=20.0, cpu="Test CPU", **kw):
    """Rates: copy 16 GB/s, filter 8, sort 0.8; against a 20 GB/s ceiling: 0.8, 0.4, 0.04."""
    return {"context": {"cpu": cpu}, "ceiling": {"memory_copy_gbps": 99.0},
            "results": [result("project", "parallel", {"dist": "uniform", "key": 32}, copy_s, ceiling=ceiling),
                        result("select", "parallel", {"dist": "uniform", "key": 32, "selectivity": 0.5}, filter_s,
                               ceiling=ceiling, **kw),
                        result("sort", "parallel", {"dist": "uniform", "key": 32}, sort_s, ceiling=ceiling)]}


class RegressionGateTest(TempDirCase):
    def gate(self, raw=None):
        path = Path(self.tmp, "regression.json")
        path.write_text(json.dumps(raw or GATE))
        return regression.load_gate(path)

    def verdicts(self, doc, cpu="Test CPU", avx512=True):
        gate = self.gate()
        ref, factor, source = regression.reference_for(gate, cpu, avx512)
        return {v.case: v for v in regression.judge(regression.ratios(doc, gate), ref, gate, factor)}, factor, source

    def test_ratios_use_the_fastest_pass_and_the_nearest_ceiling(self):
        r = regression.ratios(document(), self.gate())
        self.assertAlmostEqual(r["copy"]["to_ceiling"], 0.8)
        self.assertNotIn("to_anchor", r["copy"])  # the anchor against itself says nothing
        self.assertAlmostEqual(r["filter"]["to_ceiling"], 0.4)
        self.assertAlmostEqual(r["filter"]["to_anchor"], 0.5)
        self.assertAlmostEqual(r["sort"]["to_anchor"], 0.05)

    def test_a_document_before_per_case_ceilings_uses_its_run_ceiling(self):
        doc = document(ceiling=None)
        doc["ceiling"]["memory_copy_gbps"] = 40.0
        self.assertAlmostEqual(regression.ratios(doc, self.gate())["copy"]["to_ceiling"], 0.4)

    def test_a_case_against_its_access_pattern_is_judged_by_the_copy_sample(self):
        """Issue 46: a case divided by the ceiling of its access pattern (here a read ceiling of 32 GB/s)
        keeps its ratio to the copy sample nearest to it, as the references were recorded."""
        doc = document(ceiling=32.0)
        doc["ceiling"]["samples"] = [{"at_s": 0.0, "gbps": 20.0}, {"at_s": 100.0, "gbps": 10.0}]
        for i, r in enumerate(doc["results"]):
            r["throughput"]["ceiling_pattern"] = "read"
            r["timed_at_s"] = 1.0 + i
        r = regression.ratios(doc, self.gate())
        self.assertAlmostEqual(r["copy"]["to_ceiling"], 0.8)
        self.assertAlmostEqual(r["filter"]["to_ceiling"], 0.4)

    def test_a_case_at_another_size_or_with_other_parameters_does_not_count(self):
        doc = document()
        doc["results"][1]["size_bytes"] = 64 * M
        doc["results"][2]["params"]["key"] = 64
        r = regression.ratios(doc, self.gate())
        self.assertNotIn("filter", r)
        self.assertNotIn("sort", r)

    def test_an_unchanged_build_passes(self):
        v, factor, _ = self.verdicts(document())
        self.assertEqual(factor, 1.5)
        self.assertFalse(any(x.failed for x in v.values()))

    def test_a_select_twice_as_slow_fails_naming_both_figures(self):
        v, _, source = self.verdicts(document(filter_s=2 / 8))
        self.assertTrue(v["filter"].failed)
        self.assertAlmostEqual(v["filter"].losses["to_ceiling"], 2.0)
        self.assertAlmostEqual(v["filter"].losses["to_anchor"], 2.0)
        self.assertFalse(v["copy"].failed or v["sort"].failed)
        text = regression.format_verdicts(list(v.values()), self.gate(), 1.5, source)
        self.assertIn("0.400 -> 0.200 (2.00x)", text)
        self.assertIn("FAILED", text)
        self.assertIn("a test", text)

    def test_a_slower_machine_is_not_a_regression(self):
        # Everything 1.8x slower, the ceiling too: every ratio as before.
        v, _, _ = self.verdicts(document(copy_s=1.8 / 16, filter_s=1.8 / 8, sort_s=1.8 * 1.25, ceiling=20 / 1.8))
        self.assertFalse(any(x.failed for x in v.values()))

    def test_one_ratio_beyond_the_factor_is_not_enough(self):
        # The ceiling sampled beside the case was 2x high (a wandering measurement): only to_ceiling lost.
        doc = document()
        doc["results"][1]["throughput"]["ceiling_gbps"] = 40.0
        v, _, _ = self.verdicts(doc)
        self.assertAlmostEqual(v["filter"].losses["to_ceiling"], 2.0)
        self.assertFalse(v["filter"].failed)

    def test_a_missing_or_failed_case_fails(self):
        v, _, _ = self.verdicts(document(status="failed"))
        self.assertTrue(v["filter"].failed and v["filter"].missing)

    def test_a_machine_without_a_reference_gets_the_lowest_ratios_and_twice_the_factor(self):
        gate = self.gate()
        ref, factor, source = regression.reference_for(gate, "Test CPU", avx512=False)
        self.assertEqual(factor, 3.0)
        self.assertEqual(ref["filter"], {"to_ceiling": 0.2, "to_anchor": 0.3})
        self.assertEqual(ref["sort"], {"to_ceiling": 0.04, "to_anchor": 0.05})
        self.assertIn("no reference for Test CPU (without AVX-512)", source)
        self.assertIn("--make-reference", source)

    def test_best_of_two_measurements(self):
        best = regression.best_of({"a": {"x": 1.0, "y": 3.0}}, {"a": {"x": 2.0, "y": 1.0}, "b": {"x": 5.0}})
        self.assertEqual(best, {"a": {"x": 2.0, "y": 3.0}, "b": {"x": 5.0}})

    def test_make_reference_from_a_document(self):
        runs = [document(), document(filter_s=1 / 6), document(filter_s=1 / 10)]
        entry = regression.make_reference(runs, self.gate(), True, "a run")
        self.assertEqual(entry["cpu"], "Test CPU")
        self.assertTrue(entry["avx512"])
        # The median of the three runs' ratios: 8/20 and 8/16 (of 6, 8, 10 GB/s).
        self.assertEqual(entry["ratios"]["filter"], {"to_ceiling": 0.4, "to_anchor": 0.5})
        with self.assertRaisesRegex(UsageError, "document 2 has no verified result for filter"):
            regression.make_reference([document(), document(status="skipped")], self.gate(), True, "a run")
        with self.assertRaisesRegex(UsageError, "different processors"):
            regression.make_reference([document(), document(cpu="Other CPU")], self.gate(), True, "a run")

    def test_a_figure_that_cannot_be_used_is_no_rate(self):
        """Issue 50, item 5: the gate reads times through the same check as the report: a pass of
        1e-12 s (a rate of the timer's), a negative, NaN or string one makes no rate, and a case with one
        is named, not measured."""
        for value in (1e-12, -0.1, float("nan"), "0.1"):
            with self.subTest(value=value):
                doc = document()
                doc["results"][1]["trials"][0]["kernel_s"] = value
                self.assertNotIn("filter", regression.ratios(doc, self.gate()))
                with self.assertRaisesRegex(UsageError, r"document 2 has no verified result for filter \(a figure "
                                            r"that cannot be used: select/parallel: trials\[0\]\.kernel_s"):
                    regression.make_reference([document(), doc], self.gate(), True, "a run")

    def test_a_bad_configuration_is_a_usage_error(self):
        for change, message in (({"factor": 1.0}, "must be above 1"), ({"anchor": "nope"}, "not one of the cases"),
                                ({"size": "huge"}, "size")):
            with self.assertRaisesRegex(UsageError, message):
                self.gate({**GATE, **change})
        with self.assertRaisesRegex(UsageError, "missing or malformed 'anchor'"):
            self.gate({k: v for k, v in GATE.items() if k != "anchor"})
        broken = json.loads(json.dumps(GATE))
        del broken["machines"][0]["ratios"]["sort"]
        with self.assertRaisesRegex(UsageError, "lacks sort"):
            self.gate(broken)

    def test_listed_ids_are_read_back_into_parameters(self):
        self.assertEqual(regression.parse_id("join/parallel[dist=uniform,key=32,match=0.5]@256M"),
                         ("join", "parallel", {"dist": "uniform", "key": "32", "match": "0.5"}, "256M"))
        self.assertEqual(regression.parse_id("sort/parallel@1M"), ("sort", "parallel", {}, "1M"))
        c = self.gate().cases[1]
        self.assertEqual(c.only(), "select/parallel")
        self.assertTrue(c.matches({"test": "select", "variant": "parallel", "size_bytes": SIZE,
                                   "params": {"key": "32", "selectivity": "0.5"}}, SIZE))
        self.assertFalse(c.matches({"test": "select", "variant": "parallel", "size_bytes": SIZE,
                                    "params": {"key": "32", "selectivity": "0.9"}}, SIZE))

    def test_avx512_from_cpuinfo(self):
        info = Path(self.tmp, "cpuinfo")
        info.write_text("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512dq\n")
        self.assertTrue(regression.has_avx512(info))
        info.write_text("processor\t: 0\nflags\t\t: fpu sse avx2 avx512_vnni_like\n")
        self.assertFalse(regression.has_avx512(info))
        self.assertFalse(regression.has_avx512(Path(self.tmp, "none")))

    def test_the_committed_configuration_loads(self):
        gate = regression.load_gate(Path(REPO, "config", "regression.json"))
        self.assertGreater(len(gate.machines), 0)
        self.assertEqual(gate.factor, 1.5)

    def test_the_command_runs_a_fake_executable_and_fails_on_a_loss(self):
        # A stand-in for hdb-ra-cpu that writes a document whose select is twice as slow.
        bindir = Path(self.tmp, "build", "bin")
        bindir.mkdir(parents=True)
        doc = document(filter_s=2 / 8)
        exe = bindir / "hdb-ra-cpu"
        # --list prints the ids (a second select the gate must not pick); a run writes the document,
        # and checks that each pattern is one listed id with '?' where the id has its commas.
        exe.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                       f"doc = json.loads({json.dumps(json.dumps(doc))})\n"
                       "ids = [r['test'] + '/' + r['variant'] + '[' + ','.join(f'{k}={v}' for k, v in "
                       "r['params'].items()) + ']@256M' for r in doc['results']]\n"
                       "if '--list' in sys.argv:\n"
                       "    print('\\n'.join(ids + ['select/parallel[dist=uniform,key=32,selectivity=0.9]@256M']))\n"
                       "    sys.exit(0)\n"
                       "only = sys.argv[sys.argv.index('--only') + 1].split(',')\n"
                       "assert set(only) <= {i.replace(',', '?') for i in ids}, only\n"
                       "json.dump(doc, open(sys.argv[sys.argv.index('--json') + 1], 'w'))\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        config = Path(self.tmp, "regression.json")
        config.write_text(json.dumps(GATE))
        info = Path(self.tmp, "cpuinfo")
        info.write_text("flags\t\t: fpu avx512f\n")
        p = script("regression-gate", "--build-dir", str(Path(self.tmp, "build")), "--config", str(config),
                   "--keep", str(Path(self.tmp, "kept")), "--cpuinfo", str(info))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("filter", p.stdout, p.stderr)
        self.assertIn("measured twice", p.stdout)
        self.assertTrue(Path(self.tmp, "kept", "regression-2.json").exists())
        p = script("regression-gate", "--build-dir", str(Path(self.tmp, "nowhere")), "--config", str(config))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such executable", p.stderr)


if __name__ == "__main__":
    unittest.main()
