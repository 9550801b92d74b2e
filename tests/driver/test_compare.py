"""scripts/compare matches results across runs and marks a difference only where a Mann-Whitney U test
over the trials rejects "same" (p adjusted by Benjamini-Hochberg) and the medians differ by at least the
minimum effect; a pair whose trial counts cannot reach p < alpha says "too few trials to decide"."""
import csv
import json
import math
import shutil
import unittest
from pathlib import Path

import numpy as np

from helpers import NO_FIGURES, TempDirCase, has_matplotlib, script

from hdb import compare, results

from make_fixture import document, record, stats

K, M = 1 << 10, 1 << 20
TOO_FEW_3_3 = "too few trials to decide (n=3,3; min p=0.1)"


def with_trials(rec, kernel_times):
    """A results[] entry whose timed passes take these kernel seconds (no transfers); its stats anew."""
    rec["trials"] = [{"h2d_s": 0.0, "kernel_s": t, "d2h_s": 0.0, "total_s": t, "phases_s": {}} for t in kernel_times]
    rec["stats"].update({k: stats([tr[k] for tr in rec["trials"]]) for k in ("kernel_s", "total_s", "h2d_s", "d2h_s")})
    return rec


def lognormal(median, spread, n, seed):
    """n pass times around `median` with a relative spread (log-normal): what a steady case measures."""
    return list(np.random.default_rng(seed).lognormal(math.log(median), spread, n))


def case(size, times):
    return with_trials(record("select", "parallel", size, times[0], params={"dist": "uniform", "selectivity": 0.5}),
                       times)


def rows(*cases):
    return results.all_rows([document("ra", "cpu", list(cases), 40.0)])


