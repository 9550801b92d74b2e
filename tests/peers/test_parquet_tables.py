"""Parquet input (`--tables DIR`, scripts/hdb/parquet_tables.py, workloads/column_files.hpp), CTest
`peers.parquet`: the same answers from Parquet files as from the .tbl files they were made from (SSB and
TPC-H, small data), Parquet as the writers make it (a table as one file or a folder of part files,
DATE and DECIMAL columns, integer yyyymmdd), given as the converted columns or as the Parquet folder
itself (the executable converts it once into a cache folder), and the errors: a missing column, a
NULL, values finer than hundredths (the converter, exit 2; through the executable too), a string
outside the SSB dictionaries (the loader, exit 2, naming table, column and row). And tables another
generator wrote: tpchgen-cli's TPC-H tables as .tbl and as Parquet give the same answers.
ParquetFilesTest (issue 50): which files are a table in every writer's layout (Hive partitions, Spark's
_SUCCESS, _temporary/ and hidden files, links), the cache's fingerprint of exactly those files,
columns beside Parquet files, every file and value error without a traceback, all-or-nothing
conversion, the cache folder's housekeeping and the converter's exit in words.

Run: HDB_BUILD_DIR=build .venv/bin/python tests/peers/test_parquet_tables.py"""
import os
import re
import shutil
import socket
import struct
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


# A tiny TPC-H data set written by DuckDB: customer and orders as one file each, lineitem as `to`
# says (a COPY target and its options, relative to the table's place), with a column l_part (0..3)
# the partitioned layouts split it by.
CUSTOMER = ("SELECT i + 1 AS c_custkey, ['BUILDING', 'AUTOMOBILE', 'MACHINERY'][i % 3 + 1] AS c_mktsegment "
            "FROM range(30) t(i)")
ORDERS = ("SELECT i + 1 AS o_orderkey, i % 30 + 1 AS o_custkey, "
          "DATE '1995-01-01' + (i * 7 % 400)::INTEGER AS o_orderdate, (i % 2)::INTEGER AS o_shippriority "
          "FROM range(100) t(i)")
LINEITEM = ("SELECT i % 100 + 1 AS l_orderkey, (i % 50 + 1)::DECIMAL(15,2) AS l_quantity, "
            "(i * 13 % 9000 + 100)::DECIMAL(15,2) AS l_extendedprice, (i % 11 / 100)::DECIMAL(15,2) AS l_discount, "
            "DATE '1995-01-01' + (i * 11 % 500)::INTEGER AS l_shipdate, i % 4 AS l_part, i % 2 AS l_half "
            "FROM range(400) t(i)")


def tiny_tpch(src, lineitem="lineitem.parquet", options="", orders="orders.parquet", orders_options=""):
    os.makedirs(src, exist_ok=True)
    con = duckdb.connect()
    for sql, to, opt in ((CUSTOMER, "customer.parquet", ""), (ORDERS, orders, orders_options),
                         (LINEITEM, lineitem, options)):
        os.makedirs(os.path.dirname(os.path.join(src, to)), exist_ok=True)
        con.execute(f"COPY ({sql}) TO '{os.path.join(src, to)}' (FORMAT parquet{', ' + opt if opt else ''})")
    return src


def tpch(where, tmp):
    """hdb-tpch-cpu on --tables WHERE with its cache under tmp."""
    return run(EXE["tpch"], "--data", "tpch", "--tables", where, "--only", "*/ra-serial", "--passes", "1",
               "--max-time", "0.01", tmp=tmp)


CONVERTED = "its Parquet files converted by scripts/hdb/parquet_tables.py"


