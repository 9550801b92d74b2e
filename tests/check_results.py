#!/usr/bin/env python3
"""Checks results JSON written by the hdb-* executables: validated against the JSON Schema
docs/results-schema.json (the contract of "hetdb-bench/2") with the jsonschema library, then the
checks a schema cannot express (docs/results-schema.md).

usage: check_results.py FILE [MIN_OK] [--ranks N] [--csv CSV_FILE]
       check_results.py --all DIR [--min-ok N]

FILE: one document; a missing FILE prints "no results file" and exits 0 (the executable skipped).
MIN_OK (default 1): at least this many ok, verified results. --ranks N: an EP-mode document merged
from N ranks. --csv CSV_FILE: the CSV the same run wrote (--csv) must exist, have the header of
docs/results-schema.json ("x-csv-columns") and one row per result (per rank) with the document's
rank, id, status and transfer, in its order.
--all DIR: every results document under DIR (any depth): every *.json, *.json.rank<N> and
*.json.interrupted-<N> in a folder named raw/ must be one, and the CSV beside it (same name with
.csv for .json) must match it as --csv says; elsewhere a JSON file is checked when it carries a
"schema" key (a driver's run.json does not); every summary.csv beside a raw/ folder must have the
header of x-csv-columns followed by x-summary-csv-columns, the driver's own (above_ceiling, key and
the medians' intervals; a summary.csv of an earlier driver with a first part of them, or none, passes
too), and each row's intervals (where the header has them) must be both empty or both numbers with
low <= median <= high, empty where the median is empty or passes is below 6. --all fails when it
finds no results document.
Exit 0 when everything is valid and no case failed; 1 otherwise.
"""
import argparse
import csv
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

HERE = str(Path(os.path.normpath(Path(__file__).absolute())).parent)
REPO = str(Path(HERE).parent)
SCHEMA_PATH = str(Path(REPO, "docs", "results-schema.json"))
SCHEMA_NAME = "hetdb-bench/2"
MAX_SCHEMA_ERRORS = 20
RESULT_FILE = re.compile(r"\.json(\.rank\d+|\.interrupted-\d+)?$")
REEXEC = "HDB_CHECK_RESULTS_REEXEC"

sys.path.insert(0, HERE)
sys.path.insert(1, str(Path(REPO, "scripts")))
from hdb import contract  # noqa: E402  (the harness's ceiling arithmetic; standard library only)

import check_csv_header  # noqa: E402  (the CSV header check, beside this file)

try:
    import jsonschema
except ImportError:  # the interpreter CMake found may lack it; scripts/hdb/python runs .venv's, which has it
    jsonschema = None


def _reexec_with_jsonschema():
    if os.environ.get(REEXEC):
        return
    launcher = str(Path(REPO, "scripts", "hdb", "python"))
    if Path(launcher).is_file():
        env = dict(os.environ, **{REEXEC: "1"})
        os.execvpe("sh", ["sh", launcher, os.path.normpath(Path(__file__).absolute())] + sys.argv[1:], env)


def load_schema():
    with Path(SCHEMA_PATH).open() as f:
        return json.load(f)


_validator = None


def validator():
    global _validator
    if _validator is None:
        schema = load_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        _validator = jsonschema.Draft202012Validator(schema)
    return _validator


def _where(error):
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return path or "(document)"


