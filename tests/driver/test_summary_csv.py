"""summary.csv's medians' intervals (issue 47, item 5): the distribution-free 95 % confidence
interval of the kernel and total medians from each result's trials by order statistics (the
binomial method), in the driver's columns kernel_median_lo_s .. total_median_hi_s; empty where it
does not apply. The header is x-csv-columns then x-summary-csv-columns; the csv module (and pandas
and DuckDB where this Python has them) load it with no options; tests/check_results.py --all takes
it and one of an earlier driver."""
import csv
import io
import json
import subprocess
import sys
import unittest
from fractions import Fraction
from math import comb
from pathlib import Path

from helpers import CSV_COLUMNS, REPO, SCHEMA_FILE, TempDirCase

from hdb import results

import check_csv_header
import make_fixture

CHECK = [sys.executable, str(Path(REPO, "tests", "check_results.py")), "--all"]
INTERVALS = ["kernel_median_lo_s", "kernel_median_hi_s", "total_median_lo_s", "total_median_hi_s"]
DRIVER = ["above_ceiling", "key", *INTERVALS]

# The trials as multiples of a case's median kernel time, in the order they ran (not sorted): 7 trials
# (median 1.0; ranks 1 and 7: 0.8 and 1.3) and 10 (median (1.0 + 1.0) / 2; ranks 2 and 9: 0.9 and 1.2).
SEVEN = (1.3, 0.9, 1.0, 1.1, 0.95, 1.05, 0.8)
TEN = (1.5, 0.7, 1.0, 0.98, 1.02, 1.2, 0.95, 1.0, 0.9, 1.05)
FIVE = (1.1, 0.9, 1.0, 1.05, 0.95)


def coverage(n, j):
    """1 - 2 P(Binom(n, 1/2) <= j - 1), exactly: what the ranks (j, n + 1 - j) cover."""
    return 1 - Fraction(2 * sum(comb(n, i) for i in range(j)), 2**n)


def with_trials(r, factors):
    """Result r with one trial per factor (kernel, transfers and phases scaled from its first trial's)
    and its stats rebuilt from them, as the harness would have recorded it; the median kernel time
    stays where it was (each factor list has median 1), so its throughput still holds."""
    base = r["trials"][0]
    trials = []
    for f in factors:
        t = {"h2d_s": base["h2d_s"] * f, "kernel_s": base["kernel_s"] * f, "d2h_s": base["d2h_s"] * f,
             "phases_s": {k: v * f for k, v in base["phases_s"].items()}}
        t["total_s"] = t["h2d_s"] + t["kernel_s"] + t["d2h_s"] + 1e-6
        trials.append(t)
    r["trials"] = trials
    st = {k: make_fixture.stats([t[k] for t in trials]) for k in ("kernel_s", "total_s", "h2d_s", "d2h_s")}
    st["phases_s"] = {k: make_fixture.stats([t["phases_s"][k] for t in trials]) for k in base["phases_s"]}
    r["stats"] = st
    return r


