"""Parquet tables for hdb-tpch-* and hdb-ssb-* (`--tables DIR`): DuckDB reads the Parquet files and
writes the columns the benchmark keeps as raw little-endian binary files with a manifest,
`columns.json`, which the executables' column loader reads (workloads/column_files.hpp). No text
round trip: numbers stay numbers, only strings (which the loader maps to its dictionary codes) are
handed over as bytes.

    scripts/hdb/python -m hdb.parquet_tables tpch|ssb SRC OUT

SRC holds one table per `<table>.parquet` file or `<table>/` folder of Parquet files (what
`tpchgen-cli --format parquet`, DuckDB's `COPY ... (FORMAT parquet)` and Spark write; Spark's
`part-*.parquet` files and `_SUCCESS` beside them). Why DuckDB: the driver already has it (the
project venv, scripts/setup), it reads every Parquet encoding and compression those writers use, and
there is no Parquet or Arrow package in Debian here; pyarrow's C++ libraries inside its wheel would
be a second, large dependency linked into every executable (docs/ssb.md, "Parquet input").

What is checked here (each an error naming file, table and column, exit 2): the table's files and
its columns are there; a column is of a type that holds what the suite keeps (below); no NULL; no
negative number; whole numbers where the suite keeps whole numbers, at most hundredths where it keeps
cents. The loader then applies the .tbl loader's rules to the values (32 bits, or 64-bit keys for
TPC-H; calendar dates; strings in the dictionaries), naming table, column and row.

Kinds (the suite's column, what Parquet may hold):
  key, int   a whole number: any integer type, or a DECIMAL / floating column of whole values
  cents      money or a fraction in hundredths: integer, DECIMAL, or floating (within 1e-6 of a
             hundredth: Spark's doubles), written as hundredths
  days       a TPC-H date: DATE (or a 'YYYY-MM-DD' string), written as days since 1970-01-01
  yyyymmdd   an SSB date key: an integer yyyymmdd (ssb-dbgen's) or a DATE
  str        a string (VARCHAR): a dictionary column
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FORMAT = "hdb-columns/1"
MANIFEST = "columns.json"

TABLES: dict[str, dict[str, list[tuple[str, str]]]] = {
    "tpch": {
        "customer": [("c_custkey", "key"), ("c_mktsegment", "str")],
        "orders": [("o_orderkey", "key"), ("o_custkey", "key"), ("o_orderdate", "days"), ("o_shippriority", "int")],
        "lineitem": [("l_orderkey", "key"), ("l_quantity", "int"), ("l_extendedprice", "cents"),
                     ("l_discount", "cents"), ("l_shipdate", "days")],
    },
    "ssb": {
        "lineorder": [("lo_orderdate", "yyyymmdd"), ("lo_custkey", "key"), ("lo_partkey", "key"),
                      ("lo_suppkey", "key"), ("lo_quantity", "int"), ("lo_extendedprice", "int"),
                      ("lo_discount", "int"), ("lo_revenue", "int"), ("lo_supplycost", "int")],
        "date": [("d_datekey", "yyyymmdd"), ("d_year", "int"), ("d_yearmonthnum", "int"), ("d_yearmonth", "str"),
                 ("d_weeknuminyear", "int")],
        "customer": [("c_custkey", "key"), ("c_city", "str"), ("c_nation", "str"), ("c_region", "str")],
        "supplier": [("s_suppkey", "key"), ("s_city", "str"), ("s_nation", "str"), ("s_region", "str")],
        "part": [("p_partkey", "key"), ("p_mfgr", "str"), ("p_category", "str"), ("p_brand1", "str")],
    },
}

INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                 "UBIGINT", "UHUGEINT")
FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")
I64_MAX = 2 ** 63 - 1


class TablesError(ValueError):
    """A table or column the suite cannot take: the message names file, table and column."""


def table_files(src: Path, table: str) -> list[Path]:
    """The Parquet files of a table: SRC/<table>.parquet, or every *.parquet under SRC/<table>/."""
    one = src / f"{table}.parquet"
    if one.is_file():
        return [one]
    folder = src / table
    files = sorted(p for p in folder.rglob("*.parquet") if p.is_file()) if folder.is_dir() else []
    if not files:
        raise TablesError(f"{src}: no {table}.parquet and no folder {table}/ of Parquet files")
    return files


def _is_decimal(t: str) -> bool:
    return t.startswith("DECIMAL")


def _expression(kind: str, col: str, typ: str, where: str) -> tuple[str, str]:
    """(the SQL of the value handed over, the SQL of a condition that holds for a bad value; '' when
    none can be) for a column `col` of DuckDB type `typ`."""
    q = f'"{col}"'
    numeric = typ in INTEGER_TYPES or _is_decimal(typ) or typ in FLOAT_TYPES
    if kind in ("key", "int"):
        if typ in INTEGER_TYPES:
            return f"{q}::HUGEINT", ""
        if _is_decimal(typ) or typ in FLOAT_TYPES:
            return f"{q}::HUGEINT", f"{q} <> trunc({q})"
        raise TablesError(f"{where} is {typ}, expected a whole number (an integer type)")
    if kind == "cents":
        if typ in INTEGER_TYPES:
            return f"{q}::HUGEINT * 100", ""
        if _is_decimal(typ):
            return f"({q} * 100)::HUGEINT", f"{q} * 100 <> trunc({q} * 100)"
        if typ in FLOAT_TYPES:
            return f"round({q} * 100)::HUGEINT", f"abs({q} * 100 - round({q} * 100)) > 1e-6"
        raise TablesError(f"{where} is {typ}, expected a number (DECIMAL, integer or floating)")
    if kind == "days":
        if typ == "DATE":
            return f"({q} - DATE '1970-01-01')::HUGEINT", ""
        if typ == "VARCHAR":
            return f"(try_strptime({q}, '%Y-%m-%d')::DATE - DATE '1970-01-01')::HUGEINT", \
                f"try_strptime({q}, '%Y-%m-%d') IS NULL"
        raise TablesError(f"{where} is {typ}, expected a DATE")
    if kind == "yyyymmdd":
        if typ == "DATE":
            return f"(year({q}) * 10000 + month({q}) * 100 + day({q}))::HUGEINT", ""
        if typ in INTEGER_TYPES:
            return f"{q}::HUGEINT", ""
        raise TablesError(f"{where} is {typ}, expected an integer yyyymmdd or a DATE")
    if kind == "str":
        if typ == "VARCHAR":
            return q, ""
        raise TablesError(f"{where} is {typ}, expected a string (VARCHAR)" + (
            " (the suite keeps this column as its dictionary's codes, from the strings)" if numeric else ""))
    raise TablesError(f"{where}: unknown kind '{kind}'")


def _first_row(con: Any, view: str, cond: str) -> int:
    """The 1-based row (in the files' order) of the first row where cond holds."""
    return int(con.execute(f"SELECT min(rn) FROM (SELECT row_number() OVER () AS rn, * FROM {view}) "
                           f"WHERE {cond}").fetchone()[0])


def convert_table(con: Any, src: Path, out: Path, table: str, columns: list[tuple[str, str]]) -> dict[str, Any]:
    import numpy as np
    files = table_files(src, table)
    view = f"t_{table}"
    listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet([{listing}])")
    types = {str(r[0]).lower(): str(r[1]) for r in con.execute(f"DESCRIBE {view}").fetchall()}
    names = {str(r[0]).lower(): str(r[0]) for r in con.execute(f"DESCRIBE {view}").fetchall()}
    rows = int(con.execute(f"SELECT count(*) FROM {view}").fetchone()[0])
    shown = files[0] if len(files) == 1 else src / table
    if rows == 0:
        raise TablesError(f"{shown}: table {table} has no rows; every table needs at least one")
    entry: dict[str, Any] = {"rows": rows, "files": [str(f) for f in files], "columns": {}}
    for col, kind in columns:
        where = f"{shown}: table {table} column {col}"
        if col not in types:
            raise TablesError(f"{shown}: table {table} has no column {col} (it has {', '.join(names.values())})")
        real, typ = names[col], types[col]
        expr, bad = _expression(kind, real, typ, where)
        nulls = rows - int(con.execute(f'SELECT count("{real}") FROM {view}').fetchone()[0])
        if nulls:
            raise TablesError(f"{where}: {nulls} NULL value(s), the first at row "
                              f"{_first_row(con, view, f'{chr(34)}{real}{chr(34)} IS NULL')}: the suite's columns "
                              "have no NULL")
        if bad:
            n = int(con.execute(f"SELECT count(*) FROM {view} WHERE {bad}").fetchone()[0])
            if n:
                what = {"cents": "has values finer than hundredths (the suite keeps cents and hundredths)",
                        "days": "has values that are not dates YYYY-MM-DD"}.get(kind, "has values that are not "
                                                                                       "whole numbers")
                raise TablesError(f"{where} ({typ}) {what}: {n} of them, the first at row {_first_row(con, view, bad)}")
        entry["columns"][col] = {"kind": kind, "parquet_type": typ}
        base = f"{table}.{col}"
        if kind == "str":
            values = con.execute(f"SELECT {expr} FROM {view}").fetchnumpy()[real]
            data = [str(v).encode("utf-8") for v in values]
            offsets = np.zeros(rows + 1, dtype="<u8")
            np.cumsum([len(b) for b in data], out=offsets[1:])
            (out / f"{base}.str").write_bytes(b"".join(data))
            offsets.tofile(out / f"{base}.off")
            entry["columns"][col].update(type="str", file=f"{base}.str", offsets=f"{base}.off")
            continue
        lo, hi = con.execute(f"SELECT min({expr}), max({expr}) FROM {view}").fetchone()
        if int(lo) < 0:
            raise TablesError(f"{where} has a negative value ({lo}), the first at row "
                              f"{_first_row(con, view, f'{expr} < 0')}: the suite keeps non-negative numbers")
        if int(hi) > I64_MAX:
            raise TablesError(f"{where} has a value of 2^63 or more ({hi}), the first at row "
                              f"{_first_row(con, view, f'{expr} > {I64_MAX}')}")
        values = con.execute(f"SELECT ({expr})::BIGINT AS v FROM {view}").fetchnumpy()["v"]
        np.ascontiguousarray(values, dtype="<i8").tofile(out / f"{base}.i64")
        entry["columns"][col].update(type="i64", file=f"{base}.i64")
    return entry


def convert(benchmark: str, src: str | Path, out: str | Path) -> Path:
    """Converts the benchmark's tables under src into out (made if absent); returns the manifest's path."""
    import duckdb
    if benchmark not in TABLES:
        raise TablesError(f"no Parquet tables for benchmark '{benchmark}' ({', '.join(TABLES)})")
    src, out = Path(src).absolute(), Path(out).absolute()
    if not src.is_dir():
        raise TablesError(f"{src}: no such folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)  # a half-written folder never reads as a whole one
    con = duckdb.connect()
    manifest: dict[str, Any] = {"format": FORMAT, "benchmark": benchmark, "source": str(src),
                                "duckdb": duckdb.__version__, "tables": {}}
    for table, columns in TABLES[benchmark].items():
        manifest["tables"][table] = convert_table(con, src, out, table, columns)
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)
    return out / MANIFEST


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="parquet_tables", description=__doc__.split("\n\n")[0])
    ap.add_argument("benchmark", choices=sorted(TABLES))
    ap.add_argument("src", help="the folder of Parquet tables")
    ap.add_argument("out", help="where the columns and columns.json go (then: --tables OUT)")
    a = ap.parse_args(argv)
    try:
        path = convert(a.benchmark, a.src, a.out)
    except TablesError as e:
        print(f"parquet_tables: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"parquet_tables: error: {e} in {sys.executable}; scripts/setup installs duckdb in .venv",
              file=sys.stderr)
        return 2
    print(f"{path}: the {a.benchmark} tables of {a.src}; run with --tables {Path(a.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
