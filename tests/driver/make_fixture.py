#!/usr/bin/env python3
"""Writes the committed report fixture (fixtures/run-small): a run directory with hetdb-bench/2
documents for every benchmark and, beside each, the CSV an executable writes with --csv, so that
report generation can be tested to draw every figure and summary.csv to be built from the CSVs.

The numbers are SYNTHETIC (a simple cost model below), not measurements: host and devices are
named 'fixture' to make that plain. The record and CSV builders here stand in for the C++ writer
(src/common/harness/result.cpp) in the driver tests, fake_bench.py uses them too; every document
they write validates against docs/results-schema.json (test_schema.py checks it).
Regenerate with: python3 tests/driver/make_fixture.py
"""
import csv
import io
import json
import os
import statistics
import sys
from pathlib import Path

HERE = str(Path(os.path.normpath(Path(__file__).absolute())).parent)
sys.path.insert(0, HERE)
from helpers import CSV_COLUMNS  # noqa: E402  (the one column list of the tests)

from hdb import contract  # noqa: E402  (the harness's ceiling per access pattern)

OUT = str(Path(HERE, "fixtures", "run-small"))
SIZES = [32 << 10, 1 << 20, 32 << 20]
TPCH_BYTES = 11996184  # the input of the TPC-H tables at sf 0.1 (synthetic)
TSC_HZ = 2.5e9
CEILING_INTERVAL_S = 10.0  # harness/ceiling.hpp CeilingTrack::kIntervalS
CASE_S = 0.05  # the synthetic seconds between two cases' timed passes (results[].timed_at_s)


def stats(v):
    mean = statistics.fmean(v)
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    return {"n": len(v), "min": min(v), "median": statistics.median(v), "mean": mean, "max": max(v),
            "stddev": sd, "cv": sd / mean if mean else 0.0}


def num_text(v):
    """How the C++ case model prints a parameter value in an id: shortest round trip, 3.0 -> 3."""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    return str(v)


def size_text(n):
    for unit, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def case_id(test, variant, params, transfer, size):
    """test/variant[k=v,...,transfer=MODE]@SIZE, as the C++ case model makes it (this stands in for it);
    no @SIZE for a case outside the size sweep (size 0)."""
    items = [f"{k}={num_text(v)}" for k, v in params.items()]
    if transfer != "none":
        items.append(f"transfer={transfer}")
    return f"{test}/{variant}" + (f"[{','.join(items)}]" if items else "") + (f"@{size_text(size)}" if size else "")


def size_label(n):
    return f"2^{n.bit_length() - 1}" if n and n & (n - 1) == 0 else str(n)


def patterns_for(copy):
    """Synthetic ceilings per access pattern (ceiling.patterns, issue 46; GB/s of bytes read +
    written) of a device whose copy ceiling is `copy`: reading alone faster than copying, writing
    alone slower, random 4- and 32-byte items far slower."""
    return {"read": 1.3 * copy, "write": 0.75 * copy, "copy": float(copy), "add": 1.1 * copy, "triad": 1.05 * copy,
            "gather4": copy / 16, "gather32": copy / 3}


def split_of(min_moved, read_share=0.5, random_share=0.0, item=4):
    """bytes.read/written/random_read/random_item of a case moving min_moved bytes, as the harness
    records a declared split: read_share of them read, random_share of those reads random accesses of
    `item` bytes each."""
    read = round(min_moved * read_share)
    return {"read": read, "written": min_moved - read, "random_read": round(read * random_share), "random_item": item}


