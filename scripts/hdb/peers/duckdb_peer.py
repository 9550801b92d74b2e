"""DuckDB as a peer (issue 16): the suite's ra primitives, tpch micro-kernels and ssb queries as SQL, on the
suite's own data, with all threads and with one, verified against the suite's reference and
recorded as backend `duckdb`, param `threads`, in two variants (docs/peers.md, issue 29): `sql_table`
(the answer materialised inside DuckDB, `CREATE TEMP TABLE answer AS <query>`: the same work as the
suite's CPU kernels, whose answer stays in their own memory) and `sql` (the query with
`fetchnumpy()`: the answer converted to NumPy arrays, what a Python user waits for).

Driver side (the peer interface, scripts/hdb/peers/__init__.py): `available(python)` and
`command(job)`. Peer side: `python -m hdb.peers.duckdb_peer BENCHMARK --json F --csv F
--build-dir B [the executables' options]` runs `<build>/tools/hdb-export BENCHMARK` with those options
(the cases, seeds and data of the suite, and its reference answers, as .npy files), then for every
case registers the inputs in DuckDB as NumPy columns (no text round trip, not timed), times the
query of each variant the harness's way with `SET threads = N` (the cold pass on a fresh connection,
warm-up passes, then passes until the stopping rule: record.Harness.measure), and compares the last
pass's answer with the reference. A case the suite skips is skipped with the suite's reason.
"""
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import contract
from . import exported, record
from .exported import any_variant, export_args, load_relation  # noqa: F401 - the names tests use

NAME = "duckdb"
BENCHMARKS = ("ra", "tpch", "ssb")
# The variants, in the order each case runs them, and what one timed pass of each is. `sql` keeps
# the id it had before `sql_table` came (issue 29): the same measurement, query + fetchnumpy().
TABLE, NUMPY = "sql_table", "sql"
VARIANTS = (TABLE, NUMPY)
TIMED = {
    TABLE: "CREATE TEMP TABLE answer AS <query>: DuckDB parses, plans and runs the query and materialises the "
           "whole answer in a temporary table in its own memory (the same work as the suite's CPU kernels, whose "
           "answer stays in theirs); dropping the previous pass's table and reading the last one back for the "
           "check (SELECT * FROM answer, fetchnumpy()) are outside the time",
    NUMPY: "<query> and fetchnumpy() of the whole answer: DuckDB parses, plans and runs the query and the whole "
           "answer is converted to NumPy arrays (what a Python user waits for; the transfer out of DuckDB included)",
}
COLD_NOTE = ("on a fresh DuckDB connection: a new duckdb.connect() (a new in-memory database: its buffer manager, "
             "allocator and threads started), SET threads and the inputs registered (untimed: extra.cold_connect_s), "
             "then the variant's timed pass, the first query that database runs; it warms nothing of the peer's own "
             "connection (kept from case to case), which then takes all --warmup passes and the timed ones")
TMP_PREFIX = "hdb-duckdb-"  # the export's folder under $TMPDIR: hdb-duckdb-<pid>-...


# --- the driver side ---------------------------------------------------------------------------------
def available(python):
    """Whether `python` imports duckdb and numpy; else (False, the reason)."""
    if not python:
        return False, "no project virtual environment (.venv/bin/python): run scripts/setup, which installs duckdb"
    try:
        p = subprocess.run([python, "-c", "import duckdb, numpy; print(duckdb.__version__)"], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"cannot run {python}: {e}"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["import failed"])[-1]
        return False, f"the duckdb Python package is not importable by {python} ({last}); scripts/setup installs it"
    return True, f"duckdb {p.stdout.strip()}"


_T0 = time.monotonic()  # the peer's start: the budget counts the export too


def command(job):
    budget = exported.budget_args(job)
    return [job.python, "-m", "hdb.peers.duckdb_peer", job.benchmark, "--json", job.json, "--csv", job.csv,
            "--build-dir", job.build_dir] + budget + list(job.args)


# --- the peer side -----------------------------------------------------------------------------------
def thread_counts(requested):
    """All cores (or --threads) and one: the two settings every case runs with."""
    n = requested or os.cpu_count() or 1
    return [n, 1] if n > 1 else [1]


# The SSB tables of the export (DIR/tables/*.npy), loaded once for the 13 queries that read them:
# resolved path -> {column: array}.
_SSB_TABLES: dict[str, dict[str, Any]] = {}


