"""Reading a run directory: the manifest (run.json) and the hetdb-bench/2 JSON documents the
executables wrote (docs/results-schema.md, contract docs/results-schema.json), flattened into one
row per result; and summary.csv, which is the executables' own CSV files put end to end.

Every result is keyed by its `id` (made by the C++ case model, never rebuilt here) together with
benchmark, backend and rank; every other figure is read by its field name. Nothing is recovered
from a string: parameters are typed values in results[].params, the transfer mode is
results[].transfer."""
import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

from . import contract
from .config import HOST_EXECUTION_BACKENDS, HOST_EXECUTION_KINDS
from .contract import SCHEMA  # the one spelling of the schema string
from .util import Document, Row, StrPath, UsageError, absolute_path, write_atomically

MANIFEST = "run.json"
RAW_DIR = "raw"
SUMMARY_CSV = "summary.csv"
SCHEMA_FILE = str(absolute_path(__file__).parents[2] / "docs" / "results-schema.json")
# A document, or any read-only mapping a caller keeps it in: what processor_docs gives back.
_Doc = TypeVar("_Doc", bound=Mapping[str, Any])
# raw/<benchmark>-<backend>.json, raw/<benchmark>-<backend>-<run>.json (a second run of the same
# executable, [bench.<name>.large]), and under MPI the per-rank files <that>.rank<N>; a backend's
# name may hold a '-' (cuda-host). This names files the driver itself chose (runner.raw_paths); it
# is not a reading of any result.
_RAW_NAME = re.compile(r"^(?P<stem>[a-z0-9_]+(?:-[a-z0-9_]+){1,3})\.json(?:\.rank(?P<rank>\d+))?$")


def _glob(folder: StrPath, pattern: str) -> list[str]:
    """glob.glob(os.path.join(folder, pattern)) with pathlib: the paths as str, spelt from `folder`,
    hidden files (a name starting with '.', such as write_atomically's temporary files) left out as
    glob.glob leaves them out."""
    return [os.fspath(p) for p in Path(folder).glob(pattern) if not p.name.startswith(".")]


def load_manifest(run_dir: StrPath) -> Any:
    """run.json, or None when there is none; OSError or ValueError when it cannot be read."""
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def read_manifest(run_dir: StrPath) -> tuple[Any, str]:
    """(manifest or None, problem or ''): run.json for a report, which goes on without it when it is
    unreadable and names it."""
    try:
        m = load_manifest(run_dir)
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) else f"not JSON: {e}"
        return None, f"{MANIFEST}: cannot read ({why}): the executables' outcomes are not in this report"
    if m is not None and not (isinstance(m, dict) and isinstance(m.get("entries", []), list)):
        return None, f"{MANIFEST}: not the driver's manifest: the executables' outcomes are not in this report"
    return m, ""


def raw_files(run_dir: StrPath) -> list[str]:
    """The result files of a run: raw/<benchmark>-<backend>.json, or where an MPI run never wrote
    its merged document (it crashed), the per-rank files raw/<benchmark>-<backend>.json.rank<N>."""
    names: dict[str, list[tuple[str | None, str]]] = {}
    for p in sorted(_glob(Path(run_dir) / RAW_DIR, "*.json*")):
        m = _RAW_NAME.match(Path(p).name)
        if m:
            names.setdefault(m.group("stem"), []).append((m.group("rank"), p))
    out: list[str] = []
    for found in names.values():
        merged = [p for rank, p in found if rank is None]
        out += merged if merged else sorted((p for _, p in found), key=lambda p: int(p.rsplit("rank", 1)[1]))
    return sorted(out)


def csv_path_for(json_path: StrPath) -> str:
    """raw/x-y.json -> raw/x-y.csv, raw/x-y.json.rank2 -> raw/x-y.csv.rank2: where the driver told the
    executable to write its CSV (runner.csv_paths), beside the JSON."""
    name = Path(json_path).name
    m = _RAW_NAME.match(name)
    if not m:
        raise ValueError(f"not a raw result file name: {name}")
    return os.fspath(Path(json_path).with_name(f"{m.group('stem')}.csv"
                                               + (f".rank{m.group('rank')}" if m.group("rank") else "")))


class ForeignDocument(UsageError):
    """Valid JSON that is not a hetdb-bench/2 document (another schema version, another tool)."""


# What every result record must have for the report to read it (docs/results-schema.json has all).
RESULT_KEYS = ("id", "test", "variant", "size_bytes", "transfer", "status")


def _damage_hint(path: StrPath) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return ""
    if not data:
        return " (the file is empty)"
    if b"\0" in data:
        return " (it holds NUL bytes: written by two processes at once, or cut short)"
    return ""


# --- the figures of a result, checked once for every reader ----------------------------------------
# The smallest time a timer resolves (steady_clock and the device events: about a nanosecond). A time
# above 0 but below it is no measurement: a speed-up or a throughput made from it would be the
# timer's, so it is named and never used. 0 is a time that is not there (h2d_s of a CPU result).
MIN_TIME_S = 1e-9
STAT_TIMES = ("kernel_s", "total_s", "h2d_s", "d2h_s")   # stats.<k> and trials[].<k>: seconds
_STAT_SECONDS = ("median", "mean", "min", "max")          # the seconds of a stats.<k> block (and stddev, cv)
RATES = ("kernel_gbps", "total_gbps", "transfer_gbps", "elements_per_s", "moved_gbps", "pct_of_peak",
         "ceiling_gbps", "parity")                        # throughput.<k>
COUNTS = ("input", "min_moved", "transfer",              # bytes.<k>; the split of min_moved (issue 46),
          "read", "written", "random_read", "random_item")  # absent where the case declares none
BadFigure = tuple[str, str, Any, str]  # (result id, field, value, why)


