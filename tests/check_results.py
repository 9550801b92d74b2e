#!/usr/bin/env python3
"""Checks a results JSON written by an hdb-* executable against the hetdb-bench/1 schema
(docs/results-schema.md). Exit 0 when valid and no case failed; 1 otherwise."""
import json
import os
import sys

REQUIRED_TOP = ["schema", "benchmark", "backend", "context", "ceiling", "results", "summary"]
REQUIRED_RESULT = ["id", "test", "variant", "params", "size_bytes", "size_label", "transfer", "status",
                   "reason", "verification", "elements", "bytes", "trials", "extra"]
CONTEXT_KEYS = ["host", "cpu", "logical_cores", "memory_bytes", "os", "compiler", "git_commit",
                "command_line", "time_utc", "device"]


def fail(msg):
    print(f"check_results: {msg}")
    sys.exit(1)


def check_mpi(doc, ranks):
    mpi = doc.get("mpi")
    if not mpi or mpi.get("size") != ranks or len(mpi.get("ranks", [])) != ranks:
        fail(f"expected an MPI block with {ranks} ranks, got {mpi and mpi.get('size')}")
    for r in doc["results"]:
        if r["status"] == "ok":
            a = r.get("across_ranks")
            if not a or a["n"] != ranks or not (a["min"] <= a["mean"] <= a["max"]):
                fail(f"result {r['id']} lacks statistics across {ranks} ranks")
    for entry in mpi["ranks"]:
        if entry["exit_code"] != 0 or not entry.get("results"):
            fail(f"rank {entry['rank']} exited {entry['exit_code']} or has no results")


def main(path, min_ok=1, ranks=0):
    if not os.path.exists(path):
        print(f"check_results: no results file {path} (executable skipped)")
        return 0
    with open(path) as f:
        doc = json.load(f)
    for k in REQUIRED_TOP:
        if k not in doc:
            fail(f"missing top-level key '{k}'")
    if doc["schema"] != "hetdb-bench/1":
        fail(f"schema is {doc['schema']!r}")
    for k in CONTEXT_KEYS:
        if k not in doc["context"]:
            fail(f"context lacks '{k}'")
    n_ok = 0
    for r in doc["results"]:
        for k in REQUIRED_RESULT:
            if k not in r:
                fail(f"result {r.get('id')} lacks '{k}'")
        if r["status"] == "failed":
            fail(f"result {r['id']} failed: {r['reason']}")
        if r["status"] == "ok":
            n_ok += 1
            if not r["verification"]["verified"]:
                fail(f"result {r['id']} is ok but not verified")
            if not r["trials"]:
                fail(f"result {r['id']} has no trials")
            for t in r["trials"]:
                if t["kernel_s"] <= 0 or t["total_s"] < 0:
                    fail(f"result {r['id']} has a non-positive kernel time")
            st = r["stats"]["kernel_s"]
            if not (st["min"] <= st["median"] <= st["max"]):
                fail(f"result {r['id']} has inconsistent statistics")
            if r["throughput"]["kernel_gbps"] <= 0:
                fail(f"result {r['id']} has no throughput")
        elif r["status"] == "skipped" and not r["reason"]:
            fail(f"result {r['id']} skipped without a reason")
    s = doc["summary"]
    if s["ok"] != n_ok or s["failed"] != 0:
        fail(f"summary {s} does not match the results")
    if n_ok < min_ok:
        fail(f"only {n_ok} verified results, expected at least {min_ok}")
    if ranks:
        check_mpi(doc, ranks)
    print(f"check_results: {path}: {n_ok} verified results, schema ok" + (f", {ranks} ranks" if ranks else ""))
    return 0


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("json")
    ap.add_argument("min_ok", nargs="?", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=0, help="expect an EP-mode document from this many ranks")
    a = ap.parse_args()
    sys.exit(main(a.json, a.min_ok, a.ranks))
