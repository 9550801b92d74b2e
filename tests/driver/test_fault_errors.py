"""Fault suite, driver errors (issue 15, item 6, and the driver's part of item 9): a read-only --out,
a full disk, --timeout nan/inf/negative, a configuration that is not UTF-8, a corrupt run.json, and
selections that match nothing each give one clear line and exit 2 (usage) or 1 (failure), never a
traceback, and lose no result already taken; the reason recorded for a failed executable is its
real error line, not the usage hint after it. Temporary directories and fake executables; every
command bounded by `timeout` (the in-process disk-full run by an alarm)."""
import contextlib
import errno
import io
import json
import os
import shutil
import signal
import unittest
from pathlib import Path
from unittest import mock

from helpers import FaultCase, bounded, pid_gone, read_json, wait_for

from hdb import cli, results, runner, util

NOBODY = 65534


class UsageErrorTest(FaultCase):
    def assertUsage(self, p, text):
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, text)

    def no_run_left(self):
        self.assertFalse(Path(self.out).is_dir() and any(Path(self.out).iterdir()), "a run directory was left behind")

    def test_timeout_must_be_positive_and_finite(self):
        for value in ("nan", "inf", "-inf", "-1", "0", "abc", "NaN"):
            with self.subTest(timeout=value):
                p = self.run_all(f"--timeout={value}")
                self.assertUsage(p, f"must be a positive, finite number of seconds, not '{value}'")
        for key, value, text in (("timeout_s", "nan", "'timeout_s' must be a positive, finite number"),
                                 ("timeout_s", "inf", "'timeout_s' must be a positive, finite number"),
                                 ("timeout_s", "-3", "'timeout_s' must be a positive, finite number")):
            with self.subTest(config=f"{key} = {value}"):
                with Path(self.cfg).open("w") as f:
                    f.write(self.CONFIG.replace("timeout_s = 100", f"{key} = {value}"))
                self.assertUsage(self.run_all(), text)
        with Path(self.cfg).open("w") as f:
            f.write(self.CONFIG + "max_time = nan\n")
        self.assertUsage(self.run_all(), "'max_time' must be a non-negative, finite number")
        self.no_run_left()

    def test_a_configuration_that_is_not_utf8(self):
        with Path(self.cfg).open("wb") as f:
            f.write(self.CONFIG.encode().replace(b"fault test", b"fault \xe9t\xe9 test"))
        p = self.run_all()
        self.assertUsage(p, f"{self.cfg}: not UTF-8 text (byte 0xe9 on line 2)")
        Path(self.cfg).unlink()
        Path(self.cfg).mkdir()  # a directory where the file should be
        self.assertUsage(self.run_all(), "no such configuration")
        self.no_run_left()

    def test_selections_that_match_nothing_list_the_valid_names(self):
        cases = (
            (["--benchmarks", "nosuch"], "--benchmarks: no benchmark named nosuch (valid: bus, dist, merge, ngram, "
                                         "ra, ssb, tpch)"),
            (["--benchmarks", "ra,rq"], "no benchmark named rq (valid: bus,"),
            (["--benchmarks", ""], "--benchmarks names nothing (valid: bus, dist, merge, ngram, ra, ssb, tpch)"),
            (["--benchmarks", ","], "--benchmarks names nothing"),
            (["--backends", ""], "--backends names nothing (valid: cpu, opencl, cuda, cuda-host)"),
            (["--backends", "tpu"], "unknown backends tpu (allowed: cpu, opencl, cuda, cuda-host)"),
            (["--sizes", ""], "--sizes names no size"),
            (["--mpi", ""], "--mpi names no rank count"),
            # Known names, but nothing of the selection is built: nothing would run.
            (["--backends", "opencl,cuda"], "nothing to run: none of hdb-bus-cuda, hdb-bus-opencl, hdb-ngram-cuda, "
                                            "hdb-ngram-opencl is built in"),
            (["--benchmarks", "tpch"], "(built there: hdb-bus-cpu, hdb-ngram-cpu)"),
        )
        for args, text in cases:
            with self.subTest(args=args):
                self.assertUsage(self.run_all(*args), text)
        with Path(self.cfg).open("w") as f:
            f.write(self.CONFIG.replace('["bus", "ngram"]', '["bus", "ngarm"]'))
        self.assertUsage(self.run_all(), f"{self.cfg}: 'benchmarks': no benchmark named ngarm (valid:")
        self.no_run_left()
        self.assertFalse(self.calls(), "an executable ran")

    def test_a_corrupt_run_json_is_not_resumed(self):
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        raw_before = {}
        for name in [p.name for p in Path(run, "raw").iterdir()]:
            with Path(run, "raw", name).open("rb") as f:
                raw_before[name] = f.read()
        with Path(run, "run.json").open("rb") as f:
            good = f.read()
        for damage, data in (("NUL bytes", good[:40] + b"\0" * 40 + good[80:]), ("cut short", good[:len(good) // 2]),
                             ("not UTF-8", b"\xff" + good), ("a list", b"[1, 2]"),
                             ("foreign entries", json.dumps({"run_id": "x", "entries": [{"name": "a"}]}).encode())):
            with self.subTest(damage=damage):
                with Path(run, "run.json").open("wb") as f:
                    f.write(data)
                p = self.resume(Path(run).name)
                self.assertUsage(p, "run.json is corrupt (")
                self.assertIn("this run cannot be resumed", p.stderr)
                for name, content in raw_before.items():  # no result taken is touched
                    with Path(run, "raw", name).open("rb") as f:
                        self.assertEqual(f.read(), content, name)
                with Path(run, "run.lock").open() as f:
                    self.assertEqual(f.read(), "")
        self.assertEqual(len(self.calls()), 2)  # the first run's two executables, nothing since


@unittest.skipUnless(shutil.which("setpriv") or os.geteuid() != 0, "needs setpriv to drop root")
class ReadOnlyTest(FaultCase):
    """Permissions do not stop root: as root the commands run as nobody (setpriv)."""

    def setUp(self):
        super().setUp()
        Path(self.tmp).chmod(0o755)
        self.prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] \
            if os.geteuid() == 0 else []
        self.env["MPLCONFIGDIR"] = str(Path(self.tmp, "mpl"))
        Path(self.env["MPLCONFIGDIR"]).mkdir(mode=0o777, parents=True)
        Path(self.env["MPLCONFIGDIR"]).chmod(0o777)
        with Path(self.log).open("w"):
            pass
        Path(self.log).chmod(0o666)

    def test_a_read_only_out(self):
        ro = str(Path(self.tmp, "read-only"))
        Path(ro).mkdir(mode=0o555)
        Path(ro).chmod(0o555)
        for out, text in ((ro, f"--out {ro}: cannot create a run directory there: "),
                          (str(Path(ro, "results")), "cannot create a run directory there: ")):
            with self.subTest(out=out):
                p = bounded("run-all", "--config", self.cfg, "--build-dir", self.build, "--out", out, "--no-setup",
                            "--no-build", env=self.env, prefix=self.prefix)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, text)
                self.assertIn("Permission denied", p.stderr)
        self.assertEqual([p.name for p in Path(ro).iterdir()], [])
        # An --out below a regular file: the same, for root too.
        afile = str(Path(self.tmp, "a-file"))
        Path(afile).open("w").close()
        p = self.run_all("--out", str(Path(afile, "results")))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, "cannot create a run directory there: ")

    def test_a_report_into_a_read_only_run(self):
        run = self.copy_fixture()
        for d, _, _files in os.walk(run):
            Path(d).chmod(0o555)
        p = bounded("report", run, env=self.env, prefix=self.prefix, limit=120)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertOneLineError(p, f"report: error: {Path(run, 'summary.csv')}: cannot write "
                                   "(Permission denied)")
        for d, _, _ in os.walk(run):
            Path(d).chmod(0o755)