def figure_problem(value: Any, time: bool = False, positive: bool = False) -> str:
    """'' when `value` is a usable figure of a result: a real number (not a bool, not a string),
    finite and not negative; `positive`: above 0; a `time` above 0 at least MIN_TIME_S. Else why not,
    in a few words. The one rule report, compare and the headline read figures by (check_figures)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"not a number (a {type(value).__name__})"
    if not math.isfinite(value):
        return "not finite"
    if value < 0:
        return "negative"
    if positive and value == 0:
        return "zero"
    if time and 0 < value < MIN_TIME_S:
        return f"below the timer's resolution ({MIN_TIME_S:g} s): no measurement"
    return ""


def result_figure_problems(r: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """[(field, value, why)] of every figure of one result record that cannot be used (figure_problem):
    its size and byte counts, its stats (every time, stddev and cv, and its phases'), every trial's
    times and its throughput; a block of the wrong shape is named too. An ok result must have taken
    time: a stats.total_s it has holds a median above 0. A figure that is absent (null) is no problem."""
    out: list[tuple[str, Any, str]] = []

    def check(field: str, value: Any, time: bool = False, positive: bool = False, need: bool = False) -> None:
        if value is None and not need:
            return
        why = figure_problem(value, time, positive)
        if why:
            out.append((field, value, why))

    def block(field: str, value: Any, kind: type = dict) -> Any:
        if value is None:
            return kind()
        if not isinstance(value, kind):
            out.append((field, value, f"not {'an object' if kind is dict else 'a list'}"))
            return kind()
        return value

    def stat(field: str, st: Any, time: bool = True) -> None:
        # The timer's resolution judges the median (what a speed-up is made of) and each trial below.
        st = block(field, st)
        for k in _STAT_SECONDS:
            check(f"{field}.{k}", st.get(k), time=time and k == "median")
        for k in ("stddev", "cv"):
            check(f"{field}.{k}", st.get(k))

    size = r.get("size_bytes")
    check("size_bytes", size, need=True)
    if isinstance(size, float) and math.isfinite(size) and not size.is_integer():
        out.append(("size_bytes", size, "not a whole number of bytes"))
    check("elements", r.get("elements"))
    by = block("bytes", r.get("bytes"))
    for k in COUNTS:
        check(f"bytes.{k}", by.get(k))
    stats = block("stats", r.get("stats"))
    for k in STAT_TIMES:
        stat(f"stats.{k}", stats.get(k))
    for name, st in block("stats.phases_s", stats.get("phases_s")).items():
        stat(f"stats.phases_s.{name}", st, time=False)
    total = stats.get("total_s")
    if r.get("status") == "ok" and isinstance(total, dict):  # a block of another shape is named above
        check("stats.total_s.median", total.get("median"), time=True, positive=True, need=True)
    for i, t in enumerate(block("trials", r.get("trials"), list)):
        t = block(f"trials[{i}]", t)
        for k in STAT_TIMES:
            check(f"trials[{i}].{k}", t.get(k), time=True)
        for name, v in block(f"trials[{i}].phases_s", t.get("phases_s")).items():
            check(f"trials[{i}].phases_s.{name}", v)
    tp = block("throughput", r.get("throughput"))
    for k in RATES:
        check(f"throughput.{k}", tp.get(k))
    # The pass protocol's cold pass and compilation, and the energy (issue 29): read by the report too.
    protocol = block("protocol", r.get("protocol"))
    cold = block("protocol.cold", protocol.get("cold"))
    for k in STAT_TIMES:
        check(f"protocol.cold.{k}", cold.get(k), time=True)
    check("protocol.compile_s", protocol.get("compile_s"))
    energy = block("energy", r.get("energy"))
    for k in ("joules", "joules_per_pass", "watts"):
        check(f"energy.{k}", energy.get(k))
    # What the kernels ask of memory under host execution (--traffic): read by the report too.
    traffic = block("traffic", r.get("traffic"))
    for k, v in traffic.items():
        if k not in ("device_model", "access_width"):
            check(f"traffic.{k}", v)
    for k, v in block("traffic.access_width", traffic.get("access_width")).items():
        check(f"traffic.access_width.{k}", v)
    model = block("traffic.device_model", traffic.get("device_model"))
    for k in ("l2_bytes", "copy_gbps", "launch_s"):
        check(f"traffic.device_model.{k}", model.get(k))
    # One problem a field (a total of 0 would be named twice otherwise).
    first: dict[str, tuple[str, Any, str]] = {}
    for x in out:
        first.setdefault(x[0], x)
    return list(first.values())


def check_figures(doc: Document) -> list[BadFigure]:
    """Every result of a document whose figures cannot be used (result_figure_problems) is taken out
    of it (of each rank's results under MPI), so that no reader -- report, compare, the headline,
    scaling, targets -- turns a negative, NaN, string or sub-nanosecond time into a figure; a document
    ceiling (ceiling.memory_copy_gbps) that is no usable figure is dropped likewise (0: none measured). Returns what was
    taken out, (id, field, value, why) per bad figure; load_doc keeps it in doc['_bad_figures'] and
    bad_figure_lines names it."""
    bad: list[BadFigure] = []
    ceiling = doc.get("ceiling")
    if isinstance(ceiling, dict):
        for k in ("memory_copy_gbps", "spread"):  # memory_copy_gbps 0: none measured (a peer's document)
            why = figure_problem(ceiling[k]) if ceiling.get(k) is not None else ""
            if why:
                bad.append(("(document)", f"ceiling.{k}", ceiling.pop(k), why))
        samples = ceiling.get("samples")
        if isinstance(samples, list):  # the copy ceiling measured again (issue 51): a bad sample is dropped
            keep = []
            for i, smp in enumerate(samples):
                gbps = smp.get("gbps") if isinstance(smp, dict) else smp
                why = figure_problem(gbps, positive=True)
                if why:
                    bad.append(("(document)", f"ceiling.samples[{i}].gbps", gbps, why))
                else:
                    keep.append(smp)
            samples[:] = keep
    ranks = (doc.get("mpi") or {}).get("ranks") if isinstance(doc.get("mpi"), dict) else None
    lists = [e["results"] for e in ranks if isinstance(e, dict) and isinstance(e.get("results"), list)] \
        if ranks else []
    for records in [doc["results"], *lists]:
        keep = []
        for r in records:
            found = result_figure_problems(r)
            if found:
                rid = r.get("id") or f"{r.get('test', '?')}/{r.get('variant', '?')}"  # a gate's document: no id
                bad += [(str(rid), f, v, why) for f, v, why in found]
            else:
                keep.append(r)
        records[:] = keep
    return bad


def checked(doc: Document) -> Document:
    """The document with its unusable figures taken out (check_figures), once: what it took out is kept
    in doc['_bad_figures']. load_doc and rows_of call it, so a document made in memory is checked too."""
    if "_bad_figures" not in doc:
        doc["_bad_figures"] = check_figures(doc)
    return doc


def bad_figure_lines(docs: Iterable[Mapping[str, Any]], run_dir: StrPath | None = None) -> list[str]:
    """One line per case left out for its figures (check_figures): the file (relative to run_dir),
    the case id, its first bad field, the value and why, and how many more of its figures are bad."""
    out = []
    for d in docs:
        path = str(d.get("_path", ""))
        shown = os.path.relpath(path, run_dir) if path and run_dir is not None and Path(path).is_absolute() == \
            Path(run_dir).is_absolute() else path
        cases: dict[str, list[tuple[str, Any, str]]] = {}
        for rid, field, value, why in d.get("_bad_figures") or []:
            fields = cases.setdefault(rid, [])
            if all(f != field for f, _, _ in fields):  # the same field of every rank under MPI: once
                fields.append((field, value, why))
        for rid, fields in cases.items():
            field, value, why = fields[0]
            more = f" (and {len(fields) - 1} more of its figures)" if len(fields) > 1 else ""
            out.append(f"{shown + ': ' if shown else ''}{rid}: {field} = {value!r}: {why}{more}"
                       + ("; not used" if rid == "(document)" else "; the case is left out"))
    return out


def load_doc(path: StrPath) -> Document:
    """One executable's results; a document that is not hetdb-bench/2 is an error naming the file:
    ForeignDocument for another kind of document, UsageError for a broken one."""
    try:
        with Path(path).open(encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"{path}: cannot read results JSON: {e.strerror}") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise UsageError(f"{path}: cannot read results JSON: {e}{_damage_hint(path)}") from None
    if not isinstance(doc, dict):
        raise ForeignDocument(f"{path}: not a {SCHEMA} results document (not a JSON object)")
    if doc.get("schema") != SCHEMA:
        got = f"schema {doc['schema']!r}" if "schema" in doc else "no 'schema' key"
        raise ForeignDocument(f"{path}: not a {SCHEMA} results document ({got}); rerun the executable that wrote it "
                              f"to get a {SCHEMA} document")
    for k in ("benchmark", "backend", "results"):
        if k not in doc:
            raise UsageError(f"{path}: lacks '{k}'")
    if not isinstance(doc["results"], list):
        raise UsageError(f"{path}: 'results' is not a list")
    try:
        for _, _, records in _rank_parts(doc):
            for i, r in enumerate(records if isinstance(records, list) else [None]):
                if not isinstance(r, dict) or any(k not in r for k in RESULT_KEYS):
                    raise UsageError(f"{path}: result {i} is not a result record (it needs "
                                     f"{', '.join(RESULT_KEYS)})")
        m = _RAW_NAME.match(Path(path).name)
        doc["_rank"] = int(m.group("rank")) if m and m.group("rank") else \
            doc.get("context", {}).get("mpi", {}).get("rank", 0)
    except (AttributeError, TypeError) as e:
        raise UsageError(f"{path}: not shaped as {SCHEMA} ({e})") from None
    doc["_path"] = path
    checked(doc)
    return doc


def is_driver_manifest(m: Any) -> bool:
    """run.json as the driver writes it: an object with a run_id and a list of entries."""
    return isinstance(m, dict) and isinstance(m.get("run_id"), str) and isinstance(m.get("entries"), list)


def not_a_run(run_dir: StrPath) -> str:
    """Why run_dir is not a run ('' when it is one), for scripts/report and scripts/compare, which
    write into a run (report.md, summary.csv, plots/) and must never do that to another folder. A run
    holds the driver's run.json, or a raw/ folder with result files (raw/<benchmark>-<backend>.json,
    what a copied or hand-made run has), or both run.json (damaged) and raw/."""
    if not Path(run_dir).is_dir():
        return "no such directory" if not Path(run_dir).exists() else "not a directory"
    try:
        if is_driver_manifest(load_manifest(run_dir)):
            return ""
    except (OSError, ValueError):
        pass  # a damaged run.json: raw/ decides
    raw = Path(run_dir) / RAW_DIR
    if raw_files(run_dir) or (raw.is_dir() and (Path(run_dir) / MANIFEST).is_file()):
        return ""
    runs = sorted(d.name for d in Path(run_dir).iterdir() if (d / MANIFEST).is_file())
    return (f"not a run: it has no {MANIFEST} of scripts/run-all and no {RAW_DIR}/<benchmark>-<backend>.json"
            + (f"; it holds runs, e.g. {Path(run_dir) / runs[-1]}" if runs else ""))


def check_run_dir(run_dir: StrPath) -> None:
    """A usage error naming why run_dir is not a run; nothing has been written there."""
    why = not_a_run(run_dir)
    if why:
        raise UsageError(f"{run_dir}: {why}" + ("" if why.startswith("no such") else
                                                  " (nothing was written there)"))


def opencl_implementation(doc: Document) -> str:
    """'pocl', 'intel', 'nvidia', ... for a document of the OpenCL backend (context.device.implementation;
    '' in documents older than that field), '' for any other backend."""
    dev = (doc.get("context") or {}).get("device") or {}
    return dev.get("implementation", "") if dev.get("kind") == "opencl" else ""


def separate_implementations(docs: list[Document]) -> list[Document]:
    """Documents of one run (or one combined run) from two OpenCL implementations (PoCL and Intel's on
    one CPU, say) are two processors: their backend becomes 'opencl-<implementation>' in memory, so
    that every table, figure, headline and de-duplication keeps them apart. A run with one
    implementation keeps 'opencl', so that compare still pairs a PoCL run with an Intel run."""
    impls = {opencl_implementation(d) for d in docs if d.get("backend") == "opencl"}
    if len(impls) > 1:
        for d in docs:
            if d.get("backend") == "opencl":
                d["backend"] = f"opencl-{opencl_implementation(d) or 'unnamed'}"
    return docs


# A document's key for the host's last-level cache its run measured (run.json's beyond_caches.llc,
# caches.measure_llc), where it did: plausibility counts a host result's working set against it, not
# against the context.llc_bytes the machine reports (VMs misreport it).
RUN_LLC = "_run_llc_bytes"


def with_run_caches(run_dir: StrPath, docs: list[Document]) -> list[Document]:
    """The documents of a run, each with the LLC its run measured (RUN_LLC), where it measured one."""
    from .caches import read_record  # caches reads configurations, which need nothing of this module
    llc = read_record(run_dir).get("llc")
    measured = llc.get("bytes") if isinstance(llc, dict) and llc.get("measured_bytes") else None
    if isinstance(measured, int) and measured > 0:
        for d in docs:
            d[RUN_LLC] = measured
    return docs


def load_docs(run_dir: StrPath) -> list[Document]:
    """Every document of a run; the first one that cannot be used is an error (UsageError)."""
    if not Path(run_dir).is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    return with_run_caches(run_dir, separate_implementations([load_doc(p) for p in raw_files(run_dir)]))


def load_docs_tolerant(run_dir: StrPath) -> tuple[list[Document], list[str], list[str]]:
    """(docs, broken, foreign): every usable document, and one message per file that is not, so one
    bad file never hides the others' results. broken: unreadable, not JSON, cut short, lacking a
    required key; foreign: valid JSON of another kind (another schema version)."""
    if not Path(run_dir).is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    docs: list[Document] = []
    broken: list[str] = []
    foreign: list[str] = []
    for p in raw_files(run_dir):
        rel = os.path.relpath(p, run_dir)
        try:
            docs.append(load_doc(p))
        except ForeignDocument as e:
            foreign.append(str(e).replace(p, rel, 1) + ": its results are not in this report")
        except UsageError as e:
            broken.append(str(e).replace(p, rel, 1) + ": its results are not in this report")
    return with_run_caches(run_dir, separate_implementations(docs)), broken, foreign


def incomplete(doc: Document) -> bool:
    """True for a document its executable marked partial (complete: false): it was still running,
    or was interrupted or stopped by an error (incomplete_reason says which)."""
    return doc.get("complete") is False


def incomplete_text(doc: Document) -> str:
    """'complete: false, interrupted by signal 15': how a partial document is named in a report."""
    reason = doc.get("incomplete_reason")
    return "complete: false" + (f", {reason}" if isinstance(reason, str) and reason else "")


def interrupted_copies(run_dir: StrPath) -> list[str]:
    """raw/<file>.interrupted-N: what an interrupted attempt measured, kept when --resume reran it."""
    return sorted(os.path.relpath(p, run_dir) for p in _glob(Path(run_dir) / RAW_DIR, "*.interrupted-*"))


def params_text(params: dict[str, Any] | None) -> str:
    """'dist=uniform;selectivity=0.5': parameters for display (tables, labels), never for matching;
    the CSV's params column as the executables write it (contract.params_text: by name, each value
    as an id prints it)."""
    return contract.params_text(params) if params else ""


def value_text(v: Any) -> str:
    """0.5 -> '0.5', 3 -> '3', 3.0 -> '3', True -> 'true', 'u32' -> 'u32': a parameter's value as
    the ids print it (contract.param_text); anything that is no parameter value (None: a figure's
    rows without that parameter) as str() writes it."""
    return contract.param_text(v) if isinstance(v, (str, int, float)) else str(v)


def differing_keys(param_dicts: Iterable[Mapping[str, Any]]) -> list[str]:
    """The parameters that tell rows apart: of the keys of `param_dicts` (one dict a row), in the order
    they first appear, those whose values (as value_text prints them) are not the same in every row; a
    key one row lacks differs from a row that has it."""
    dicts = list(param_dicts)
    keys = dict.fromkeys(k for p in dicts for k in p)
    return [k for k in keys if len({value_text(p[k]) if k in p else None for p in dicts}) > 1]


def params_key(params: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable, order-independent form of typed parameters, for matching rows of different
    variants or backends on equal inputs."""
    return tuple(sorted(params.items()))


