"""A kernel fault mid-run (review item 3): the case it hits fails naming the lost context, the run stops
there with exit code 1, and the results taken before it stay in the JSON, marked incomplete.

    check_lost_device.py HDB-RA-CUDA-HOST WORKDIR

Host execution's HDB_CUDA_HOST_FAULT=N faults the N-th launch: N is the first case's launch count
plus one (counted with HDB_CUDA_HOST_TRACE), so the fault hits the second case's first launch.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

exe, work = sys.argv[1], Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
fixed = ["--sizes", "32K", "--key-bits", "32", "--transfer", "pinned", "--warmup", "1", "--passes", "2",
         "--max-passes", "2"]
cases = ["select/paper", "unique/paper", "join/paper"]  # each launches kernels of its own
first = subprocess.run([exe, *fixed, "--only", cases[0]], env={**os.environ, "HDB_CUDA_HOST_TRACE": "1"},
                       capture_output=True, text=True)
launches = first.stderr.count("host execution: ")
assert first.returncode == 0 and launches > 0, (first.returncode, first.stderr[-2000:])

out = work / "lost.json"
run = subprocess.run([exe, *fixed, "--only", ",".join(cases), "--json", str(out)],
                     env={**os.environ, "HDB_CUDA_HOST_FAULT": str(launches + 1)}, capture_output=True, text=True)
doc = json.loads(out.read_text())
status = [(r["test"] + "/" + r["variant"], r["status"], r.get("reason", "")) for r in doc["results"]]
problems = []
if run.returncode != 1:
    problems.append(f"exit code {run.returncode}, expected 1")
if len(status) != 2 or status[0][1] != "ok" or status[1][1] != "failed" or "context is lost" not in status[1][2]:
    problems.append(f"results {status}: expected the first case ok and the second failed with a lost context")
if doc["complete"] or "stopped by an error" not in doc.get("incomplete_reason", ""):
    problems.append(f"complete {doc['complete']}, reason {doc.get('incomplete_reason')!r}")
for p in problems:
    print("FAIL:", p)
print("ok" if not problems else run.stdout[-2000:] + run.stderr[-2000:])
sys.exit(1 if problems else 0)