def schema_errors(doc):
    """What the JSON Schema rejects, as 'path: message' lines (at most MAX_SCHEMA_ERRORS)."""
    errors = sorted(validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    out = []
    for e in errors[:MAX_SCHEMA_ERRORS]:
        msg = e.message if len(e.message) < 300 else e.message[:300] + "..."
        out.append(f"{_where(e)}: {msg}")
    if len(errors) > MAX_SCHEMA_ERRORS:
        out.append(f"... and {len(errors) - MAX_SCHEMA_ERRORS} more schema errors")
    return out


def _counts(results):
    return {k: sum(1 for r in results if r["status"] == k) for k in ("ok", "skipped", "failed")}


def result_problems(r, where):
    """Checks of one result that the schema cannot express."""
    out = []
    name = f"{where}{r['id']}"
    declared = [p["name"] for p in r["phases"]]
    if len(set(declared)) != len(declared):
        out.append(f"{name}: a phase is declared twice in phases: {declared}")
    used = set()
    for t in r["trials"]:
        used |= set(t["phases_s"])
    undeclared = sorted(used - set(declared))
    if undeclared:
        out.append(f"{name}: trials time phases not declared in phases[]: {', '.join(undeclared)}")
    unused = sorted(set(declared) - used)
    if unused:
        out.append(f"{name}: phases declared but in no trial: {', '.join(unused)}")
    if "stats" in r:
        st = r["stats"]
        if sorted(st["phases_s"]) != sorted(set(declared)):
            out.append(f"{name}: stats.phases_s {sorted(st['phases_s'])} is not the declared phases {declared}")
        for which in ("kernel_s", "total_s", "h2d_s", "d2h_s"):
            s = st[which]
            if s["n"] != len(r["trials"]):
                out.append(f"{name}: stats.{which}.n is {s['n']} for {len(r['trials'])} trials")
            if not (s["min"] <= s["median"] <= s["max"] and s["min"] <= s["mean"] <= s["max"]):
                out.append(f"{name}: stats.{which} is inconsistent (min <= median, mean <= max)")
    b = r["bytes"]
    if ("read" in b) != ("written" in b):
        out.append(f"{name}: bytes declares one of read and written without the other")
    elif "read" in b and b["read"] + b["written"] != b["min_moved"]:
        out.append(f"{name}: bytes.read + bytes.written ({b['read']} + {b['written']}) is not bytes.min_moved "
                   f"({b['min_moved']})")
    if b.get("random_read", 0) > b.get("read", 0):
        out.append(f"{name}: bytes.random_read {b['random_read']} is more than bytes.read {b.get('read', 0)}")
    if b.get("random_read", 0) and not b.get("random_item"):
        out.append(f"{name}: bytes.random_read {b['random_read']} without bytes.random_item (bytes per access)")
    if r["status"] == "ok":
        if r["transfer"] == "none" and (r["bytes"]["transfer"] or any(t["h2d_s"] or t["d2h_s"] for t in r["trials"])):
            out.append(f"{name}: transfer is 'none' but bytes cross the bus (bytes.transfer, h2d_s or d2h_s)")
        if any(t["kernel_s"] + t["h2d_s"] + t["d2h_s"] <= 0 for t in r["trials"]):
            out.append(f"{name}: a trial measured no time (kernel_s + h2d_s + d2h_s is 0)")
        tp = r["throughput"]
        if tp["kernel_gbps"] <= 0 and tp["transfer_gbps"] <= 0:
            out.append(f"{name}: no throughput (kernel_gbps and transfer_gbps are 0)")
    return out


def _close(a, b, rel=1e-12):
    """Equal but for the last bits (the C++ and Python make the same doubles; this spares a reader
    the few that may differ in the last place)."""
    return abs(a - b) <= rel * max(abs(a), abs(b))


def ceiling_problems(doc):
    """The copy ceiling measured again during the run (issue 51; absent from older documents and the
    peers'): its samples in the order of their times, memory_copy_gbps their median, spread their
    (max - min) / median; each result's throughput.ceiling_gbps, where recorded, the sample nearest to
    its timed_at_s (not checked in a merged MPI document, whose ranks each kept their own samples) or,
    where it records a ceiling_pattern (issue 46), the ceiling of the access mix its bytes declare
    with that name (contract.case_ceiling: ceiling.patterns scaled to that sample); and its
    pct_of_peak moved_gbps over that ceiling (0 when the ceiling is 0)."""
    out = []
    c = doc["ceiling"]
    samples = c.get("samples")
    if samples is not None:
        times = [x["at_s"] for x in samples]
        if times != sorted(times):
            out.append(f"ceiling.samples are not in the order of their times (at_s {times})")
        if not _close(c["memory_copy_gbps"], contract.ceiling_median(samples)):
            out.append(f"ceiling.memory_copy_gbps {c['memory_copy_gbps']} is not the median of its samples "
                       f"({contract.ceiling_median(samples)})")
        if "spread" in c and not _close(c["spread"], contract.ceiling_spread(samples)):
            out.append(f"ceiling.spread {c['spread']} is not (max - min) / median of its samples "
                       f"({contract.ceiling_spread(samples)})")
    parts = [("", doc["results"], not doc.get("mpi"))]
    parts += [(f"rank {e['rank']}: ", e.get("results", []), False) for e in (doc.get("mpi") or {}).get("ranks", [])]
    for where, results, own_samples in parts:
        for r in results:
            tp = r.get("throughput") or {}
            if "ceiling_gbps" not in tp:
                continue
            name, ceiling = f"{where}{r['id']}", tp["ceiling_gbps"]
            if "ceiling_pattern" in tp:
                label = tp["ceiling_pattern"]
                if (label == "") != (ceiling == 0):
                    out.append(f"{name}: throughput.ceiling_pattern {label!r} with ceiling_gbps {ceiling}: a ceiling "
                               "has a name, and only a ceiling")
                want = contract.case_ceiling(c, r) if own_samples and samples and ceiling > 0 and "timed_at_s" in r \
                    else None
                if want and (want[1] != label or not (ceiling == want[0] or _close(ceiling, want[0]))):
                    out.append(f"{name}: throughput.ceiling_gbps {ceiling} ({label!r}) is not the ceiling of the "
                               f"access mix its bytes declare at its timed_at_s {r['timed_at_s']} ({want[0]}, "
                               f"{want[1]!r})")
            elif own_samples and samples and ceiling > 0 and "timed_at_s" in r \
                    and ceiling != contract.nearest_ceiling(samples, r["timed_at_s"]):
                out.append(f"{name}: throughput.ceiling_gbps {ceiling} is not the sample nearest to its timed_at_s "
                           f"{r['timed_at_s']} ({contract.nearest_ceiling(samples, r['timed_at_s'])})")
            want = 100.0 * tp["moved_gbps"] / ceiling if ceiling > 0 else 0.0
            if not (tp["pct_of_peak"] == want or _close(tp["pct_of_peak"], want)):
                out.append(f"{name}: throughput.pct_of_peak {tp['pct_of_peak']} is not 100 x moved_gbps / "
                           f"ceiling_gbps ({want})")
    return out


# Host execution (the CUDA sources run on the CPU): backend and context.device.kind both say so, so
# that its times can never pass for a GPU's (docs/results-schema.md).
HOST_EXECUTION = "cuda-host"


def semantic_problems(doc, ranks=0):
    """The checks of a whole document that the schema cannot express."""
    out = []
    results = doc["results"]
    kind = doc["context"]["device"]["kind"]
    if (doc["backend"] == HOST_EXECUTION) != (kind == HOST_EXECUTION):
        out.append(f"backend {doc['backend']!r} with context.device.kind {kind!r}: host execution says "
                   f"{HOST_EXECUTION!r} in both or in neither")
    out += ceiling_problems(doc)
    dup = sorted(i for i, n in Counter(r["id"] for r in results).items() if n > 1)
    if dup:
        out.append(f"ids not unique: {', '.join(dup[:10])}")
    for r in results:
        out += result_problems(r, "")
        if r["status"] == "failed":
            out.append(f"result {r['id']} failed: {r['reason']}")
    counts, s = _counts(results), doc["summary"]
    mpi = doc.get("mpi")
    if mpi:
        # The merged summary also counts cases that failed on any rank and ranks that died.
        if s["ok"] != counts["ok"] or s["skipped"] != counts["skipped"] or s["failed"] < counts["failed"]:
            out.append(f"summary {s} does not match the status counts of results {counts}")
        if mpi["size"] != len(mpi["ranks"]):
            out.append(f"mpi.size is {mpi['size']} but mpi.ranks has {len(mpi['ranks'])} entries")
        for e in mpi["ranks"]:
            rr = e.get("results", [])
            if len({r["id"] for r in rr}) != len(rr):
                out.append(f"rank {e['rank']}: ids not unique")
            for r in rr:
                out += result_problems(r, f"rank {e['rank']}: ")
            if "summary" in e and "results" in e and e["summary"] != _counts(rr):
                out.append(f"rank {e['rank']}: summary {e['summary']} does not match its results {_counts(rr)}")
    elif s != counts:
        out.append(f"summary {s} does not match the status counts of results {counts}")
    if s["failed"]:
        out.append(f"summary counts {s['failed']} failed cases")
    if ranks:
        if not mpi or mpi["size"] != ranks or len(mpi["ranks"]) != ranks:
            out.append(f"expected an MPI block with {ranks} ranks, got {mpi and mpi.get('size')}")
        else:
            for r in results:
                if r["status"] == "ok":
                    a = r.get("across_ranks")
                    if not a or a["n"] != ranks or not (a["min"] <= a["mean"] <= a["max"]):
                        out.append(f"result {r['id']} lacks statistics across {ranks} ranks")
            for e in mpi["ranks"]:
                if e["exit_code"] != 0 or not e.get("results"):
                    out.append(f"rank {e['rank']} exited {e['exit_code']} or has no results")
    return out


def check_doc(doc, min_ok=1, ranks=0):
    """-> (problems, number of ok verified results). Schema errors first; the semantic checks run
    only on a document the schema accepts (they rely on its shape)."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_NAME:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        return [f"schema is {got!r}, expected {SCHEMA_NAME!r}"], 0
    errors = schema_errors(doc)
    if errors:
        return ["does not match docs/results-schema.json:"] + ["  " + e for e in errors], 0
    problems = semantic_problems(doc, ranks)
    n_ok = sum(1 for r in doc["results"] if r["status"] == "ok" and r["verification"]["verified"])
    if n_ok < min_ok:
        problems.append(f"only {n_ok} ok and verified results, expected at least {min_ok}")
    return problems, n_ok


def csv_problems(doc, csv_path):
    """The CSV an executable wrote beside `doc`: the contract's header and a row per result (per rank
    of a merged MPI document) with the document's rank, id, status and transfer, in its order."""
    if not Path(csv_path).is_file():
        return [f"no CSV file {csv_path} beside the document"]
    columns = check_csv_header.columns(SCHEMA_PATH)
    problem = check_csv_header.header_problem(csv_path, columns)
    # An earlier executable's CSV (without the columns added last: ceiling_pattern, or that and
    # ceiling_gbps) passes beside its own document, whose results lack those fields too.
    absent = _absent_added_fields(doc)
    if problem and not any(set(added) <= absent and check_csv_header.header_problem(csv_path, earlier) is None
                           for earlier, added in contract.earlier_csv_headers(columns)):
        return [problem]
    with Path(csv_path).open(newline="") as f:
        got = [(r["rank"], r["id"], r["status"], r["transfer"]) for r in csv.DictReader(f)]
    mpi_ranks = (doc.get("mpi") or {}).get("ranks")
    if mpi_ranks:
        parts = [(e["rank"], e.get("results", [])) for e in mpi_ranks]
    else:
        parts = [(doc["context"].get("mpi", {}).get("rank", 0), doc["results"])]
    want = [(str(rank), r["id"], r["status"], r["transfer"]) for rank, results in parts for r in results]
    if got == want:
        return []
    if len(got) != len(want):
        return [f"{csv_path}: {len(got)} rows for {len(want)} results (rank, id) of the document"]
    i = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
    return [f"{csv_path}: row {i + 1} is (rank, id, status, transfer) {got[i]}, the document has {want[i]}"]


