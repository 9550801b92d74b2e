"""Parquet input (`--tables DIR`, scripts/hdb/parquet_tables.py, workloads/column_files.hpp), CTest
`peers.parquet`: the same answers from Parquet files as from the .tbl files they were made from (SSB and
TPC-H, small data), Parquet as the writers make it (a table as one file or a folder of part files,
DATE and DECIMAL columns, integer yyyymmdd), given as the converted columns or as the Parquet folder
itself (the executable converts it once into a cache folder), and the errors: a missing column, a
NULL, values finer than hundredths (the converter, exit 2; through the executable too), a string
outside the SSB dictionaries (the loader, exit 2, naming table, column and row). And tables another
generator wrote: tpchgen-cli's TPC-H tables as .tbl and as Parquet give the same answers.

Run: HDB_BUILD_DIR=build .venv/bin/python tests/peers/test_parquet_tables.py"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

# The repository, scripts/ on sys.path, the build folder, and the re-run under the project venv's
# python when this one lacks duckdb: the DuckDB peer's test module does it for both.
from test_duckdb_peer import BUILD, HAVE_DUCKDB, REPO

if HAVE_DUCKDB:
    import duckdb

BIN = os.path.join(BUILD, "bin")
TOOLS = {"ssb": os.path.join(BIN, "ssb_tbl_tool"), "tpch": os.path.join(BIN, "tpch_tbl_tool")}
EXE = {"ssb": os.path.join(BIN, "hdb-ssb-cpu"), "tpch": os.path.join(BIN, "hdb-tpch-cpu")}

# (table, .tbl fields, [(position, name, SQL of the Parquet column from the field `c`)]): what a
# user's Parquet holds, typed as the writers type it.
YMD = "strptime(CAST(c AS VARCHAR), '%Y%m%d')::DATE"  # an SSB date key as a DATE column
SSB = [("lineorder", [(2, "lo_custkey", "c"), (3, "lo_partkey", "c"), (4, "lo_suppkey", "c"),
                      (5, "lo_orderdate", YMD), (8, "lo_quantity", "c::INTEGER"), (9, "lo_extendedprice", "c"),
                      (11, "lo_discount", "c::TINYINT"), (12, "lo_revenue", "c"), (13, "lo_supplycost", "c")]),
       ("date", [(0, "d_datekey", "c::INTEGER"), (4, "d_year", "c"), (5, "d_yearmonthnum", "c"),
                 (6, "d_yearmonth", "c"), (11, "d_weeknuminyear", "c")]),
       ("customer", [(0, "c_custkey", "c"), (3, "c_city", "c"), (4, "c_nation", "c"), (5, "c_region", "c")]),
       ("supplier", [(0, "s_suppkey", "c"), (3, "s_city", "c"), (4, "s_nation", "c"), (5, "s_region", "c")]),
       ("part", [(0, "p_partkey", "c"), (2, "p_mfgr", "c"), (3, "p_category", "c"), (4, "p_brand1", "c")])]
TPCH = [("customer", [(0, "c_custkey", "c"), (6, "c_mktsegment", "c")]),
        ("orders", [(0, "o_orderkey", "c"), (1, "o_custkey", "c"), (4, "o_orderdate", "c::DATE"),
                    (7, "o_shippriority", "c::INTEGER")]),
        ("lineitem", [(0, "l_orderkey", "c"), (4, "l_quantity", "c::DECIMAL(15,2)"),
                      (5, "l_extendedprice", "c::DECIMAL(15,2)"), (6, "l_discount", "c::DECIMAL(15,2)"),
                      (10, "l_shipdate", "c::DATE")])]


def to_parquet(tbl, out, layout, split=()):
    """The .tbl files of tbl as Parquet files in out: <table>.parquet, or for a table in `split` a
    folder <table>/ of two part files (as Spark writes), only the columns the suite reads."""
    con = duckdb.connect()
    for table, cols in layout:
        src = f"read_csv('{os.path.join(tbl, table + '.tbl')}', delim='|', header=false)"
        fields = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
        sel = ", ".join(f"{_expr(expr, fields[pos])} AS {name}" for pos, name, expr in cols)
        query = f"SELECT {sel} FROM {src}"
        if table in split:
            os.makedirs(os.path.join(out, table))
            for i in range(2):
                con.execute(f"COPY (SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER () AS rn FROM ({query})) "
                            f"WHERE rn % 2 = {i}) TO "
                            f"'{os.path.join(out, table, f'part-0000{i}.parquet')}' (FORMAT parquet)")
        else:
            con.execute(f"COPY ({query}) TO '{os.path.join(out, table + '.parquet')}' (FORMAT parquet)")


def _expr(expr, col):
    """A layout's SQL with its field `c` named `col` (read_csv's name of the field)."""
    return col if expr == "c" else expr.replace("CAST(c ", f"CAST({col} ").replace("c::", f"{col}::")


def run(*cmd, tmp=None):
    """tmp: the executable's temporary directory (TMPDIR), where it caches converted Parquet tables."""
    env = dict(os.environ, TMPDIR=tmp) if tmp else None
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, env=env)


