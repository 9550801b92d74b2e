#!/usr/bin/env python3
"""Checks hdb-tpch --output files against the run's JSON: for every verified TPC-H result, the
kernel's output file has exactly the recorded number of rows, each with the recorded number of
'|'-separated fields. Usage: check_output.py RESULTS.json OUTPUT_PATTERN (with {k} for the kernel)."""
import json
import sys


def main(json_path, pattern):
    with open(json_path) as f:
        doc = json.load(f)
    checked = set()
    for r in doc["results"]:
        params = r["params"] if isinstance(r["params"], dict) else dict(p.split("=", 1) for p in r["params"].split(",") if p)
        if r["status"] != "ok" or params.get("data") == "random" or r["test"] in checked:
            continue
        rows, cols = r["extra"]["rows"], r["extra"]["columns"]
        path = pattern.replace("{k}", r["test"])
        with open(path) as f:
            lines = f.read().splitlines()
        if len(lines) != rows:
            print(f"check_output: {path} has {len(lines)} rows, the run verified {rows}")
            return 1
        bad = [l for l in lines if len(l.split("|")) != cols]
        if bad:
            print(f"check_output: {path}: row {bad[0]!r} does not have {cols} fields")
            return 1
        checked.add(r["test"])
    if not checked:
        print("check_output: no verified TPC-H results")
        return 1
    print(f"check_output: kernels {sorted(checked)} written with the verified row counts")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