def ssb_tables(manifest, case_dir, numpy):
    """The exported SSB tables as name -> {column: contiguous uint32 array} (loaded once per file)."""
    out = {}
    for name, spec in manifest["tables"].items():
        path = str(Path(case_dir, spec["file"]).resolve())
        if path not in _SSB_TABLES:
            _SSB_TABLES[path] = dict(zip(spec["columns"], load_relation(case_dir, spec, numpy), strict=True))
        out[name] = _SSB_TABLES[path]
    return out


def ssb_answer(manifest, numpy):
    """The reference answer of an SSB case as a (columns, rows) int64 array: group values, then the sum."""
    width = len(manifest["group_by"]) + 1
    rows = manifest["answer"]["rows"]
    return numpy.array(rows, dtype=numpy.int64).reshape(len(rows), width).T


def prepare(manifest, case_dir, numpy):
    """(tables: name -> {column: array}, sql, order, want) of one exported case."""
    from . import duckdb_sql as q
    if manifest["benchmark"] == "ssb":
        sql, order = q.ssb_sql(manifest["query"], manifest["group_by"])
        return ssb_tables(manifest, case_dir, numpy), sql, order, ssb_answer(manifest, numpy)
    if manifest["benchmark"] == "ra":
        values = manifest["inputs"][0]["values"]
        tables = {}
        for name, spec in zip("ab", manifest["inputs"], strict=False):  # one input or two
            cols = load_relation(case_dir, spec, numpy)
            tables[name] = dict(zip(q.ra_columns(spec["values"]), cols, strict=False))
        pos = q.position_column(manifest["op"])
        if pos:  # row positions of `a` (a stable sort's tie order, unique's first tuple per key), not timed
            rows = len(tables["a"]["k"])
            tables["a"][pos] = numpy.arange(rows, dtype=numpy.uint32 if rows < 2 ** 32 else numpy.uint64)
        sql, order = q.ra_sql(manifest["op"], manifest["args"], values)
        return tables, sql, order, exported.reference(manifest, case_dir, numpy)
    tables, widths = {}, []
    for i, spec in enumerate(manifest["inputs"]):
        cols = load_relation(case_dir, spec, numpy)
        tables[f"t{i}"] = {f"c{j}": c for j, c in enumerate(cols)}
        widths.append(len(cols))
    sql, order = q.plan_sql(manifest["steps"], widths)
    return tables, sql, order, exported.reference(manifest, case_dir, numpy)


def _set_up(con, tables, threads):
    con.execute(f"SET threads = {int(threads)}")
    # DuckDB's default, set so that it holds: results without ORDER BY keep their input order, which
    # the suite's project, select and arithmetic guarantee and the check requires (duckdb_sql.ra_sql);
    # CREATE TABLE AS and the table's scan keep it too.
    con.execute("SET preserve_insertion_order = true")
    for name, cols in tables.items():
        con.register(name, cols)


def _timed_pass(con, sql, variant, last):
    """One timed pass of the variant on con: its seconds; the answer's columns in last['cols'] (NUMPY)."""
    if variant == TABLE:
        con.execute("DROP TABLE IF EXISTS answer")  # the previous pass's answer, untimed
        t0 = time.perf_counter()
        con.execute(f"CREATE TEMP TABLE answer AS {sql}")
        return time.perf_counter() - t0
    t0 = time.perf_counter()
    res = con.execute(sql).fetchnumpy()
    t = time.perf_counter() - t0
    last["cols"] = list(res.values())
    return t


def run_case(con, tables, sql, threads, harness, variant=NUMPY):
    """Times the query in one variant (TIMED) with `threads` threads: with --warmup N >= 1 the cold
    pass on a fresh connection (COLD_NOTE), then N warm-up passes (the cold pass warmed nothing of
    con) and the timed passes on con (record.Harness.measure). Returns (contract.Passes, the last
    timed pass's answer as columns, extra). Registering the inputs is never timed; the answer is
    materialised in every pass (TIMED)."""
    import duckdb
    if variant not in TIMED:
        raise ValueError(f"no DuckDB variant '{variant}' ({', '.join(VARIANTS)})")
    extra: dict[str, Any] = {"timed": TIMED[variant]}

    def cold_pass():
        t0 = time.perf_counter()
        fresh = duckdb.connect()
        try:
            _set_up(fresh, tables, threads)
            extra["cold_connect_s"] = time.perf_counter() - t0
            return _timed_pass(fresh, sql, variant, {})
        finally:
            fresh.close()

    _set_up(con, tables, threads)
    last: dict[str, list[Any]] = {}
    try:
        passes = harness.measure(lambda: _timed_pass(con, sql, variant, last), cold_pass, COLD_NOTE)
        if variant == TABLE:  # the check reads the last pass's table back, untimed
            last["cols"] = list(con.execute("SELECT * FROM answer").fetchnumpy().values())
    finally:
        if variant == TABLE:
            con.execute("DROP TABLE IF EXISTS answer")
        for name in tables:
            con.unregister(name)
    return passes, last["cols"], extra