class DiskFullTest(FaultCase):
    """A full disk, simulated: every file write of the driver fails with ENOSPC from the moment the
    second executable has started (in-process, util.write_atomically patched)."""
    MODES = {"bus-cpu": "ok", "ngram-cpu": "hang"}

    def test_disk_full_during_a_run(self):
        real = util.write_atomically
        full = []

        def write(path, data):
            path = str(path)  # the driver may name a file by a Path
            if not full and path.endswith("run.json"):
                doc = json.loads(data)
                if any(e["name"] == "ngram-cpu" and e["status"] == "running" and "pid" in e for e in doc["entries"]):
                    # The disk fills up while the executable runs, after its first case.
                    raw = str(Path(path).parent / "raw" / "ngram-cpu.json")
                    wait_for(lambda: self.call_of("hdb-ngram-cpu") and Path(raw).exists(), 20)
                    full.append(path)
            if full:
                raise OSError(errno.ENOSPC, "cannot write (No space left on device)", path)
            return real(path, data)

        def alarm(signum, frame):
            raise TimeoutError("the disk-full run did not end in 60 s")
        old = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(60)
        err = io.StringIO()
        try:
            with mock.patch.object(util, "write_atomically", write), \
                    mock.patch.object(results, "write_atomically", write), \
                    mock.patch.dict(os.environ, self.env), \
                    contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = cli.main(["run-all", *self.args()])
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        self.assertEqual(rc, 1, err.getvalue())
        self.assertTrue(full)
        run = self.only_run()
        self.assertIn(f"run-all: error: {run}/run.json: cannot write (No space left on device); the driver stopped",
                      err.getvalue())
        self.assertIn(f"--resume {Path(run).name}", err.getvalue())
        self.assertEqual(len([ln for ln in err.getvalue().splitlines() if ln.strip()]), 1)
        # The executable that was running is stopped; run.json holds the last state it could write.
        child = self.call_of("hdb-ngram-cpu")["pid"]
        self.assertTrue(wait_for(lambda: pid_gone(child), 10))
        e = self.entries(run)
        self.assertEqual(e["bus-cpu"]["status"], "ok")
        self.assertEqual(e["ngram-cpu"]["status"], "running")
        self.assertEqual(len(read_json(str(Path(run, "raw", "bus-cpu.json")))["results"]), 2)
        self.assertEqual(len(read_json(str(Path(run, "raw", "ngram-cpu.json")))["results"]), 1)
        # With room again, --resume finishes it and keeps the stopped executable's partial file.
        self.make_fakes({"ngram-cpu": "ok"})
        p = self.resume(Path(run).name)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(all(x["status"] == "ok" for x in self.entries(run).values()))
        self.assertEqual(len(read_json(str(Path(run, "raw", "ngram-cpu.json.interrupted-1")))["results"]), 1)

    def test_write_atomically_keeps_the_old_file_on_a_failed_write(self):
        path = str(Path(self.tmp, "run.json"))
        util.write_json(path, {"kept": True})
        with mock.patch("os.fsync", side_effect=OSError(errno.ENOSPC, "No space left on device")):
            with self.assertRaises(OSError) as cm:
                util.write_json(path, {"kept": False})
        self.assertEqual(cm.exception.errno, errno.ENOSPC)
        self.assertEqual(cm.exception.filename, path)
        self.assertEqual(read_json(path), {"kept": True})
        self.assertEqual([p.name for p in Path(self.tmp).iterdir()].count("run.json"), 1)
        self.assertFalse([f for f in [p.name for p in Path(self.tmp).iterdir()] if f.endswith(".tmp")])


