"""Shared set-up of the driver tests: paths, running the scripts, a fake build folder, the CSV columns."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(REPO, "scripts")
FIXTURE = os.path.join(HERE, "fixtures", "run-small")
SCHEMA_FILE = os.path.join(REPO, "docs", "results-schema.json")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, os.path.join(REPO, "tests"))  # check_results.py, check_csv_header.py


def _csv_columns():
    with open(SCHEMA_FILE) as f:
        return list(json.load(f)["x-csv-columns"])


# The one CSV column list of the tests: the contract's (docs/results-schema.json, x-csv-columns). The
# fixture and the fake executables write their CSV with it; the tests compare headers with it.
CSV_COLUMNS = _csv_columns()


def script(name, *args, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([os.path.join(SCRIPTS, name), *args], capture_output=True, text=True, env=e,
                          timeout=timeout)


def has_matplotlib():
    from hdb import plots
    return plots.available()


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hdb-driver-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def make_fakes(self, modes):
        """bin/hdb-<name> for each name -> mode (ok, crash, hang, skip, fail); returns the build dir."""
        build = os.path.join(self.tmp, "build")
        os.makedirs(os.path.join(build, "bin"), exist_ok=True)
        for name, mode in modes.items():
            p = os.path.join(build, "bin", f"hdb-{name}")
            with open(p, "w") as f:
                f.write(f"#!/bin/sh\nFAKE_NAME=hdb-{name} exec {sys.executable} {HERE}/fake_bench.py {mode} \"$@\"\n")
            os.chmod(p, 0o755)
        return build

    def copy_fixture(self):
        dst = os.path.join(self.tmp, "run-small")
        shutil.copytree(FIXTURE, dst)
        return dst