def convert(bench, src, out):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"))
    return subprocess.run([sys.executable, "-m", "hdb.parquet_tables", bench, src, out], capture_output=True,
                          text=True, env=env, timeout=300)


def answers(stdout):
    """The reference's answer of every query or kernel as the executable prints it ('# Q3.2 on SOURCE: 84 rows,
    sum of the aggregate ...', '# kernel A on SOURCE, 32-bit keys: ... result rows, checksum ...'), the
    source left out: the answers of the serial reference, which every verified case equals."""
    return [re.sub(r" on [^:,]*", "", ln) for ln in stdout.splitlines() if ln.startswith(("# Q", "# kernel"))]


@unittest.skipUnless(HAVE_DUCKDB and all(os.access(p, os.X_OK) for p in list(TOOLS.values()) + list(EXE.values())),
                     "needs duckdb, hdb-ssb-cpu, hdb-tpch-cpu, ssb_tbl_tool and tpch_tbl_tool")
class ParquetTest(unittest.TestCase):
    def same_answers(self, bench, sf, layout, split, exe_args):
        with tempfile.TemporaryDirectory() as d:
            tbl, pq, cols = (os.path.join(d, x) for x in ("tbl", "parquet", "cols"))
            for x in (tbl, pq):
                os.makedirs(x)
            self.assertEqual(run(TOOLS[bench], "write", sf, tbl).returncode, 0)
            to_parquet(tbl, pq, layout, split)
            c = convert(bench, pq, cols)
            self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
            got = {}
            # The .tbl files, the converted columns, and the Parquet folder itself (the executable runs
            # the converter into a cache folder, which a second run reuses).
            for how, where in (("--tbl-dir", tbl), ("--tables", cols), ("parquet", pq), ("parquet again", pq)):
                p = run(EXE[bench], *exe_args, "--tbl-dir" if how == "--tbl-dir" else "--tables", where, "--passes", "1",
                        "--max-time", "0.01", tmp=d)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)  # every case verified
                got[how] = answers(p.stdout)
                converted = "its Parquet files converted by scripts/hdb/parquet_tables.py" in p.stdout
                self.assertEqual(converted, how == "parquet", how + ": " + p.stdout)
            self.assertEqual(got["--tables"], got["--tbl-dir"])
            self.assertEqual(got["parquet"], got["--tbl-dir"])
            self.assertEqual(got["parquet again"], got["--tbl-dir"])
            return got["--tables"]

    def test_ssb_same_answers_as_tbl(self):
        got = self.same_answers("ssb", "0.02", SSB, ("lineorder",), ["--only", "*/serial"])
        self.assertEqual(len(got), 13)
        self.assertIn("# Q3.3: ", got[8])

    def test_tpch_same_answers_as_tbl(self):
        got = self.same_answers("tpch", "0.01", TPCH, ("lineitem",), ["--data", "tpch", "--only", "*/ra-serial"])
        self.assertEqual(len(got), 3)
        self.assertIn("checksum", got[0])

    def test_tpchgen_cli_tables_as_tbl_and_parquet(self):
        # Tables from another generator, as users have them: tpchgen-cli (dbgen's data, from the project
        # venv, pyproject.toml's dev extra) writes the same SF 0.01 tables as .tbl, as one Parquet file a
        # table (DECIMAL(15,2) money and quantity, DATE dates, Int64 keys) and as part files: every form
        # gives the same answers, each verified against the serial reference on its own tables.
        cli = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
        if not os.access(cli, os.X_OK):
            self.skipTest(f"no {cli}: scripts/setup installs it into the project venv")
        tables = "--tables=customer,orders,lineitem"
        with tempfile.TemporaryDirectory() as d:
            got = {}
            for fmt, extra in (("tbl", []), ("parquet", []), ("parquet", ["--parts=2"])):
                where = os.path.join(d, fmt + "".join(extra))
                g = run(cli, fmt, "-s", "0.01", tables, *extra, f"--output-dir={where}")
                self.assertEqual(g.returncode, 0, g.stdout + g.stderr)
                p = run(EXE["tpch"], "--data", "tpch", "--tbl-dir" if fmt == "tbl" else "--tables", where,
                        "--only", "*/columnar-serial", "--passes", "1", "--max-time", "0.01", tmp=d)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)  # every case verified
                got[where] = answers(p.stdout)
            forms = list(got.values())
            self.assertEqual(len(forms[0]), 3, forms[0])
            self.assertEqual(forms[1], forms[0])
            self.assertEqual(forms[2], forms[0])
            # dbgen's SF 0.01: 1,500 customers, 15,000 orders, 60,175 lineitems (A reads lineitem)
            self.assertIn("60175 input rows", forms[0][0])

    def test_converter_errors_name_the_column(self):
        con = duckdb.connect()
        with tempfile.TemporaryDirectory() as d:
            def case(tables, want):
                src = tempfile.mkdtemp(dir=d)
                for name, sql in tables.items():
                    con.execute(f"COPY ({sql}) TO '{os.path.join(src, name + '.parquet')}' (FORMAT parquet)")
                c = convert("tpch", src, os.path.join(src, "out"))
                self.assertEqual(c.returncode, 2, c.stdout + c.stderr)
                self.assertIn(want, c.stderr)
                self.assertFalse(os.path.exists(os.path.join(src, "out", "columns.json")))
            good = {"customer": "SELECT 1 AS c_custkey, 'BUILDING' AS c_mktsegment",
                    "orders": "SELECT 1 AS o_orderkey, 1 AS o_custkey, DATE '1995-01-01' AS o_orderdate, "
                              "0 AS o_shippriority",
                    "lineitem": "SELECT 1 AS l_orderkey, 5.0 AS l_quantity, 12.34::DECIMAL(15,2) AS l_extendedprice, "
                                "0.05::DECIMAL(15,2) AS l_discount, DATE '1995-02-01' AS l_shipdate"}
            case(dict(good, customer="SELECT 1 AS c_custkey"), "table customer has no column c_mktsegment")
            # The same folder given to the executable: the converter's refusal, exit 2, nothing cached.
            src = tempfile.mkdtemp(dir=d)
            for name, sql in dict(good, customer="SELECT 1 AS c_custkey").items():
                con.execute(f"COPY ({sql}) TO '{os.path.join(src, name + '.parquet')}' (FORMAT parquet)")
            p = run(EXE["tpch"], "--data", "tpch", "--tables", src, "--passes", "1", tmp=d)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("its Parquet files could not be converted", p.stderr)
            self.assertIn("table customer has no column c_mktsegment", p.stderr)
            self.assertEqual([f for f in os.listdir(d) if f.startswith("hdb-columns-")], [])
            case(dict(good, orders=good["orders"].replace("1 AS o_custkey", "NULL::BIGINT AS o_custkey")),
                 "table orders column o_custkey: 1 NULL value(s), the first at row 1")
            case(dict(good, lineitem=good["lineitem"].replace("0.05::DECIMAL(15,2)", "0.055::DECIMAL(15,3)")),
                 "table lineitem column l_discount (DECIMAL(15,3)) has values finer than hundredths")
            case(dict(good, lineitem=good["lineitem"].replace("5.0 AS", "5.5 AS")),
                 "table lineitem column l_quantity (DECIMAL(2,1)) has values that are not whole numbers")
            case(dict(good, customer="SELECT -1 AS c_custkey, 'BUILDING' AS c_mktsegment"),
                 "table customer column c_custkey has a negative value (-1)")
            case({k: v for k, v in good.items() if k != "orders"}, "no orders.parquet and no folder orders/")

    def test_loader_refuses_a_string_outside_the_dictionary(self):
        with tempfile.TemporaryDirectory() as d:
            tbl, pq, cols = (os.path.join(d, x) for x in ("tbl", "parquet", "cols"))
            for x in (tbl, pq):
                os.makedirs(x)
            self.assertEqual(run(TOOLS["ssb"], "write", "0.01", tbl).returncode, 0)
            to_parquet(tbl, pq, SSB)
            con = duckdb.connect()
            path = os.path.join(pq, "customer.parquet")
            con.execute(f"COPY (SELECT c_custkey, CASE WHEN c_custkey = 7 THEN 'ATLANTIS 4' ELSE c_city END AS c_city, "
                        f"c_nation, c_region FROM '{path}') TO '{path}.new' (FORMAT parquet)")
            os.replace(path + ".new", path)
            self.assertEqual(convert("ssb", pq, cols).returncode, 0)
            p = run(EXE["ssb"], "--tables", cols, "--passes", "1", "--queries", "3.3")
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("table customer column c_city row 7 ('ATLANTIS 4'): is not an SSB city", p.stderr)


if __name__ == "__main__":
    unittest.main()