def _stat(r, which, field="median"):
    return r.get("stats", {}).get(which, {}).get(field)


def _rank_parts(doc):
    """(rank, device name, results) for each rank: an EP-mode MPI document (docs/results-schema.md)
    carries every rank's results under mpi.ranks; any other document is one rank."""
    ctx = doc.get("context", {})
    device = ctx.get("device", {}).get("name", doc["backend"])
    ranks = (doc.get("mpi") or {}).get("ranks")
    if ranks:
        return [(e.get("rank", i), e.get("device") or device, e.get("results", [])) for i, e in enumerate(ranks)]
    return [(doc.get("_rank", 0), device, doc["results"])]


def rows_of(doc: Document) -> list[Row]:
    """One flat dict per result (per rank under MPI); figures absent for skipped/failed results are None.
    A result with a figure that cannot be used is not among them (checked)."""
    checked(doc)
    ctx = doc.get("context", {})
    across = {r["id"]: r["across_ranks"] for r in doc["results"] if r.get("across_ranks")}
    out = []
    for rank, device, records in _rank_parts(doc):
        for r in records:
            row = _row(doc, ctx, rank, device, r)
            if rank == 0 and not row["across_ranks"]:
                row["across_ranks"] = across.get(r["id"])
            out.append(row)
    return out