class RanksTest(unittest.TestCase):
    def test_ranks_are_the_binomial_methods(self):
        # Hand-computed: n = 7, P(B <= 0) = 1/128, coverage of (1, 7) 1 - 2/128 = 0.984; (2, 6) covers
        # 1 - 2 * 8/128 = 0.875 < 0.95. n = 10: (2, 9) covers 1 - 2 * 11/1024 = 0.979; (3, 8)
        # 1 - 2 * 56/1024 = 0.891.
        self.assertEqual(coverage(7, 1), 1 - Fraction(2, 128))
        self.assertEqual(coverage(7, 2), 1 - Fraction(16, 128))
        self.assertEqual(coverage(10, 2), 1 - Fraction(22, 1024))
        self.assertEqual(coverage(10, 3), 1 - Fraction(112, 1024))
        self.assertEqual(results.median_interval_ranks(7), (1, 7))
        self.assertEqual(results.median_interval_ranks(10), (2, 9))
        # Below 6 trials not even the extremes cover 95 %: 1 - 2/32 = 0.9375 of 5; 1 - 2/64 of 6.
        self.assertEqual(coverage(5, 1), Fraction(15, 16))
        for n in range(6):
            self.assertIsNone(results.median_interval_ranks(n), n)
        self.assertEqual(results.median_interval_ranks(6), (1, 6))
        # Every n: the ranks nearest the middle that still cover 95 %.
        for n in range(6, 200):
            j, k = results.median_interval_ranks(n)
            self.assertEqual(k, n + 1 - j)
            self.assertGreaterEqual(coverage(n, j), Fraction(95, 100), n)
            self.assertLess(coverage(n, j + 1), Fraction(95, 100), n)
        self.assertEqual(results.median_interval_ranks(20), (6, 15))  # the tables' value

    def test_interval_is_the_order_statistics(self):
        self.assertEqual(results.median_interval(SEVEN), (0.8, 1.3))
        self.assertEqual(results.median_interval(TEN), (0.9, 1.2))
        self.assertIsNone(results.median_interval(FIVE))
        self.assertIsNone(results.median_interval(()))

    def test_cells_are_empty_where_the_interval_does_not_apply(self):
        trials = [{"kernel_s": f, "total_s": f + 1} for f in SEVEN]  # seconds, the median 1 and 2
        row = {"status": "ok", "kernel_median_s": 1.0, "total_median_s": 2.0, "trials": trials}
        self.assertEqual(results._driver_cells(row, ""), {
            "above_ceiling": "", "kernel_median_lo_s": "0.8", "kernel_median_hi_s": "1.3",
            "total_median_lo_s": "1.8", "total_median_hi_s": "2.3"})
        empty = dict.fromkeys(INTERVALS, "")
        skipped = {"status": "skipped", "trials": [], "kernel_median_s": None, "total_median_s": None}
        for change in ({"status": "failed"}, skipped, {"trials": trials[:5]}, {"trials": []}):
            self.assertEqual({k: v for k, v in results._driver_cells({**row, **change}, "").items()
                              if k in INTERVALS}, empty, change)
        # A kernel time that does not apply (a bus copy's: 0 in the JSON) has no interval; its total does.
        cells = results._driver_cells({**row, "kernel_median_s": 0.0}, "x")
        self.assertEqual((cells["above_ceiling"], cells["kernel_median_lo_s"], cells["kernel_median_hi_s"]),
                         ("x", "", ""))
        self.assertEqual((cells["total_median_lo_s"], cells["total_median_hi_s"]), ("1.8", "2.3"))


class UnitsTest(unittest.TestCase):
    """One unit convention in the files: cv a fraction (the JSON's stats.cv, as summary.csv carries it),
    the one percentage pct_of_peak; the headline files hold no cv or percentage; every column's unit
    in docs/results-schema.md."""

    def test_every_column_has_its_unit_in_the_schema_page(self):
        text = Path(REPO, "docs", "results-schema.md").read_text()
        table = text[text.index("**Units of the columns**"):text.index("## summary")]
        for column in CSV_COLUMNS + DRIVER:
            self.assertIn(f"`{column}`", table, column)
        cv = next(ln for ln in table.splitlines() if ln.startswith("| `kernel_cv`"))
        self.assertIn("fraction", cv)

    def test_cv_is_the_json_fraction_and_the_headline_has_no_percentage(self):
        from hdb import headline
        self.assertFalse([f for f in headline.RECORD_FIELDS if "cv" in f.split("_") or "pct" in f or "percent" in f])
        doc = json.loads(Path(make_fixture.OUT, "raw", "ra-cpu.json").read_text())
        with Path(make_fixture.OUT, "raw", "ra-cpu.csv").open(newline="") as f:
            rows = {r["id"]: r for r in csv.DictReader(f)}
        for r in doc["results"]:
            for col, stat in (("kernel_cv", "kernel_s"), ("total_cv", "total_s")):
                self.assertEqual(float(rows[r["id"]][col]), r["stats"][stat]["cv"])
                self.assertLess(r["stats"][stat]["cv"], 1)  # 1.5 %, written 0.015