# summary.csv's medians' intervals (docs/results-schema.md, "The medians' intervals"): the median
# column each brackets, and the fewest trials that give one (1 and 6 of 6 cover 96.9 %, 1 and 5 of 5
# only 93.75 %).
MEDIAN_INTERVALS = (("kernel_median_s", "kernel_median_lo_s", "kernel_median_hi_s"),
                    ("total_median_s", "total_median_lo_s", "total_median_hi_s"))
MIN_INTERVAL_TRIALS = 6


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def interval_problem(row, median, lo, hi):
    """None when the row's interval of `median` (columns lo, hi) is as summary.csv writes it, else what
    is wrong: both bounds empty, or both numbers around the median; empty without a median (an empty
    cell, or 0: contract.NOT_APPLICABLE_WHEN_ZERO) or with fewer than MIN_INTERVAL_TRIALS passes."""
    a, b, m = row.get(lo) or "", row.get(hi) or "", row.get(median) or ""
    if not a and not b:
        return None
    if not a or not b:
        return f"{lo} and {hi}: one is empty ({a!r}, {b!r})"
    if not m or _number(m) == 0:  # 0: a figure that does not apply, as a CSV of an earlier executable writes it
        return f"{lo}..{hi} is {a}..{b} but {median} is {m or 'empty'} (a figure that does not apply)"
    passes = _number(row.get("passes") or "0")
    if passes is not None and passes < MIN_INTERVAL_TRIALS:
        return f"{lo}..{hi} is {a}..{b} from {row.get('passes')} passes (an interval needs {MIN_INTERVAL_TRIALS})"
    x, y, z = _number(a), _number(b), _number(m)
    if x is None or y is None or z is None:
        return f"{lo}..{hi} is {a}..{b} around {median} {m}: not numbers"
    if not x <= z <= y:
        return f"{lo}..{hi} is {a}..{b}, which does not hold {median} {m}"
    return None


