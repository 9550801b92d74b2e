"""The DuckDB peer (scripts/hdb/peers, docs/peers.md), CTest label `peers`:

- hdb-export hands over the data the benchmark uses: its case ids are hdb-ra-cpu's (variant aside),
  and the same seeds give the same output sizes and selected fractions as hdb-ra-cpu records;
- DuckDB's answer to the SQL of every mapped operation equals the suite's reference, on the suite's
  data and on its edge cases (empty input, one tuple, all keys equal, nothing / everything selected,
  1 and 3 values, Zipf keys, fan-out) and on hand-made tuples at the 32-bit limits, in both variants:
  `sql_table` (materialised in a DuckDB temporary table, read back for the check) and `sql`
  (fetchnumpy());
- the cold / warm / hot protocol (issue 29): the cold pass on a fresh connection, never on the peer's
  own; --warmup 0 takes none; --flush-caches records the timed passes as warm; every ok result
  records `protocol` and `energy` (source none);
- a wrong answer is caught and recorded as failed, with no time;
- without the duckdb package the peer is skipped with the reason (driver and peer);
- the peer's document and CSV pass tests/check_results.py.

Run: HDB_BUILD_DIR=build-duck .venv/bin/python tests/peers/test_duckdb_peer.py (it re-runs itself
with the project venv's python when the one it was started with lacks duckdb)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))

try:
    import duckdb  # noqa: F401
    import numpy as np
    HAVE_DUCKDB = True
except ImportError:
    venv = os.path.join(REPO, ".venv", "bin", "python")
    if os.access(venv, os.X_OK) and os.environ.get("HDB_PEER_TEST_REEXEC") != "1":
        os.environ["HDB_PEER_TEST_REEXEC"] = "1"
        os.execv(venv, [venv] + sys.argv)
    HAVE_DUCKDB = False

from hdb import config as cfgmod  # noqa: E402
from hdb import peers  # noqa: E402
from hdb import runner as runmod  # noqa: E402
from hdb.peers import duckdb_peer, record  # noqa: E402

BUILD = os.path.abspath(os.environ.get("HDB_BUILD_DIR", os.path.join(REPO, "build")))
EXPORT = os.path.join(BUILD, "tools", "hdb-export")
RA_CPU = os.path.join(BUILD, "bin", "hdb-ra-cpu")
SYSTEM_PYTHON = "/usr/bin/python3"


def export(out, bench, *args):
    p = subprocess.run([EXPORT, bench, "--out", out] + list(args), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"hdb-export {bench} {' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    with open(os.path.join(out, "cases.json")) as f:
        return json.load(f)


def sql_answers(test, exported, out, threads=(2, 1), variants=duckdb_peer.VARIANTS):
    """Every exported case through DuckDB, in each variant: asserts each answer equals the reference;
    returns the count."""
    from hdb.peers import duckdb_sql as q
    con = duckdb.connect()
    one = record.Harness(warmup=0, passes=1, max_passes=1)
    n = 0
    for case in exported["cases"]:
        if case["status"] != "ok":
            continue
        d = os.path.join(out, case["dir"])
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        tables, sql, order, want = duckdb_peer.prepare(m, d, np)
        for t in threads:
            for v in variants:
                _, got, _ = duckdb_peer.run_case(con, tables, sql, t, one, v)
                equal, detail = q.compare(got, want, order)
                test.assertTrue(equal, f"{case['id']} threads={t} {v}: {detail}\n{sql}")
                n += 1
    return n


def run_peer(js, *args, **env_extra):
    """python -m hdb.peers.duckdb_peer ra --json JS --build-dir BUILD ARGS, with env_extra set."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"), **env_extra)
    return subprocess.run([sys.executable, "-m", "hdb.peers.duckdb_peer", "ra", "--json", js, "--build-dir", BUILD]
                          + list(args), capture_output=True, text=True, env=env, timeout=120)