class SummaryCsvTest(TempDirCase):
    def setUp(self):
        super().setUp()
        self.run = self.copy_fixture()
        raw = Path(self.run, "raw")
        ra = json.loads(Path(raw, "ra-cpu.json").read_text())
        self.seven, self.ten, self.five = (with_trials(r, f) for r, f in zip(ra["results"], (SEVEN, TEN, FIVE),
                                                                             strict=False))
        make_fixture.write_raw(str(raw), "ra-cpu", ra)
        bus = json.loads(Path(raw, "bus-cuda.json").read_text())
        self.copy = with_trials(bus["results"][0], SEVEN)  # h2d/copy: no kernel time
        make_fixture.write_raw(str(raw), "bus-cuda", bus)

    def summary(self):
        text, problems = results.summary_csv(self.run)
        self.assertEqual(problems, [])
        Path(self.run, "summary.csv").write_text(text)
        return text

    def rows(self, text):
        return {(r["benchmark"], r["backend"], r["id"]): r for r in csv.DictReader(io.StringIO(text))}

    def test_header_is_the_csv_columns_then_the_drivers(self):
        with Path(SCHEMA_FILE).open() as f:
            schema = json.load(f)
        self.assertEqual(schema["x-summary-csv-columns"], DRIVER)
        self.assertEqual(results.summary_columns(), CSV_COLUMNS + DRIVER)
        header = next(csv.reader(io.StringIO(self.summary())))
        self.assertEqual(header, CSV_COLUMNS + schema["x-summary-csv-columns"])

    def test_intervals_from_the_trials(self):
        rows = self.rows(self.summary())
        k = self.seven["trials"][0]["kernel_s"] / SEVEN[0]  # the median kernel time
        r = rows[("ra", "cpu", self.seven["id"])]
        self.assertEqual(r["passes"], "7")
        kernels = sorted(t["kernel_s"] for t in self.seven["trials"])
        totals = sorted(t["total_s"] for t in self.seven["trials"])
        self.assertEqual([float(r[c]) for c in INTERVALS], [kernels[0], kernels[6], totals[0], totals[6]])
        self.assertAlmostEqual(float(r["kernel_median_lo_s"]), 0.8 * k)
        self.assertAlmostEqual(float(r["kernel_median_hi_s"]), 1.3 * k)
        r = rows[("ra", "cpu", self.ten["id"])]
        kernels = sorted(t["kernel_s"] for t in self.ten["trials"])
        totals = sorted(t["total_s"] for t in self.ten["trials"])
        self.assertEqual([float(r[c]) for c in INTERVALS], [kernels[1], kernels[8], totals[1], totals[8]])
        for r in rows.values():  # each interval holds its median
            for what in ("kernel", "total"):
                if r[f"{what}_median_lo_s"]:
                    self.assertLessEqual(float(r[f"{what}_median_lo_s"]), float(r[f"{what}_median_s"]))
                    self.assertLessEqual(float(r[f"{what}_median_s"]), float(r[f"{what}_median_hi_s"]))

    def test_empty_where_the_interval_does_not_apply(self):
        rows = self.rows(self.summary())
        self.assertEqual([rows[("ra", "cpu", self.five["id"])][c] for c in INTERVALS], ["", "", "", ""])
        # the fixture's other results have 3 trials each
        three = [r for r in rows.values() if r["passes"] == "3"]
        self.assertTrue(three)
        self.assertTrue(all(r[c] == "" for r in three for c in INTERVALS))
        skipped = [r for r in rows.values() if r["status"] == "skipped"]
        self.assertTrue(skipped)
        self.assertTrue(all(r[c] == "" for r in skipped for c in INTERVALS))
        # A bus copy: kernel time does not apply (0 in the JSON; its CSV cell "0.0" as the fixture, an
        # executable before issue 47, writes it; empty since), its total does.
        r = rows[("bus", "cuda", self.copy["id"])]
        self.assertEqual(self.copy["stats"]["kernel_s"]["median"], 0)
        self.assertEqual((r["kernel_median_lo_s"], r["kernel_median_hi_s"]), ("", ""))
        totals = sorted(t["total_s"] for t in self.copy["trials"])
        self.assertEqual((float(r["total_median_lo_s"]), float(r["total_median_hi_s"])), (totals[0], totals[6]))

    def test_an_empty_median_cell_leaves_its_interval_empty(self):
        """The CSV's cell rules: where an executable's CSV leaves the median empty, so is its interval
        (the JSON's figure is the one computed from, the CSV's the one the row shows)."""
        raw = Path(self.run, "raw", "ra-cpu.csv")
        with raw.open(newline="") as f:
            recs = list(csv.reader(f))
        at = recs[0].index("kernel_median_s")
        for rec in recs[1:]:
            if rec[0] == self.seven["id"]:
                rec[at] = ""
        with raw.open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(recs)
        r = self.rows(self.summary())[("ra", "cpu", self.seven["id"])]
        self.assertEqual((r["kernel_median_lo_s"], r["kernel_median_hi_s"]), ("", ""))
        self.assertNotEqual(r["total_median_lo_s"], "")

    def test_loaders_take_it_with_no_options(self):
        self.summary()
        path = str(Path(self.run, "summary.csv"))
        with Path(path).open(newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len({r["key"] for r in rows}), len(rows))
        try:
            import pandas
        except ImportError:
            pandas = None
        if pandas is not None:
            df = pandas.read_csv(path)
            self.assertEqual(list(df.columns), CSV_COLUMNS + DRIVER)
            self.assertEqual(str(df["kernel_median_lo_s"].dtype), "float64")
            self.assertEqual(int(df["kernel_median_lo_s"].notna().sum()), 2)
        try:
            import duckdb
        except ImportError:
            duckdb = None
        if duckdb is not None:
            con = duckdb.connect()
            rel = con.sql(f"SELECT * FROM read_csv_auto('{path}')")
            self.assertEqual(rel.columns, CSV_COLUMNS + DRIVER)
            types = dict(zip(rel.columns, (str(t) for t in rel.types), strict=True))
            self.assertEqual({types[c] for c in INTERVALS}, {"DOUBLE"})
            n = con.sql(f"SELECT count(kernel_median_lo_s), count(total_median_lo_s) FROM read_csv_auto('{path}')")
            self.assertEqual(n.fetchall(), [(2, 3)])
            self.assertEqual(len(rows), rel.shape[0])
        if pandas is None and duckdb is None:
            self.skipTest("neither pandas nor duckdb in this Python: loaded with the csv module only")

    def test_the_header_check_takes_an_earlier_drivers(self):
        path = Path(self.tmp, "summary.csv")
        for header, ok in ((CSV_COLUMNS + DRIVER, True), (CSV_COLUMNS + DRIVER[:2], True),
                           (CSV_COLUMNS + DRIVER[:1], True), (CSV_COLUMNS, True),
                           (CSV_COLUMNS + DRIVER[:2] + INTERVALS[2:], False), (CSV_COLUMNS + DRIVER + ["x"], False)):
            path.write_text(",".join(header) + "\n")
            problem = check_csv_header.summary_header_problem(str(path))
            self.assertEqual(problem is None, ok, (header[len(CSV_COLUMNS):], problem))

    def test_check_results_takes_it_and_an_earlier_one(self):
        self.summary()
        p = subprocess.run([*CHECK, self.run], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("1 summary.csv checked, all valid", p.stdout)
        path = Path(self.run, "summary.csv")
        with path.open(newline="") as f:
            recs = list(csv.reader(f))
        for n in (0, 1, 2):  # an earlier driver's: no driver columns, above_ceiling, above_ceiling and key
            with path.open("w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows([r[:len(CSV_COLUMNS) + n] for r in recs])
            p = subprocess.run([*CHECK, self.run], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn("1 summary.csv checked, all valid", p.stdout)
        # An interval that does not hold its median, one bound alone, one of too few trials, one of
        # a figure that does not apply: each named.
        at = {c: i for i, c in enumerate(recs[0])}
        row = {r[at["id"]]: r for r in recs[1:]}
        seven, ten, five = row[self.seven["id"]], row[self.ten["id"]], row[self.five["id"]]
        seven[at["kernel_median_lo_s"]], seven[at["kernel_median_hi_s"]] = seven[at["kernel_median_hi_s"]], "1"
        ten[at["total_median_hi_s"]] = ""
        five[at["kernel_median_lo_s"]] = five[at["kernel_median_hi_s"]] = five[at["kernel_median_s"]]
        copy = next(r for r in recs[1:] if r[at["id"]] == self.copy["id"] and r[at["backend"]] == "cuda")
        copy[at["kernel_median_lo_s"]] = copy[at["kernel_median_hi_s"]] = "1e-06"
        with path.open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(recs)
        p = subprocess.run([*CHECK, self.run], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("which does not hold kernel_median_s", p.stdout)
        self.assertIn("total_median_lo_s and total_median_hi_s: one is empty", p.stdout)
        self.assertIn("from 5 passes (an interval needs 6)", p.stdout)
        self.assertIn("but kernel_median_s is 0.0 (a figure that does not apply)", p.stdout)
        # Other columns after the executables' are still refused.
        with path.open("w", newline="") as f:
            f.write(",".join(CSV_COLUMNS + ["key", "above_ceiling"]) + "\n")
        p = subprocess.run([*CHECK, self.run], capture_output=True, text=True)
        self.assertIn("summary.csv: header differs", p.stdout)


if __name__ == "__main__":
    unittest.main()