def host_execution_doc(doc: Mapping[str, Any]) -> bool:
    """True for a document of host execution (the CUDA sources run on the CPU, config.py
    HOST_EXECUTION_BACKENDS): by its backend, or by context.device.kind should a backend of another
    name ever write one. Its times are an emulation's, never a processor's."""
    kind = ((doc.get("context") or {}).get("device") or {}).get("kind")
    return doc.get("backend") in HOST_EXECUTION_BACKENDS or kind in HOST_EXECUTION_KINDS


def host_execution(row: Row) -> bool:
    """True for a result of host execution (row['host_execution'], or its backend for a row made
    elsewhere): verified for correctness, but its times are no processor's."""
    return bool(row.get("host_execution")) or row.get("backend") in HOST_EXECUTION_BACKENDS


def processor_rows(rows: Iterable[Row]) -> list[Row]:
    """The rows measured on a real processor: every row but those of host execution. What the
    headline, the figures, the ceilings, the benchmark tables, compare, scaling and targets read."""
    return [r for r in rows if not host_execution(r)]


def processor_docs(docs: Iterable[_Doc]) -> list[_Doc]:
    """The documents of real processors (host execution left out): what figure footers and the
    device tables name."""
    return [d for d in docs if not host_execution_doc(d)]


def _ceiling_gbps(doc, r):
    """The ceiling a result's pct_of_peak is against, by the one rule of contract.result_ceiling: its
    throughput.ceiling_gbps, the sample measured nearest to it (issue 51), else the document's
    ceiling.memory_copy_gbps (a document written before issue 51, a peer's, a result without
    throughput); None when it has neither."""
    run = (doc.get("ceiling") or {}).get("memory_copy_gbps")
    c = contract.result_ceiling(r, math.nan if run is None else run)
    return None if math.isnan(c) else c


