"""Reading a run directory: the manifest (run.json) and the hetdb-bench/1 JSON documents the
executables wrote (docs/results-schema.md), flattened into one row per result."""
import csv
import glob
import io
import json
import os
import re

from .util import UsageError, write_atomically

SCHEMA = "hetdb-bench/1"
MANIFEST = "run.json"
RAW_DIR = "raw"
_RAW_NAME = re.compile(r"^([a-z0-9_]+)-([a-z0-9_]+)\.json(?:\.rank(\d+))?$")

CSV_COLUMNS = [
    "benchmark", "backend", "rank", "device", "test", "variant", "params", "size_bytes", "transfer",
    "status", "verified", "passes", "kernel_median_s", "kernel_cv", "total_median_s", "total_cv",
    "h2d_median_s", "d2h_median_s", "kernel_gbps", "total_gbps", "elements_per_s", "moved_gbps",
    "pct_of_peak", "parity", "elements", "input_bytes", "min_moved_bytes", "transfer_bytes", "reason",
]


def load_manifest(run_dir):
    path = os.path.join(run_dir, MANIFEST)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)


def raw_files(run_dir):
    """The result files of a run: raw/<benchmark>-<backend>.json, or where an MPI run never wrote
    its merged document (it crashed), the per-rank files raw/<benchmark>-<backend>.json.rank<N>."""
    names = {}
    for p in sorted(glob.glob(os.path.join(run_dir, RAW_DIR, "*.json*"))):
        m = _RAW_NAME.match(os.path.basename(p))
        if m:
            names.setdefault((m.group(1), m.group(2)), []).append((m.group(3), p))
    out = []
    for found in names.values():
        merged = [p for rank, p in found if rank is None]
        out += merged if merged else sorted((p for _, p in found), key=lambda p: int(p.rsplit("rank", 1)[1]))
    return sorted(out)


def load_doc(path):
    """One executable's results; a document that is not hetdb-bench/1 is an error naming the file."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError(f"{path}: cannot read results JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UsageError(f"{path}: not a {SCHEMA} results document")
    for k in ("benchmark", "backend", "results"):
        if k not in doc:
            raise UsageError(f"{path}: lacks '{k}'")
    m = _RAW_NAME.match(os.path.basename(path))
    doc["_rank"] = int(m.group(3)) if m and m.group(3) else doc.get("context", {}).get("mpi", {}).get("rank", 0)
    doc["_path"] = path
    return doc


def load_docs(run_dir):
    if not os.path.isdir(run_dir):
        raise UsageError(f"{run_dir}: no such run directory")
    return [load_doc(p) for p in raw_files(run_dir)]


def params_text(params):
    return ";".join(f"{k}={v}" for k, v in params.items()) if params else ""


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


def rows_of(doc):
    """One flat dict per result (per rank under MPI); figures absent for skipped/failed results are None."""
    ctx = doc.get("context", {})
    across = {r.get("id"): r["across_ranks"] for r in doc["results"] if r.get("across_ranks")}
    out = []
    for rank, device, records in _rank_parts(doc):
        for r in records:
            row = _row(doc, ctx, rank, device, r)
            if rank == 0 and not row["across_ranks"]:
                row["across_ranks"] = across.get(r.get("id"))
            out.append(row)
    return out


def _row(doc, ctx, rank, device, r):
    tp = r.get("throughput", {})
    b = r.get("bytes", {})
    phases = {k: v.get("median") for k, v in r.get("stats", {}).get("phases_s", {}).items()}
    return {
        "benchmark": doc["benchmark"],
        "backend": doc["backend"],
        "rank": rank,
        "device": device,
        "host": ctx.get("host", ""),
        "test": r["test"],
        "variant": r["variant"],
        "params": dict(r.get("params", {})),
        "params_text": params_text(r.get("params", {})),
        "size_bytes": int(r["size_bytes"]),
        "transfer": r.get("transfer", "none"),
        "status": r["status"],
        "verified": bool(r.get("verification", {}).get("verified")),
        "reason": r.get("reason", ""),
        "passes": len(r.get("trials", [])),
        "kernel_median_s": _stat(r, "kernel_s"),
        "kernel_cv": _stat(r, "kernel_s", "cv"),
        "total_median_s": _stat(r, "total_s"),
        "total_cv": _stat(r, "total_s", "cv"),
        "h2d_median_s": _stat(r, "h2d_s"),
        "d2h_median_s": _stat(r, "d2h_s"),
        "phases_median_s": phases,
        "kernel_gbps": tp.get("kernel_gbps"),
        "total_gbps": tp.get("total_gbps"),
        "elements_per_s": tp.get("elements_per_s"),
        "moved_gbps": tp.get("moved_gbps"),
        "pct_of_peak": tp.get("pct_of_peak"),
        "parity": tp.get("parity"),
        "elements": r.get("elements", 0),
        "input_bytes": b.get("input", 0),
        "min_moved_bytes": b.get("min_moved", 0),
        "transfer_bytes": b.get("transfer", 0),
        "extra": r.get("extra", {}) or {},
        "across_ranks": r.get("across_ranks"),
    }


def all_rows(docs):
    rows = []
    for d in docs:
        rows += rows_of(d)
    return rows


def series_label(row, with_backend=True):
    """'opencl/pinned select [sel=0.5]': how one line of a figure is named."""
    s = f"{row['backend']}/{row['variant']}" if with_backend else row["variant"]
    if row["transfer"] not in ("none", "", None) and row["transfer"] not in row["variant"]:
        s += f" ({row['transfer']})"
    if row["params_text"]:
        s += f" [{row['params_text'].replace(';', ',')}]"
    return s


def match_key(row):
    """What identifies one measurement across runs (scripts/compare)."""
    return (row["benchmark"], row["backend"], row["rank"], row["test"], row["variant"], row["params_text"],
            row["transfer"], row["size_bytes"])


def _csv_value(row, column):
    v = row.get("params_text") if column == "params" else row.get(column)
    if v is None:
        return ""
    return int(v) if isinstance(v, bool) else v


def csv_text(rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in rows:
        w.writerow([_csv_value(r, c) for c in CSV_COLUMNS])
    return buf.getvalue()


def write_summary_csv(run_dir, rows):
    write_atomically(os.path.join(run_dir, "summary.csv"), csv_text(rows))


def machine_line(docs):
    """'host vm, AMD EPYC (2 cores); cpu: AMD EPYC; opencl: pthread-...' for every figure and report."""
    hosts, devices = [], []
    for d in docs:
        ctx = d.get("context", {})
        h = f"host {ctx.get('host', '?')}: {ctx.get('cpu', '?')} ({ctx.get('logical_cores', '?')} cores)"
        if h not in hosts:
            hosts.append(h)
        dev = f"{d['backend']}: {ctx.get('device', {}).get('name', '?')}"
        if dev not in devices:
            devices.append(dev)
    return "; ".join(hosts) + (" | " + "; ".join(devices) if devices else "")


def tsc_hz(docs):
    """The measured CPU time-stamp-counter rate of the run (cycles per tuple use it), if any."""
    for d in docs:
        ctx = d.get("context", {})
        for hz in (ctx.get("tsc_hz"), ctx.get("device", {}).get("tsc_hz")):
            if hz:
                return float(hz)
    return None
