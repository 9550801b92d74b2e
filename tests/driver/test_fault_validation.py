"""Fault suite, inputs at the edges (issue 31): the driver checks its options and configuration --
values (sizes, positive numbers, ranges, transfer kinds), names (benchmarks, backends, no name twice),
tables (unknown [bench.X], [backend.X] and keys) and the options an executable would get together --
before it makes anything, with one line naming the key and exit 2, by the same rules for every
benchmark. scripts/report and scripts/compare refuse a folder that is not a run and write nothing
there; an --out that is a file is refused. Most cases run the driver in-process (cli.main), a few
end to end."""
import contextlib
import io
import os
from pathlib import Path

from helpers import FaultCase, bounded

from hdb import cli


class OptionTest(FaultCase):
    def main(self, *argv):
        """(exit status, stderr) of scripts/run-all in-process."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli.main(["run-all", *self.args(*argv)])
        return rc, err.getvalue()

    def assertRefused(self, argv, text):
        rc, err = self.main(*argv)
        self.assertEqual(rc, 2, err)
        self.assertIn(text, err)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        self.assertEqual(len(lines), 1, err)
        self.assertNotIn("Traceback", err)
        self.assertFalse(Path(self.out).is_dir() and any(Path(self.out).iterdir()), "a run directory was made")
        self.assertEqual(self.calls(), [], "an executable ran")

    def config(self, text):
        with Path(self.cfg).open("w") as f:
            f.write(text)

    def test_sizes_on_the_command_line(self):
        for sizes, text in (("0", "--sizes: '0' is not a valid size (must be positive"),
                            ("-1M", "--sizes: '-1M' is not a valid size (negative"),
                            ("1X", "--sizes: '1X' is not a valid size (unknown suffix 'X'"),
                            ("1.5M", "not a whole number of bytes"),
                            ("3^4", "only powers of 2 may use ^"),
                            ("2^41", "exponent above 40"),
                            ("2048G", "above 1T"),
                            ("K", "'K' is not a valid size (no number"),
                            ("1M,1M", "--sizes: 1M is given twice; each size runs once"),
                            ("1M,1024K", "--sizes: 1M and 1024K are the same size"),
                            ("32K,,1M", "--sizes: an empty size in '32K,,1M'"),
                            ("32K,", "an empty size"),
                            ("", "--sizes names no size")):
            with self.subTest(sizes=sizes):
                self.assertRefused([f"--sizes={sizes}"], text)
        # Written apart, '-1M' looks like an option to the parser: still a usage error, exit 2.
        self.assertRefused(["--sizes", "-1M"], "--sizes")

    def test_good_sizes_are_given_on_normalised(self):
        p = self.run_all("--sizes", "32K, 1M,2^21", "--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        args = self.call_of("hdb-bus-cpu", "args")["args"]
        self.assertEqual(args[args.index("--sizes") + 1], "32K,1M,2^21")

    def test_other_options(self):
        for argv, text in ((["--passes", "0"], "--passes must be at least 1"),
                           (["--device", "-1"], "--device must be a non-negative index"),
                           (["--timeout", "0"], "must be a positive, finite number of seconds"),
                           (["--benchmarks", "bus,bus"], "--benchmarks: 'benchmarks' names bus twice"),
                           (["--backends", "cpu,cpu"], "--backends: 'backends' names cpu twice"),
                           (["--mpi", "0"], "--mpi must be a positive number of ranks")):
            with self.subTest(argv=argv):
                self.assertRefused(argv, text)

    def test_values_in_a_configuration(self):
        head = self.CONFIG.split("[harness]")[0]
        for table, text in (
                ('[harness]\nsizes = "0"', "[harness]: 'sizes': '0' is not a valid size (must be positive"),
                ('[harness]\nsizes = ["32K", "32K"]', "[harness]: 'sizes': 32K is given twice"),
                ('[harness]\nsizes = "32K;1M"', "'32K;1M' is not a valid size (unknown suffix 'K;1M'"),
                ('[harness]\nmin_size = "1X"', "[harness]: 'min_size': '1X' is not a valid size"),
                ('[harness]\nmax_size = 0', "[harness]: 'max_size': '0' is not a valid size"),
                ('[harness]\nsizes = "32K"\nmin_size = "32K"', "[harness]: 'sizes' cannot be combined with "
                                                              "'min_size'"),
                ('[harness]\npasses = 0', "[harness]: 'passes' must be an integer in 1..100000, not 0"),
                ('[harness]\nmax_passes = 0', "'max_passes' must be an integer in 1..100000"),
                ('[harness]\nwarmup = 5000', "'warmup' must be an integer in 0..1000"),
                ('[harness]\nsize_class = 5', "'size_class' must be an integer in 1..4, not 5"),
                ('[harness]\nthreads = -1', "'threads' must be an integer in 0..4096"),
                ('[harness]\nseed = -1', "'seed' must be an integer in 0..18446744073709551615"),
                ('[harness]\ndevice = -2', "'device' must be a non-negative integer"),
                ('[harness]\npasses = "3"', "'passes' must be an integer in 1..100000, not '3'"),
                ('[harness]\ntarget_noise = 11.0', "'target_noise' must be a non-negative, finite number"),
                ('[harness]\nmax_time = -0.5', "'max_time' must be a non-negative, finite number"),
                ('[harness]\ntransfer = "dma"', "transfer must be pageable, pinned or both, not 'dma'")):
            with self.subTest(table=table):
                self.config(head + table + "\n")
                self.assertRefused([], f"{self.cfg} {table.splitlines()[0]}")
                self.assertRefused([], text)
        self.config('description = 3\nbenchmarks = ["bus"]\nbackends = ["cpu"]\n')
        self.assertRefused([], "'description' must be a string")

    def test_the_same_rules_for_every_benchmark_and_table(self):
        head = self.CONFIG
        for bench in ("bus", "ngram"):
            for key, value in (("sizes", '"0"'), ("passes", "0"), ("transfer", '"dma"'), ("min_size", '"-1"')):
                with self.subTest(bench=bench, key=key):
                    self.config(head + f"[bench.{bench}]\n{key} = {value}\n")
                    self.assertRefused([], f"{self.cfg} [bench.{bench}]")
                    text = value if value.startswith('"') else f'"{value}"'  # args are strings
                    self.config(head + f"[bench.{bench}]\nargs = [\"--{key.replace('_', '-')}\", {text}]\n")
                    self.assertRefused([], f"{self.cfg} [bench.{bench}] 'args' --{key.replace('_', '-')}")
        for key, value in (("sizes", '"0"'), ("passes", "0"), ("warmup", "-1")):
            with self.subTest(backend="cpu", key=key):
                self.config(head + f"[backend.cpu]\n{key} = {value}\n")
                self.assertRefused([], f"{self.cfg} [backend.cpu]")
        self.config(head + '[bench.bus.large]\nsizes = "1X"\n')
        self.assertRefused([], f"{self.cfg} [bench.bus.large]: 'sizes': '1X' is not a valid size")
        self.config(head + '[bench.bus.large]\nsizes = "1G"\nargs = ["--passes", "0"]\n')
        self.assertRefused([], "[bench.bus.large] 'args' --passes: 'passes' must be an integer in 1..100000")
        self.config(head + '[bench.ngram]\npeer_args = ["--sizes", "1M,1M"]\n')
        self.assertRefused([], "[bench.ngram] 'peer_args' --sizes: 'sizes': 1M is given twice")
        self.config(head + '[bench.ngram]\nargs = ["--sizes"]\n')
        self.assertRefused([], "[bench.ngram]: 'args': --sizes has no value")

    def test_options_an_executable_would_get_together(self):
        head = self.CONFIG.split("[harness]")[0]
        for tables, text in (
                ('[harness]\nmin_size = "2M"', "hdb-bus-cpu: min_size 2M ([harness]) is larger than size class 1's "
                                               "max 1M"),
                ('[harness]\nmin_size = "64M"\nmax_size = "32M"', "min_size 64M ([harness]) is larger than max_size "
                                                                   "32M ([harness])"),
                ('[harness]\nmin_size = "33K"\nmax_size = "63K"', "no power of two between min_size 33K"),
                ('[harness]\nsizes = "32K"\n[bench.ngram]\nmax_size = "16K"',
                 "hdb-ngram-cpu: size class 1's min 32K is larger than max_size 16K ([bench.ngram])"),
                ('[harness]\nsizes = "32K"\n[bench.ngram]\nargs = ["--sizes", "1M"]',
                 "hdb-ngram-cpu: gets --sizes twice"),
                ('[harness]\nsizes = "32K"\n[bench.bus.large]\nsizes = "1G"\nonly = ["copy"]\nargs = ["--only", "x"]',
                 "hdb-bus-cpu (large run): gets --only twice")):
            with self.subTest(tables=tables):
                self.config(head + tables + "\n")
                self.assertRefused([], text)

    def test_names_and_tables(self):
        head = self.CONFIG
        for text_in, text in (
                (head + "[bench.ngarm]\npasses = 2\n", "[bench.ngarm]: no benchmark named ngarm (valid: bus,"),
                (head + "[backend.gpu]\npasses = 2\n", "[backend.gpu]: no backend named 'gpu'"),
                ("benchmark = [\"bus\"]\n" + head, f"{self.cfg}: unknown key 'benchmark'"),
                (head.replace('sizes = "32K"', 'size = "32K"'), "[harness] unknown key 'size'"),
                (head + "[bench.bus]\npasses_max = 3\n", "[bench.bus]: unknown key 'passes_max'"),
                (head + "[bench.bus.large]\nsize = \"1G\"\n", "[bench.bus.large]: unknown key 'size'"),
                (head.replace('["bus", "ngram"]', '["bus", "bus"]'), "'benchmarks' names bus twice"),
                (head.replace('backends = ["cpu"]', 'backends = ["cpu", "tpu"]'), "unknown backends tpu"),
                (head + "[bench.bus]\nbackends = [\"cpu\", \"cpu\"]\n", "'backends' names cpu twice")):
            with self.subTest(config=text):
                self.config(text_in)
                self.assertRefused([], text)

    def test_an_out_that_is_a_file(self):
        afile = str(Path(self.tmp, "a-file"))
        with Path(afile).open("w") as f:
            f.write("keep\n")
        p = self.run_all("--out", afile)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, f"--out {afile}: is a file, not a folder for runs")
        with Path(afile).open() as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertEqual(self.calls(), [])

    def test_end_to_end_a_bad_size_makes_nothing(self):
        p = self.run_all("--sizes", "1X")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, "run-all: error: --sizes: '1X' is not a valid size")
        self.assertFalse(Path(self.out).exists())
        self.assertEqual(self.calls(), [])


class NotARunTest(FaultCase):
    """scripts/report and scripts/compare on folders that are not runs: exit 2, nothing written."""

    def folder(self, name, files):
        d = str(Path(self.tmp, name))
        Path(d).mkdir(parents=True)
        for f, text in files.items():
            with Path(d, f).open("w") as fh:
                fh.write(text)
        return d

    def snapshot(self, d):
        out = {}
        for root, _, files in os.walk(d):
            for f in files:
                with Path(root, f).open("rb") as fh:
                    out[os.path.relpath(str(Path(root, f)), d)] = fh.read()
        return out

    def test_report_refuses_a_folder_that_is_not_a_run(self):
        mine = self.folder("project", {"report.md": "my own notes\n", "summary.csv": "a,b\n1,2\n",
                                       "run.json": '{"name": "something else"}\n'})
        before = self.snapshot(mine)
        p = bounded("report", mine, env=self.env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, f"report: error: {mine}: not a run: it has no run.json of scripts/run-all and no "
                                   "raw/<benchmark>-<backend>.json (nothing was written there)")
        self.assertEqual(self.snapshot(mine), before)
        for target, text in ((str(Path(self.tmp, "nowhere")), "no such directory"),
                             (str(Path(mine, "report.md")), "not a directory")):
            with self.subTest(target=target):
                p = bounded("report", target, env=self.env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, text)
        self.assertEqual(self.snapshot(mine), before)

    def test_report_on_the_results_root_names_a_run(self):
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        p = bounded("report", self.out, env=self.env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, f"it holds runs, e.g. {run}")
        self.assertEqual(sorted([p.name for p in Path(self.out).iterdir()]), [Path(run).name])

    def test_a_run_without_run_json_is_still_a_run(self):
        run = self.copy_fixture()
        Path(run, "run.json").unlink()
        p = bounded("report", run, env=self.env, limit=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(Path(run, "report.md").is_file())

    def test_compare_refuses_what_is_not_a_run(self):
        run = self.copy_fixture()
        mine = self.folder("project", {"notes.txt": "x\n"})
        before = self.snapshot(mine)
        for a, b in ((mine, run), (run, mine)):
            with self.subTest(a=a, b=b):
                p = bounded("compare", a, b, env=self.env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, f"compare: error: {mine}: not a run")
        self.assertEqual(self.snapshot(mine), before)
        self.assertFalse([d for d in [p.name for p in Path(self.tmp).iterdir()] if d.startswith("compare-")])
        afile = str(Path(self.tmp, "a-file"))
        with Path(afile).open("w") as f:
            f.write("keep\n")
        for out, text in ((afile, f"--out {afile}: is a file"), (run, f"--out {run}: is a run directory")):
            with self.subTest(out=out):
                p = bounded("compare", run, run, "--out", out, env=self.env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, text)
        with Path(afile).open() as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertFalse(Path(run, "compare.md").exists())