@unittest.skipUnless(HAVE_DUCKDB and os.access(EXE["tpch"], os.X_OK), "needs duckdb and hdb-tpch-cpu")
class ParquetFilesTest(unittest.TestCase):
    """Which files are a table, the cache's fingerprint of them, and the converter's errors (issue 50)."""

    def answers_of(self, where, tmp, converted=None):
        p = tpch(where, tmp)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        if converted is not None:
            self.assertEqual(CONVERTED in p.stdout, converted, p.stdout)
        got = answers(p.stdout)
        self.assertEqual(len(got), 3, p.stdout)
        return got

    def test_every_writers_layout_is_the_same_table(self):
        # The same lineitem as one file, as Hive partitions one and two levels deep (DuckDB's
        # PARTITION_BY), as Spark leaves it (part files beside _SUCCESS, .crc files, a _temporary/
        # folder of a task's copy and a hidden copy), as Spark's folder named lineitem.parquet/, as a
        # folder reached through a symbolic link and with a partition folder linked in, and orders
        # partitioned by a column the suite reads (o_shippriority: its values only in the folder names).
        with tempfile.TemporaryDirectory() as d:
            want = self.answers_of(tiny_tpch(os.path.join(d, "flat")), d)
            self.assertIn("400 input rows", want[0])
            layouts = {"hive": tiny_tpch(os.path.join(d, "hive"), "lineitem", "PARTITION_BY (l_part)"),
                       "hive2": tiny_tpch(os.path.join(d, "hive2"), "lineitem", "PARTITION_BY (l_part, l_half)"),
                       "by_read_column": tiny_tpch(os.path.join(d, "by_read_column"), orders="orders",
                                                   orders_options="PARTITION_BY (o_shippriority)")}
            spark = tiny_tpch(os.path.join(d, "spark"), "lineitem", "PER_THREAD_OUTPUT, FILENAME_PATTERN 'part-{i}'")
            folder = os.path.join(spark, "lineitem")
            part = os.path.join(folder, sorted(os.listdir(folder))[0])
            for junk in ("_SUCCESS", "._SUCCESS.crc", "." + os.path.basename(part) + ".crc", "_metadata"):
                with open(os.path.join(folder, junk), "wb") as f:
                    f.write(b"not data")
            os.makedirs(os.path.join(folder, "_temporary", "0", "task_0"))
            shutil.copy(part, os.path.join(folder, "_temporary", "0", "task_0", os.path.basename(part)))
            shutil.copy(part, os.path.join(folder, ".hidden-copy.parquet"))
            layouts["spark"] = spark
            named = tiny_tpch(os.path.join(d, "named"), "lineitem.parquet/part-0.parquet")
            layouts["spark_named_folder"] = named
            elsewhere = tiny_tpch(os.path.join(d, "elsewhere"), "lineitem", "PARTITION_BY (l_part)")
            linked = tiny_tpch(os.path.join(d, "linked"), "lineitem", "PARTITION_BY (l_part)")
            shutil.rmtree(os.path.join(linked, "lineitem"))
            os.symlink(os.path.join(elsewhere, "lineitem"), os.path.join(linked, "lineitem"))
            layouts["linked_table"] = linked
            sub = tiny_tpch(os.path.join(d, "linked_partition"), "lineitem", "PARTITION_BY (l_part)")
            os.rename(os.path.join(sub, "lineitem", "l_part=3"), os.path.join(d, "l_part=3"))
            os.symlink(os.path.join(d, "l_part=3"), os.path.join(sub, "lineitem", "l_part=3"))
            layouts["linked_partition"] = sub
            # A partition key that is a money column (DuckDB reads "0.05" from a folder name as a string),
            # also written into the files; dates as pandas and Arrow write them (TIMESTAMP_NS at midnight).
            layouts["by_money"] = tiny_tpch(os.path.join(d, "by_money"), "lineitem", "PARTITION_BY (l_discount)")
            layouts["by_money_in_files"] = tiny_tpch(os.path.join(d, "by_money_in_files"), "lineitem",
                                                     "PARTITION_BY (l_discount), WRITE_PARTITION_COLUMNS true")
            stamps = tiny_tpch(os.path.join(d, "timestamps"))
            for table, col in (("orders", "o_orderdate"), ("lineitem", "l_shipdate")):
                f = os.path.join(stamps, table + ".parquet")
                duckdb.connect().execute(f"COPY (SELECT * REPLACE ({col}::TIMESTAMP_NS AS {col}) FROM '{f}') TO "
                                         f"'{f}.new' (FORMAT parquet)")
                os.replace(f + ".new", f)
            layouts["timestamps"] = stamps
            for name, src in layouts.items():
                with self.subTest(layout=name):
                    self.assertEqual(self.answers_of(src, d, converted=True), want)
                    c = convert("tpch", src, os.path.join(d, "cols-" + name))
                    self.assertEqual(c.returncode, 0, c.stdout + c.stderr)

    def test_partition_keys_are_read_as_the_columns_kind(self):
        # SSB tables whose partition keys are columns the suite reads: lineorder by its date (a DATE, or
        # an integer yyyymmdd) and discount, date by d_yearmonth (a string that could pass for
        # nothing else) and the part table by p_mfgr: the converted columns hold the values.
        con = duckdb.connect()
        with tempfile.TemporaryDirectory() as d:
            for name, date in (("dates", "DATE '1992-01-01' + (i % 3)::INTEGER"), ("ints", "19920101 + i % 3")):
                src = os.path.join(d, name)
                os.makedirs(src)
                tables = {
                    "lineorder": ("SELECT i % 5 + 1 AS lo_custkey, i % 4 + 1 AS lo_partkey, i % 2 + 1 AS lo_suppkey, "
                                  f"{date} AS lo_orderdate, i % 50 + 1 AS lo_quantity, 1000 + i AS lo_extendedprice, "
                                  "i % 11 AS lo_discount, 900 + i AS lo_revenue, 500 AS lo_supplycost "
                                  "FROM range(40) t(i)", "PARTITION_BY (lo_orderdate, lo_discount)"),
                    "date": ("SELECT 19920101 + i AS d_datekey, 1992 AS d_year, 199201 AS d_yearmonthnum, "
                             "'Jan1992' AS d_yearmonth, 1 AS d_weeknuminyear FROM range(3) t(i)",
                             "PARTITION_BY (d_yearmonth)"),
                    "customer": ("SELECT i + 1 AS c_custkey, 'ALGERIA  0' AS c_city, 'ALGERIA' AS c_nation, "
                                 "'AFRICA' AS c_region FROM range(5) t(i)", ""),
                    "supplier": ("SELECT i + 1 AS s_suppkey, 'ALGERIA  0' AS s_city, 'ALGERIA' AS s_nation, "
                                 "'AFRICA' AS s_region FROM range(2) t(i)", ""),
                    "part": ("SELECT i + 1 AS p_partkey, 'MFGR#1' AS p_mfgr, 'MFGR#11' AS p_category, "
                             "'MFGR#111' AS p_brand1 FROM range(4) t(i)", "PARTITION_BY (p_mfgr)")}
                for table, (sql, opt) in tables.items():
                    to = os.path.join(src, table if opt else table + ".parquet")
                    con.execute(f"COPY ({sql}) TO '{to}' (FORMAT parquet{', ' + opt if opt else ''})")
                c = convert("ssb", src, os.path.join(d, name + "-cols"))
                self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
                cols = os.path.join(d, name + "-cols")

                def values(base, cols=cols):
                    with open(os.path.join(cols, base), "rb") as f:
                        data = f.read()
                    return sorted(set(struct.unpack(f"<{len(data) // 8}q", data)))
                self.assertEqual(values("lineorder.lo_orderdate.i64"), [19920101, 19920102, 19920103])
                self.assertEqual(values("lineorder.lo_discount.i64"), list(range(11)))
                with open(os.path.join(cols, "date.d_yearmonth.str"), "rb") as f:
                    self.assertEqual(f.read(), b"Jan1992" * 3)
                with open(os.path.join(cols, "part.p_mfgr.str"), "rb") as f:
                    self.assertEqual(f.read(), b"MFGR#1" * 4)

    def test_the_cache_sees_every_file_the_converter_reads(self):
        # A removed partition, a changed file two folders deep, a file changed behind a symbolic link:
        # each a new conversion with the new answer, never the old columns.
        with tempfile.TemporaryDirectory() as d:
            src = tiny_tpch(os.path.join(d, "pq"), "lineitem", "PARTITION_BY (l_part, l_half)")
            first = self.answers_of(src, d, converted=True)
            self.assertEqual(self.answers_of(src, d, converted=False), first)
            shutil.rmtree(os.path.join(src, "lineitem", "l_part=3"))
            self.assertIn("300 input rows", self.answers_of(src, d, converted=True)[0])
            deep = os.path.join(src, "lineitem", "l_part=2", "l_half=0")
            f = os.path.join(deep, os.listdir(deep)[0])
            duckdb.connect().execute(f"COPY (SELECT * FROM '{f}' LIMIT 10) TO '{f}.new' (FORMAT parquet)")
            os.replace(f + ".new", f)
            self.assertIn("210 input rows", self.answers_of(src, d, converted=True)[0])
            # The table folder is a link to a folder elsewhere: a file changed there.
            elsewhere = tiny_tpch(os.path.join(d, "elsewhere"), "lineitem", "PARTITION_BY (l_part)")
            linked = tiny_tpch(os.path.join(d, "linked"))
            os.remove(os.path.join(linked, "lineitem.parquet"))
            os.symlink(os.path.join(elsewhere, "lineitem"), os.path.join(linked, "lineitem"))
            self.assertIn("400 input rows", self.answers_of(linked, d, converted=True)[0])
            shutil.rmtree(os.path.join(elsewhere, "lineitem", "l_part=0"))
            self.assertIn("300 input rows", self.answers_of(linked, d, converted=True)[0])

    def test_columns_beside_parquet_files_are_used_only_while_they_match(self):
        with tempfile.TemporaryDirectory() as d:
            src = tiny_tpch(os.path.join(d, "pq"), "lineitem", "PARTITION_BY (l_part)")
            c = convert("tpch", src, src)  # converted in place: columns.json beside the Parquet files
            self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
            self.assertIn("400 input rows", self.answers_of(src, d, converted=False)[0])
            shutil.rmtree(os.path.join(src, "lineitem", "l_part=3"))
            p = tpch(src, d)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("columns.json was made from other files than the Parquet files beside it", p.stderr)
            self.assertNotIn("input rows", p.stdout)

    def convert_fails(self, src, want, d):
        """The converter alone and through the executable: exit 2, the message, no traceback, no
        column files left behind."""
        out = os.path.join(d, "out")
        c = convert("tpch", src, out)
        self.assertEqual(c.returncode, 2, c.stdout + c.stderr)
        self.assertIn(want, c.stderr)
        self.assertNotIn("Traceback", c.stderr)
        self.assertFalse(os.path.exists(out), os.listdir(out) if os.path.exists(out) else "")
        cache = os.path.join(d, "cache")
        os.makedirs(cache, exist_ok=True)
        p = tpch(src, cache)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(want, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(os.listdir(cache), [])

    def test_files_that_cannot_be_the_table_are_errors(self):
        con = duckdb.connect()
        cases = []
        with tempfile.TemporaryDirectory() as d:
            def case(name, want, change):
                src = tiny_tpch(os.path.join(d, name), "lineitem", "PARTITION_BY (l_part)")
                change(src, os.path.join(src, "lineitem"))
                cases.append((name, src, want))

            def both(src, li):
                con.execute(f"COPY ({LINEITEM}) TO '{li}.parquet' (FORMAT parquet)")
            case("both", "both lineitem.parquet and lineitem/", both)
            case("not_parquet", "lineitem/l_part=0/notes.txt: not a Parquet file",
                 lambda src, li: open(os.path.join(li, "l_part=0", "notes.txt"), "w").write("x"))

            def empty_folder(src, li):
                shutil.rmtree(li)
                os.makedirs(os.path.join(li, "_temporary"))
                open(os.path.join(li, "_SUCCESS"), "w").close()
            case("no_files", "lineitem: a table folder with no Parquet files", empty_folder)
            case("empty_file", "lineitem/l_part=1/data_0.parquet: empty (0 bytes), not a Parquet file",
                 lambda src, li: open(os.path.join(li, "l_part=1", "data_0.parquet"), "w").close())

            def corrupt(src, li):
                f = os.path.join(li, "l_part=2", "data_0.parquet")
                data = bytearray(open(f, "rb").read())
                data[8:-8] = b"\0" * (len(data) - 16)
                open(f, "wb").write(bytes(data))
            case("corrupt", "lineitem/l_part=2/data_0.parquet", corrupt)
            case("truncated", "lineitem/l_part=2/data_0.parquet: not a whole Parquet file",
                 lambda src, li: os.truncate(os.path.join(li, "l_part=2", "data_0.parquet"), 100))
            case("delta", "a Delta Lake table", lambda src, li: os.makedirs(os.path.join(li, "_delta_log")))

            def mixed(src, li):
                shutil.copy(os.path.join(li, "l_part=0", "data_0.parquet"), os.path.join(li, "loose.parquet"))
            case("mixed_levels", "partition folders differ", mixed)

            def broken_link(src, li):
                shutil.rmtree(li)
                os.symlink(os.path.join(d, "nowhere"), li)
            case("broken_link", "lineitem: a symbolic link to", broken_link)

            def loop(src, li):
                os.symlink(li, os.path.join(li, "l_part=0", "again"))
            case("link_loop", "a symbolic link loop", loop)
            for name, src, want in cases:
                with self.subTest(case=name):
                    self.convert_fails(src, want, tempfile.mkdtemp(dir=d))

    def test_nan_and_infinity_are_errors(self):
        with tempfile.TemporaryDirectory() as d:
            for name, value, want in (("nan", "'nan'::DOUBLE", "NaN or infinity"),
                                      ("inf", "'inf'::DOUBLE", "NaN or infinity"),
                                      ("huge", "1e300::DOUBLE", "a value of 2^63 or more")):
                for col in ("l_extendedprice", "l_quantity"):
                    with self.subTest(value=name, column=col):
                        src = tiny_tpch(os.path.join(d, name + col))
                        f = os.path.join(src, "lineitem.parquet")
                        duckdb.connect().execute(
                            f"COPY (SELECT * REPLACE (CASE WHEN l_orderkey = 7 THEN {value} ELSE {col}::DOUBLE END "
                            f"AS {col}) FROM '{f}') TO '{f}.new' (FORMAT parquet)")
                        os.replace(f + ".new", f)
                        self.convert_fails(src, f"table lineitem column {col} (DOUBLE) has {want}",
                                           tempfile.mkdtemp(dir=d))
            src = tiny_tpch(os.path.join(d, "noon"))
            f = os.path.join(src, "orders.parquet")
            duckdb.connect().execute(f"COPY (SELECT * REPLACE (o_orderdate + INTERVAL 12 HOUR AS o_orderdate) "
                                     f"FROM '{f}') TO '{f}.new' (FORMAT parquet)")
            os.replace(f + ".new", f)
            self.convert_fails(src, "table orders column o_orderdate (TIMESTAMP) has times of day other than midnight",
                               tempfile.mkdtemp(dir=d))
            src = tiny_tpch(os.path.join(d, "infdate"))
            f = os.path.join(src, "orders.parquet")
            duckdb.connect().execute(f"COPY (SELECT * REPLACE (CASE WHEN o_orderkey = 3 THEN 'infinity'::DATE ELSE "
                                     f"o_orderdate END AS o_orderdate) FROM '{f}') TO '{f}.new' (FORMAT parquet)")
            os.replace(f + ".new", f)
            self.convert_fails(src, "table orders column o_orderdate (DATE) has NaN or infinity",
                               tempfile.mkdtemp(dir=d))

    def test_a_failed_conversion_keeps_the_folder_as_it_was(self):
        with tempfile.TemporaryDirectory() as d:
            good = tiny_tpch(os.path.join(d, "good"))
            out = os.path.join(d, "cols")
            self.assertEqual(convert("tpch", good, out).returncode, 0)
            before = {f: open(os.path.join(out, f), "rb").read() for f in os.listdir(out)}
            bad = tiny_tpch(os.path.join(d, "bad"))
            f = os.path.join(bad, "orders.parquet")
            duckdb.connect().execute(f"COPY (SELECT o_orderkey FROM '{f}') TO '{f}.new' (FORMAT parquet)")
            os.replace(f + ".new", f)
            c = convert("tpch", bad, out)
            self.assertEqual(c.returncode, 2, c.stdout + c.stderr)
            self.assertIn("table orders has no column o_custkey", c.stderr)
            self.assertEqual({f: open(os.path.join(out, f), "rb").read() for f in os.listdir(out)}, before)
            # An output that cannot be a folder: a usage error naming it, no traceback.
            c = convert("tpch", good, os.path.join(good, "customer.parquet", "cols"))
            self.assertEqual(c.returncode, 2, c.stdout + c.stderr)
            self.assertIn("customer.parquet", c.stderr)
            self.assertNotIn("Traceback", c.stderr)

    def test_the_cache_folder_housekeeping_and_the_converters_exit(self):
        with tempfile.TemporaryDirectory() as d:
            src = tiny_tpch(os.path.join(d, "pq"))
            # A conversion killed half-way left its folder: removed once its process is gone; a live
            # process's is kept.
            gone = subprocess.Popen(["true"])
            gone.wait()
            host = socket.gethostname()
            dead = os.path.join(d, f"hdb-columns-tpch-0123456789abcdef.part-{host}-{gone.pid}")
            live = os.path.join(d, f"hdb-columns-tpch-0123456789abcdef.part-{host}-{os.getpid()}")
            for x in (dead, live):
                os.makedirs(x)
                open(os.path.join(x, "customer.c_custkey.i64"), "wb").close()
            with open(os.path.join(d, "hdb-columns-tpch-0123456789abcdef.lock"), "w"):
                pass  # the lock file of a killed conversion: no one holds it
            self.answers_of(src, d, converted=True)
            self.assertFalse(os.path.exists(dead))
            self.assertTrue(os.path.exists(live))
            self.assertEqual([f for f in os.listdir(d) if f.endswith(".lock")], [])
            # Three processes at once on new files (MPI ranks): one converts, the others wait for it
            # and load its columns.
            many = tiny_tpch(os.path.join(d, "many"))
            procs = [subprocess.Popen([EXE["tpch"], "--data", "tpch", "--tables", many, "--only", "*/ra-serial",
                                       "--passes", "1", "--max-time", "0.01"], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, env=dict(os.environ, TMPDIR=d))
                     for _ in range(3)]
            outs = [p.communicate(timeout=120)[0] for p in procs]
            self.assertEqual([p.returncode for p in procs], [0, 0, 0], outs)
            self.assertEqual(sum(CONVERTED in o for o in outs), 1, outs)
            self.assertEqual(len({tuple(answers(o)) for o in outs}), 1, outs)
            # TMPDIR names a folder that is not there.
            p = tpch(src, os.path.join(d, "no-such-tmp"))
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("TMPDIR=" + os.path.join(d, "no-such-tmp"), p.stderr)
            self.assertNotIn("filesystem error", p.stderr)
            # The converter's exit in words (HDB_PYTHON: the interpreter scripts/hdb/python runs).
            for script, want in (("kill -9 $$", "killed by signal 9"), ("exit 3", "exited with status 3")):
                fake = os.path.join(d, "fake-python")
                with open(fake, "w") as f:
                    f.write(f"#!/bin/sh\n{script}\n")
                os.chmod(fake, 0o755)
                env = dict(os.environ, TMPDIR=d, HDB_PYTHON=fake)
                p = subprocess.run([EXE["tpch"], "--data", "tpch", "--tables", src, "--passes", "1"],
                                   capture_output=True, text=True, env=env, timeout=60)
                self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(want, p.stderr)
                self.assertNotIn("exit status", p.stderr)


if __name__ == "__main__":
    unittest.main()
