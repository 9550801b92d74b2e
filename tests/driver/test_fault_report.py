"""Fault suite, report (issue 15, item 5, and the driver's part of item 9): one unreadable raw JSON
never fails the whole report: every other result is reported and the broken or missing file is
named under Problems; an executable that exits 0 without writing its JSON is failed, not ok;
results taken with --no-verify are marked and kept out of figures and comparisons. Temporary
directories, the committed fixture and fake executables; every command bounded by `timeout`."""
import csv
import json
import re
import shutil
from pathlib import Path

from helpers import FaultCase, bounded, has_matplotlib, read_json


def summary_rows(run):
    return csv_rows(Path(run, "summary.csv"))


def csv_rows(path):
    with Path(path).open(newline="") as f:
        return list(csv.DictReader(f))


def text(path):
    return Path(path).read_text()


class BrokenRawFileTest(FaultCase):
    DAMAGE = {
        "cut short": lambda data: data[:len(data) // 2],
        "NUL bytes": lambda data: data[:100] + b"\0" * 64 + data[164:],
        "empty": lambda data: b"",
        "not UTF-8": lambda data: b"\xff\xfe" + data,
        "no results key": lambda data: json.dumps({k: v for k, v in json.loads(data).items() if k != "results"})
        .encode(),
    }

    def test_one_broken_json_leaves_the_rest_of_the_report(self):
        for damage, fn in self.DAMAGE.items():
            with self.subTest(damage=damage):
                run = str(Path(self.tmp, "run-" + damage.replace(" ", "-")))
                shutil.copytree(self.copy_fixture(), run)
                shutil.rmtree(Path(self.tmp, "run-small"))
                path = Path(run, "raw", "ra-cpu.json")
                path.write_bytes(fn(path.read_bytes()))
                p = bounded("report", run, env=self.env, limit=120)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertNoTraceback(p)
                self.assertIn("raw/ra-cpu.json", p.stderr)
                md = text(Path(run, "report.md"))
                problems = md.split("## Problems", 1)[1]
                self.assertIn("raw/ra-cpu.json", problems)
                self.assertIn("its results are not in this report", problems)
                for bench in ("bus", "ra", "tpch", "merge", "ngram"):  # ra: its cuda and opencl results
                    self.assertIn(f"## Benchmark {bench}", md)
                self.assertIn("| cuda | select", md)
                self.assertTrue(Path(run, "report.html").is_file())
                # summary.csv is the CSV files: ra-cpu's CSV is intact and stays in it.
                self.assertIn(("ra", "cpu"), {(r["benchmark"], r["backend"]) for r in summary_rows(run)})

    def test_a_json_the_manifest_says_ok_but_is_missing_is_named(self):
        run = self.copy_fixture()
        Path(run, "raw", "merge-cuda.json").unlink()
        p = bounded("report", run, env=self.env, limit=120)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("raw/merge-cuda.json is missing", p.stderr)
        md = text(Path(run, "report.md"))
        self.assertIn("raw/merge-cuda.json is missing: hdb-merge-cuda ended ok but its results are not there",
                      md.split("## Problems", 1)[1])
        self.assertIn("## Benchmark merge", md)  # merge-cpu still reported

    def test_a_corrupt_run_json_leaves_the_results_reported(self):
        run = self.copy_fixture()
        Path(run, "run.json").write_bytes(b'{"run_id": "x", "entries": [\0\0\0')
        p = bounded("report", run, env=self.env, limit=120)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        md = text(Path(run, "report.md"))
        self.assertIn("run.json: cannot read", md.split("## Problems", 1)[1])
        self.assertIn("## Benchmark ngram", md)

    def test_compare_leaves_out_only_the_broken_file(self):
        a = self.copy_fixture()
        b = str(Path(self.tmp, "run-b"))
        shutil.copytree(a, b)
        Path(b, "raw", "bus-cpu.json").write_text('{"schema": "hetdb-bench/2", "results": [')
        out = str(Path(self.tmp, "cmp"))
        p = bounded("compare", a, b, "--out", out, env=self.env, limit=120)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        self.assertIn("B: raw/bus-cpu.json: cannot read results JSON", p.stderr)
        rows = csv_rows(Path(out, "compare.csv"))
        have = {(r["benchmark"], r["backend"]) for r in rows}
        self.assertNotIn(("bus", "cpu"), have)
        self.assertIn(("bus", "cuda"), have)
        self.assertIn("left out of the comparison", text(Path(out, "compare.md")))


class NoJsonTest(FaultCase):
    CONFIG = FaultCase.CONFIG.replace('["bus", "ngram"]', '["bus", "ngram", "merge"]')
    MODES = {"bus-cpu": "ok", "ngram-cpu": "nojson", "merge-cpu": "badjson"}

    def test_exit_0_without_results_is_a_failure(self):
        p = self.run_all()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        run = self.only_run()
        e = self.entries(run)
        self.assertEqual(e["bus-cpu"]["status"], "ok")
        self.assertEqual(e["ngram-cpu"]["status"], "failed")
        self.assertEqual(e["ngram-cpu"]["failure"], "no-results")
        self.assertEqual(e["ngram-cpu"]["reason"], "exit 0 but it wrote no results (raw/ngram-cpu.json is missing)")
        self.assertEqual(e["merge-cpu"]["status"], "failed")
        self.assertIn("exit 0 but its results are not usable: raw/merge-cpu.json: cannot read results JSON",
                      e["merge-cpu"]["reason"])
        self.assertIn("run-all: 1 ok, 0 skipped, 2 failed", p.stdout)
        md = text(Path(run, "report.md"))
        self.assertIn("raw/merge-cpu.json", md.split("## Problems", 1)[1])
        self.assertIn("## Benchmark bus", md)  # what bus-cpu measured is reported
        self.assertEqual(len(read_json(Path(run, "raw", "bus-cpu.json"))["results"]), 2)


class NoVerifyTest(FaultCase):
    CONFIG = FaultCase.CONFIG + '[bench.ngram]\nargs = ["--no-verify"]\n'

    def test_unverified_results_are_marked_and_kept_out_of_figures_and_compare(self):
        del self.env["HDB_NO_MATPLOTLIB"]
        p = self.run_all()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        ngram = next(c for c in self.calls() if c["name"] == "hdb-ngram-cpu")
        self.assertIn("--no-verify", ngram["args"])
        doc = read_json(Path(run, "raw", "ngram-cpu.json"))
        self.assertTrue(all(r["verification"]["checked"] is False for r in doc["results"]))
        md = text(Path(run, "report.md"))
        self.assertIn("2 results were measured without verification (--no-verify)", md)
        self.assertIn("not verified", md.split("## Benchmark ngram", 1)[1])
        if has_matplotlib():
            self.assertTrue(Path(run, "plots", "throughput-bus.svg").is_file())
            self.assertFalse(Path(run, "plots", "throughput-ngram.svg").exists())
        # compare: a run against itself matches bus only, unless --include-unverified.
        out = str(Path(self.tmp, "cmp"))
        p = bounded("compare", run, run, "--out", out, env=self.env, limit=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual({r["benchmark"] for r in csv_rows(Path(out, "compare.csv"))}, {"bus"})
        p = bounded("compare", run, run, "--out", out, "--include-unverified", env=self.env, limit=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual({r["benchmark"] for r in csv_rows(Path(out, "compare.csv"))}, {"bus", "ngram"})


# Issue 50, item 5: the figures of a result are checked once (results.check_figures) for every reader.
BAD_FIGURES = ((-1e-3, "-0.001: negative"), ("fast", "'fast': not a number (a str)"), (float("nan"), "nan: not finite"),
               (float("inf"), "inf: not finite"), (True, "True: not a number (a bool)"),
               (1e-12, "1e-12: below the timer's resolution (1e-09 s): no measurement"))


def spoil(run, value, field=("stats", "kernel_s", "median"), file="ra-cpu.json", index=0):
    """Writes `value` into one figure of one result of raw/<file>; returns the result's id."""
    path = Path(run, "raw", file)
    doc = json.loads(path.read_text())
    r = doc["results"][index]
    *parents, last = field
    node = r
    for k in parents:
        node = node[k] if isinstance(k, int) else node.setdefault(k, {})
    node[last] = value
    path.write_text(json.dumps(doc))  # NaN and Infinity as Python's json writes them
    return r["id"]


class BadFigureTest(FaultCase):
    """A negative, string, bool, NaN, infinite or sub-nanosecond figure in a result: scripts/report
    leaves the case out, names file, case id, field and value under Problems and on stderr, reports
    the rest and exits 2 (a data error); never a traceback, a 'nanx' or a speed-up from the timer."""

    def test_a_bad_time_is_named_and_its_case_left_out(self):
        p = bounded("report", self.copy_fixture(), env=self.env, limit=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        shutil.rmtree(Path(self.tmp, "run-small"))
        every = re.search(r"report: (\d+) results", p.stdout)
        self.assertTrue(every, p.stdout)
        for value, shown in BAD_FIGURES:
            with self.subTest(value=value):
                run = str(Path(self.tmp, f"run-{value!s}"))
                shutil.copytree(self.copy_fixture(), run)
                shutil.rmtree(Path(self.tmp, "run-small"))
                rid = spoil(run, value)
                p = bounded("report", run, env=self.env, limit=120)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertNoTraceback(p)
                line = f"raw/ra-cpu.json: {rid}: stats.kernel_s.median = {shown}; the case is left out"
                self.assertIn(f"report: error: a figure that cannot be used: {line}", p.stderr)
                md = text(Path(run, "report.md"))
                problems = md.split("## Problems", 1)[1]
                self.assertIn(line, problems)
                self.assertNotIn("nanx", md)
                self.assertIn(f"report: {int(every.group(1)) - 1} results", p.stdout)  # the case is left out
                for bench in ("bus", "ra", "tpch", "merge", "ngram"):  # the rest is reported
                    self.assertIn(f"## Benchmark {bench}", md)

    def test_every_figure_of_a_result_is_checked(self):
        """The neighbours: a trial's time, a throughput, a size, a block of the wrong shape, an ok
        result that took no time, the document's ceiling."""
        cases = ((("trials", 1, "kernel_s"), -2e-6, "trials[1].kernel_s = -2e-06: negative"),
                 (("throughput", "kernel_gbps"), "12", "throughput.kernel_gbps = '12': not a number (a str)"),
                 (("size_bytes",), "32K", "size_bytes = '32K': not a number (a str)"),
                 (("size_bytes",), 1.5, "size_bytes = 1.5: not a whole number of bytes"),
                 (("stats", "total_s"), [1e-3], "stats.total_s = [0.001]: not an object"),
                 (("stats", "total_s", "median"), 0.0, "stats.total_s.median = 0.0: zero"),
                 (("stats", "kernel_s", "cv"), float("nan"), "stats.kernel_s.cv = nan: not finite"),
                 (("protocol", "cold", "total_s"), -1.0, "protocol.cold.total_s = -1.0: negative"),
                 (("energy", "joules_per_pass"), "0.1", "energy.joules_per_pass = '0.1': not a number (a str)"))
        for field, value, shown in cases:
            with self.subTest(field=field, value=value):
                run = str(Path(self.tmp, "run-" + "-".join(map(str, field)) + f"-{value!s}"))
                shutil.copytree(self.copy_fixture(), run)
                shutil.rmtree(Path(self.tmp, "run-small"))
                rid = spoil(run, value, field)
                p = bounded("report", run, env=self.env, limit=120)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertNoTraceback(p)
                self.assertIn(f"raw/ra-cpu.json: {rid}: {shown}; the case is left out", p.stderr)
        run = self.copy_fixture()
        path = Path(run, "raw", "ra-cpu.json")
        doc = json.loads(path.read_text())
        doc["ceiling"]["memory_copy_gbps"] = -20.0
        path.write_text(json.dumps(doc))
        p = bounded("report", run, env=self.env, limit=120)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        self.assertIn("raw/ra-cpu.json: (document): ceiling.memory_copy_gbps = -20.0: negative; not used", p.stderr)
        # A sample of the copy ceiling measured again (issue 51) that is no rate is dropped, named.
        shutil.rmtree(run)
        run = self.copy_fixture()
        path = Path(run, "raw", "ra-cpu.json")
        doc = json.loads(path.read_text())
        doc["ceiling"]["samples"] = [{"at_s": 0.0, "gbps": 20.0}, {"at_s": 1.0, "gbps": float("nan")},
                                     {"at_s": 2.0, "gbps": True}]
        path.write_text(json.dumps(doc))
        p = bounded("report", run, env=self.env, limit=120)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        self.assertIn("raw/ra-cpu.json: (document): ceiling.samples[1].gbps = nan: not finite (and 1 more of its "
                      "figures); not used", p.stderr)

    def test_a_failed_result_without_figures_is_no_problem(self):
        run = self.copy_fixture()
        spoil(run, None)  # an absent figure is none to check
        path = Path(run, "raw", "ra-cpu.json")
        doc = json.loads(path.read_text())
        doc["results"][1].update(status="failed", reason="verification failed (test)", stats={}, trials=[],
                                 throughput={})
        path.write_text(json.dumps(doc))
        p = bounded("report", run, env=self.env, limit=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("cannot be used", p.stdout + p.stderr)


class BadFigureCompareTest(FaultCase):
    """scripts/compare reads the same checked figures: a bad one leaves its pair out, named, exit 2."""

    def test_a_bad_time_in_either_run_leaves_its_pair_out(self):
        a = self.copy_fixture()
        for value, shown in BAD_FIGURES:
            with self.subTest(value=value):
                b = str(Path(self.tmp, f"run-b-{value!s}"))
                shutil.copytree(a, b)
                rid = spoil(b, value)
                out = str(Path(self.tmp, f"cmp-{value!s}"))
                p = bounded("compare", a, b, "--out", out, env=self.env, limit=120)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertNoTraceback(p)
                line = (f"B: a figure that cannot be used: raw/ra-cpu.json: {rid}: stats.kernel_s.median = {shown}; "
                        "left out of the comparison")
                self.assertIn(f"compare: error: {line}", p.stderr)
                self.assertIn(line, text(Path(out, "compare.md")).split("## Problems", 1)[1])
                pairs = csv_rows(Path(out, "compare.csv"))
                self.assertGreater(len(pairs), 100)  # the rest is compared
                self.assertNotIn(("ra", "cpu", rid), {(r["benchmark"], r["backend"], r["id"]) for r in pairs})
                # No speed-up of the timer's (1e-12 s against milliseconds) among the pairs compared.
                self.assertFalse([r for r in pairs if not 0 < float(r["speedup_b_over_a"]) < 1e3])
                self.assertNotRegex(p.stdout.lower(), r"nanx|xnan")
                self.assertIn("0 only in A, 0 only in B", p.stdout)  # left out, not unmatched
                self.assertNotIn(f"only in A: ra-cpu {rid}", text(Path(out, "compare.md")))
