"""Shared set-up of the driver tests: paths, running the scripts, a fake build folder, the CSV columns."""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = str(Path(os.path.normpath(Path(__file__).absolute())).parent)
REPO = str(Path(HERE).parents[1])
SCRIPTS = str(Path(REPO, "scripts"))
FIXTURE = str(Path(HERE, "fixtures", "run-small"))
SCHEMA_FILE = str(Path(REPO, "docs", "results-schema.json"))
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, str(Path(REPO, "tests")))  # check_results.py, check_csv_header.py


def _csv_columns():
    with Path(SCHEMA_FILE).open() as f:
        return list(json.load(f)["x-csv-columns"])


# The one CSV column list of the tests: the contract's (docs/results-schema.json, x-csv-columns). The
# fixture and the fake executables write their CSV with it; the tests compare headers with it.
CSV_COLUMNS = _csv_columns()


def script(name, *args, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([str(Path(SCRIPTS, name)), *args], capture_output=True, text=True, env=e,
                          timeout=timeout)


def has_matplotlib():
    from hdb import plots
    return plots.available()


# A report whose test reads its tables, problems or exit status, not its figures: drawn without them,
# as on a machine without matplotlib (drawing them is about a second a figure; test_report.py's
# figure tests draw every one).
NO_FIGURES = {"HDB_NO_MATPLOTLIB": "1"}


@contextlib.contextmanager
def no_figures():
    """NO_FIGURES for a report generated in this process."""
    from hdb import plots
    plt = plots.plt
    plots.plt = None
    try:
        yield
    finally:
        plots.plt = plt


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hdb-driver-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def make_fakes(self, modes, build="build"):
        """bin/hdb-<name> for each name -> mode (ok, crash, hang, skip, fail); returns the build dir.
        The mode is kept beside the build (fake-modes/), not in the executable, so a test that changes a
        fake's behaviour before a --resume (the fault has gone, as a full disk that was emptied) keeps
        the same binary, the same sha256; a test of mixed builds changes the executable itself."""
        build = str(Path(self.tmp, build))
        Path(build, "bin").mkdir(parents=True, exist_ok=True)
        Path(build, "fake-modes").mkdir(parents=True, exist_ok=True)
        for name, mode in modes.items():
            p = str(Path(build, "bin", f"hdb-{name}"))
            mode_file = str(Path(build, "fake-modes", f"hdb-{name}"))
            with Path(mode_file).open("w") as f:
                f.write(mode)
            with Path(p).open("w") as f:
                f.write(f"#!/bin/sh\nFAKE_NAME=hdb-{name} exec {sys.executable} {HERE}/fake_bench.py "
                        f"\"$(cat '{mode_file}')\" \"$@\"\n")
            Path(p).chmod(0o755)
        return build

    def copy_fixture(self):
        dst = str(Path(self.tmp, "run-small"))
        shutil.copytree(FIXTURE, dst)
        return dst


# --- the fault suites (test_fault_*.py, CTest label "fault") -------------------------------------
def bounded(name, *args, env=None, limit=60, prefix=()):
    """scripts/<name> under coreutils `timeout` (SIGTERM at `limit` s, SIGKILL 5 s later): a fault
    test never hangs, and a hang shows as exit 124. prefix: a command to run it through (setpriv)."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(["timeout", "-k", "5", str(limit), *prefix, str(Path(SCRIPTS, name)), *args],
                          capture_output=True, text=True, env=e, timeout=limit + 30)


def start(name, *args, env=None, limit=120):
    """scripts/<name> started in the background under `timeout`, its output to pipes."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.Popen(["timeout", "-k", "5", str(limit), str(Path(SCRIPTS, name)), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)


def wait_for(cond, limit=30.0, step=0.05):
    """Polls cond() until it is true (returns its value) or `limit` seconds pass (returns None)."""
    import time
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return None


def pid_gone(pid):
    """True when the process has ended (a zombie waiting for a parent that never reaps counts as ended)."""
    try:
        with Path(f"/proc/{pid}/stat").open() as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


def read_json(path):
    with Path(path).open() as f:
        return json.load(f)


class FaultCase(TempDirCase):
    """A fake build (helpers.make_fakes), a configuration, and scripts/run-all against them."""
    CONFIG = """
description = "fault test"
benchmarks = ["bus", "ngram"]
backends = ["cpu"]
timeout_s = 100
[harness]
sizes = "32K"
"""
    MODES = {"bus-cpu": "ok", "ngram-cpu": "ok"}

    def setUp(self):
        super().setUp()
        self.build = self.make_fakes(self.MODES)
        self.out = str(Path(self.tmp, "results"))
        self.cfg = str(Path(self.tmp, "fault.toml"))
        with Path(self.cfg).open("w") as f:
            f.write(self.CONFIG)
        self.log = str(Path(self.tmp, "calls.jsonl"))
        # No figures unless a test is about them: they are the slow part of a report.
        self.env = {"FAKE_LOG": self.log, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "HDB_NO_MATPLOTLIB": "1"}

    def args(self, *extra):
        return ["--config", self.cfg, "--build-dir", self.build, "--out", self.out, "--no-setup", "--no-build", *extra]

    def run_all(self, *extra, limit=60):
        return bounded("run-all", *self.args(*extra), env=self.env, limit=limit)

    def resume(self, run, *extra, limit=60):
        return bounded("run-all", "--resume", run, "--build-dir", self.build, "--out", self.out, "--no-setup",
                       "--no-build", *extra, env=self.env, limit=limit)

    def start_run_all(self, *extra, limit=120):
        return start("run-all", *self.args(*extra), env=self.env, limit=limit)

    def calls(self):
        if not Path(self.log).exists():
            return []
        with Path(self.log).open() as f:
            return [json.loads(line) for line in f]

    def call_of(self, name, key="pid"):
        for c in self.calls():
            if c["name"] == name and key in c:
                return c
        return None

    def only_run(self):
        runs = [p.name for p in Path(self.out).iterdir() if p.is_dir()]
        self.assertEqual(len(runs), 1, runs)
        return str(Path(self.out, runs[0]))

    def manifest(self, run):
        return read_json(str(Path(run, "run.json")))

    def entries(self, run):
        return {e["name"]: e for e in self.manifest(run)["entries"]}

    def ids(self, path):
        """The result ids of a raw JSON document (what an executable measured)."""
        return [r["id"] for r in read_json(path)["results"]]

    def assertNoTraceback(self, p):
        self.assertNotIn("Traceback", p.stdout + p.stderr)

    def assertOneLineError(self, p, text):
        """The failure is one clear line on stderr containing `text`, and no traceback."""
        self.assertNoTraceback(p)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        self.assertTrue(any(text in ln for ln in lines), p.stderr)
        self.assertLessEqual(len(lines), 2, p.stderr)
