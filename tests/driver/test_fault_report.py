"""Fault suite, report (issue 15, item 5, and the driver's part of item 9): one unreadable raw JSON
never fails the whole report: every other result is reported and the broken or missing file is
named under Problems; an executable that exits 0 without writing its JSON is failed, not ok;
results taken with --no-verify are marked and kept out of figures and comparisons. Temporary
directories, the committed fixture and fake executables; every command bounded by `timeout`."""
import csv
import json
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