class Decisions(unittest.TestCase):
    """compare.match on synthetic trials: the decision follows the test, the effect and the counts."""

    def pair(self, times_a, times_b, **kw):
        pairs, _, _ = compare.match(rows(case(M, times_a)), rows(case(M, times_b)), **kw)
        [p] = pairs
        return p

    def test_clearly_different_distributions_are_changed(self):
        p = self.pair(lognormal(1e-3, 0.01, 10, 1), lognormal(1.2e-3, 0.01, 10, 2))
        self.assertEqual((p["decision"], p["verdict"]), ("slower", "slower"))
        self.assertLess(p["p_value"], 1e-3)
        self.assertEqual(p["p_adjusted"], p["p_value"])  # one test: nothing to adjust
        self.assertAlmostEqual(p["effect"], 1.2, delta=0.02)
        self.assertAlmostEqual(p["effect"], 1 / p["speedup"])
        self.assertEqual((p["n_a"], p["n_b"]), (10, 10))
        q = self.pair(lognormal(1.2e-3, 0.01, 10, 2), lognormal(1e-3, 0.01, 10, 1))
        self.assertEqual((q["decision"], q["verdict"]), ("faster", "faster"))

    def test_the_same_distribution_is_same(self):
        for seed in range(5):
            p = self.pair(lognormal(1e-3, 0.05, 10, seed), lognormal(1e-3, 0.05, 10, seed + 100))
            self.assertGreaterEqual(p["p_value"], compare.ALPHA, seed)
            self.assertEqual((p["decision"], p["verdict"]), ("same", ""), seed)

    def test_three_against_three_trials_cannot_decide(self):
        # Twice as slow in every pass, yet with 3 and 3 trials the test cannot reach p < 0.05.
        p = self.pair([1e-3, 1.01e-3, 0.99e-3], [2e-3, 2.02e-3, 1.98e-3])
        self.assertEqual(p["decision"], TOO_FEW_3_3)
        self.assertEqual(p["verdict"], "")
        self.assertAlmostEqual(p["p_value"], 0.1)  # still shown: the smallest p 3 and 3 trials give
        self.assertIsNone(p["p_adjusted"])          # not one of the tests
        # Four and four can: every pass of B slower gives p = 2/70.
        p = self.pair([1e-3, 1.01e-3, 0.99e-3, 1.02e-3], [2e-3, 2.02e-3, 1.98e-3, 2.01e-3])
        self.assertEqual(p["decision"], "slower")
        self.assertAlmostEqual(p["p_value"], 2 / 70)

    def test_a_real_but_small_difference_is_below_the_minimum_effect(self):
        a, b = lognormal(1e-3, 0.001, 20, 3), lognormal(1.02e-3, 0.001, 20, 4)  # 2% slower, very steady
        p = self.pair(a, b)
        self.assertLess(p["p_value"], 1e-6)
        self.assertEqual((p["decision"], p["verdict"]), ("same (below the 5% minimum effect)", ""))
        p = self.pair(a, b, min_effect=0.01)
        self.assertEqual((p["decision"], p["verdict"]), ("slower", "slower"))
        # The effect counts alike both ways: B 25% slower, or A 25% slower (B 20% faster in time).
        self.assertAlmostEqual(compare.effect_size(1.25), 0.25)
        self.assertAlmostEqual(compare.effect_size(0.8), 0.25)
        up, down = self.pair(a, [t * 1.25 for t in a], min_effect=0.2), self.pair([t * 1.25 for t in a], a,
                                                                                  min_effect=0.2)
        self.assertEqual((up["decision"], down["decision"]), ("slower", "faster"))

    def test_benjamini_hochberg_over_the_tests(self):
        # One pair 30% slower in 5 and 5 trials (p = 2/252) among nine that did not change.
        sizes = [(i + 1) * M for i in range(10)]
        a = rows(*(case(s, lognormal(1e-3, 0.02, 5, i)) for i, s in enumerate(sizes)))
        b = rows(*(case(s, lognormal(1.3e-3 if i == 0 else 1e-3, 0.02, 5, 50 + i)) for i, s in enumerate(sizes)))
        pairs, _, _ = compare.match(a, b)
        changed = pairs[0]
        self.assertAlmostEqual(changed["p_value"], 2 / 252)
        self.assertGreater(changed["p_adjusted"], compare.ALPHA)  # 10 tests: no longer below 0.05
        self.assertEqual(changed["decision"], "same")
        self.assertEqual(sum(p["p_adjusted"] is not None for p in pairs), 10)
        pairs, _, _ = compare.match(a, b, correction="none")
        self.assertEqual(pairs[0]["decision"], "slower")
        self.assertEqual(pairs[0]["p_adjusted"], pairs[0]["p_value"])
        self.assertEqual([p["verdict"] for p in pairs[1:]], [""] * 9)
        with self.assertRaises(ValueError):
            compare.decide(pairs, correction="holm")

    def test_min_p_and_ties(self):
        self.assertAlmostEqual(compare.min_p(3, 3), 0.1)
        self.assertAlmostEqual(compare.min_p(4, 4), 2 / 70)
        self.assertAlmostEqual(compare.min_p(2, 5), 2 / 21)
        self.assertEqual(compare.min_p(0, 5), 1.0)
        # Timer ticks make ties: small samples are then tested by exact permutation, never by the normal
        # approximation (which would say 0.013 here, below what 4 and 4 trials can show).
        self.assertAlmostEqual(compare.rank_test([1.0] * 4, [2.0] * 4), 2 / 70)
        self.assertEqual(compare.rank_test([1.0] * 3, [1.0] * 3), 1.0)

    def test_a_bus_copy_is_tested_by_its_transfer_times(self):
        def copy(times):
            r = record("h2d", "copy", 32 * M, 0.0, h2d_s=times[0], transfer="pinned")
            r["trials"] = [{"h2d_s": t, "kernel_s": 0.0, "d2h_s": 0.0, "total_s": t, "phases_s": {}} for t in times]
            r["stats"].update({k: stats([tr[k] for tr in r["trials"]]) for k in ("kernel_s", "total_s", "h2d_s")})
            return r
        a = results.all_rows([document("bus", "cuda", [copy(lognormal(1e-3, 0.01, 6, 1))], 3000.0)])
        b = results.all_rows([document("bus", "cuda", [copy(lognormal(2e-3, 0.01, 6, 2))], 3000.0)])
        self.assertEqual(compare.trial_times(a[0], "kernel"), [t["h2d_s"] for t in a[0]["trials"]])
        [p], _, _ = compare.match(a, b)
        self.assertEqual(p["decision"], "slower")


