"""What the peers that run on the suite's exported data share (DuckDB, CuPy): the export tool's
command line, the exported relations as NumPy columns, and the loop that takes `hdb-export --stream`'s
cases one at a time, runs each as soon as it is written and deletes its folder before the next is made
(peak disk and memory of one case), under the peer's time budget."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import contract
from . import record

EXPORT_TOOL = str(Path("tools", "hdb-export"))
# Share of the driver's time limit a peer plans to use: cases it cannot start within it are recorded
# as skipped with that reason, so a slow engine never turns the whole entry into a timeout.
BUDGET_SHARE = 0.8


def budget_args(job) -> list[str]:
    """--budget-s for a peer's command line (BUDGET_SHARE of the driver's limit; none without one)."""
    return ["--budget-s", f"{BUDGET_SHARE * job.timeout_s:g}"] if job.timeout_s else []


def any_variant(pattern):
    """An --only pattern of the executables ('join/parallel', '*/tuned[...]@1M') for the export tool,
    whose one variant is 'export': the same tests, params and sizes, whatever variant it names."""
    if "/" not in pattern:
        return pattern
    test, rest = pattern.split("/", 1)
    cut = min([i for i in (rest.find("["), rest.find("@")) if i >= 0], default=len(rest))
    return f"{test}/*{rest[cut:]}"


def export_args(rest):
    """The executables' options as the export tool takes them (--only patterns for any variant)."""
    out, i = [], 0
    while i < len(rest):
        a = rest[i]
        if a == "--only" and i + 1 < len(rest):
            out += [a, ",".join(any_variant(p) for p in rest[i + 1].split(","))]
            i += 2
            continue
        if a.startswith("--only="):
            a = "--only=" + ",".join(any_variant(p) for p in a[len("--only="):].split(","))
        out.append(a)
        i += 1
    return out


def load_relation(case_dir, spec, numpy):
    """An exported (columns, rows) array as a list of contiguous 1-D column arrays (views)."""
    a = numpy.load(Path(case_dir, spec["file"]))
    return [a[i] for i in range(a.shape[0])]


def reference(manifest: dict[str, Any], case_dir: str, numpy) -> Any:
    """The suite's reference answer of an exported ra or tpch case as a (columns, rows) array: the
    answer file, or a reduce's aggregate row (one value per column)."""
    if "aggregate" in manifest:
        return numpy.array(manifest["aggregate"], dtype=numpy.uint64).reshape(-1, 1)
    return numpy.load(Path(case_dir, manifest["answer"]["file"]))


def parse_args(prog: str, description: str, benchmarks: tuple[str, ...], argv) -> tuple[Any, list[str]]:
    """The peer's command line (record.argument_parser and --budget-s); the namespace is None after
    saying so when the peer answers no case of the benchmark asked for."""
    ap = record.argument_parser(prog, description)
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no case after this many seconds (0: no budget); the rest are skipped, saying so")
    a, rest = ap.parse_known_args(argv)
    if a.benchmark not in benchmarks:
        print(f"{prog}: error: nothing to run for benchmark '{a.benchmark}' (this peer answers "
              f"{', '.join(benchmarks)})", file=sys.stderr)
        return None, rest
    return a, rest


def exporter_or_none(prog: str, build_dir: str) -> str | None:
    """The export tool of the build, or None after saying it is not built."""
    exporter = str(Path(build_dir, EXPORT_TOOL))
    if os.access(exporter, os.X_OK):
        return exporter
    print(f"{prog}: error: {exporter} is not built (cmake --build {build_dir} --target hdb-export)", file=sys.stderr)
    return None


def over_budget(case: dict[str, Any], budget_s: float, t0: float) -> dict[str, Any]:
    """The case as it runs: skipped, saying so, once the peer's budget (from t0) is spent."""
    spent = time.monotonic() - t0
    if budget_s and spent > budget_s:
        return dict(case, status="skipped",
                    reason=f"not run: the peer's time budget of {budget_s:g} s ({BUDGET_SHARE:.0%} of the "
                           f"driver's limit) was spent after {spent:.0f} s")
    return case


def stream(prog: str, state, benchmark: str, rest: list[str], harness: record.Harness, exporter: str,
           tmp_prefix: str, make_doc: Callable[[dict[str, Any]], record.Document],
           run_case: Callable[[record.Document, dict[str, Any], str], None], budget_s: float = 0,
           t0: float | None = None) -> int:
    """Runs every case hdb-export hands over: make_doc(the export's cases.json) makes the document at
    the first case (state.doc, so that a signal finishes it), run_case(doc, case, work folder) records
    one case (a case past the budget arrives skipped). Returns the peer's exit status."""
    t0 = time.monotonic() if t0 is None else t0
    record.remove_stale_dirs(tmp_prefix)  # a peer killed with -9 leaves its case folder (GBs at large sizes)
    work = record.work_dir(tmp_prefix)
    proc = None
    try:
        cmd = [exporter, benchmark, "--out", work, "--stream", "--seed", str(harness.seed)] + export_args(rest)
        if harness.threads:
            cmd += ["--threads", str(harness.threads)]
        print("$ " + " ".join(cmd), flush=True)
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        assert proc.stdin is not None and proc.stdout is not None
        doc, done, said = None, 0, []
        for line in proc.stdout:
            if not line.startswith(("@ready", "@done")):
                said.append(line.rstrip("\n"))
                print(line, end="", flush=True)
                continue
            with Path(work, "cases.json").open() as f:
                exported = json.load(f)
            if doc is None:
                doc = state.doc = make_doc(exported)
            for case in exported["cases"][done:]:
                run_case(doc, over_budget(case, budget_s, t0), work)
                if case.get("dir"):
                    shutil.rmtree(Path(work, case["dir"]), ignore_errors=True)
            done = len(exported["cases"])
            if line.startswith("@ready"):
                proc.stdin.write("next\n")
                proc.stdin.flush()
        rc = proc.wait()
        if rc != 0:
            why = [ln for ln in said if "error:" in ln]
            msg = f"hdb-export exited {rc}" + (f": {why[-1].split('error:', 1)[1].strip()}" if why else "")
            if doc is None:
                print(f"{prog}: error: {msg}", file=sys.stderr)
                return rc if rc in (contract.EXIT_USAGE, contract.EXIT_SKIP) else contract.EXIT_FAILED
            raise RuntimeError(msg)
        if doc is None:  # --list, --help: hdb-export printed its answer, no case ran
            return contract.EXIT_OK
        doc.finish()
        s = doc.doc["summary"]
        print(f"summary: {s['ok']} ok, {s['skipped']} skipped, {s['failed']} failed")
        return doc.exit_code()
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def manifest_of(work: str, case: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An exported case's folder and its manifest.json."""
    case_dir = str(Path(work, case["dir"]))
    with Path(case_dir, "manifest.json").open() as f:
        return case_dir, json.load(f)


def not_run(doc: record.Document, case: dict[str, Any], entries) -> bool:
    """Records a case the suite skipped or could not set up, once per (variant, params) pair of
    entries; True when it was one."""
    if case["status"] == "ok":
        return False
    for variant, params in entries:
        if case["status"] == "skipped":
            doc.skipped(case, case["test"], variant, params, case.get("reason", ""))
        else:
            doc.failed(case, case["test"], variant, params, "the suite's set-up failed: " + case.get("reason", ""))
    return True
