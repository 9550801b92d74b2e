"""Parquet tables for hdb-tpch-* and hdb-ssb-* (`--tables DIR`): DuckDB reads the Parquet files and
writes the columns the benchmark keeps as raw little-endian binary files with a manifest,
`columns.json`, which the executables' column loader reads (workloads/column_files.hpp). No text
round trip: numbers stay numbers, only strings (which the loader maps to its dictionary codes) are
handed over as bytes.

    scripts/hdb/python -m hdb.parquet_tables tpch|ssb SRC OUT     # convert (all or nothing)
    scripts/hdb/python -m hdb.parquet_tables cache tpch|ssb DIR   # what `--tables DIR` loads

SRC holds one table per `<table>.parquet` file or `<table>/` folder of Parquet files (what
`tpchgen-cli --format parquet`, DuckDB's `COPY ... (FORMAT parquet)` and Spark write). One function,
table_files, decides which files are a table, for the conversion and for the fingerprint the
executables' cache is keyed by (fingerprint): every file under the folder at any depth, links
followed, names starting with . or _ skipped (_SUCCESS, _temporary/, .crc), Hive key=value folders
read as columns, any other file that is not Parquet an error naming it (docs/ssb.md, "Parquet
input"). `cache` answers the executables (workloads/column_files.cpp) with the folder to load:
DIR's own columns (checked against the fingerprint their manifest records where Parquet tables lie
beside them) or a cache folder under $TMPDIR, converted once under a lock. Why DuckDB: the driver already has it (the
project venv, scripts/setup), it reads every Parquet encoding and compression those writers use, and
there is no Parquet or Arrow package in Debian here; pyarrow's C++ libraries inside its wheel would
be a second, large dependency linked into every executable (docs/ssb.md, "Parquet input").

What is checked here (each an error naming file, table and column, exit 2, never a traceback): the
table's files are whole Parquet files DuckDB reads and its columns are there; a column is of a type
that holds what the suite keeps (below); no NULL, NaN or infinity; no negative number; whole
numbers where the suite keeps whole numbers, at most hundredths where it keeps cents. The loader
then applies the .tbl loader's rules to the values (32 bits, or 64-bit keys for TPC-H; calendar
dates; strings in the dictionaries), naming table, column and row.

Kinds (the suite's column, what Parquet may hold):
  key, int   a whole number: any integer type, or a DECIMAL / floating column of whole values
  cents      money or a fraction in hundredths: integer, DECIMAL, or floating (within 1e-6 of a
             hundredth: Spark's doubles), written as hundredths
  days       a TPC-H date: DATE, a TIMESTAMP at midnight or a 'YYYY-MM-DD' string, written as days
             since 1970-01-01
  yyyymmdd   an SSB date key: an integer yyyymmdd (ssb-dbgen's), a DATE or a TIMESTAMP at midnight
  str        a string (VARCHAR): a dictionary column
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .runlock import pid_alive

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


def _hidden(name: str) -> bool:
    """Not a table's data: Hadoop's, Spark's and Arrow's convention for what writers leave beside the
    part files (_SUCCESS, _temporary/, _metadata, _delta_log/, .crc files, .part files in flight)."""
    return name.startswith((".", "_"))


def _check_parquet(path: Path, shown: str) -> None:
    """A Parquet file starts and ends with the magic PAR1; anything else here is an error naming it."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(4)
            f.seek(max(size - 4, 0))
            tail = f.read(4)
    except OSError as e:
        raise TablesError(f"{shown}: cannot be read ({e.strerror})") from None
    if size == 0:
        raise TablesError(f"{shown}: empty (0 bytes), not a Parquet file")
    if head != b"PAR1":
        raise TablesError(f"{shown}: not a Parquet file (it does not start with PAR1); a table folder holds its "
                          "Parquet files only (names starting with . or _ are skipped)")
    if size < 12 or tail != b"PAR1":
        raise TablesError(f"{shown}: not a whole Parquet file ({size} bytes, no PAR1 at its end: cut short?)")


