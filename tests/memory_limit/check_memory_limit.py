#!/usr/bin/env python3
"""--memory-limit end to end, for one benchmark executable (issue 18).

  check_memory_limit.py fit   BENCHMARK EXE --list benchmarks.txt
      Runs EXE at the benchmark's two sizes (benchmarks.txt) under its --memory-limit, with --json,
      and checks: exit 0; every case at the large size skipped with a reason that starts with
      "needs" and gives an amount (and, in MemoryPlan's form "needs N MiB of ... (a X MiB, ...), more
      than the M MiB it has", names each allocation with its size), except the benchmark's host
      cases on a device backend; every case at the small size ran, verified; the document records
      context.memory_limit_bytes.
  check_memory_limit.py usage BENCHMARK EXE --list benchmarks.txt
      --memory-limit 0 and --memory-limit abc: exit 2 with a message naming the option.

Exit 77 (a skip under CTest) when EXE reports no device (77).
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile

QUICK = ["--passes", "1", "--max-passes", "1", "--warmup", "0", "--max-time", "0.01", "--quiet"]
SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
AMOUNT = r"\d+ (?:B|KiB|MiB)"
# MemoryPlan::describe: "needs 96 MiB of device memory (input 32 MiB, output 32 MiB), more than the 64 MiB it has".
PLAN_REASON = re.compile(r"needs (" + AMOUNT + r") of [a-z ]+ memory \((.+)\), more than the (" + AMOUNT + r") it has$")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def size_bytes(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text)
    if not m:
        raise ValueError("not a size: " + text)
    return int(m.group(1)) * SUFFIX[m.group(2)]


def read_list(path, bench):
    """The benchmark's line of benchmarks.txt: (small, large, limit, host-case patterns, extra arguments)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#") or words[0] != bench:
                continue
            small, large, limit = words[1:4]
            host, extra = [], []
            for w in words[4:]:
                if w.startswith("host-cases="):
                    host += w[len("host-cases="):].split(",")
                else:
                    extra.append(w)
            return small, large, limit, host, extra
    fail(f"{bench}: not in {path}")


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    if p.returncode == 77:
        print("SKIP: no device: " + (p.stdout + p.stderr).strip()[-300:])
        sys.exit(77)
    return p


def check_reason(case_id, reason):
    if not reason.startswith("needs") or not re.search(AMOUNT, reason):
        fail(f"{case_id}: skip reason does not start with 'needs' and give an amount: {reason!r}")
    m = PLAN_REASON.match(reason)
    if m:  # MemoryPlan's form: every allocation named with its size (a name may hold commas)
        item = r"\S.*? " + AMOUNT
        if not re.fullmatch(item + r"(?:, " + item + r")*", m.group(2)):
            fail(f"{case_id}: the skip reason does not name each allocation with its size: {reason!r}")
    elif re.match(r"needs " + AMOUNT + r" of [a-z ]+ memory \(", reason):
        fail(f"{case_id}: skip reason in a form the test does not know: {reason!r}")


def check_fit(bench, exe, spec):
    small, large, limit, host_cases, extra = spec
    backend = os.path.basename(exe).rsplit("-", 1)[-1]
    with tempfile.TemporaryDirectory(prefix="hdb-memlimit-") as tmp:
        doc_path = os.path.join(tmp, "out.json")
        cmd = [exe, "--sizes", f"{small},{large}", "--memory-limit", limit, "--json", doc_path] + QUICK + extra
        p = run(cmd)
        if p.returncode != 0:
            fail(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        with open(doc_path, encoding="utf-8") as f:
            doc = json.load(f)
    got = doc.get("context", {}).get("memory_limit_bytes")
    if got != size_bytes(limit):
        fail(f"context.memory_limit_bytes is {got!r}, expected {size_bytes(limit)} (--memory-limit {limit})")
    results = doc.get("results", [])
    by_size = {size_bytes(small): [], size_bytes(large): []}
    for r in results:
        if r.get("size_bytes") not in by_size:
            fail(f"{r.get('id')}: size {r.get('size_bytes')} is neither {small} nor {large}")
        by_size[r["size_bytes"]].append(r)
    for r in by_size[size_bytes(small)]:
        if r.get("status") != "ok" or not r.get("verification", {}).get("verified"):
            fail(f"{r.get('id')} (fits {limit}): status {r.get('status')!r}, reason {r.get('reason')!r}, "
                 f"verification {r.get('verification')!r}")
    skipped = 0
    for r in by_size[size_bytes(large)]:
        on_host = backend != "cpu" and any(fnmatch.fnmatchcase(r.get("id", ""), pat) for pat in host_cases)
        if r.get("status") == "skipped":
            check_reason(r.get("id"), r.get("reason", ""))
            skipped += 1
        elif not on_host:
            fail(f"{r.get('id')} (more than {limit}): status {r.get('status')!r}, expected skipped; reason {r.get('reason')!r}")
        elif r.get("status") != "ok" or not r.get("verification", {}).get("verified"):
            fail(f"{r.get('id')} (a host case): status {r.get('status')!r}, reason {r.get('reason')!r}")
    if not by_size[size_bytes(small)] or not skipped:
        fail(f"{len(by_size[size_bytes(small)])} cases at {small}, {skipped} skipped at {large}: expected some of each")
    print(f"{os.path.basename(exe)}: {len(by_size[size_bytes(small)])} cases at {small} ok and verified, "
          f"{skipped} at {large} skipped under --memory-limit {limit}")


def check_usage(exe):
    for bad in ("0", "abc"):
        cmd = [exe, "--sizes", "32K", "--memory-limit", bad] + QUICK
        p = run(cmd)
        if p.returncode != 2:
            fail(f"{' '.join(cmd)}: exit {p.returncode}, expected 2 (usage)")
        if "--memory-limit" not in p.stderr:
            fail(f"{' '.join(cmd)}: the message does not name --memory-limit: {p.stderr.strip()!r}")
    print(f"{os.path.basename(exe)}: --memory-limit 0 and abc exit 2 naming the option")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["fit", "usage"])
    ap.add_argument("benchmark")
    ap.add_argument("exe")
    ap.add_argument("--list", required=True, help="tests/memory_limit/benchmarks.txt")
    a = ap.parse_args()
    spec = read_list(a.list, a.benchmark)
    if a.mode == "fit":
        check_fit(a.benchmark, a.exe, spec)
    else:
        check_usage(a.exe)


if __name__ == "__main__":
    main()