def _ceiling_pattern(r):
    """The name of the ceiling a result's pct_of_peak is against (throughput.ceiling_pattern, issue 46:
    'read', 'copy..read (75% read)', 'copy (reads and writes undeclared)', ...; '' when it has no
    ceiling); None for a result that records none (written before issue 46, a peer's), whose ceiling
    is the copy ceiling."""
    p = (r.get("throughput") or {}).get("ceiling_pattern")
    return p if isinstance(p, str) else None


def _pct_of_stated(ctx, r):
    """% of the device's stated memory rate (context.device.memory_theoretical_gbps: NVML's memory
    clock x bus width, as nvbench's BWUtil) at the declared bytes moved, beside the % of the measured
    ceiling (issue 46); None where the device states none (CPUs, OpenCL devices) or nothing moved."""
    stated = ((ctx.get("device") or {}).get("memory_theoretical_gbps")) if isinstance(ctx, dict) else None
    moved = (r.get("throughput") or {}).get("moved_gbps")
    if not isinstance(stated, (int, float)) or not isinstance(moved, (int, float)) or stated <= 0 or moved <= 0:
        return None
    return 100.0 * moved / stated


def _row(doc, ctx, rank, device, r):
    tp = r.get("throughput", {})
    b = r.get("bytes", {})
    v = r.get("verification", {})
    params = dict(r.get("params", {}))
    phases = {k: s.get("median") for k, s in r.get("stats", {}).get("phases_s", {}).items()}
    return {
        "id": r["id"],
        "benchmark": doc["benchmark"],
        "backend": doc["backend"],
        "implementation": opencl_implementation(doc),
        "host_execution": host_execution_doc(doc),
        "rank": rank,
        "device": device,
        "host": ctx.get("host", ""),
        "path": doc.get("_path", ""),
        "test": r["test"],
        "variant": r["variant"],
        "params": params,
        "params_text": params_text(params),
        "size_bytes": int(r["size_bytes"]),
        "transfer": r["transfer"],
        "status": r["status"],
        "checked": bool(v.get("checked")),
        "verified": bool(v.get("verified")),
        "reason": r.get("reason", ""),
        "passes": len(r.get("trials", [])),
        "trials": r.get("trials", []),  # every timed pass: the rank test of compare, the headline's intervals
        "protocol": r.get("protocol"),  # the cold pass, hot or warm timed passes (docs/methodology.md)
        "energy": r.get("energy"),
        "traffic": r.get("traffic"),  # --traffic on cuda-host: what the kernels ask of memory (a model, no time)
        "kernel_median_s": _stat(r, "kernel_s"),
        "kernel_cv": _stat(r, "kernel_s", "cv"),
        "total_median_s": _stat(r, "total_s"),
        "total_cv": _stat(r, "total_s", "cv"),
        "h2d_median_s": _stat(r, "h2d_s"),
        "h2d_cv": _stat(r, "h2d_s", "cv"),
        "d2h_median_s": _stat(r, "d2h_s"),
        "d2h_cv": _stat(r, "d2h_s", "cv"),
        "phases": [dict(p) for p in r.get("phases", [])],
        "phases_median_s": phases,
        "kernel_gbps": tp.get("kernel_gbps"),
        "total_gbps": tp.get("total_gbps"),
        "transfer_gbps": tp.get("transfer_gbps"),
        "elements_per_s": tp.get("elements_per_s"),
        "moved_gbps": tp.get("moved_gbps"),
        "pct_of_peak": tp.get("pct_of_peak"),
        "ceiling_gbps": _ceiling_gbps(doc, r),
        "ceiling_pattern": _ceiling_pattern(r),
        "pct_of_stated": _pct_of_stated(ctx, r),
        "parity": tp.get("parity"),
        "elements": r.get("elements", 0),
        "input_bytes": b.get("input", 0),
        "min_moved_bytes": b.get("min_moved", 0),
        "transfer_bytes": b.get("transfer", 0),
        "extra": r.get("extra", {}) or {},
        "across_ranks": r.get("across_ranks"),
    }


def all_rows(docs: Sequence[Document]) -> list[Row]:
    """Every document's rows; a (benchmark, backend, rank, id) seen twice keeps its last row. Each row
    carries `above_ceiling`: its figures above the physical ceilings of the run (plausibility.py)."""
    rows: dict[tuple[Any, ...], Row] = {}
    for _d, r in checked_pairs(docs):
        key = match_key(r)
        rows.pop(key, None)
        rows[key] = r
    out = list(rows.values())
    contradict(out)
    return out


# A peer's own axis (the peer's thread count), not part of the operation a backend's case ran.
PEER_AXES = ("threads",)


def contradict(rows: Sequence[Row]) -> list[Row]:
    """A peer answers the suite's cases from the suite's data and checks its answer against the same
    reference the backends' answers are verified against (docs/peers.md). Where a peer's answer
    differs (a failed result, checked and not verified), the reference or the data is in question as
    much as the peer: every backend result of that case (benchmark, test, size, and the peer's
    params but its own axes) that was marked verified is marked not verified, with
    row['contradicted_by'] naming the peer's result and why. So nothing a peer contradicts counts as
    verified: the tables say so, and the headline, the figures, compare (which names them), targets
    and scaling leave it out. Returns the rows marked."""
    from .peers import known
    peer_names = set(known())
    marked = []
    for p in rows:
        if p["backend"] not in peer_names or p["status"] != "failed" or not p["checked"] or p["verified"]:
            continue
        op = {k: v for k, v in p["params"].items() if k not in PEER_AXES}
        for r in rows:
            if (r["backend"] in peer_names or r.get("contradicted_by") or r["status"] != "ok" or not r["verified"]
                    or (r["benchmark"], r["test"], r["size_bytes"]) != (p["benchmark"], p["test"], p["size_bytes"])
                    or any(r["params"].get(k) != v for k, v in op.items())):
                continue
            r["verified"] = False
            r["contradicted_by"] = f"{p['backend']}'s answer ({p['id']}) differs: {p['reason']}"
            marked.append(r)
    return marked