def _walk(root: Path, src: Path, table: str) -> list[Path]:
    """Every file under a table folder at any depth, symbolic links followed, hidden names skipped."""
    if (root / "_delta_log").is_dir():
        raise TablesError(f"{root}: a Delta Lake table (_delta_log/): its folder holds the files of every version, "
                          "not the table; write the table as Parquet (DuckDB: COPY (SELECT * FROM delta_scan(...)) "
                          "TO ... (FORMAT parquet))")
    if (root / "metadata").is_dir() and any(p.name.endswith(".metadata.json") for p in (root / "metadata").iterdir()):
        raise TablesError(f"{root}: an Iceberg table (metadata/*.metadata.json): its data/ folder holds the files of "
                          "every snapshot, not the table; write the table as Parquet")
    files: list[Path] = []
    seen: dict[str, Path] = {}  # real path -> the path it was first reached by: nothing is read twice

    def once(path: Path) -> None:
        real = os.path.realpath(path)
        if real in seen:
            raise TablesError(f"{path} and {seen[real]} are the same {'folder' if path.is_dir() else 'file'} "
                              f"({real}, through a symbolic link): its rows would be read twice")
        seen[real] = path

    def walk(folder: Path, up: tuple[str, ...]) -> None:
        real = os.path.realpath(folder)
        if real in up:
            raise TablesError(f"{folder}: a symbolic link loop (it leads back to {real})")
        once(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as err:
            raise TablesError(f"{folder}: cannot be read ({err.strerror})") from None
        for entry in entries:
            if _hidden(entry.name):
                continue
            path = Path(entry.path)
            if path.is_dir():
                walk(path, (*up, real))
            elif path.is_file():
                once(path)
                files.append(path)
            elif path.is_symlink():
                raise TablesError(f"{path}: a symbolic link to {path.readlink()}, which is not there")
    walk(root, ())
    return files


def table_files(src: Path, table: str) -> list[Path]:
    """The files of a table, decided here alone (the converter reads them, the cache's fingerprint is
    made of them): SRC/<table>.parquet, or every file under a folder SRC/<table>/ (or Spark's
    SRC/<table>.parquet/) at any depth, symbolic links followed, skipping every file and folder whose
    name starts with . or _ (_SUCCESS, _temporary/, _metadata, .crc: the writers' convention). Every
    other file there must be Parquet; both <table>.parquet and <table>/ is an error."""
    one, folder = src / f"{table}.parquet", src / table
    for p in (one, folder):
        if p.is_symlink() and not p.exists():
            raise TablesError(f"{p}: a symbolic link to {p.readlink()}, which is not there")
    if one.exists() and folder.exists():
        raise TablesError(f"{src}: both {table}.parquet and {table}/: which is table {table}? Remove one")
    if one.is_file():
        _check_parquet(one, str(one))
        return [one]
    root = one if one.is_dir() else folder if folder.is_dir() else None
    if root is None:
        raise TablesError(f"{src}: no {table}.parquet and no folder {table}/ of Parquet files")
    files = _walk(root, src, table)
    if not files:
        raise TablesError(f"{root}: a table folder with no Parquet files (names starting with . or _ are not the "
                          "table's: _SUCCESS, _temporary/, .crc)")
    for f in files:
        _check_parquet(f, f"{src}/{f.relative_to(src).as_posix()}")
    levels = {tuple(part.split("=", 1)[0] for part in f.relative_to(root).parts[:-1]) for f in files}
    if len(levels) > 1 and any("=" in part for f in files for part in f.relative_to(root).parts[:-1]):
        shown = "; ".join("/".join(k) + "/" if k else "(the folder itself)" for k in sorted(levels))
        raise TablesError(f"{root}: partition folders differ between its files ({shown}): the files of a "
                          "partitioned table are all at the same level of key=value folders")
    return files


def source_tables(benchmark: str, src: Path) -> dict[str, list[Path]]:
    """Every table's files (table_files) for the benchmark's tables under src."""
    return {table: table_files(src, table) for table in TABLES[benchmark]}


def has_tables(benchmark: str, src: Path) -> bool:
    """Whether src has any of the benchmark's tables as Parquet (a <table>.parquet or a <table>/)."""
    return any((src / f"{t}.parquet").exists() or (src / f"{t}.parquet").is_symlink() or (src / t).is_dir()
               or (src / t).is_symlink() for t in TABLES[benchmark])


def fingerprint(benchmark: str, src: Path, tables: dict[str, list[Path]]) -> str:
    """The hash of exactly the files the converter reads: each one's path under src (and where a link
    leads outside src), size and modification time in nanoseconds. Any file added, removed, changed
    or moved changes it."""
    h = hashlib.sha256(f"{FORMAT}\n{benchmark}\n".encode())
    real_src = os.path.realpath(src)
    for table, files in tables.items():
        for f in files:
            st = f.stat()
            real = os.path.realpath(f)
            target = "" if Path(real) == Path(real_src).joinpath(*f.relative_to(src).parts) else real
            h.update(f"{table}\t{f.relative_to(src).as_posix()}\t{target}\t{st.st_size}\t{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


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
    midnight = typ.startswith("TIMESTAMP") and "TIME ZONE" not in typ  # pandas' and Arrow's dates
    if kind == "days":
        if typ == "DATE":
            return f"({q} - DATE '1970-01-01')::HUGEINT", ""
        if midnight:
            return f"({q}::DATE - DATE '1970-01-01')::HUGEINT", f"{q}::DATE::TIMESTAMP <> {q}"
        if typ == "VARCHAR":
            return f"(try_strptime({q}, '%Y-%m-%d')::DATE - DATE '1970-01-01')::HUGEINT", \
                f"try_strptime({q}, '%Y-%m-%d') IS NULL"
        raise TablesError(f"{where} is {typ}, expected a DATE (or a TIMESTAMP at midnight)")
    if kind == "yyyymmdd":
        if typ == "DATE":
            return f"(year({q}) * 10000 + month({q}) * 100 + day({q}))::HUGEINT", ""
        if midnight:
            return f"(year({q}) * 10000 + month({q}) * 100 + day({q}))::HUGEINT", f"{q}::DATE::TIMESTAMP <> {q}"
        if typ in INTEGER_TYPES:
            return f"{q}::HUGEINT", ""
        raise TablesError(f"{where} is {typ}, expected an integer yyyymmdd, a DATE or a TIMESTAMP at midnight")
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


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def convert_table(con: Any, src: Path, out: Path, table: str, columns: list[tuple[str, str]],
                  files: list[Path]) -> dict[str, Any]:
    import duckdb
    shown = files[0] if len(files) == 1 else src / table
    for f in files:  # each file's footer and schema on its own: a corrupt file named as itself
        try:
            con.execute("SELECT count(*) FROM parquet_schema(?)", [str(f)]).fetchone()
        except duckdb.Error as e:
            raise TablesError(f"{f}: not a readable Parquet file (table {table}): {_first_line(e)}") from None
    try:
        return _convert_table(con, src, out, table, columns, files, shown)
    except duckdb.Error as e:
        raise TablesError(f"{shown}: table {table} cannot be read: {_first_line(e)}") from None


def _convert_table(con: Any, src: Path, out: Path, table: str, columns: list[tuple[str, str]], files: list[Path],
                   shown: Path) -> dict[str, Any]:
    import numpy as np
    view = f"t_{table}"
    listing = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    # Hive partitions (key=value folders: DuckDB's PARTITION_BY, Spark's partitionBy): the keys are
    # columns whose values are in the folder names.
    # DuckDB guesses a key's type from its values and leaves "0.05" a string: a key that is a column the
    # suite reads is read as that column's kind takes it (numbers exact as DECIMAL, then checked whole
    # or hundredths as any DECIMAL column; dates as DATE; strings as strings).
    keys = {part.split("=", 1)[0] for f in files for part in f.relative_to(src).parts[1:-1] if "=" in part}
    kinds = dict(columns)
    # (A date key is left to DuckDB, which reads 1995-01-01 as a DATE and 19950101 as a number.)
    hive_type = {"key": "DECIMAL(38,9)", "int": "DECIMAL(38,9)", "cents": "DECIMAL(38,9)", "str": "VARCHAR"}
    typed = ", ".join("'" + k.replace("'", "''") + f"': '{hive_type[kinds[k.lower()]]}'" for k in sorted(keys)
                      if kinds.get(k.lower()) in hive_type)
    options = "hive_partitioning = " + ("true" + (f", hive_types = {{{typed}}}" if typed else "") if keys else "false")
    con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet([{listing}], {options})")
    described = con.execute(f"DESCRIBE {view}").fetchall()
    types = {str(r[0]).lower(): str(r[1]) for r in described}
    names = {str(r[0]).lower(): str(r[0]) for r in described}
    rows = int(con.execute(f"SELECT count(*) FROM {view}").fetchone()[0])
    if rows == 0:
        raise TablesError(f"{shown}: table {table} has no rows; every table needs at least one")
    entry: dict[str, Any] = {"rows": rows, "files": [str(f) for f in files], "columns": {}}
    for col, kind in columns:
        where = f"{shown}: table {table} column {col}"
        if col not in types:
            raise TablesError(f"{shown}: table {table} has no column {col} (it has {', '.join(names.values())})")
        real, typ = names[col], types[col]
        expr, bad = _expression(kind, real, typ, where)
        q = f'"{real}"'
        nulls = rows - int(con.execute(f"SELECT count({q}) FROM {view}").fetchone()[0])
        if nulls:
            raise TablesError(f"{where}: {nulls} NULL value(s), the first at row "
                              f"{_first_row(con, view, f'{q} IS NULL')}: the suite's columns have no NULL")
        checks = []
        if typ in FLOAT_TYPES:
            checks.append((f"isnan({q}) OR isinf({q})", "NaN or infinity"))
            checks.append((f"abs({q}{' * 100' if kind == 'cents' else ''}) >= 9223372036854775807.0",
                           "a value of 2^63 or more"))
        elif typ == "DATE" or typ.startswith("TIMESTAMP"):
            checks.append((f"isinf({q})", "NaN or infinity"))
        for cond, what in checks:
            n = int(con.execute(f"SELECT count(*) FROM {view} WHERE {cond}").fetchone()[0])
            if n:
                raise TablesError(f"{where} ({typ}) has {what}: {n} value(s), the first at row "
                                  f"{_first_row(con, view, cond)}")
        if bad:
            n = int(con.execute(f"SELECT count(*) FROM {view} WHERE {bad}").fetchone()[0])
            if n:
                what = {"cents": "has values finer than hundredths (the suite keeps cents and hundredths)",
                        "days": "has values that are not dates YYYY-MM-DD"}.get(kind, "has values that are not "
                                                                                       "whole numbers")
                if typ.startswith("TIMESTAMP"):
                    what = "has times of day other than midnight (the suite keeps dates)"
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


def _write(benchmark: str, src: Path, tables: dict[str, list[Path]], fp: str, out: Path) -> None:
    """The columns of src's tables into the empty folder out, the manifest last."""
    import duckdb
    con = duckdb.connect()
    manifest: dict[str, Any] = {"format": FORMAT, "benchmark": benchmark, "source": str(src), "fingerprint": fp,
                                "duckdb": duckdb.__version__, "tables": {}}
    for table, columns in TABLES[benchmark].items():
        manifest["tables"][table] = convert_table(con, src, out, table, columns, tables[table])
    if fingerprint(benchmark, src, source_tables(benchmark, src)) != fp:
        raise TablesError(f"{src}: its Parquet files changed while they were converted; convert again once they "
                          "are written")
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)


def _part(base: str) -> str:
    """The name of a folder this process converts into: its host and pid in the name, so that one
    left by a process that is gone (killed) is found and removed (_sweep)."""
    return f"{base}.part-{socket.gethostname()}-{os.getpid()}"


def _sweep(folder: Path, prefix: str) -> None:
    """Removes the folders `prefix*.part-HOST-PID` of this host's processes that are gone, and the lock
    files `prefix*.lock` that no process holds (a killed conversion's)."""
    host = socket.gethostname()
    with contextlib.suppress(OSError):
        for e in os.scandir(folder):
            if not e.name.startswith(prefix):
                continue
            if e.name.endswith(".lock"):
                _drop_lock(Path(e.path))
                continue
            if ".part-" not in e.name:
                continue
            h, _, pid = e.name.rsplit(".part-", 1)[1].rpartition("-")
            if h == host and pid.isdigit() and not pid_alive(int(pid)):
                shutil.rmtree(e.path, ignore_errors=True)


def _drop_lock(path: Path) -> None:
    """Removes the lock file `path` where no process holds it."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if path.stat().st_ino == os.fstat(fd).st_ino:
                path.unlink()
        finally:
            os.close(fd)


def _start(benchmark: str, src: str | Path) -> tuple[Path, dict[str, list[Path]], str]:
    if benchmark not in TABLES:
        raise TablesError(f"no Parquet tables for benchmark '{benchmark}' ({', '.join(TABLES)})")
    folder = Path(src).absolute()
    if not folder.is_dir():
        raise TablesError(f"{src}: no such folder")
    tables = source_tables(benchmark, folder)
    return folder, tables, fingerprint(benchmark, folder, tables)


def convert(benchmark: str, src: str | Path, out: str | Path) -> Path:
    """Converts the benchmark's tables under src into out (made if absent); returns the manifest's
    path. All or nothing: the columns are written into a folder of this process's own inside out and
    moved into out when complete; on an error out is left as it was (and not made)."""
    folder, tables, fp = _start(benchmark, src)
    out = Path(out).absolute()
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    _sweep(out, ".hdb-columns")
    part = out / _part(".hdb-columns")
    try:
        part.mkdir()
        _write(benchmark, folder, tables, fp, part)
        old = _manifest_files(out / MANIFEST)
        (out / MANIFEST).unlink(missing_ok=True)  # a half-moved folder never reads as a whole one
        new = {f.name for f in part.iterdir()}
        for name in sorted(new - {MANIFEST}):
            (part / name).replace(out / name)
        for name in old - new:
            (out / name).unlink(missing_ok=True)
        (part / MANIFEST).replace(out / MANIFEST)
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise
    shutil.rmtree(part, ignore_errors=True)
    return out / MANIFEST


def _manifest_files(path: Path) -> set[str]:
    """The column files a manifest names (none where it is absent or unreadable)."""
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
        return {str(c[k]) for t in m["tables"].values() for c in t["columns"].values()
                for k in ("file", "offsets") if k in c}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _cache_root() -> Path:
    tmp = os.environ.get("TMPDIR")
    root, where = (Path(tmp), f"TMPDIR={tmp}") if tmp else (Path("/tmp"), "/tmp (TMPDIR is not set)")
    fix = ("the columns converted from a folder of Parquet files are cached there: set TMPDIR to a writable "
           "folder, or convert once yourself (scripts/hdb/python -m hdb.parquet_tables BENCHMARK SRC COLS) and "
           "give --tables COLS")
    if not root.is_dir():
        raise TablesError(f"{where}: no such folder; {fix}")
    if not os.access(root, os.W_OK | os.X_OK):
        raise TablesError(f"{where}: not writable; {fix}")
    return root


def _converter_version() -> str:
    """This converter's own text and DuckDB's version: a changed converter makes new caches."""
    from importlib import metadata
    try:
        duck = metadata.version("duckdb")
    except metadata.PackageNotFoundError:
        duck = "none"
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest() + " duckdb " + duck


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive lock on the file `path` (made, and removed again by its holder)."""
    while True:
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = path.stat().st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its holder removed it between our open and our lock: take the new one
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def columns_for(benchmark: str, src: str | Path) -> tuple[Path, bool]:
    """The folder of columns `--tables SRC` loads, and whether it was converted now. SRC with a
    manifest and no Parquet tables: SRC. SRC with a manifest beside Parquet tables: SRC while the
    manifest's fingerprint is that of those files, else an error (stale columns). SRC of Parquet
    tables: $TMPDIR/hdb-columns-<benchmark>-<hash of SRC, the fingerprint and this converter>,
    converted when absent (under a lock: one process converts, the others wait and reuse it)."""
    if benchmark not in TABLES:
        raise TablesError(f"no Parquet tables for benchmark '{benchmark}' ({', '.join(TABLES)})")
    folder = Path(src).absolute()
    if not folder.is_dir():
        raise TablesError(f"{src}: no such folder")
    if (folder / MANIFEST).is_file():
        if not has_tables(benchmark, folder):
            return folder, False
        _, tables, fp = _start(benchmark, folder)
        try:
            recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("fingerprint")
        except (OSError, ValueError, AttributeError):
            recorded = None
        if recorded == fp:
            return folder, False
        raise TablesError(f"{src}: {MANIFEST} was made from other files than the Parquet files beside it now (stale "
                          "columns: a table's file was added, removed or changed since, or an older converter made "
                          f"it). Convert again (scripts/hdb/python -m hdb.parquet_tables {benchmark} {src} {src}), or "
                          "keep the columns in a folder of their own")
    if not has_tables(benchmark, folder):
        raise TablesError(f"{src}: no {MANIFEST} (scripts/hdb/parquet_tables.py writes it) and no Parquet tables ("
                          + ", ".join(f"{t}.parquet or {t}/" for t in TABLES[benchmark]) + ")")
    _, tables, fp = _start(benchmark, folder)
    root = _cache_root()
    key = hashlib.sha256(f"{folder}\n{fp}\n{_converter_version()}".encode()).hexdigest()[:16]
    name = f"hdb-columns-{benchmark}-{key}"
    cache = root / name
    _sweep(root, "hdb-columns-")
    if (cache / MANIFEST).is_file():
        return cache, False
    with _lock(root / f"{name}.lock"):
        if (cache / MANIFEST).is_file():
            return cache, False
        for stale in root.glob(f"{name}.part-*"):  # the lock's holder is the only one converting this
            shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)  # a folder with no manifest is no conversion
        part = root / _part(name)
        try:
            part.mkdir()
            _write(benchmark, folder, tables, fp, part)
            part.rename(cache)
        finally:
            shutil.rmtree(part, ignore_errors=True)
    return cache, True