def main(argv=None):
    a, rest = exported.parse_args("duckdb_peer", "DuckDB as a peer of the suite (docs/peers.md)", BENCHMARKS, argv)
    if a is None:
        return contract.EXIT_SKIP
    try:
        import duckdb
        import numpy
    except ImportError as e:
        print(f"duckdb_peer: error: {e} in {sys.executable}; scripts/setup installs duckdb in .venv", file=sys.stderr)
        return contract.EXIT_SKIP
    harness = record.Harness.from_args(a)
    exporter = exported.exporter_or_none("duckdb_peer", a.build_dir)
    if exporter is None:
        return contract.EXIT_SKIP
    return record.run_guarded("duckdb_peer", lambda state: _run(state, a, rest, harness, exporter, duckdb, numpy))


def _run(state, a, rest, harness, exporter, duckdb, numpy):
    counts = thread_counts(harness.threads)
    con = duckdb.connect()
    return exported.stream(
        "duckdb_peer", state, a.benchmark, rest, harness, exporter, TMP_PREFIX,
        lambda cases: record.Document(a.benchmark, NAME, _context(cases, harness, counts, duckdb, numpy),
                                      a.json, a.csv),
        lambda doc, case, work: run_exported_case(con, doc, case, work, counts, harness, numpy), a.budget_s, _T0)


def _context(cases, harness, counts, duckdb, numpy):
    repo = str(Path(__file__).absolute().parents[3])
    return record.context(repo, harness, f"duckdb {duckdb.__version__}", counts[0],
                          extra={"sizes": cases["context"].get("sizes", []), "peer": {
                              "name": NAME, "duckdb": duckdb.__version__, "numpy": numpy.__version__,
                              "threads": counts, "variants": list(VARIANTS), "timed": dict(TIMED),
                              "cold": COLD_NOTE,
                              "data": "hdb-export .npy columns registered as NumPy arrays"}})


def run_exported_case(con, doc, case, work, counts, harness, numpy):
    """One exported case, with each thread count and each variant: the suite's test, its typed params in
    their declared order (contract.declared_params: checked against the suite's id) and `threads`
    after them, its size; the document makes the id from these (contract.case_id)."""
    test = case["test"]
    suite_params = contract.declared_params(case)
    entries = [(n, v, dict(suite_params, threads=n)) for n in counts for v in VARIANTS]
    if exported.not_run(doc, case, [(v, p) for _, v, p in entries]):
        return
    case_dir, manifest = exported.manifest_of(work, case)
    from . import duckdb_sql as q
    try:
        tables, sql, order, want = prepare(manifest, case_dir, numpy)
    except q.NoSql as e:  # no SQL for this operation
        for _, variant, params in entries:
            doc.skipped(case, test, variant, params, str(e))
        return
    for n, variant, params in entries:
        try:
            passes, got, extra = run_case(con, tables, sql, n, harness, variant)
        except Exception as e:  # noqa: BLE001 - DuckDB's error is the case's failure
            record.stopped()
            doc.failed(case, test, variant, params, f"duckdb: {e}".splitlines()[0])
            continue
        equal, detail = q.compare(got, want, order)
        r = doc.ok(case, test, variant, params, passes, True, equal, detail, extra=dict(extra, sql=sql))
        cold = f", cold {passes.cold * 1e3:.3f} ms" if passes.cold is not None else ""
        print(f"{r['id']}: {'ok' if equal else 'FAILED ' + detail}, median "
              f"{contract.summarize(passes.times)['median'] * 1e3:.3f} ms over {len(passes.times)} passes{cold}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