def checked_pairs(docs: Sequence[Document]) -> list[tuple[Document, Row]]:
    """[(document, row)] of every document's rows, each row checked against the physical ceilings of
    the run (plausibility.annotate: row['above_ceiling'])."""
    from . import plausibility  # it reads rows as this module makes them
    pairs = [(d, r) for d in docs for r in rows_of(d)]
    plausibility.annotate([(r, d) for d, r in pairs], docs)
    return pairs


def duplicates(docs: Iterable[Document]) -> list[str]:
    """'bench-backend rank R: id' for every id a document (or a rank of it) holds more than once."""
    out = []
    for d in docs:
        for rank, _, records in _rank_parts(d):
            seen: set[str] = set()
            for r in records:
                if r["id"] in seen:
                    out.append(f"{d['benchmark']}-{d['backend']} rank {rank}: {r['id']}")
                seen.add(r["id"])
    return out


def match_key(row: Row) -> tuple[Any, Any, Any, Any]:
    """What identifies one measurement across runs and files (scripts/compare, de-duplication)."""
    return (row["benchmark"], row["backend"], row["rank"], row["id"])


def series_key(row: Row) -> tuple[Any, ...]:
    """One line of a figure or one line of a report table: everything that identifies a case but
    its size, read by name (benchmark, test, backend, variant, transfer, typed parameters)."""
    return (row["benchmark"], row["test"], row["backend"], row["variant"], row["transfer"],
            params_key(row["params"]), row["checked"])


def id_without_size(row: Row) -> str:
    """The case id without its '@SIZE': what names one line drawn against input size."""
    return row["id"].rpartition("@")[0] if row["size_bytes"] > 0 and "@" in row["id"] else row["id"]


def series_label(row: Row) -> str:
    """'opencl: select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]': a line of a figure is
    named by its backend and case id (without the size, which is the x axis), exactly as --list and
    --only spell it."""
    return f"{row['backend']}: {id_without_size(row)}" + ("" if row["checked"] else " not verified")


def variant_label(row: Row, drop: Iterable[str | None] = (), with_test: bool = False, with_backend: bool = True) -> str:
    """'opencl: tuned[type=u32,transfer=pinned]': a bar or line of a figure whose test (and size)
    the figure names elsewhere, in the case id's spelling: the parameters that vary in the figure
    (row['label_params'] when the figure fixed some, less `drop`, the figure's own axis), then the
    transfer mode. with_backend=False: without 'opencl: ' (a table with a backend column)."""
    params = row["label_params"] if "label_params" in row else row["params"]
    shown = {k: v for k, v in params.items() if k not in drop}
    label = contract.case_id(row["test"], row["variant"], shown, row["transfer"])  # no size: test/variant[...]
    if not with_test:
        label = label[len(row["test"]) + 1:]
    return (f"{row['backend']}: " if with_backend else "") + label + ("" if row["checked"] else " not verified")


def transfer_only(row: Row) -> bool:
    """A result whose time is all bus transfer (bus h2d/d2h): no kernel time; its bandwidth is
    throughput.transfer_gbps, never a kernel figure."""
    return not row["kernel_median_s"] and bool(row["transfer_gbps"])


def headline_gbps(row: Row) -> float | None:
    """The GB/s a figure or a ceiling table quotes: the bus bandwidth of a transfer-only result,
    else the kernel throughput."""
    return row["transfer_gbps"] if transfer_only(row) else row["kernel_gbps"]


def headline_cv(row: Row) -> float | None:
    """The noise (CV) of the time behind headline_gbps."""
    if transfer_only(row):
        return row["h2d_cv"] if row["h2d_median_s"] else row["d2h_cv"]
    return row["kernel_cv"]


def verification_text(row: Row) -> str:
    """'yes', 'no', or 'not verified' for a result measured under --no-verify; 'no: ...' naming the
    peer whose answer contradicts the reference it was verified against (contradict)."""
    if not row["checked"]:
        return "not verified"
    if row.get("contradicted_by"):
        return f"no: {row['contradicted_by']}"
    return "yes" if row["verified"] else "no"


def csv_columns() -> list[str]:
    """The one CSV column list: x-csv-columns of docs/results-schema.json."""
    with Path(SCHEMA_FILE).open() as f:
        return list(json.load(f)["x-csv-columns"])


def summary_driver_columns() -> list[str]:
    """The driver's own columns of summary.csv, after the executables': x-summary-csv-columns of
    docs/results-schema.json (above_ceiling, key, then the medians' intervals: MEDIAN_INTERVAL_COLUMNS)."""
    with Path(SCHEMA_FILE).open() as f:
        return list(json.load(f)["x-summary-csv-columns"])


def summary_columns() -> list[str]:
    """summary.csv's columns: the executables' (x-csv-columns), then the driver's own
    (summary_driver_columns)."""
    return csv_columns() + summary_driver_columns()


# The medians' intervals in summary.csv: column -> (the median it brackets, the trials' field, which
# end). A median's column left empty (a figure that does not apply, a skipped case) leaves its
# interval empty.
MEDIAN_INTERVAL_COLUMNS = {
    "kernel_median_lo_s": ("kernel_median_s", "kernel_s", 0),
    "kernel_median_hi_s": ("kernel_median_s", "kernel_s", 1),
    "total_median_lo_s": ("total_median_s", "total_s", 0),
    "total_median_hi_s": ("total_median_s", "total_s", 1),
}
MEDIAN_CONFIDENCE = 0.95


