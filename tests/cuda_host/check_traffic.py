"""--traffic end to end (issue 44): every hdb-*-cuda-host executable takes a traffic pass at a small
size; each document passes the results schema; every case that ran has its `traffic` object, and each
benchmark has a case whose kernels were counted; project/tuned, a streaming kernel, moves no more
than its declared bytes through the L2 model, in 16-byte accesses using at least 95 % of each
sector's bytes; the tuned n-gram search launches two kernels and a memset per chunk of queries;
--traffic on another backend is a usage error.

    check_traffic.py BIN_DIR WORKDIR CHECK_RESULTS_PY
"""
import json
import subprocess
import sys
from pathlib import Path

bin_dir, work, check = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
work.mkdir(parents=True, exist_ok=True)
quick = ["--passes", "1", "--max-passes", "1", "--warmup", "0", "--quiet", "--traffic"]
runs = {
    "ra": ["--sizes", "1M", "--key-bits", "32", "--only", "project/tuned,select/paper,join/paper"],
    "merge": ["--sizes", "32K", "--only", "reencode/*,dict_merge/merge_path,dict_merge/tuned"],
    "ngram": ["--sizes", "32K", "--errors", "1", "--only", "search/gpu-segmented,*/gpu-tuned"],
    "tpch": ["--sizes", "32K", "--only", "A/fused"],
    "ssb": ["--sf", "0.01", "--only", "q1.1/fused"],
    "bus": ["--sizes", "32K"],
}
problems = []
for bench, args in runs.items():
    exe = bin_dir / f"hdb-{bench}-cuda-host"
    if not exe.exists():
        continue
    out = work / f"{bench}.json"
    run = subprocess.run([exe, *quick, *args, "--json", out], capture_output=True, text=True)
    if run.returncode != 0:
        problems.append(f"{bench}: exit {run.returncode}: {run.stderr[-1500:]}")
        continue
    schema = subprocess.run([sys.executable, check, out], capture_output=True, text=True)
    if schema.returncode != 0:
        problems.append(f"{bench}: schema: {schema.stdout[-1500:]}{schema.stderr[-1500:]}")
    doc = json.loads(out.read_text())
    if doc["context"]["device"].get("traffic_instrumented") is not True:
        problems.append(f"{bench}: the run was not the instrumented build")
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    missing = [r["id"] for r in ok if "traffic" not in r]
    if not ok or missing:
        problems.append(f"{bench}: no traffic object on {missing or 'any case (none ran)'}")
        continue
    if not any(r["traffic"]["launches"] + r["traffic"]["memsets"] + r["traffic"]["device_copies"] > 0 for r in ok):
        problems.append(f"{bench}: no case's kernels were counted")
    if bench == "ra":
        t = next(r["traffic"] for r in ok if r["test"] == "project" and r["variant"] == "tuned")
        if not (t["launches"] == 1 and t["traffic_ratio"] <= 1.1 and t["access_width"]["16"] > 0
                and t["sector_efficiency"] >= 0.95):
            problems.append(f"ra: project/tuned's profile is not a streaming kernel's: {json.dumps(t)}")

    if bench == "ngram":
        # The tuned search launches a fixed number of kernels per chunk of queries, whatever the
        # query count and the lists a query has: all of a batch's queries in two launches and a memset.
        for r in ok:
            if r["variant"] != "gpu-tuned":
                continue
            t, queries = r["traffic"], r["extra"]["queries"]
            want = (2, 1) if r["test"] == "batch" else (2 * queries, queries)
            if (t["launches"], t["memsets"]) != want:
                problems.append(f"ngram: {r['id']}: launches and memsets {(t['launches'], t['memsets'])}, want {want}")

cpu = subprocess.run([bin_dir / "hdb-ra-cpu", "--traffic", "--sizes", "32K", "--only", "project"],
                     capture_output=True, text=True)
if cpu.returncode != 2 or "--traffic" not in cpu.stderr:
    problems.append(f"hdb-ra-cpu --traffic: exit {cpu.returncode} (want 2 naming --traffic): {cpu.stderr[-500:]}")

for p in problems:
    print(p)
print("traffic: ok" if not problems else f"traffic: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
