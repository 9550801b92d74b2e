"""scripts/run-all with fake executables: one succeeds, one crashes, one times out, one skips, one is
missing; results written before a crash or timeout survive and are reported; --resume finishes."""
import csv
import json
import time
from pathlib import Path

from helpers import CSV_COLUMNS, TempDirCase, script

CONFIG = """
description = "driver test"
benchmarks = ["ra", "merge", "bus", "ngram", "tpch"]
backends = ["cpu", "cuda"]
timeout_s = 60
[harness]
sizes = "32K,1M"
passes = 3
max_passes = 4
[bench.merge]
timeout_s = 1.5
[bench.ngram]
args = ["--queries", "q.txt"]
"""

MODES = {"bus-cpu": "ok", "bus-cuda": "skip", "ra-cpu": "crash", "merge-cpu": "hang", "ngram-cpu": "ok",
         "ngram-cuda": "fail"}


class RunAllTest(TempDirCase):
    def run_all(self, *args):
        cfg = str(Path(self.tmp, "test.toml"))
        with Path(cfg).open("w") as f:
            f.write(CONFIG)
        self.log = str(Path(self.tmp, "calls.jsonl"))
        return script("run-all", "--config", cfg, "--build-dir", self.build, "--out", self.out, "--no-setup",
                      "--no-build", *args, env={"FAKE_LOG": self.log})

    def calls(self):
        with Path(self.log).open() as f:
            return [json.loads(line) for line in f]

    def setUp(self):
        super().setUp()
        self.build = self.make_fakes(MODES)
        self.out = str(Path(self.tmp, "results"))

    def only_run(self):
        runs = [p.name for p in Path(self.out).iterdir()]
        self.assertEqual(len(runs), 1, runs)
        return str(Path(self.out, runs[0]))

    def test_failures_are_recorded_and_results_survive(self):
        t0 = time.monotonic()
        p = self.run_all("--passes", "2")
        self.assertLess(time.monotonic() - t0, 60, "the hanging executable was not stopped")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.only_run()
        with Path(run, "run.json").open() as f:
            entries = {e["name"]: e for e in json.load(f)["entries"]}
        self.assertEqual(entries["bus-cpu"]["status"], "ok")
        self.assertEqual(entries["bus-cuda"]["status"], "skipped")
        self.assertIn("no fake device", entries["bus-cuda"]["reason"])
        self.assertEqual(entries["ra-cpu"]["status"], "failed")
        self.assertIn("SIGSEGV", entries["ra-cpu"]["reason"])
        self.assertEqual(entries["merge-cpu"]["status"], "failed")
        self.assertIn("timed out", entries["merge-cpu"]["reason"])
        self.assertEqual(entries["ngram-cuda"]["status"], "failed")
        self.assertEqual(entries["ngram-cuda"]["cases"]["failed"], 1)
        self.assertEqual(entries["tpch-cpu"]["status"], "skipped")
        self.assertIn("not built", entries["tpch-cpu"]["reason"])
        # summary.csv is the executables' own CSV files (--csv beside --json) under their one header.
        with Path(run, "summary.csv").open(newline="") as f:
            summary_header = next(csv.reader(f))
        with Path(run, "raw", "bus-cpu.csv").open(newline="") as f:
            exe_header = next(csv.reader(f))
        driver = ["above_ceiling", "key", "kernel_median_lo_s", "kernel_median_hi_s", "total_median_lo_s",
                  "total_median_hi_s"]
        self.assertEqual(summary_header, exe_header + driver)  # and the driver's own columns
        self.assertEqual(exe_header, CSV_COLUMNS)
        # What the crashed and the stopped executables measured before dying is kept and reported.
        with Path(run, "summary.csv").open() as f:
            rows = list(csv.DictReader(f))
        have = {(r["benchmark"], r["backend"]) for r in rows}
        self.assertTrue({("bus", "cpu"), ("ra", "cpu"), ("merge", "cpu"), ("ngram", "cpu")} <= have, have)
        self.assertEqual(sum(1 for r in rows if r["benchmark"] == "ra"), 1)
        with Path(run, "report.md").open() as f:
            md = f.read()
        for text in ("crashed (SIGSEGV)", "timed out", "not built", "Benchmark ra", "Benchmark merge"):
            self.assertIn(text, md)
        self.assertTrue(Path(run, "report.html").is_file())
        self.assertIn("elapsed", p.stdout)
        # bus runs first on every backend; the configuration's options reach the executables.
        calls = self.calls()
        names = [c["name"] for c in calls]
        self.assertEqual(names[:2], ["hdb-bus-cpu", "hdb-bus-cuda"], names)
        args = calls[0]["args"]
        self.assertEqual(args[args.index("--json") + 1], str(Path(run, "raw", "bus-cpu.json")))
        self.assertEqual(args[args.index("--csv") + 1], str(Path(run, "raw", "bus-cpu.csv")))
        self.assertEqual(args[args.index("--sizes") + 1], "32K,1M")
        self.assertEqual(args[args.index("--passes") + 1], "2")  # command line beats the config
        ngram = next(c for c in calls if c["name"] == "hdb-ngram-cpu")["args"]
        self.assertIn("--queries", ngram)

    def test_resume_finishes_only_what_was_interrupted(self):
        self.run_all("--benchmarks", "bus,ngram", "--backends", "cpu", "--no-report")
        run = self.only_run()
        manifest = str(Path(run, "run.json"))
        with Path(manifest).open() as f:
            m = json.load(f)
        # As if the driver had been killed while hdb-ngram-cpu was running.
        for e in m["entries"]:
            if e["name"] == "ngram-cpu":
                e["status"] = "running"
        with Path(manifest).open("w") as f:
            json.dump(m, f)
        Path(self.log).unlink()
        p = self.run_all("--resume", Path(run).name, "--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])
        with Path(manifest).open() as f:
            m = json.load(f)
        self.assertTrue(all(e["status"] == "ok" for e in m["entries"]))
        self.assertTrue(Path(run, "raw", "ngram-cpu.json.interrupted-1").is_file())
        self.assertTrue(Path(run, "raw", "ngram-cpu.csv.interrupted-1").is_file())
        with Path(run, "summary.csv").open() as f:
            ids = [(r["benchmark"], r["id"]) for r in csv.DictReader(f)]
        self.assertEqual(len(ids), len(set(ids)))  # the interrupted copies are not read twice
        self.assertEqual(len(m["resumed"]), 1)

    def test_a_large_run_is_a_second_file_read_like_the_first(self):
        cfg = str(Path(self.tmp, "large.toml"))
        with Path(cfg).open("w") as f:
            f.write('benchmarks = ["bus"]\nbackends = ["cpu"]\n[harness]\nsizes = "32K"\n'
                    '[bench.bus.large]\nsizes = "256M"\nonly = ["memcpy/*"]\n')
        self.log = str(Path(self.tmp, "calls.jsonl"))
        p = script("run-all", "--config", cfg, "--build-dir", self.build, "--out", self.out, "--no-setup",
                   "--no-build", env={"FAKE_LOG": self.log})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        args = {c["name"]: c for c in self.calls()}
        self.assertEqual(sorted([p.name for p in Path(run, "raw").iterdir()]),
                         ["bus-cpu-large.csv", "bus-cpu-large.json", "bus-cpu.csv", "bus-cpu.json"])
        with Path(run, "summary.csv").open() as f:
            sizes = {r["size_bytes"] for r in csv.DictReader(f)}
        self.assertEqual(sizes, {str(32 << 10), str(256 << 20)})
        with Path(run, "run.json").open() as f:
            big = {e["name"]: e for e in json.load(f)["entries"]}["bus-cpu-large"]
        self.assertEqual(big["status"], "ok")
        self.assertIn("--only", big["args"])
        self.assertTrue(args)
        from check_results import main as check_main
        self.assertEqual(check_main(["--all", run]), 0)

    def test_bad_options_exit_2(self):
        for args, text in ((["--backends", "tpu"], "unknown backends tpu"), (["--resume", "nope"], "no run"),
                           (["--passes", "0"], "--passes"), (["--frobnicate"], "unrecognized")):
            p = self.run_all(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(text, p.stderr)
        p = script("run-all", "--config", "no-such-config", "--no-setup", "--no-build", "--out", self.out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such configuration", p.stderr)

    def test_dry_run_prints_the_plan_and_makes_nothing(self):
        p = self.run_all("--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(Path(self.out).exists(), "a dry run made the results folder")
        lines = p.stdout.splitlines()
        self.assertIn("nothing is run and no run directory is made", lines[0])
        rows = {ln.split()[0]: ln.split() for ln in lines[2:-1]}
        self.assertEqual(rows["bus-cpu"][1:3], ["2", "?"], "two cases; no --max-time in this configuration")
        self.assertEqual(rows["merge-cpu"][3], "2s", "[bench.merge]'s time limit, 1.5 s")
        self.assertIn("--sizes 32K,1M", lines[2 + list(rows).index("bus-cpu")])
        self.assertEqual(rows["tpch-cpu"][1:3], ["?", "?"], "not built")
        self.assertIn("not built", " ".join(rows["tpch-cpu"]))
        self.assertTrue(lines[-1].startswith("total: 12 cases in 6 entries (4 more without a case count)"), lines[-1])
        self.assertEqual({c["args"][-1] for c in self.calls()}, {"--list"}, "an executable ran for real")
        p = self.run_all("--dry-run", "--resume", "x")
        self.assertEqual(p.returncode, 2)
        self.assertIn("drop --dry-run", p.stderr)

    def test_every_command_says_its_version_and_names_itself_once_in_an_error(self):
        for name in ("run-all", "report", "compare", "regression-gate"):
            p = script(name, "--version")
            self.assertEqual(p.returncode, 0, p.stderr)
            commit = r"([0-9a-f]{12}(-dirty)?|unknown)"
            self.assertRegex(p.stdout, rf"^{name} \(hetdb-bench [0-9][^,]*, commit {commit}\)\n$")
            p = script(name, "--frobnicate")
            self.assertEqual(p.returncode, 2, name)
            self.assertIn(f"{name}: error: ", p.stderr)
            self.assertEqual(p.stderr.count(f"{name}:"), 1, p.stderr)
        for name in ("run-all", "report", "compare"):
            text = script(name, "--help").stdout
            self.assertIn("exit status: 0 ", text, name)
            self.assertEqual(text.split("examples:")[1].count(f"scripts/{name} "), 2, name)
