"""The CuPy peer (scripts/hdb/peers/cupy_peer.py, cupy_ops.py; docs/peers.md), CTest label `peers`:

- every RA operation CuPy offers something for answers as the suite's reference, on the suite's data
  and its edge cases (empty input, one tuple, nothing / everything selected, all keys equal, 3 values,
  Zipf keys, fan-out, no matches): with CuPy on a GPU where one is (the GPU machine's test run), and
  everywhere on the NumPy stand-in (HDB_CUPY_STANDIN=numpy: the same code, numpy as the array module);
- the set operations are skipped, saying why; a wrong answer is recorded as failed, never a time;
- a run writes a valid document whose trials split h2d / kernel / d2h, transfer=pinned, bus bytes;
- without CuPy the driver and the peer skip, naming what is missing.

Run: HDB_BUILD_DIR=build-test .venv/bin/python tests/peers/test_cupy_peer.py"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))

from hdb import config as cfgmod  # noqa: E402
from hdb import contract  # noqa: E402
from hdb import runner as runmod  # noqa: E402
from hdb.peers import cupy_ops, cupy_peer, record  # noqa: E402
from hdb.peers.duckdb_sql import compare  # noqa: E402

BUILD = os.path.abspath(os.environ.get("HDB_BUILD_DIR", os.path.join(REPO, "build")))
EXPORT = os.path.join(BUILD, "tools", "hdb-export")
HAVE_EXPORT = os.access(EXPORT, os.X_OK)
HAVE_CUPY = cupy_peer.available(sys.executable)[0]


def export(out, *args):
    p = subprocess.run([EXPORT, "ra", "--out", out] + list(args), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"hdb-export ra {' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    with open(os.path.join(out, "cases.json")) as f:
        return json.load(f)


def answers(test, gpu, *args):
    """Every exported case through the peer's operation on gpu; asserts each answer equals the
    reference. Returns (operations answered, operations skipped)."""
    one = record.Harness(warmup=0, passes=1, max_passes=1)
    done, skipped = set(), set()
    with tempfile.TemporaryDirectory() as out:
        for case in export(out, *args)["cases"]:
            if case["status"] != "ok":
                continue
            d = os.path.join(out, case["dir"])
            with open(os.path.join(d, "manifest.json")) as f:
                m = json.load(f)
            try:
                fn, rels, want, order = cupy_peer.prepare(m, d, np)
            except cupy_ops.NoOp:
                skipped.add(m["op"])
                continue
            _, trials, got, moved = cupy_peer.run_case(gpu, fn, rels, m["args"], one)
            equal, detail = compare(got, want, order)
            test.assertTrue(equal, f"{case['id']}: {detail}")
            test.assertEqual(len(trials), 1)
            test.assertGreaterEqual(moved, sum(c.nbytes for r in rels for c in r))
            done.add(m["op"])
    return done, skipped


EDGE_CASES = (("--sizes", "4,8,24"),  # empty, one tuple, three
              ("--sizes", "8K", "--selectivity", "0,1"),  # nothing and everything selected
              ("--sizes", "2K", "--duplicates", "0.999", "--reduce-op", "sum,min,max"),  # all keys equal
              ("--sizes", "4K", "--values", "3", "--reduce-op", "min,max", "--product-rows", "3"),
              ("--sizes", "16K", "--dist", "zipf", "--fanout", "1,16", "--match-rate", "0,1"),
              ("--sizes", "4K", "--input", "unsorted", "--reduce-op", "sum,min,max"))
ANSWERED = {"project", "select", "unique", "reduce", "reduce_by_key", "join", "product", "add", "subtract",
            "multiply", "sort"}


class Answers:
    gpu: cupy_peer.Gpu

    def test_every_op_on_random_data(self):
        done, skipped = answers(self, self.gpu, "--sizes", "64K", "--seed", "3")
        self.assertEqual(done, ANSWERED)
        self.assertEqual(skipped, {"set_union", "set_intersection", "set_difference"})

    def test_edge_cases(self):
        for args in EDGE_CASES:
            with self.subTest(args=args):
                answers(self, self.gpu, *args)


@unittest.skipUnless(HAVE_EXPORT, "needs hdb-export")
class StandInTest(Answers, unittest.TestCase):
    gpu = cupy_peer.Gpu(standin=True)


@unittest.skipUnless(HAVE_EXPORT and HAVE_CUPY, "needs hdb-export, the cupy package and an NVIDIA GPU")
class CupyTest(Answers, unittest.TestCase):
    def setUp(self):
        self.gpu = cupy_peer.Gpu(standin=False)


class OpsTest(unittest.TestCase):
    def test_set_operations_are_skipped_saying_why(self):
        for op in ("set_union", "set_intersection", "set_difference"):
            with self.assertRaises(cupy_ops.NoOp) as e:
                cupy_ops.operation(op)
            self.assertIn("multiset", str(e.exception))
        with self.assertRaises(cupy_ops.NoOp):
            cupy_ops.operation("no_such_op")

    def test_limits_by_hand(self):
        """Sums wrap modulo 2^32 by key, and are exact in 64 bits in reduce; the join pairs every match."""
        ops = cupy_ops.Ops(np)
        top = np.uint32(0xFFFFFFFF)
        k = np.array([7, 7, 0xFFFFFFFF, 7], np.uint32)
        v = np.array([top, 2, top, top], np.uint32)
        keys, sums = cupy_ops.reduce_by_key(ops, [[k, v]], {"op": "sum"})
        self.assertEqual(dict(zip(keys.tolist(), sums.tolist(), strict=True)),
                         {7: (2 * 0xFFFFFFFF + 2) % 2 ** 32, 0xFFFFFFFF: 0xFFFFFFFF})
        self.assertEqual(cupy_ops.reduce(ops, [[k, v]], {"op": "sum"})[0].tolist(), [3 * 0xFFFFFFFF + 2])
        self.assertEqual(cupy_ops.reduce(ops, [[k[:0], v[:0]]], {"op": "min"})[0].tolist(), [0xFFFFFFFF])
        a = [np.array([1, 2, 2], np.uint32), np.array([10, 20, 21], np.uint32)]
        b = [np.array([2, 2, 3, 1], np.uint32), np.array([5, 6, 7, 8], np.uint32)]
        got = cupy_ops.join(ops, [a, b], {})
        self.assertEqual(sorted(zip(*[c.tolist() for c in got], strict=True)),
                         [(1, 10, 8), (2, 20, 5), (2, 20, 6), (2, 21, 5), (2, 21, 6)])
        self.assertEqual([len(c) for c in cupy_ops.join(ops, [[x[:0] for x in a], b], {})], [0, 0, 0])

    def test_wrong_answer_is_recorded_as_failed(self):
        with tempfile.TemporaryDirectory() as d:
            doc = record.Document("ra", "cupy", record.context(REPO, record.Harness(), "cupy x", 1),
                                  os.path.join(d, "x.json"), transfer="pinned")
            case = {"size_bytes": 1024, "elements": 128, "bytes": {"input": 1024, "min_moved": 2048}, "extra": {}}
            trial = {"h2d_s": 0.1, "kernel_s": 0.2, "d2h_s": 0.1, "total_s": 0.4, "phases_s": {"query": 0.2}}
            r = doc.ok(case, "select", "cupy", {"dist": "uniform"}, contract.Passes([0.4]), True, False,
                       "row 0 differs", trials=[trial], transfer_bytes=100)
            self.assertEqual((r["status"], r["trials"], r["id"]),
                             ("failed", [], "select/cupy[dist=uniform,transfer=pinned]@1K"))
            with self.assertRaises(ValueError):  # trials must be the timed passes'
                doc.ok(case, "select", "cupy", {}, contract.Passes([0.4, 0.4]), True, True, "", trials=[trial])


@unittest.skipUnless(HAVE_EXPORT, "needs hdb-export")
class PeerRunTest(unittest.TestCase):
    def test_standin_run_writes_a_valid_document(self):
        with tempfile.TemporaryDirectory() as d:
            js, csv = os.path.join(d, "ra-cupy.json"), os.path.join(d, "ra-cupy.csv")
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"), HDB_CUPY_STANDIN="numpy")
            p = subprocess.run([sys.executable, "-m", "hdb.peers.cupy_peer", "ra", "--json", js, "--csv", csv,
                                "--build-dir", BUILD, "--sizes", "4K", "--passes", "3", "--max-passes", "3",
                                "--max-time", "0.05", "--only", "select,join,set_union,reduce"],
                               capture_output=True, text=True, env=env, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(js) as f:
                doc = json.load(f)
            self.assertEqual((doc["backend"], doc["complete"]), ("cupy", True))
            self.assertEqual(doc["summary"], {"ok": 4, "skipped": 2, "failed": 0})
            self.assertIn("stand-in", doc["context"]["device"]["name"])
            self.assertTrue(doc["context"]["peer"]["standin"])
            ok = [r for r in doc["results"] if r["status"] == "ok"]
            self.assertIn("select/cupy[dist=uniform,key=32,selectivity=0.5,transfer=pinned]@4K",
                          [r["id"] for r in ok])
            for r in ok:
                self.assertEqual((r["transfer"], r["phases"]), ("pinned", [{"name": "query", "kind": "kernel"}]))
                self.assertGreater(r["bytes"]["transfer"], 0)
                self.assertEqual(len(r["trials"]), 3)
                for t in r["trials"]:
                    self.assertAlmostEqual(t["total_s"], t["h2d_s"] + t["kernel_s"] + t["d2h_s"])
                self.assertEqual(r["protocol"]["cold_note"], cupy_peer.COLD_NOTE)
            skip = [r for r in doc["results"] if r["status"] == "skipped"][0]
            self.assertIn("multiset", skip["reason"])
            try:
                import jsonschema  # noqa: F401
            except ImportError:  # the GPU image's Python: the checks above passed, the schema's is not run
                self.skipTest("tests/check_results.py needs jsonschema (scripts/setup installs it into .venv)")
            c = subprocess.run([sys.executable, os.path.join(REPO, "tests", "check_results.py"), js, "4", "--csv", csv],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(c.returncode, 0, c.stdout + c.stderr)


class AvailabilityTest(unittest.TestCase):
    def test_unavailable_without_cupy(self):
        if HAVE_CUPY:
            self.skipTest("this interpreter has CuPy and a GPU")
        ok, why = cupy_peer.available(sys.executable)
        self.assertFalse(ok)
        self.assertIn("CuPy is not usable", why)
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"))
            env.pop(cupy_peer.STANDIN_ENV, None)
            p = subprocess.run([sys.executable, "-m", "hdb.peers.cupy_peer", "ra", "--json", os.path.join(d, "x.json"),
                                "--build-dir", BUILD], capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(p.returncode, contract.EXIT_SKIP, p.stderr)
            self.assertIn("cupy", p.stderr)

    def test_driver_plans_it_after_ra_only(self):
        cfg = cfgmod.validate({"benchmarks": ["ra", "tpch"], "backends": ["cpu"], "peers": ["cupy"]})
        self.assertEqual([e["name"] for e in runmod.plan(cfg)], ["ra-cpu", "ra-cupy", "tpch-cpu"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