def summary_problems(path):
    """The driver's summary.csv: its header (check_csv_header.summary_header_problem: the current
    columns or a first part of the driver's), then each row's medians' intervals where the header has
    them (interval_problem); at most MAX_SCHEMA_ERRORS rows are named."""
    problem = check_csv_header.summary_header_problem(path, SCHEMA_PATH)
    if problem:
        return [problem]
    out = []
    try:
        with Path(path).open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            present = [m for m in MEDIAN_INTERVALS if m[1] in (reader.fieldnames or ())]
            for n, row in enumerate(reader, 1):
                for median, lo, hi in present:
                    why = interval_problem(row, median, lo, hi)
                    if why:
                        out.append(f"{path}: row {n} ({row.get('key') or row.get('id')}): {why}")
    except (OSError, ValueError) as e:  # ValueError: not UTF-8
        return [f"{path}: cannot read: {e}"]
    if len(out) > MAX_SCHEMA_ERRORS:
        out = out[:MAX_SCHEMA_ERRORS] + [f"{path}: ... and {len(out) - MAX_SCHEMA_ERRORS} more"]
    return out


def _absent_added_fields(doc):
    """The fields of contract.CSV_COLUMNS_ADDED that no result of `doc` (of any rank) records: those
    of a document of an executable built before them (or a peer's), whose CSV may lack their columns."""
    parts = [e.get("results", []) for e in (doc.get("mpi") or {}).get("ranks") or []] or [doc.get("results", [])]
    return {k for k in contract.CSV_COLUMNS_ADDED
            if not any(k in (r.get("throughput") or {}) for results in parts for r in results)}