class ErrorLineTest(FaultCase):
    MODES = {"bus-cpu": "usage", "ngram-cpu": "error"}

    def test_the_real_error_line_is_recorded(self):
        p = self.run_all()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        run = self.only_run()
        e = self.entries(run)
        self.assertEqual(e["bus-cpu"]["reason"], "usage error: hdb-bus-cpu: error: --frobnicate: unknown option "
                                                 "(driver test)")
        self.assertEqual(e["ngram-cpu"]["reason"], "exit 1: hdb-ngram-cpu: error: cannot open "
                                                   "/nonexistent/queries.txt: No such file or directory (driver test)")
        with Path(run, "report.md").open() as f:
            md = f.read()
        self.assertIn("hdb-bus-cpu: error: --frobnicate: unknown option", md)
        self.assertNotIn("Run with --help", md)
        self.assertEqual(len(read_json(str(Path(run, "raw", "ngram-cpu.json")))["results"]), 1)

    def test_reason_line(self):
        log = str(Path(self.tmp, "x.log"))
        for lines, want in (
                (["$ hdb-ra-cpu --bogus", "hdb-ra-cpu: error: --bogus: unknown option",
                  "Run with --help for the options and their allowed values."],
                 "hdb-ra-cpu: error: --bogus: unknown option"),
                (["$ mpirun -np 2 hdb-ra-cpu", "hdb-ra-cpu: rank 1: error: no such file q.txt",
                  "Primary job  terminated normally, but 1 process returned", "a non-zero exit code."],
                 "hdb-ra-cpu: rank 1: error: no such file q.txt"),
                (["$ hdb-ra-cpu", "skipped: no device", ""], "skipped: no device"),
                (["$ hdb-ra-cpu", "Run with --help for the options."], ""),
                (["$ hdb-ra-cpu"], "")):
            with Path(log).open("w") as f:
                f.write("\n".join(lines) + "\n")
            self.assertEqual(runner.reason_line(log), want, lines)