def median_interval_ranks(n: int, confidence: float = MEDIAN_CONFIDENCE) -> tuple[int, int] | None:
    """(j, n + 1 - j): the 1-based ranks of the sorted trials that bound the distribution-free
    `confidence` interval of their median (the binomial method: any continuous distribution, trials
    independent): the pair nearest the middle whose coverage, 1 - 2 P(Binom(n, 1/2) <= j - 1), is
    still at least `confidence`. None where even (1, n) covers less (n < 6 at 95 %: 1 - 2/2^5 is
    0.9375). Exact: the tail is summed in integers (P = sum C(n, i) / 2^n)."""
    if n < 1:
        return None
    # coverage >= confidence  <=>  2 * tail / 2^n <= 1 - confidence, in exact fractions (0.95 as 19/20)
    miss = 1 - Fraction(confidence).limit_denominator(10**6)
    best, tail = 0, 0
    for j in range(1, (n + 1) // 2 + 1):
        tail += math.comb(n, j - 1)  # sum over i <= j - 1 of C(n, i)
        if Fraction(2 * tail, 2**n) > miss:
            break
        best = j
    return (best, n + 1 - best) if best else None


def median_interval(values: Sequence[float], confidence: float = MEDIAN_CONFIDENCE) -> tuple[float, float] | None:
    """(low, high): the distribution-free `confidence` interval of the median of `values` (the
    trials' times), the order statistics at median_interval_ranks; None with too few values."""
    ranks = median_interval_ranks(len(values), confidence)
    if ranks is None:
        return None
    v = sorted(values)
    return v[ranks[0] - 1], v[ranks[1] - 1]


def _driver_cells(row: Row, above: str) -> dict[str, str]:
    """summary.csv's driver cells of one result but `key` (_flagged_rows makes it): above_ceiling
    (`above`) and the medians' intervals (MEDIAN_INTERVAL_COLUMNS) from its trials; an interval is
    empty for a case that is not ok, a median that does not apply (0, as the JSON writes a bus copy's
    kernel time: contract.NOT_APPLICABLE_WHEN_ZERO) or too few trials."""
    cells = {"above_ceiling": above}
    for col, (median, field, end) in MEDIAN_INTERVAL_COLUMNS.items():
        ci = None
        if row["status"] == "ok" and row[median]:
            ci = median_interval([float(t.get(field, 0.0)) for t in row.get("trials") or ()])
        cells[col] = contract.csv_field(ci[end]) if ci else ""
    return cells


# Columns x-csv-columns gained after executables had written CSV files with the columns before them
# (contract.CSV_COLUMNS_ADDED, issue 51: ceiling_gbps; issue 46: ceiling_pattern). A raw CSV with
# exactly the columns but the last few of these (an older run reported again, an older build resumed)
# goes into summary.csv with those cells empty, as an executable leaves empty a figure its result lacks.
CSV_COLUMNS_ADDED = contract.CSV_COLUMNS_ADDED


def _flagged_rows(body, columns, cells, entry, backend=None, header=None, driver=None):
    """The CSV records of `body` (the executables' columns), each with the driver's columns appended
    (`driver`, summary_driver_columns() when None): those `cells` holds for that result (by
    benchmark, backend, rank and id: _driver_cells), empty for a record no result matches; and key,
    '<entry>:<rank>:<id>', unique in the run (an id recurs across backends, OpenCL implementations
    and a benchmark's large entry; `entry` is the raw file's name, ra-opencl-pocl or ra-cpu-large). A
    median's interval is empty where the record's median cell is (MEDIAN_INTERVAL_COLUMNS). backend:
    the name its document goes by in this run, where that is not the executable's (opencl-<implementation>:
    separate_implementations). header: the columns of `body` where they are earlier ones
    (contract.earlier_csv_headers): each record is put in `columns`, a column it lacks empty."""
    driver = summary_driver_columns() if driver is None else driver
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    at = {c: i for i, c in enumerate(columns)}
    for rec in csv.reader(io.StringIO(body, newline="")):
        if not rec:
            continue
        if header and header != columns:
            cells_of = dict(zip(header, rec, strict=False))
            rec = [cells_of.get(c, "") for c in columns]
        if backend and len(rec) > at["backend"]:
            rec[at["backend"]] = backend
        try:
            key = (rec[at["benchmark"]], rec[at["backend"]], int(rec[at["rank"]] or 0), rec[at["id"]])
        except (IndexError, ValueError):
            key = None
        mine = cells.get(key, {})
        row = []
        for c in driver:
            if c == "key":
                row.append(f"{entry}:{key[2]}:{key[3]}" if key else "")
            elif c in MEDIAN_INTERVAL_COLUMNS and not _cell(rec, at, MEDIAN_INTERVAL_COLUMNS[c][0]):
                row.append("")
            else:
                row.append(mine.get(c, ""))
        w.writerow(rec + row)
    return out.getvalue()


def _cell(rec: Sequence[str], at: Mapping[str, int], column: str) -> str:
    i = at[column]
    return rec[i] if i < len(rec) else ""


def _header_line(text):
    end = text.find("\n")
    return (text if end < 0 else text[:end]).rstrip("\r")


def summary_csv(run_dir: StrPath, docs: Sequence[Document] | None = None) -> tuple[str, list[str]]:
    """(text, problems): summary.csv as the executables' CSV files (raw/<name>.csv, the per-rank
    .csv.rank<N> where the JSON is per rank) put end to end under one header, in the order of
    raw_files(), with the driver's columns last (x-summary-csv-columns): above_ceiling, the figures of
    the result, as its JSON document gives them, that are above the physical ceiling of the run
    (plausibility.py), '' when none; key, unique in the run (_flagged_rows); and the 95 % intervals of
    the kernel and total medians from the result's trials (MEDIAN_INTERVAL_COLUMNS, median_interval),
    '' where none applies. A CSV with the columns of an earlier executable (without the last few
    of CSV_COLUMNS_ADDED) goes in with those cells empty; a missing CSV or one with other columns is a
    problem, never replaced by rows made here. docs: the run's usable documents (load_docs_tolerant), when read."""
    from . import plausibility
    columns = csv_columns()
    header = ",".join(columns)
    if docs is None:
        docs = load_docs_tolerant(run_dir)[0]
    cells = {match_key(r): _driver_cells(r, plausibility.figures_text(r)) for r in all_rows(docs)}
    renamed = {os.path.realpath(d["_path"]): d["backend"] for d in docs
               if d.get("_path") and opencl_implementation(d) and d["backend"] != "opencl"}
    driver = summary_driver_columns()
    parts = [",".join(columns + driver) + "\n"]
    problems: list[str] = []
    for jp in raw_files(run_dir):
        cp = csv_path_for(jp)
        rel = os.path.relpath(cp, run_dir)
        try:
            with Path(cp).open(newline="", encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            problems.append(f"{rel} is missing (the executable wrote no CSV beside {Path(jp).name}): "
                            "its results are not in summary.csv")
            continue
        except OSError as e:
            problems.append(f"{rel}: cannot read ({e.strerror}): its results are not in summary.csv")
            continue
        except ValueError:
            problems.append(f"{rel}: not UTF-8 text: its results are not in summary.csv")
            continue
        if "\0" in text:
            problems.append(f"{rel}: holds NUL bytes (written by two processes at once, or cut short): its results "
                            "are not in summary.csv")
            continue
        earlier = None if _header_line(text) == header else \
            next((cs for cs, _ in contract.earlier_csv_headers(columns) if _header_line(text) == ",".join(cs)), None)
        if _header_line(text) != header and earlier is None:
            problems.append(f"{rel}: its header is not the columns of docs/results-schema.json (x-csv-columns): "
                            "left out of summary.csv")
            continue
        body = text[text.find("\n") + 1:] if "\n" in text else ""
        parts.append(_flagged_rows(body, columns, cells, entry_of(jp), renamed.get(os.path.realpath(jp)),
                                   earlier, driver))
    return "".join(parts), problems


def write_summary_csv(run_dir: StrPath, docs: Sequence[Document] | None = None) -> list[str]:
    """Writes run_dir/summary.csv; returns the problems (missing or foreign CSV files)."""
    text, problems = summary_csv(run_dir, docs)
    write_atomically(Path(run_dir) / SUMMARY_CSV, text)
    return problems


def opencl_driver_text(doc: Document) -> str:
    """' (pocl, driver 3.1+debian)' for an OpenCL document: which implementation and version ran."""
    impl = opencl_implementation(doc)
    dev = (doc.get("context") or {}).get("device") or {}
    return f" ({impl}, driver {dev.get('driver_version', '?')})" if impl else ""


def opencl_implementations(docs: Iterable[Document]) -> list[str]:
    """The OpenCL implementations the documents ran on, e.g. ['intel', 'pocl']."""
    return sorted({opencl_implementation(d) for d in docs if opencl_implementation(d)})


def machine_line(docs: Iterable[Document]) -> str:
    """'host vm, AMD EPYC (2 cores); cpu: AMD EPYC; opencl: pthread-...' for every figure and report:
    the real processors (host execution is no device of a figure)."""
    hosts: list[str] = []
    devices: list[str] = []
    for d in processor_docs(docs):
        ctx = d.get("context", {})
        h = f"host {ctx.get('host', '?')}: {ctx.get('cpu', '?')} ({ctx.get('logical_cores', '?')} cores)"
        if h not in hosts:
            hosts.append(h)
        dev = f"{d['backend']}: {ctx.get('device', {}).get('name', '?')}" + opencl_driver_text(d)
        if dev not in devices:
            devices.append(dev)
    return "; ".join(hosts) + (" | " + "; ".join(devices) if devices else "")


def tsc_hz(docs: Iterable[Document]) -> float | None:
    """The measured CPU time-stamp-counter rate of the run (cycles per tuple use it), if any."""
    for d in docs:
        ctx = d.get("context", {})
        for hz in (ctx.get("tsc_hz"), ctx.get("device", {}).get("tsc_hz")):
            if hz:
                return float(hz)
    return None


# How far an executable's copy ceiling may move during its run, as (max - min) / median of its
# ceiling.samples (issue 51), before the report warns on top and scripts/compare says so. The memory
# bandwidth of the 2-core VMs here moved 28 % within an hour. Each case's % of peak is against the
# sample nearest to it (throughput.ceiling_gbps), so its own figure holds; but cases timed when the
# machine copied 10 % slower or faster than at other moments of the run compare less well.
CEILING_SPREAD_WARN = 0.10


def entry_of(path: StrPath) -> str:
    """The run entry a raw file holds: raw/ra-cpu-large.json (or its .json.rank<N>) -> 'ra-cpu-large'."""
    return Path(path).name.split(".json")[0]


def _doc_label(doc: Mapping[str, Any]) -> str:
    """'ra-cpu' (the result file's name, 'ra-cpu-large' for a second run), ' rank R' for a rank's file."""
    path = doc.get("_path")
    name = entry_of(path) if path else f"{doc.get('benchmark', '?')}-{doc.get('backend', '?')}"
    return name + (f" rank {doc['_rank']}" if doc.get("_rank") else "")


def ceiling_samples(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The re-measured copy ceiling of one document: {'name', 'samples' (how many), 'median', 'min',
    'max', 'spread'}; spread as the document records it (ceiling.spread), else from the samples as
    the harness computes it. None for a document without samples (written before issue 51, a peer's)."""
    c = doc.get("ceiling") or {}
    samples = [s for s in c.get("samples") or [] if isinstance(s, Mapping) and isinstance(s.get("gbps"), (int, float))]
    if not samples:
        return None
    rates = [float(s["gbps"]) for s in samples]
    spread = c.get("spread")
    return {"name": _doc_label(doc), "samples": len(samples), "median": contract.ceiling_median(samples),
            "min": min(rates), "max": max(rates),
            "spread": float(spread) if isinstance(spread, (int, float)) else contract.ceiling_spread(samples)}


def moving_ceilings(docs: Iterable[Mapping[str, Any]], limit: float = CEILING_SPREAD_WARN) -> list[dict[str, Any]]:
    """ceiling_samples() of every document whose ceiling moved by more than `limit` during its run."""
    found = (ceiling_samples(d) for d in docs)
    return [c for c in found if c is not None and c["spread"] > limit]


def moving_ceiling_text(moving: Sequence[Mapping[str, Any]]) -> str:
    """The report's warning on a run whose copy ceiling moved (moving_ceilings), naming each
    executable with its lowest and highest sample and their spread."""
    most = max(c["spread"] for c in moving)
    each = "; ".join(f"{c['name']}: {c['min']:.1f} to {c['max']:.1f} GB/s over {c['samples']} samples, spread "
                     f"{c['spread']:.1%}" for c in moving)
    return (f"the machine's copy bandwidth moved by {'up to ' if len(moving) > 1 else ''}{most:.1%} during this run "
            f"({each}; the report warns above {CEILING_SPREAD_WARN:.0%}); each case's % of peak is against the "
            "ceiling measured nearest to it (throughput.ceiling_gbps), but figures from different moments are less "
            "comparable.")