def csv_beside(json_path):
    """raw/x-y.json -> raw/x-y.csv, raw/x-y.json.rank1 -> raw/x-y.csv.rank1 (the driver's naming)."""
    d, name = os.path.split(json_path)
    i = name.rfind(".json")
    return str(Path(d, name[:i] + ".csv" + name[i + len(".json"):]))


def load(path):
    try:
        with Path(path).open() as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"cannot read JSON: {e}"


def check_file(path, min_ok=1, ranks=0):
    doc, err = load(path)
    if err:
        return [err], 0
    return check_doc(doc, min_ok, ranks)


def _report(path, problems, n_ok, ranks=0):
    if problems:
        for p in problems:
            print(f"check_results: {path}: {p}")
        return False
    print(f"check_results: {path}: {n_ok} verified results, schema ok" + (f", {ranks} ranks" if ranks else ""))
    return True


def find_files(root):
    """(result documents that must be valid, JSON files to check when they carry 'schema',
    summary.csv files)."""
    must, maybe, csvs = [], [], []
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        in_raw = Path(dirpath).name == "raw"
        for name in sorted(files):
            p = str(Path(dirpath, name))
            if RESULT_FILE.search(name):
                (must if in_raw else maybe).append(p)
            elif name == "summary.csv" and Path(dirpath, "raw").is_dir():
                csvs.append(p)
    return must, maybe, csvs


