"""scripts/compare matches results across runs and flags only differences beyond the noise."""
import csv
import json
import shutil
from pathlib import Path

from helpers import TempDirCase, has_matplotlib, script

from hdb import compare


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
        path = Path(b, "raw", "ra-cpu.json")
        with path.open() as f:
            doc = json.load(f)
        doc["results"][0]["stats"]["kernel_s"]["median"] *= 2  # B twice as slow on one case
        doc["results"][1]["stats"]["kernel_s"]["median"] *= 1.005  # within noise
        slow_id = doc["results"][0]["id"]
        # The same case written later in the file than in A: matched by id, not by position.
        doc["results"].reverse()
        with path.open("w") as f:
            json.dump(doc, f)
        Path(b, "raw", "ngram-cuda.json").unlink()
        out = str(Path(self.tmp, "cmp"))
        p = script("compare", a, b, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        flagged = [r for r in self.verdicts(out) if r["verdict"]]
        self.assertEqual(len(flagged), 1, flagged)
        self.assertEqual(flagged[0]["verdict"], "slower")
        self.assertEqual((flagged[0]["benchmark"], flagged[0]["backend"], flagged[0]["id"]), ("ra", "cpu", slow_id))
        self.assertAlmostEqual(float(flagged[0]["speedup_b_over_a"]), 0.5, places=6)
        self.assertIn("only in A", Path(out, "compare.md").read_text())
        self.assertIn("slower", p.stdout)

    def test_noise_bound(self):
        self.assertAlmostEqual(compare.noise_bound(0.03, 0.04), 0.10)
        self.assertEqual(compare.noise_bound(0, 0), compare.NOISE_FLOOR)

    def test_missing_run_is_a_usage_error(self):
        p = script("compare", self.copy_fixture(), str(Path(self.tmp, "nope")))
        self.assertEqual(p.returncode, 2)
