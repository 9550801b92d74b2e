"""Scaling across rank counts: runs are matched case by case (the TP 'ranks' parameter aside) and
the ratio t(first)/t(N) is reported; a case seen at one rank count only is left out."""
import json
from pathlib import Path

from helpers import TempDirCase, has_matplotlib

from hdb import scaling

import make_fixture


def _doc(ranks, kernel_s, extra_case=False):
    def rec(params, t):
        return make_fixture.record("dist_unique", "serial", 1 << 20, t, params=params)
    results = [rec({"ranks": ranks, "scaling": "strong"}, kernel_s)]
    if extra_case:
        results.append(rec({"ranks": ranks, "scaling": "weak"}, 1.0))
    return make_fixture.document("dist", "cpu", results, 20.0)


class ScalingTest(TempDirCase):
    def _run(self, name, doc):
        raw = Path(self.tmp, name, "raw")
        raw.mkdir(parents=True)
        with (raw / "dist-cpu.json").open("w") as f:
            json.dump(doc, f)
        return str(Path(self.tmp, name))

    def test_ratios_and_files(self):
        runs = [(1, self._run("r1", _doc(1, 4.0, extra_case=True))), (2, self._run("r2", _doc(2, 2.5))),
                (4, self._run("r4", _doc(4, 1.0)))]
        out = Path(self.tmp, "scaling")
        table = scaling.write(runs, out)
        self.assertEqual(len(table), 1)  # case b ran at one rank count only
        (key, times), = table.items()
        self.assertEqual(key[4], "scaling=strong")  # the ranks parameter is not part of the match
        self.assertEqual(times, {1: 4.0, 2: 2.5, 4: 1.0})
        md = (out / "scaling.md").read_text()
        self.assertIn("| 1.00 | 1.60 | 4.00 |", md)
        csv = (out / "scaling.csv").read_text().splitlines()
        self.assertEqual(len(csv), 2)
        if has_matplotlib():
            self.assertTrue((out / "plots" / "scaling.png").stat().st_size > 1000)