def check_all(root, min_ok=0):
    if not Path(root).is_dir():
        print(f"check_results: --all {root}: no such directory")
        return 1
    must, maybe, summaries = find_files(root)
    ok, checked, csv_checked = True, 0, 0
    for p in must + maybe:
        doc, err = load(p)
        if p in maybe and (err or not isinstance(doc, dict) or "schema" not in doc):
            continue  # not a results document (run.json, a configuration)
        checked += 1
        problems, n_ok = ([err], 0) if err else check_doc(doc, min_ok)
        if p in must and not err and not any(q.startswith("does not match") or q.startswith("schema is")
                                             for q in problems):
            problems += csv_problems(doc, csv_beside(p))
            csv_checked += 1
        ok &= _report(p, problems, n_ok)
    for p in summaries:
        for problem in summary_problems(p):
            print(f"check_results: {problem}")
            ok = False
    if not checked:
        print(f"check_results: --all {root}: no results documents found")
        return 1
    print(f"check_results: --all {root}: {checked} documents, {csv_checked} CSV files beside them and "
          f"{len(summaries)} summary.csv checked, " + ("all valid" if ok else "PROBLEMS above"))
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("json", nargs="?", help="results document")
    ap.add_argument("min_ok", nargs="?", type=int, default=None, help="ok and verified results expected (1)")
    ap.add_argument("--ranks", type=int, default=0, help="expect an EP-mode document from this many ranks")
    ap.add_argument("--csv", metavar="CSV_FILE", help="the CSV the same run wrote: header and rows must match")
    ap.add_argument("--all", metavar="DIR", help="check every results document and CSV header under DIR")
    ap.add_argument("--min-ok", type=int, default=None, dest="min_ok_opt",
                    help="with --all: ok and verified results each document must have (default 0)")
    a = ap.parse_args(argv)
    if bool(a.json) == bool(a.all):
        ap.error("give one results FILE or --all DIR")
    if jsonschema is None:
        _reexec_with_jsonschema()
        print("check_results: needs the Python library jsonschema, which scripts/setup installs into .venv "
              "(scripts/hdb/python runs .venv/bin/python)")
        return 1
    if a.all:
        return check_all(a.all, a.min_ok_opt if a.min_ok_opt is not None else (a.min_ok or 0))
    if not Path(a.json).exists():
        print(f"check_results: no results file {a.json} (executable skipped)")
        return 0
    min_ok = a.min_ok if a.min_ok is not None else (a.min_ok_opt if a.min_ok_opt is not None else 1)
    problems, n_ok = check_file(a.json, min_ok, a.ranks)
    if a.csv and not any(q.startswith("does not match") or q.startswith("schema is") or q.startswith("cannot read")
                         for q in problems):
        doc, _ = load(a.json)
        problems += csv_problems(doc, a.csv)
    return 0 if _report(a.json, problems, n_ok, a.ranks) else 1


if __name__ == "__main__":
    sys.exit(main())