RESULT = "hdb-columns: "  # the line of `cache` the executables read: RESULT + {"columns": DIR, "converted": bool}


def _interrupted(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds: a conversion's own folder is removed on the way out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    if argv[:1] == ["cache"]:
        ap = argparse.ArgumentParser(prog="parquet_tables cache", description="The folder of columns `--tables DIR` "
                                     "loads, converted into a cache folder under $TMPDIR when DIR holds Parquet "
                                     f"tables; printed as a line '{RESULT}{{\"columns\": ..., \"converted\": ...}}'")
        ap.add_argument("benchmark", choices=sorted(TABLES))
        ap.add_argument("dir", help="the folder given to --tables")
    else:
        ap = argparse.ArgumentParser(prog="parquet_tables", description=__doc__.split("\n\n")[0])
        ap.add_argument("benchmark", choices=sorted(TABLES))
        ap.add_argument("src", help="the folder of Parquet tables")
        ap.add_argument("out", help="where the columns and columns.json go (then: --tables OUT)")
    a = ap.parse_args(argv[1:] if argv[:1] == ["cache"] else argv)
    try:
        if argv[:1] == ["cache"]:
            folder, converted = columns_for(a.benchmark, a.dir)
            print(RESULT + json.dumps({"columns": str(folder), "converted": converted}))
            return 0
        path = convert(a.benchmark, a.src, a.out)
    except TablesError as e:
        print(f"parquet_tables: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"parquet_tables: error: {e} in {sys.executable}; scripts/setup installs duckdb in .venv",
              file=sys.stderr)
        return 2
    except OSError as e:  # the output cannot be written: no traceback; a folder that cannot be one is usage
        print(f"parquet_tables: error: {e}", file=sys.stderr)
        return 2 if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR,
                                errno.EEXIST, errno.EISDIR) else 1
    except KeyboardInterrupt:
        print("parquet_tables: interrupted", file=sys.stderr)
        return 130
    print(f"{path}: the {a.benchmark} tables of {a.src}; run with --tables {Path(a.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