@unittest.skipUnless(os.access(EXPORT, os.X_OK), f"{EXPORT} is not built")
class ExportTest(unittest.TestCase):
    def test_ids_and_data_are_the_suites(self):
        if not os.access(RA_CPU, os.X_OK):
            self.skipTest(f"{RA_CPU} is not built")
        args = ["--sizes", "4K,64K", "--seed", "7", "--selectivity", "0.1,0.9", "--fanout", "1,4"]
        with tempfile.TemporaryDirectory() as out:
            exported = export(out, "ra", *args)
            js = os.path.join(out, "cpu.json")
            subprocess.run([RA_CPU, "--json", js, "--only", "*/serial", "--passes", "1", "--warmup", "0",
                            "--quiet"] + args, check=True, capture_output=True, timeout=120)
            with open(js) as f:
                cpu = {r["id"].replace("/serial", "/export", 1): r for r in json.load(f)["results"]}
        ids = [c["id"] for c in exported["cases"]]
        self.assertEqual(sorted(ids), sorted(cpu))
        self.assertIn("join/export[dist=uniform,key=32,match=0.5,fanout=4,input=sorted]@64K", ids)
        self.assertIn("join/export[dist=uniform,key=32,match=0.5,fanout=4,input=unsorted]@64K", ids)
        for c in exported["cases"]:
            r = cpu[c["id"]]
            self.assertEqual(c["status"], "ok")
            self.assertEqual((c["elements"], c["bytes"]), (r["elements"], r["bytes"]), c["id"])
            # Same seeded data: the same output size (and selected fraction) as the cpu backend's.
            for k in ("output_rows", "selected_fraction"):
                if k in r["extra"]:
                    self.assertEqual(c["extra"][k], r["extra"][k], f"{c['id']} {k}")

    def test_npy_layout(self):
        with tempfile.TemporaryDirectory() as out:
            exported = export(out, "ra", "--sizes", "1K", "--only", "select,product", "--values", "2")
            sel = next(c for c in exported["cases"] if c["test"] == "select")
            d = os.path.join(out, sel["dir"])
            with open(os.path.join(d, "manifest.json")) as f:
                m = json.load(f)
            a = np.load(os.path.join(d, "in0.npy"))
            self.assertEqual((a.dtype, a.shape), (np.dtype("<u4"), (3, 1024 // 12)))
            self.assertTrue(all(a[i].flags["C_CONTIGUOUS"] for i in range(3)))
            keep = (a[0] >= m["args"]["lo"]) & (a[0] <= m["args"]["hi"])  # select on the key, input order
            self.assertTrue(np.array_equal(np.load(os.path.join(d, "out.npy")), a[:, keep]))
            prod = next(c for c in exported["cases"] if c["test"] == "product")
            d = os.path.join(out, prod["dir"])
            l, r, o = (np.load(os.path.join(d, f)) for f in ("in0.npy", "in1.npy", "out.npy"))
            want = np.vstack([np.repeat(l, r.shape[1], axis=1), np.tile(r, l.shape[1])])  # a-major, b's key a value
            self.assertTrue(np.array_equal(o, want))

    def test_stream_hands_over_a_case_at_a_time(self):
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.Popen([EXPORT, "ra", "--out", out, "--stream", "--sizes", "1K", "--only", "select,join,sort",
                                  "--input", "unsorted"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            try:
                said, seen = [], 0
                for line in p.stdout:
                    if not line.startswith("@"):
                        continue
                    said.append(line.split()[0])
                    with open(os.path.join(out, "cases.json")) as f:
                        listed = json.load(f)["cases"]
                    self.assertEqual(len(listed), int(line.split()[1]))
                    dirs = sorted(d for d in os.listdir(out) if d.startswith("case-"))
                    self.assertEqual(dirs, [c["dir"] for c in listed[seen:]])  # the next case is not made yet
                    seen = len(listed)
                    for d in dirs:
                        subprocess.run(["rm", "-rf", os.path.join(out, d)], check=True)
                    if line.startswith("@ready"):
                        p.stdin.write("next\n")
                        p.stdin.flush()
                self.assertEqual(p.wait(timeout=60), 0)
            finally:
                if p.poll() is None:
                    p.kill()
            self.assertEqual(said, ["@ready", "@ready", "@done"])

    def test_tpch_exports_plan_and_answer(self):
        with tempfile.TemporaryDirectory() as out:
            exported = export(out, "tpch", "--sizes", "32K", "--sf", "0.01")
            self.assertEqual([c["id"] for c in exported["cases"]],
                             ["A/export[data=random,key=32]@32K", "B/export[data=random,key=32]@32K",
                              "C/export[data=random,key=32]@32K",
                              "A/export[data=tpch,key=32,sf=0.01]", "B/export[data=tpch,key=32,sf=0.01]",
                              "C/export[data=tpch,key=32,sf=0.01]"])
            for c in exported["cases"]:
                with open(os.path.join(out, c["dir"], "manifest.json")) as f:
                    m = json.load(f)
                self.assertEqual(m["answer"]["rows"], c["extra"]["rows"])


    def test_ssb_exports_tables_once_and_the_answers(self):
        with tempfile.TemporaryDirectory() as out:
            # SF 0.02 with seed 1: every query's answer has rows (Q3.4's two cities in December 1997: one)
            exported = export(out, "ssb", "--sf", "0.02", "--seed", "1")
            self.assertEqual([c["id"] for c in exported["cases"]],
                             [f"q{n}/export[data=generated,sf=0.02]" for n in
                              ("1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "3.1", "3.2", "3.3", "3.4", "4.1", "4.2",
                               "4.3")])
            self.assertEqual(sorted(os.listdir(os.path.join(out, "tables"))),
                             ["customer.npy", "date.npy", "lineorder.npy", "part.npy", "supplier.npy"])
            lo = np.load(os.path.join(out, "tables", "lineorder.npy"))
            self.assertEqual((lo.dtype.str, lo.shape), ("<u4", (9, 120000)))
            nonempty = 0
            for c in exported["cases"]:
                with open(os.path.join(out, c["dir"], "manifest.json")) as f:
                    m = json.load(f)
                self.assertEqual(m["tables"]["lineorder"]["file"], "../tables/lineorder.npy")
                self.assertEqual(m["tables"]["lineorder"]["columns"][0], "lo_orderdate")
                rows = m["answer"]["rows"]
                if not m["group_by"]:  # Q1.x: one row, the sum
                    self.assertEqual(len(rows), 1, c["id"])
                nonempty += bool(rows)
                self.assertTrue(all(len(r) == len(m["group_by"]) + 1 for r in rows))
                self.assertEqual(rows, sorted(rows), "rows sorted by group key")
            self.assertEqual(nonempty, 13)


@unittest.skipUnless(HAVE_DUCKDB and os.access(EXPORT, os.X_OK), "needs duckdb and hdb-export")
class SqlTest(unittest.TestCase):
    def check(self, *args, bench="ra"):
        with tempfile.TemporaryDirectory() as out:
            exported = export(out, bench, *args)
            n = sql_answers(self, exported, out)
            self.assertGreater(n, 0)
            return exported

    def test_every_op_on_random_data(self):
        exported = self.check("--sizes", "64K", "--seed", "3")
        self.assertEqual({c["test"] for c in exported["cases"]},
                         {"project", "select", "unique", "reduce", "reduce_by_key", "join", "set_union",
                          "set_intersection", "set_difference", "product", "add", "subtract", "multiply", "sort"})

    def test_edge_cases(self):
        self.check("--sizes", "4,8,24")  # empty, one tuple, three
        self.check("--sizes", "8K", "--selectivity", "0,1")  # nothing and everything selected
        self.check("--sizes", "2K", "--duplicates", "0.999", "--reduce-op", "sum,min,max")  # all keys equal
        self.check("--sizes", "4K", "--values", "3", "--reduce-op", "min,max", "--product-rows", "3")
        self.check("--sizes", "16K", "--dist", "zipf", "--fanout", "1,16", "--match-rate", "0,1")

    def test_tpch_plans(self):
        self.check("--sizes", "32K", "--sf", "0.01", bench="tpch")

    def test_tpch_tbl_input(self):
        """dbgen-layout .tbl files, loaded by the suite's loader and handed over as its columns."""
        tool = os.path.join(BUILD, "bin", "tpch_tbl_tool")
        if not os.access(tool, os.X_OK):
            self.skipTest(f"{tool} is not built")
        with tempfile.TemporaryDirectory() as tbl:
            subprocess.run([tool, "write", "0.005", tbl], check=True, capture_output=True, timeout=120)
            exported = self.check("--data", "tpch", "--tbl-dir", tbl, bench="tpch")
        self.assertEqual([c["id"] for c in exported["cases"]],
                         ["A/export[data=tbl,key=32]", "B/export[data=tbl,key=32]", "C/export[data=tbl,key=32]"])

    def peer_document(self, d, bench, *args):
        """Runs the peer on `bench` with args, writing into folder d: (its document, json path, csv path)."""
        js, csv = os.path.join(d, f"{bench}-duckdb.json"), os.path.join(d, f"{bench}-duckdb.csv")
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"))
        p = subprocess.run([sys.executable, "-m", "hdb.peers.duckdb_peer", bench, "--json", js, "--csv", csv,
                            "--build-dir", BUILD] + list(args), capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(js) as f:
            return json.load(f), js, csv

    def test_ssb_queries(self):
        """The 13 SSB queries on generated SF 0.02 (seed 1: every answer has rows): DuckDB's answer (group
        values and the 64-bit sum) equals the suite's serial reference in both variants, 2 threads and 1."""
        exported = self.check("--sf", "0.02", "--seed", "1", bench="ssb")
        self.assertEqual(len(exported["cases"]), 13)

    def test_ssb_sql_is_the_specifications_on_the_codes(self):
        from hdb.peers import duckdb_sql as q
        sql, order = q.ssb_sql("2.2", ["d_year", "p_brand1"])
        self.assertEqual(order, "multiset")
        self.assertIn("p_brand1 BETWEEN 260 AND 267 AND s_region = 2", sql)  # MFGR#2221..MFGR#2228, ASIA
        self.assertIn("p_brand1 = 278", q.ssb_sql("2.3")[0])  # the specification's MFGR#2239
        self.assertIn("c_city IN (231, 235)", q.ssb_sql("3.4")[0])  # UNITED KI1, UNITED KI5
        self.assertIn("d_yearmonth = 71", q.ssb_sql("3.4")[0])  # Dec1997
        self.assertIn("p_category = 3", q.ssb_sql("4.3")[0])  # MFGR#14
        with self.assertRaises(ValueError):  # a group-by the SQL does not give is an error, never a pass
            q.ssb_sql("4.2", ["d_year", "p_category", "s_nation"])
        with self.assertRaises(q.NoSql):
            q.ssb_sql("5.1")

    def test_ssb_peer_run_writes_a_valid_document(self):
        with tempfile.TemporaryDirectory() as d:
            doc, js, csv = self.peer_document(d, "ssb", "--sf", "0.01", "--queries", "1.1,3.2",
                                              "--passes", "2", "--max-passes", "3", "--max-time", "0.05",
                                              "--threads", "2")
            self.assertEqual((doc["backend"], doc["benchmark"], doc["summary"]),
                             ("duckdb", "ssb", {"ok": 8, "skipped": 0, "failed": 0}))
            self.assertEqual([r["id"] for r in doc["results"]][:4],
                             ["q1.1/sql_table[data=generated,sf=0.01,threads=2]",
                              "q1.1/sql[data=generated,sf=0.01,threads=2]",
                              "q1.1/sql_table[data=generated,sf=0.01,threads=1]",
                              "q1.1/sql[data=generated,sf=0.01,threads=1]"])
            self.assertTrue(all(r["verification"]["verified"] for r in doc["results"]))
            c = subprocess.run([sys.executable, os.path.join(REPO, "tests", "check_results.py"), js, "8", "--csv", csv],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(c.returncode, 0, c.stdout + c.stderr)

    def test_limits_by_hand(self):
        """Keys and values at 2^32 - 1: wrap-around arithmetic, exact sums, the top of the key range."""
        from hdb.peers import duckdb_sql as q
        top = 0xFFFFFFFF
        a = {"k": np.array([0, 5, top, top], np.uint32), "v1": np.array([top, 1, 0, top], np.uint32)}
        b = {"k": np.array([1, 5, top, top], np.uint32), "v1": np.array([1, top, 1, 2], np.uint32)}
        cases = [
            ("add", {}, [[0, 5, top, top], [0, 0, 1, 1]]),
            ("subtract", {}, [[0, 5, top, top], [top - 1, 2, top, top - 2]]),
            ("multiply", {}, [[0, 5, top, top], [top, top, 0, (top * 2) % 2**32]]),
            ("select", {"attribute": 0, "lo": top, "hi": top}, [[top, top], [0, top]]),
            ("reduce", {"op": "sum"}, [[2 * top + 1]]),
            ("reduce", {"op": "min"}, [[0]]),
            ("reduce_by_key", {"op": "sum"}, [[0, 5, top], [top, 1, top]]),
            ("join", {}, [[5, top, top, top, top], [1, 0, 0, top, top], [top, 1, 2, 1, 2]]),
            ("set_intersection", {}, [[], []]),  # no tuple in both
            ("set_difference", {}, [[0, 5, top, top], [top, 1, 0, top]]),
        ]
        con = duckdb.connect()
        con.register("a", a)
        con.register("b", b)
        for op, args, want in cases:
            sql, order = q.ra_sql(op, args, 1)
            got = list(con.execute(sql).fetchnumpy().values())
            equal, detail = q.compare(got, np.array(want, dtype=np.uint64), order)
            self.assertTrue(equal, f"{op}: {detail}\n{sql}")
        empty = {"k": np.array([], np.uint32), "v1": np.array([], np.uint32)}
        con.register("a", empty)
        for op, want in (("sum", 0), ("min", top), ("max", 0)):
            got = list(con.execute(q.ra_sql("reduce", {"op": op}, 1)[0]).fetchnumpy().values())
            self.assertEqual(int(got[0][0]), want, op)

    def test_sort_is_stable(self):
        """The suite's sort is std::stable_sort by key; DuckDB's ORDER BY k is not stable (its tie
        order differed at 1M rows), and the peer once accepted any tie order. The SQL orders by (key,
        row position) and the answer must equal the reference in order."""
        from hdb.peers import duckdb_sql as q
        rng = np.random.default_rng(5)
        n = 1 << 16
        k = rng.integers(0, 50, n).astype(np.uint32)  # many ties
        v = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
        want = np.vstack([k, v])[:, np.argsort(k, kind="stable")]
        sql, order = q.ra_sql("sort", {}, 1)
        self.assertEqual((q.position_column("sort"), order), ("i", "exact"))
        con = duckdb.connect()
        one = record.Harness(warmup=0, passes=1, max_passes=1)
        for t in (2, 1):
            for variant in duckdb_peer.VARIANTS:
                _, got, _ = duckdb_peer.run_case(con, {"a": {"k": k, "v1": v, "i": np.arange(n, dtype=np.uint32)}},
                                                 sql, t, one, variant)
                equal, detail = q.compare(got, want, order)
                self.assertTrue(equal, f"{variant}: {detail}")
                self.assertIn("in order", detail)
        # Ties out of input order are a wrong answer, even with the keys ascending.
        swapped = want.copy()
        tie = int(np.nonzero(np.diff(want[0]) == 0)[0][0])
        swapped[:, [tie, tie + 1]] = swapped[:, [tie + 1, tie]]
        self.assertFalse(q.compare([swapped[0], swapped[1]], want, order)[0])
        # prepare() registers the positions for sort and unique only, outside the timed query.
        with tempfile.TemporaryDirectory() as out:
            exported = export(out, "ra", "--sizes", "1K", "--only", "sort,select,unique")
            self.assertEqual({c["test"] for c in exported["cases"]}, {"sort", "select", "unique"})
            for case in exported["cases"]:
                d = os.path.join(out, case["dir"])
                with open(os.path.join(d, "manifest.json")) as f:
                    m = json.load(f)
                tables, _, _, _ = duckdb_peer.prepare(m, d, np)
                cols = sorted(tables["a"])
                self.assertEqual(cols, ["i", "k", "v1"] if case["test"] in ("sort", "unique") else ["k", "v1"])

    def test_input_order_is_checked_where_the_suite_fixes_it(self):
        """project, select and the arithmetic keep input order in the suite, sort gives key order:
        their answers are compared in order (a permuted answer was accepted as a multiset), with
        DuckDB's preserve_insertion_order set by run_case. Join, GROUP BY (unique, reduce_by_key), set
        operations and the product stay multisets: from unsorted input (input=unsorted) the suite's
        order is unspecified too."""
        from hdb.peers import duckdb_sql as q
        exact = {"project": {"columns": [0]}, "select": {"attribute": 0, "lo": 0, "hi": 5},
                 "add": {}, "subtract": {}, "multiply": {}, "sort": {}}
        for op, args in exact.items():
            self.assertEqual(q.ra_sql(op, args, 1)[1], "exact", op)
        for op, args in {"join": {}, "unique": {}, "reduce_by_key": {"op": "sum"}, "set_union": {},
                         "product": {}}.items():
            self.assertEqual(q.ra_sql(op, args, 1)[1], "multiset", op)
        want = np.array([[1, 2, 3], [10, 20, 30]], np.uint32)
        self.assertFalse(q.compare([np.array([3, 1, 2]), np.array([30, 10, 20])], want, "exact")[0])
        a = {"k": np.arange(1000, 0, -1, dtype=np.uint32), "v1": np.arange(1000, dtype=np.uint32)}
        sql, order = q.ra_sql("select", exact["select"] | {"hi": 900}, 1)
        keep = a["k"] <= 900
        for variant in duckdb_peer.VARIANTS:
            con = duckdb.connect()
            con.execute("SET preserve_insertion_order = false")
            _, got, _ = duckdb_peer.run_case(con, {"a": a}, sql, 2, record.Harness(warmup=0, passes=1, max_passes=1),
                                             variant)
            self.assertEqual(con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0], True)
            self.assertEqual(q.compare(got, np.vstack([a["k"][keep], a["v1"][keep]]), order),
                             (True, "all 900 rows equal the reference in order"), variant)

    def test_wrong_answer_is_caught_and_never_a_time(self):
        from hdb import contract
        from hdb.peers import duckdb_sql as q
        want = np.array([[1, 2, 3], [10, 20, 30]], np.uint32)
        self.assertTrue(q.compare([np.array([3, 1, 2]), np.array([30, 10, 20])], want, "multiset")[0])
        for got, order in (([np.array([1, 2, 3]), np.array([10, 20, 31])], "multiset"),
                           ([np.array([1, 2]), np.array([10, 20])], "multiset"),
                           ([np.array([1, 2, 3])], "multiset"),
                           ([np.array([2, 1, 3]), np.array([20, 10, 30])], "exact")):
            equal, detail = q.compare(got, want, order)
            self.assertFalse(equal, f"{got} {order}")
        # Rows whose hashes collide (here: all of them) are decided by the exact lexicographic order.
        saved = q._row_hash
        try:
            q._row_hash = lambda cols: np.zeros(len(cols[0]), np.uint64)
            self.assertTrue(q.compare([np.array([3, 1, 2]), np.array([30, 10, 20])], want, "multiset")[0])
            self.assertFalse(q.compare([np.array([3, 1, 2]), np.array([30, 20, 10])], want, "multiset")[0])
        finally:
            q._row_hash = saved
        # A column that is not of integers is a difference, never truncated into an equal one.
        equal, detail = q.compare([np.array([1, 2, 3]), np.array([10.4, 20.0, 30.0])], want, "multiset")
        self.assertFalse(equal)
        self.assertIn("not an integer", detail)
        self.assertFalse(q.compare([np.array([1, 2, 3]), np.array([10, 20, 30], dtype=object)], want, "multiset")[0])
        with tempfile.TemporaryDirectory() as d:
            doc = record.Document("ra", "duckdb", record.context(REPO, record.Harness(), "duckdb x", 1),
                                  os.path.join(d, "x.json"), os.path.join(d, "x.csv"))
            case = {"id": "select/sql[threads=1]@1K", "size_bytes": 1024, "elements": 128,
                    "bytes": {"input": 1024, "min_moved": 2048}, "extra": {}}
            r = doc.ok(case, "select", "sql", {"threads": 1}, contract.Passes([0.1, 0.2]), True, False,
                       "row 0 differs")
            self.assertEqual((r["status"], r["trials"]), ("failed", []))
            self.assertNotIn("stats", r)
            self.assertIn("verification failed", r["reason"])
            doc.finish()
            self.assertEqual(doc.exit_code(), 1)

    def test_unreadable_input_is_an_error_not_a_skip(self):
        """Only an operation without SQL is skipped; a case whose data cannot be read stops the peer
        with the error (numpy.load's ValueError once turned into 'skipped')."""
        with tempfile.TemporaryDirectory() as out:
            exported = export(out, "ra", "--sizes", "1K", "--only", "select")
            case = exported["cases"][0]
            with open(os.path.join(out, case["dir"], "in0.npy"), "wb") as f:
                f.write(b"\x93NUMPY garbage")
            doc = record.Document("ra", "duckdb", record.context(REPO, record.Harness(), "duckdb x", 1),
                                  os.path.join(out, "x.json"))
            with self.assertRaises(ValueError):
                duckdb_peer.run_exported_case(duckdb.connect(), doc, case, out, [1], record.Harness(), np)
            self.assertEqual(doc.doc["summary"], {"ok": 0, "skipped": 0, "failed": 0})
            # An operation with no SQL is skipped, saying so.
            with open(os.path.join(out, case["dir"], "manifest.json")) as f:
                m = json.load(f)
            m["op"] = "no_such_op"
            np.save(os.path.join(out, case["dir"], "in0.npy"), np.zeros((2, 3), np.uint32))
            with open(os.path.join(out, case["dir"], "manifest.json"), "w") as f:
                json.dump(m, f)
            duckdb_peer.run_exported_case(duckdb.connect(), doc, case, out, [1], record.Harness(), np)
            self.assertEqual(doc.doc["summary"], {"ok": 0, "skipped": 2, "failed": 0})  # both variants
            self.assertIn("no SQL", doc.doc["results"][0]["reason"])

    def test_peer_run_writes_a_valid_document(self):
        with tempfile.TemporaryDirectory() as d:
            doc, js, csv = self.peer_document(d, "ra", "--sizes", "4K", "--passes", "2", "--max-passes", "3",
                                              "--max-time", "0.05", "--transfer", "pinned",
                                              "--only", "select,join,reduce", "--input", "unsorted")
            self.assertEqual((doc["backend"], doc["complete"], doc["summary"]),
                             ("duckdb", True, {"ok": 12, "skipped": 0, "failed": 0}))
            ids = [r["id"] for r in doc["results"]]
            # Each case with each thread count in both variants, sql_table first; sql keeps its id.
            self.assertEqual(ids[:4], ["select/sql_table[dist=uniform,key=32,selectivity=0.5,threads=2]@4K",
                                       "select/sql[dist=uniform,key=32,selectivity=0.5,threads=2]@4K",
                                       "select/sql_table[dist=uniform,key=32,selectivity=0.5,threads=1]@4K",
                                       "select/sql[dist=uniform,key=32,selectivity=0.5,threads=1]@4K"])
            self.assertIn("reduce/sql[dist=uniform,key=32,op=sum,threads=1]@4K", ids)
            self.assertEqual(doc["results"][0]["phases"], [{"name": "query", "kind": "host"}])
            self.assertTrue(doc["context"]["peer"]["duckdb"])
            self.assertEqual(set(doc["context"]["peer"]["timed"]), {"sql_table", "sql"})
            for r in doc["results"]:
                self.assertEqual(r["extra"]["timed"], duckdb_peer.TIMED[r["variant"]])
                # The default --warmup 1: the cold pass on a fresh connection, then one warm-up pass on
                # the peer's connection (the cold pass warmed nothing of it), hot.
                pr = r["protocol"]
                self.assertEqual((pr["warmup_passes"], pr["timed_as"], pr["cold_note"]),
                                 (1, "hot", duckdb_peer.COLD_NOTE))
                self.assertGreater(pr["cold"]["total_s"], 0)
                self.assertGreater(r["extra"]["cold_connect_s"], 0)
                self.assertEqual(r["energy"]["source"], "none")
            c = subprocess.run([sys.executable, os.path.join(REPO, "tests", "check_results.py"), js, "12", "--csv", csv],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(c.returncode, 0, c.stdout + c.stderr)

    def test_protocol_options(self):
        """--warmup 3 --flush-caches: a cold pass, 3 warm-up passes, timed passes warm after the flush
        harness/caches.cpp describes; --warmup 0: no cold pass (contract.NO_COLD_NOTE). Both valid."""
        from pathlib import Path

        from hdb import contract
        with tempfile.TemporaryDirectory() as d:
            for args, want in ((["--warmup", "3", "--flush-caches"], (3, "warm")), (["--warmup", "0"], (0, "hot"))):
                js = str(Path(d, "x.json"))
                p = run_peer(js, "--sizes", "4K", "--passes", "2", "--max-passes", "2", "--only", "select", *args)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                doc = json.loads(Path(js).read_text())
                self.assertEqual(doc["summary"]["ok"], 4)
                self.assertEqual(doc["context"]["stopping_rule"]["flush_caches"], "--flush-caches" in args)
                for r in doc["results"]:
                    pr = r["protocol"]
                    self.assertEqual((pr["warmup_passes"], pr["timed_as"]), want, r["id"])
                    if "--flush-caches" in args:
                        self.assertEqual(pr["flush"], contract.flush_description(contract.last_level_cache_bytes()))
                        self.assertEqual(pr["cold"]["phases_s"], {"query": pr["cold"]["total_s"]})
                    else:
                        self.assertNotIn("flush", pr)
                        self.assertEqual((pr["cold"], pr["cold_note"]), (None, contract.NO_COLD_NOTE))
                        self.assertNotIn("cold_connect_s", r["extra"])
                c = subprocess.run([sys.executable, str(Path(REPO, "tests", "check_results.py")), js, "4"],
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(c.returncode, 0, c.stdout + c.stderr)

    def test_cold_pass_runs_on_a_fresh_connection(self):
        """The cold pass never runs on the peer's connection: with --warmup 2 and 2 timed passes, the
        peer's connection runs the query 4 times (2 warm-ups: the cold pass warmed nothing of it, 2
        timed), the fresh one once; the temporary table of sql_table is gone afterwards, and the
        inputs are unregistered."""
        from hdb.peers import duckdb_sql as q

        class Counting:
            def __init__(self, con):
                self.con, self.queries = con, []

            def execute(self, sql):
                self.queries.append(sql)
                return self.con.execute(sql)

            def register(self, name, cols):
                return self.con.register(name, cols)

            def unregister(self, name):
                return self.con.unregister(name)

        # (not named `a`: DuckDB's replacement scan would find a local variable of that name)
        rel = {"k": np.arange(100, dtype=np.uint32), "v1": np.arange(100, dtype=np.uint32)}
        sql, _ = q.ra_sql("select", {"attribute": 0, "lo": 0, "hi": 49}, 1)
        h = record.Harness(warmup=2, passes=2, max_passes=2)
        for variant in duckdb_peer.VARIANTS:
            con = Counting(duckdb.connect())
            passes, got, extra = duckdb_peer.run_case(con, {"a": rel}, sql, 1, h, variant)
            self.assertEqual((len(passes.times), passes.warmup_passes), (2, 2))
            self.assertIsNotNone(passes.cold)
            self.assertEqual(passes.cold_note, duckdb_peer.COLD_NOTE)
            self.assertIn("cold_connect_s", extra)
            self.assertEqual(sum(sql in x for x in con.queries), 4, con.queries)
            self.assertEqual(len(got[0]), 50)
            tables = con.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
            self.assertEqual(tables, [], variant)
            with self.assertRaises(duckdb.Error):
                con.con.execute("SELECT * FROM a")


    def test_sigterm_mid_run_keeps_results_and_fails_nothing(self):
        """A signal during a query (DuckDB reports it as its own "Query interrupted" error) stops the
        peer: the document says interrupted, no case is recorded as failed, the export folder goes."""
        import signal
        import time
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "ra-duckdb.json")
            tmp = os.path.join(d, "tmp")
            os.mkdir(tmp)
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"), TMPDIR=tmp)
            p = subprocess.Popen([sys.executable, "-m", "hdb.peers.duckdb_peer", "ra", "--json", js, "--build-dir",
                                  BUILD, "--sizes", "2M", "--passes", "40", "--max-passes", "40", "--max-time", "60"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    try:
                        with open(js) as f:
                            if json.load(f)["results"]:
                                break
                    except (OSError, ValueError):
                        pass
                    time.sleep(0.05)
                p.send_signal(signal.SIGTERM)
                _, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
            self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
            with open(js) as f:
                doc = json.load(f)
            self.assertEqual((doc["complete"], doc["incomplete_reason"]), (False, "interrupted by signal 15"))
            self.assertGreaterEqual(doc["summary"]["ok"], 1)
            self.assertEqual(doc["summary"]["failed"], 0)
            self.assertEqual(os.listdir(tmp), [])


@unittest.skipUnless(HAVE_DUCKDB, "needs duckdb")
class UniqueSqlTest(unittest.TestCase):
    """unique (issue 29, item 1): per key the first tuple in input order, what the suite's stable sort
    then unique keeps, on unsorted input (input=unsorted) as on sorted (input=sorted: there, per key,
    the least tuple, as the SQL's DISTINCT ON ... ORDER BY k, v1 gave before). One SQL for both,
    arg_min over the position column, a hash aggregation; compared as a multiset."""

    def run_unique(self, k, vals):
        from hdb.peers import duckdb_sql as q
        sql, order = q.ra_sql("unique", {}, len(vals))
        self.assertEqual(order, "multiset")
        self.assertEqual(q.position_column("unique"), "i")
        self.assertNotIn("ORDER BY", sql)
        table = {"k": k, **{f"v{j + 1}": v for j, v in enumerate(vals)}, "i": np.arange(len(k), dtype=np.uint32)}
        con = duckdb.connect()
        one = record.Harness(warmup=0, passes=1, max_passes=1)
        out = {}
        for t in (2, 1):
            for variant in duckdb_peer.VARIANTS:
                _, got, _ = duckdb_peer.run_case(con, {"a": table}, sql, t, one, variant)
                out[(t, variant)] = got
        return sql, order, out

    @staticmethod
    def first_per_key(k, vals):
        """The reference by hand: per key, the values of its first tuple in input order."""
        first = {}
        for j in range(len(k)):
            first.setdefault(int(k[j]), tuple(int(v[j]) for v in vals))
        keys = sorted(first)
        return np.array([keys] + [[first[x][c] for x in keys] for c in range(len(vals))], dtype=np.uint64)

    def test_first_tuple_per_key_on_unsorted_input(self):
        from hdb.peers import duckdb_sql as q
        rng = np.random.default_rng(29)
        n = 1 << 14
        k = rng.integers(0, 300, n).astype(np.uint32)  # about 55 tuples per key, in random order
        vals = [rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(2)]
        want = self.first_per_key(k, vals)
        least = np.vstack([k] + vals)[:, np.lexsort((vals[1], vals[0], k))]  # the least tuple per key differs
        keep = np.concatenate([[True], np.diff(least[0]) != 0])
        self.assertFalse(np.array_equal(least[:, keep].astype(np.uint64), want))
        sql, order, out = self.run_unique(k, vals)
        self.assertEqual(sql, "SELECT k, arg_min(v1, i) AS v1, arg_min(v2, i) AS v2 FROM a GROUP BY k")
        for how, got in out.items():
            equal, detail = q.compare(got, want, order)
            self.assertTrue(equal, f"{how}: {detail}")
            self.assertIn("as a multiset", detail)
        # Any other tuple of a key (here the last one) is a wrong answer.
        last = {}
        for j in range(n):
            last[int(k[j])] = (int(vals[0][j]), int(vals[1][j]))
        keys = sorted(last)
        wrong = np.array([keys, [last[x][0] for x in keys], [last[x][1] for x in keys]], dtype=np.uint64)
        self.assertFalse(q.compare(out[(1, duckdb_peer.NUMPY)], wrong, order)[0])

    def test_least_tuple_per_key_on_sorted_input(self):
        """input=sorted (by key, then values): the first tuple of each key is its least, today's answer."""
        from hdb.peers import duckdb_sql as q
        k = np.array([1, 1, 1, 4, 7, 7, 9, 9, 9, 9], np.uint32)
        v = np.array([0, 3, 3, 8, 2, 5, 1, 1, 6, 0xFFFFFFFF], np.uint32)
        want = np.array([[1, 4, 7, 9], [0, 8, 2, 1]], np.uint64)
        np.testing.assert_array_equal(self.first_per_key(k, [v]), want)
        _, order, out = self.run_unique(k, [v])
        for how, got in out.items():
            self.assertEqual(q.compare(got, want, order), (True, "all 4 rows equal the reference as a multiset"), how)
        empty = np.array([], np.uint32)
        _, order, out = self.run_unique(empty, [empty])
        for how, got in out.items():
            self.assertTrue(q.compare(got, np.zeros((2, 0), np.uint64), order)[0], how)


class SkipTest(unittest.TestCase):
    def test_budget_skips_what_it_cannot_start_saying_so(self):
        job = peers.PeerJob(peer="duckdb", benchmark="ra", python="py", repo=REPO, build_dir=BUILD, json="x.json",
                            csv="x.csv", args=["--sizes", "1K"], timeout_s=300)
        cmd = duckdb_peer.command(job)
        self.assertEqual(cmd[cmd.index("--budget-s") + 1], "240")
        if not (HAVE_DUCKDB and os.access(EXPORT, os.X_OK)):
            self.skipTest("needs duckdb and hdb-export")
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "ra-duckdb.json")
            p = run_peer(js, "--budget-s", "0.000001", "--sizes", "1K", "--only", "select,join", "--input", "unsorted")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(js) as f:
                doc = json.load(f)
            # 2 cases x 2 thread counts x 2 variants
            self.assertEqual(doc["summary"], {"ok": 0, "skipped": 8, "failed": 0})
            self.assertIn("time budget of 1e-06 s (80% of the driver's limit)", doc["results"][0]["reason"])

    def test_a_killed_peers_folder_is_removed_by_the_next_run(self):
        """kill -9 (the driver's SIGKILL after its grace period, e.g. in a long sort of the check) skips
        the clean-up: the case's .npy files stayed in $TMPDIR for good. The folder is named by the
        peer's pid; the next run removes those whose process is gone, never a live one's."""
        with tempfile.TemporaryDirectory() as tmp:
            gone = subprocess.Popen(["true"])
            gone.wait()
            dead = os.path.join(tmp, f"{duckdb_peer.TMP_PREFIX}{gone.pid}-abc")
            live = os.path.join(tmp, f"{duckdb_peer.TMP_PREFIX}{os.getppid()}-abc")
            other = os.path.join(tmp, "hdb-duckdb-notapid")
            for d in (dead, live, other):
                os.makedirs(os.path.join(d, "case-0"))
            record.remove_stale_dirs(duckdb_peer.TMP_PREFIX, tmp)
            self.assertEqual(sorted(os.listdir(tmp)), sorted(os.path.basename(d) for d in (live, other)))
            if not (HAVE_DUCKDB and os.access(EXPORT, os.X_OK)):
                self.skipTest("needs duckdb and hdb-export")
            os.makedirs(os.path.join(dead, "case-0"))
            p = run_peer(os.path.join(tmp, "x.json"), "--budget-s", "0.000001", "--sizes", "1K", "--only", "select",
                         TMPDIR=tmp)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertFalse(os.path.exists(dead))  # the dead peer's folder, and this run's own, are gone
            self.assertEqual(sorted(n for n in os.listdir(tmp) if n.startswith("hdb-")),
                             sorted(os.path.basename(d) for d in (live, other)))

    def test_list_prints_the_cases_and_runs_nothing(self):
        if not (HAVE_DUCKDB and os.access(EXPORT, os.X_OK)):
            self.skipTest("needs duckdb and hdb-export")
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "x.json")
            p = run_peer(js, "--list", "--sizes", "1K", "--only", "select")
            self.assertEqual(p.returncode, 0, p.stderr)  # was: "error: 'NoneType' object has no attribute 'finish'"
            self.assertIn("select/export[dist=uniform,key=32,selectivity=0.5]@1K", p.stdout)
            self.assertEqual(p.stderr, "")
            self.assertFalse(os.path.exists(js))

    def test_only_patterns_reach_the_export_for_any_variant(self):
        self.assertEqual(duckdb_peer.export_args(["--only", "*/parallel,join/tuned[dist=uniform]@1M,select",
                                                  "--only=A/ra-paper", "--sizes", "1M"]),
                         ["--only", "*/*,join/*[dist=uniform]@1M,select", "--only=A/*", "--sizes", "1M"])

    def test_peer_id(self):
        """A peer's id is the suite's case (test, typed params in their declared order, size) with its
        variant and its own params after the suite's, made by hdb.contract, never by editing the id."""
        from hdb import contract
        for suite, want in (
                ({"id": "join/export[dist=uniform,key=32,match=0.5,fanout=1]@1M", "test": "join", "variant": "export",
                  "params": {"dist": "uniform", "fanout": 1, "key": 32, "match": 0.5}, "transfer": "none",
                  "size_bytes": 1 << 20}, "join/sql[dist=uniform,key=32,match=0.5,fanout=1,threads=2]@1M"),
                ({"id": "A/export[data=tpch,key=32,sf=0.1]", "test": "A", "variant": "export",
                  "params": {"data": "tpch", "key": 32, "sf": 0.1}, "transfer": "none", "size_bytes": 0},
                 "A/sql[data=tpch,key=32,sf=0.1,threads=2]"),
                # issue 29, item 1: the suite's params, `input` (declared last) included, mirrored as they are
                ({"id": "unique/export[dist=uniform,key=32,duplicates=0.5,input=unsorted]@256M", "test": "unique",
                  "variant": "export", "params": {"input": "unsorted", "duplicates": 0.5, "key": 32,
                                                  "dist": "uniform"},
                  "transfer": "none", "size_bytes": 256 << 20},
                 "unique/sql[dist=uniform,key=32,duplicates=0.5,input=unsorted,threads=2]@256M"),
                ({"id": "x/export@32K", "test": "x", "variant": "export", "params": {}, "transfer": "none",
                  "size_bytes": 32 << 10}, "x/sql[threads=2]@32K")):
            params = dict(contract.declared_params(suite), threads=2)
            self.assertEqual(contract.case_id(suite["test"], "sql", params, "none", suite["size_bytes"]), want)
        with self.assertRaises(ValueError):  # an id that is not its fields is refused, never pieced together
            contract.declared_params(dict(suite, size_bytes=1 << 20))

    @unittest.skipUnless(os.access(SYSTEM_PYTHON, os.X_OK), "no /usr/bin/python3")
    def test_unavailable_without_duckdb(self):
        probe = subprocess.run([SYSTEM_PYTHON, "-c", "import duckdb"], capture_output=True)
        if probe.returncode == 0:
            self.skipTest(f"{SYSTEM_PYTHON} has duckdb")
        ok, why = duckdb_peer.available(SYSTEM_PYTHON)
        self.assertFalse(ok)
        self.assertIn("duckdb", why)
        ok, why = duckdb_peer.available("")
        self.assertFalse(ok)
        self.assertIn("scripts/setup", why)
        # The peer itself exits 77 (skipped) naming the package.
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"))
            p = subprocess.run([SYSTEM_PYTHON, "-m", "hdb.peers.duckdb_peer", "ra", "--json", os.path.join(d, "x.json"),
                                "--build-dir", BUILD], capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(p.returncode, 77, p.stderr)
            self.assertIn("duckdb", p.stderr)

    def test_driver_plans_and_skips_with_the_reason(self):
        cfg = cfgmod.validate({"benchmarks": ["ra", "tpch", "merge"], "backends": ["cpu"],
                               "peers": ["duckdb", "pg_trgm"]})
        entries = runmod.plan(cfg)
        self.assertEqual([e["name"] for e in entries], ["ra-cpu", "ra-duckdb", "tpch-cpu", "tpch-duckdb", "merge-cpu"])
        peer = entries[1]
        self.assertEqual((peer["peer"], peer["backend"], peer["benchmark"]), ("duckdb", "duckdb", "ra"))
        self.assertEqual(cfgmod.override_peers(dict(cfg), no_peers=True)["peers"], [])
        with self.assertRaises(Exception):
            cfgmod.validate({"peers": ["sqlite"]})
        # No interpreter with duckdb: the entry is skipped with the reason, never run silently.
        r = runmod.Runner.__new__(runmod.Runner)
        r.repo = REPO
        saved = peers.interpreter
        try:
            peers.interpreter = lambda: ""
            why = runmod.Runner.peer_unavailable(r, peer)
        finally:
            peers.interpreter = saved
        self.assertIn("scripts/setup", why)


if __name__ == "__main__":
    unittest.main(verbosity=2)