class Untimed(unittest.TestCase):
    def test_a_result_without_a_kernel_time_is_named_not_dropped(self):
        """A matched pair of which one side has no kernel time (0, and no bus transfer) has no speed-up:
        match() leaves it out, and untimed() names it for the comparison (it was dropped unsaid)."""
        a = rows(record("select", "parallel", M, 1e-3, params={"dist": "uniform", "selectivity": 0.5}))
        b = rows(record("select", "parallel", M, 0.0, params={"dist": "uniform", "selectivity": 0.5}))
        pairs, only_a, only_b = compare.match(a, b)
        self.assertEqual((pairs, only_a, only_b), ([], [], []))
        self.assertEqual([k[3] for k in compare.untimed(a, b)], ["select/parallel[dist=uniform,selectivity=0.5]@1M"])
        self.assertEqual(compare.untimed(a, b, "total"), [])  # with transfers it has a time
        self.assertEqual(len(compare.match(a, b, "total")[0]), 1)


class CompareTest(TempDirCase):
    def verdicts(self, out):
        with Path(out, "compare.csv").open() as f:
            return list(csv.DictReader(f))

    def test_identical_runs_flag_nothing(self):
        a = self.copy_fixture()
        b = str(Path(self.tmp, "run-b"))
        shutil.copytree(a, b)
        out = str(Path(self.tmp, "cmp"))
        p = script("compare", a, b, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = self.verdicts(out)
        self.assertGreater(len(rows), 100)
        self.assertTrue(all(r["verdict"] == "" for r in rows))
        # The fixture's cases have 3 trials each: no pair can be decided, and each says so.
        self.assertEqual({r["decision"] for r in rows}, {TOO_FEW_3_3})
        self.assertTrue(all(float(r["p_value"]) == 1.0 and float(r["effect"]) == 1.0 for r in rows))
        self.assertIn(f"{len(rows)} too few trials to decide", p.stdout)
        ids = {(r["benchmark"], r["backend"], r["id"]) for r in rows}
        self.assertEqual(len(ids), len(rows))  # matched by id: one pair per result
        # Bus copies have no kernel time and are compared by their transfer time.
        self.assertIn(("bus", "cuda", "h2d/copy[transfer=pinned]@32M"), ids)
        # Results measured under --no-verify are left out unless asked for.
        self.assertFalse([r for r in rows if r["backend"] == "opencl"])
        out2 = str(Path(self.tmp, "cmp2"))
        p = script("compare", a, b, "--out", out2, "--include-unverified")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len([r for r in self.verdicts(out2) if r["backend"] == "opencl"]), 3)
        self.assertEqual(len(self.verdicts(out2)), len(rows) + 3)
        self.assertTrue(Path(out, "compare.html").is_file())
        if has_matplotlib():
            self.assertTrue(Path(out, "plots", "ratio-ra.svg").is_file())

    def test_a_slower_case_is_flagged_and_unmatched_listed(self):
        a = self.copy_fixture()
        b = str(Path(self.tmp, "run-b"))
        shutil.copytree(a, b)
        docs = {}
        for run in (a, b):
            path = Path(run, "raw", "ra-cpu.json")
            docs[run] = (path, json.loads(path.read_text()))
        # Eight passes per case on both sides for the first two cases: B twice as slow on the first,
        # 0.5% slower on the second (within the minimum effect, whatever the test says).
        for i, (factor_b, seed) in enumerate(((2.0, 10), (1.005, 20))):
            base = docs[a][1]["results"][i]["stats"]["kernel_s"]["median"]
            with_trials(docs[a][1]["results"][i], lognormal(base, 0.01, 8, seed))
            with_trials(docs[b][1]["results"][i], lognormal(base * factor_b, 0.01, 8, seed + 1))
        slow_id = docs[b][1]["results"][0]["id"]
        # The same case written later in the file than in A: matched by id, not by position.
        docs[b][1]["results"].reverse()
        for path, doc in docs.values():
            path.write_text(json.dumps(doc))
        Path(b, "raw", "ngram-cuda.json").unlink()
        out = str(Path(self.tmp, "cmp"))
        p = script("compare", a, b, "--out", out, env=NO_FIGURES)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = self.verdicts(out)
        flagged = [r for r in rows if r["verdict"]]
        self.assertEqual(len(flagged), 1, flagged)
        self.assertEqual((flagged[0]["verdict"], flagged[0]["decision"]), ("slower", "slower"))
        self.assertEqual((flagged[0]["benchmark"], flagged[0]["backend"], flagged[0]["id"]), ("ra", "cpu", slow_id))
        self.assertAlmostEqual(float(flagged[0]["speedup_b_over_a"]), 0.5, delta=0.02)
        self.assertAlmostEqual(float(flagged[0]["effect"]), 2.0, delta=0.08)
        self.assertAlmostEqual(float(flagged[0]["p_value"]), 2 / math.comb(16, 8))
        self.assertEqual((flagged[0]["a_trials"], flagged[0]["b_trials"]), ("8", "8"))
        tested = [r for r in rows if r["p_adjusted"]]
        self.assertEqual(len(tested), 2)  # the other pairs have 3 and 3 trials: too few to decide
        self.assertTrue(all(r["decision"] == TOO_FEW_3_3 for r in rows if not r["p_adjusted"]))
        small = next(r for r in tested if r is not flagged[0])
        self.assertIn(small["decision"], ("same", "same (below the 5% minimum effect)"))
        md = Path(out, "compare.md").read_text()
        self.assertIn("only in A", md)
        self.assertIn("p adjusted by Benjamini-Hochberg over the 2 tests", md)
        self.assertIn("minimum effect, 5.0%", md)
        self.assertIn("| adjusted p | decision |", md)
        self.assertIn("slower", p.stdout)
        self.assertIn("2 tested (Mann-Whitney U over the trials, two-sided; alpha 0.05, Benjamini-Hochberg; "
                      "minimum effect 5.0%): 0 faster in B, 1 slower in B, 1 same", p.stdout)
        self.assertRegex(p.stdout, r"slower x0\.\d+ \(time \+\d+\.\d%, p=0\.00016, adjusted p=0\.00031, trials 8,8\)")
        # A stricter minimum effect leaves it unmarked; no correction, a looser alpha: still one.
        out2 = str(Path(self.tmp, "cmp2"))
        p = script("compare", a, b, "--out", out2, "--min-effect", "1.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse([r for r in self.verdicts(out2) if r["verdict"]])
        p = script("compare", a, b, "--out", out2, "--alpha", "0.1", "--correction", "none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("p not adjusted for the 2 tests", Path(out2, "compare.md").read_text())

    def test_a_ceiling_that_moved_is_named_in_one_line(self):
        """Issue 51: where an executable of either run saw its copy ceiling move by more than
        results.CEILING_SPREAD_WARN, compare says so in one line (compare.md and the console)."""
        a = self.copy_fixture()
        b = str(Path(self.tmp, "run-b"))
        shutil.copytree(a, b)
        env = {"HDB_NO_MATPLOTLIB": "1"}
        out = str(Path(self.tmp, "cmp"))
        p = script("compare", a, b, "--out", out, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("copy ceiling moved", p.stdout + Path(out, "compare.md").read_text())
        path = Path(b, "raw", "ra-cpu.json")
        doc = json.loads(path.read_text())
        doc["ceiling"].update(samples=[{"at_s": 0.0, "gbps": 20.0}, {"at_s": 10.0, "gbps": 15.0},
                                       {"at_s": 20.0, "gbps": 20.4}], memory_copy_gbps=20.0, spread=5.4 / 20.0)
        path.write_text(json.dumps(doc))
        p = script("compare", a, b, "--out", out, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        line = ("the copy ceiling moved by more than 10% during a run ((max - min) / median of its samples: B: ra-cpu "
                "27.0%); a memory-bound case's time follows the machine's bandwidth, so a difference there may be the "
                "machine's, not the code's.")
        self.assertIn(f"compare: note: {line}", p.stdout)
        self.assertIn(f"> **Warning:** {line}", Path(out, "compare.md").read_text())

    def test_bad_options_are_usage_errors(self):
        a = self.copy_fixture()
        for opt in (["--alpha", "0"], ["--alpha", "1.5"], ["--alpha", "nan"], ["--min-effect", "nan"],
                    ["--min-effect", "-0.1"], ["--correction", "holm"]):
            p = script("compare", a, a, "--out", str(Path(self.tmp, "cmp")), *opt)
            self.assertEqual(p.returncode, 2, opt)
            self.assertNotIn("Traceback", p.stderr)

    def test_missing_run_is_a_usage_error(self):
        p = script("compare", self.copy_fixture(), str(Path(self.tmp, "nope")))
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