def record(test, variant, size, kernel_s, h2d_s=0.0, d2h_s=0.0, params=None, extra=None, transfer="none",
           moved_factor=2, ceiling=20.0, status="ok", reason="", phases=(), checked=True, input_bytes=None,
           split=None, patterns=None):
    """One results[] entry. phases: (name, kind, share of the kernel time) per named phase. size 0: a
    case outside the size sweep, whose input is input_bytes. ceiling: the copy ceiling nearest to the
    case; split: the case's declared bytes.read/written/random_read/random_item (split_of), none when
    it declares none; patterns: the document's ceiling.patterns, which with a split give the case its
    ceiling (contract.match_ceiling)."""
    params = dict(params or {})
    input_bytes = size if input_bytes is None else input_bytes
    n = input_bytes
    transfer_bytes = (n if h2d_s else 0) + (n // 4 if d2h_s else 0)
    r = {"id": case_id(test, variant, params, transfer, size), "test": test, "variant": variant, "params": params,
         "size_bytes": size, "size_label": size_label(size), "transfer": transfer, "status": status,
         "reason": reason, "verification": {"checked": checked and status != "skipped",
                                            "verified": checked and status == "ok",
                                            "detail": "synthetic fixture" if checked else "not checked (--no-verify)"},
         "elements": n // 8, "bytes": {"input": input_bytes, "min_moved": moved_factor * n, "transfer": transfer_bytes},
         "phases": [], "trials": [], "extra": extra or {}}
    if split:
        r["bytes"].update(split)
    if status != "ok":
        return r
    r["phases"] = [{"name": name, "kind": kind} for name, kind, _ in phases]
    trials = []
    for f in (1.0, 1.02, 0.99):
        t = {"h2d_s": h2d_s * f, "kernel_s": kernel_s * f, "d2h_s": d2h_s * f,
             "phases_s": {name: kernel_s * f * share for name, _, share in phases}}
        t["total_s"] = t["h2d_s"] + t["kernel_s"] + t["d2h_s"] + 1e-6
        trials.append(t)
    r["trials"] = trials
    st = {k: stats([t[k] for t in trials]) for k in ("kernel_s", "total_s", "h2d_s", "d2h_s")}
    st["phases_s"] = {name: stats([t["phases_s"][name] for t in trials]) for name, _, _ in phases}
    r["stats"] = st
    k, tot = st["kernel_s"]["median"], st["total_s"]["median"]
    xfer = st["h2d_s"]["median"] + st["d2h_s"]["median"]
    moved = moved_factor * n / k / 1e9 if k else 0.0
    # The case's ceiling as the harness matches it (contract.match_ceiling): `ceiling` is the copy
    # sample nearest to it, the patterns scaled to it.
    ceiling, label = contract.match_ceiling(split or {}, contract.pattern_rates(patterns, ceiling))
    r["throughput"] = {"kernel_gbps": input_bytes / k / 1e9 if k else 0.0, "total_gbps": input_bytes / tot / 1e9,
                       "transfer_gbps": transfer_bytes / xfer / 1e9 if xfer else 0.0,
                       "elements_per_s": (n // 8) / k if k else 0.0, "moved_gbps": moved,
                       "pct_of_peak": 100 * moved / ceiling if moved_factor and k and ceiling else 0.0,
                       "parity": xfer / k if k else 0.0,
                       # the ceiling pct_of_peak is against and its name (0 and '' without kernel time)
                       "ceiling_gbps": float(ceiling) if k else 0.0, "ceiling_pattern": label if k else ""}
    return r


def bus_copy(test, size, seconds, transfer):
    """A bus host<->device copy: test h2d/d2h, variant copy; all its time is transfer (kernel 0)."""
    h2d, d2h = (seconds, 0.0) if test == "h2d" else (0.0, seconds)
    r = record(test, "copy", size, 0.0, h2d, d2h, transfer=transfer, moved_factor=0, ceiling=3000.0)
    r["bytes"]["transfer"] = size
    xfer = r["stats"]["h2d_s"]["median"] + r["stats"]["d2h_s"]["median"]
    r["throughput"]["transfer_gbps"] = size / xfer / 1e9
    return r


PATTERNS_DEFINITION = ("best of 3 passes over buffers beyond the cache, bytes read + bytes written per second; "
                       "gather4/gather32: bytes of 4-/32-byte items read at random from a table beyond the cache")


def ceiling_block(samples, patterns=None):
    """The document's `ceiling` as harness/ceiling.cpp writes it: samples [(at_s, gbps)], their
    median as memory_copy_gbps, the interval, the spread (max - min) / median; and the ceilings per
    access pattern (issue 46), measured at start-up, where given."""
    rates = sorted(g for _, g in samples)
    median = statistics.median(rates) if rates else 0.0
    block = {"memory_copy_gbps": float(median),
             "definition": "measured copy bandwidth, bytes read + bytes written; the median of the samples",
             "samples": [{"at_s": float(t), "gbps": float(g)} for t, g in samples],
             "interval_s": CEILING_INTERVAL_S,
             "spread": (rates[-1] - rates[0]) / median if len(rates) > 1 and median else 0.0}
    if patterns:
        block.update(patterns={k: float(v) for k, v in patterns.items()}, patterns_at_s=0.0,
                     patterns_definition=PATTERNS_DEFINITION)
    return block


def document(bench, backend, results, ceiling, command_line=None, incomplete_reason=None, samples=None,
             patterns=None):
    """A whole document; incomplete_reason marks it partial (complete: false), as the harness marks
    the file it rewrites after every case ("running") and one cut short. Every result with trials
    that has no timed_at_s gets one, CASE_S apart; samples: the ceiling's [(at_s, gbps)], by default
    `ceiling` at the start and after the last case (none when it is 0: the harness keeps no sample
    of 0), so that every record's ceiling_gbps is the sample nearest to it (where it is the copy's);
    patterns: ceiling.patterns (issue 46), the records' own made with the same (record)."""
    at = 0.0
    for r in results:
        if r["trials"] and "timed_at_s" not in r:
            r["timed_at_s"] = round(at + CASE_S, 6)
        at = max(at, r.get("timed_at_s", at))
    if samples is None:
        samples = [(0.0, ceiling), (round(at + CASE_S, 6), ceiling)] if ceiling else []
    device = {"cpu": {"kind": "cpu", "name": "fixture CPU", "threads": 2, "tsc_hz": TSC_HZ},
              "opencl": {"kind": "opencl", "name": "fixture OpenCL device", "platform": "fixture platform"},
              "cuda": {"kind": "cuda", "name": "fixture GPU", "compute_capability": "9.0", "sm_count": 132,
                       "pcie": {"gen": 5, "width": 16}},
              # host execution of the CUDA backend: the CUDA sources run on the CPU (correctness only)
              "cuda-host": {"kind": "cuda-host", "name": "host execution, not a GPU (Hopper limits)",
                            "compute_capability": "9.0", "sm_count": 132}}[backend]
    ctx = {"host": "fixture", "cpu": "fixture CPU", "logical_cores": 2, "memory_bytes": 8 << 30,
           "os": "synthetic", "compiler": "none", "git_commit": "fixture",
           "command_line": command_line or f"hdb-{bench}-{backend}", "time_utc": "2026-01-01T00:00:00Z",
           "device": device, "mpi": {"active": False, "rank": 0, "size": 1}}
    s = {k: sum(r["status"] == k for r in results) for k in ("ok", "skipped", "failed")}
    return {"schema": "hetdb-bench/2", "benchmark": bench, "backend": backend, "context": ctx,
            "ceiling": ceiling_block(samples, patterns),
            "results": results, "summary": s, "complete": incomplete_reason is None,
            **({"incomplete_reason": incomplete_reason} if incomplete_reason else {})}


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return repr(v)
    return v


def csv_text(doc):
    """The CSV an executable writes with --csv (one row per result, per rank of an MPI document), in
    the columns of docs/results-schema.json; params as k=v;k=v in declared order."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    ctx = doc.get("context", {})
    device = ctx.get("device", {}).get("name", doc["backend"])
    mpi_ranks = (doc.get("mpi") or {}).get("ranks")
    parts = [(e["rank"], e.get("device", device), e.get("results", [])) for e in mpi_ranks] if mpi_ranks else \
        [(ctx.get("mpi", {}).get("rank", 0), device, doc["results"])]
    for rank, dev, results in parts:
        for r in results:
            st, tp, b, v = r.get("stats", {}), r.get("throughput", {}), r["bytes"], r["verification"]
            row = {"id": r["id"], "benchmark": doc["benchmark"], "backend": doc["backend"], "rank": rank,
                   "device": dev, "test": r["test"], "variant": r["variant"],
                   "params": ";".join(f"{k}={num_text(x)}" for k, x in r["params"].items()),
                   "size_bytes": r["size_bytes"], "transfer": r["transfer"], "status": r["status"],
                   "checked": v["checked"], "verified": v["verified"], "passes": len(r["trials"]),
                   "kernel_median_s": st.get("kernel_s", {}).get("median"),
                   "kernel_cv": st.get("kernel_s", {}).get("cv"),
                   "total_median_s": st.get("total_s", {}).get("median"), "total_cv": st.get("total_s", {}).get("cv"),
                   "h2d_median_s": st.get("h2d_s", {}).get("median"), "d2h_median_s": st.get("d2h_s", {}).get("median"),
                   "elements": r["elements"], "input_bytes": b["input"], "min_moved_bytes": b["min_moved"],
                   "transfer_bytes": b["transfer"], "reason": r["reason"]}
            for k in ("kernel_gbps", "total_gbps", "transfer_gbps", "elements_per_s", "moved_gbps", "pct_of_peak",
                      "ceiling_gbps", "ceiling_pattern", "parity"):
                row[k] = tp.get(k)
            w.writerow([_csv_value(row[c]) for c in CSV_COLUMNS])
    return buf.getvalue()


def bw(size, gbps, latency=2e-6):
    return latency + size / (gbps * 1e9)


RA_PARTS = (("partition", "kernel", 0.3), ("compute", "kernel", 0.5), ("gather", "kernel", 0.2))


def build():
    # Every document but ra-opencl's carries ceilings per access pattern (issue 46; ra-opencl's
    # platform measures only the copy). The copy-shaped cases (memcpy, device copy, select) declare
    # their split, whose ceiling is the copy pattern's, as high as the copy samples; ngram's cpu
    # search declares reads only, against the read ceiling; the rest declare none (the copy fallback).
    cpu, gpu = patterns_for(20.0), patterns_for(3000.0)
    docs = {}
    docs["bus-cpu"] = document("bus", "cpu", [record(t, v, s, bw(s, g), ceiling=20.0, patterns=cpu,
                                                     split=split_of(2 * s) if t == "memcpy" else None)
                                              for t, v, g in (("memcpy", "serial", 10), ("memcpy", "parallel", 18),
                                                              ("triad", "serial", 8), ("triad", "parallel", 15))
                                              for s in SIZES], 20.0, patterns=cpu)
    bus = []
    for test, g_pinned, g_pageable in (("h2d", 25, 11), ("d2h", 26, 9)):
        for transfer, g in (("pinned", g_pinned), ("pageable", g_pageable)):
            bus += [bus_copy(test, s, bw(s, g, 8e-6), transfer) for s in SIZES]
    bus += [record("device_copy", "kernel", s, bw(s, 1500, 8e-6), ceiling=3000.0, split=split_of(2 * s), patterns=gpu)
            for s in SIZES]
    docs["bus-cuda"] = document("bus", "cuda", bus, 3000.0, patterns=gpu)
    ra = []
    sel = {"dist": "uniform", "selectivity": 0.5}
    join = {"dist": "uniform", "match": 1, "fanout": 1}
    for test, params in (("select", sel), ("join", join)):
        for s in SIZES:
            split = split_of(2 * s) if test == "select" else None
            ra.append(record(test, "serial", s, bw(s, 1.0 if test == "select" else 0.3), params=params, split=split,
                             patterns=cpu))
            ra.append(record(test, "parallel", s, bw(s, 1.8 if test == "select" else 0.5), params=params, split=split,
                             patterns=cpu,
                             phases=(("sort", "kernel", 0.6), ("gather", "kernel", 0.4)) if test == "join" else ()))
    docs["ra-cpu"] = document("ra", "cpu", ra, 20.0, patterns=cpu)
    rac = []
    for test, params in (("select", sel), ("join", join)):
        for s in SIZES:
            if test == "join" and s == SIZES[-1]:
                rac.append(record(test, "thrust", s, 0, params=params, transfer="pinned", status="skipped",
                                  reason="does not fit in device memory (fixture)"))
                continue
            rac.append(record(test, "thrust", s, bw(s, 300 if test == "select" else 90, 1e-5), bw(s, 25), bw(s, 26) / 2,
                              params=params, transfer="pinned", ceiling=3000.0, phases=RA_PARTS, patterns=gpu,
                              split=split_of(2 * s) if test == "select" else None))
    docs["ra-cuda"] = document("ra", "cuda", rac, 3000.0, patterns=gpu)
    # An OpenCL run measured with --no-verify: marked in the report, out of the figures and compare.
    docs["ra-opencl"] = document("ra", "opencl", [
        record("select", "paper", s, bw(s, 40, 2e-5), bw(s, 10), bw(s, 10) / 2, params=sel, transfer="pinned",
               ceiling=200.0, checked=False, split=split_of(2 * s)) for s in SIZES], 200.0,
        command_line="hdb-ra-opencl --no-verify")
    tp = []
    for k, cost in (("A", 1.0), ("B", 3.0), ("C", 4.0)):
        for v, g in (("serial", 0.8), ("parallel", 1.5)):
            tp += [record(k, v, s, bw(s, g / cost), params={"data": "random"}, patterns=cpu) for s in SIZES]
            # TPC-H tables are no size sweep: size 0, no @SIZE in the id.
            tp.append(record(k, v, 0, bw(TPCH_BYTES, g / cost / 1.3), params={"data": "tpch", "sf": 0.1},
                             input_bytes=TPCH_BYTES, patterns=cpu))
    docs["tpch-cpu"] = document("tpch", "cpu", tp, 20.0, patterns=cpu)
    tg = []
    for k, cost in (("A", 1.0), ("B", 3.0), ("C", 4.0)):
        for v, g in (("operator", 120), ("fused", 600)):
            tg += [record(k, v, s, bw(s, g / cost, 1e-5), bw(s, 25), bw(s, 26) / 20, params={"data": "random"},
                          transfer="pinned", ceiling=3000.0, patterns=gpu) for s in SIZES]
            tg.append(record(k, v, 0, bw(TPCH_BYTES, g / cost / 1.3, 1e-5), bw(TPCH_BYTES, 25),
                             bw(TPCH_BYTES, 26) / 20, params={"data": "tpch", "sf": 0.1}, transfer="pinned",
                             ceiling=3000.0, input_bytes=TPCH_BYTES, patterns=gpu))
    docs["tpch-cuda"] = document("tpch", "cuda", tg, 3000.0, patterns=gpu)
    mc, mg = [], []
    for step, cost in (("1a", 3.0), ("1b", 2.0), ("2a", 0.2), ("2b", 1.5)):
        for u, uf in ((1, 0.5), (100, 1.0)):
            params = {"type": "u32", "unique": u, "delta": 1}
            for s in SIZES[1:]:
                cpt = cost * uf * 10
                k = cpt * (s // 8) / TSC_HZ
                mc.append(record(step, "serial", s, k, params=params, extra={"cycles_per_tuple": cpt}, patterns=cpu))
                mc.append(record(step, "parallel", s, k / 1.8, params=params, patterns=cpu))
                mg.append(record(step, "slice_merge", s, k / 40 + 1e-5, bw(s, 25), bw(s, 26), params=params,
                                 transfer="pinned", ceiling=3000.0, patterns=gpu))
    docs["merge-cpu"] = document("merge", "cpu", mc, 20.0, patterns=cpu)
    docs["merge-cuda"] = document("merge", "cuda", mg, 3000.0, patterns=gpu)
    nc, ng = [], []
    s = SIZES[1]
    for e in range(0, 5):
        base = 1e-3 * (1 + e)
        reads = split_of(2 * s, read_share=1.0)
        nc.append(record("search", "baseline", s, base, params={"k": e}, split=reads, patterns=cpu))
        nc.append(record("search", "binned", s, base / 2.5, params={"k": e}, split=reads, patterns=cpu))
        ng.append(record("search", "gpu", s, base / (20 - 3 * e), bw(s, 25), 1e-6, params={"k": e},
                         transfer="pinned", extra={"share_accelerated": max(0.95 - 0.15 * e, 0.1)}, ceiling=3000.0,
                         patterns=gpu))
    docs["ngram-cpu"] = document("ngram", "cpu", nc, 20.0, patterns=cpu)
    docs["ngram-cuda"] = document("ngram", "cuda", ng, 3000.0, patterns=gpu)
    return docs


def manifest(docs):
    entries = []
    for name, d in docs.items():
        entries.append({"name": name, "benchmark": d["benchmark"], "backend": d["backend"],
                        "executable": f"hdb-{name}", "args": ["--sizes", "32K,1M,32M"], "timeout_s": 60.0,
                        "status": "ok", "exit_code": 0, "duration_s": 1.0, "reason": "", "cases": d["summary"]})
    entries.append({"name": "bus-opencl", "benchmark": "bus", "backend": "opencl", "executable": "hdb-bus-opencl",
                    "args": [], "timeout_s": 60.0, "status": "skipped", "exit_code": 77, "duration_s": 0.1,
                    "reason": "skipped: no OpenCL device (fixture)"})
    return {"run_id": "run-small", "config_name": "fixture", "config": {}, "mpi": 0, "git_commit": "fixture",
            "started_utc": "2026-01-01T00:00:00Z", "finished_utc": "2026-01-01T00:01:00Z", "entries": entries}


def write_raw(raw_dir, name, doc):
    """raw/<name>.json (keys sorted, as the C++ writer's JSON objects are) and raw/<name>.csv."""
    with Path(raw_dir, name + ".json").open("w") as f:
        json.dump(doc, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    with Path(raw_dir, name + ".csv").open("w", newline="") as f:
        f.write(csv_text(doc))


def main(out=OUT):
    docs = build()
    raw = str(Path(out, "raw"))
    Path(raw).mkdir(parents=True, exist_ok=True)
    for old in Path(raw).iterdir():
        old.unlink()
    for name, d in docs.items():
        write_raw(raw, name, d)
    with Path(out, "run.json").open("w") as f:
        json.dump(manifest(docs), f, indent=1, sort_keys=True)
        f.write("\n")
    return out


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else OUT))
