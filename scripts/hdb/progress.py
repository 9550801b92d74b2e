"""The driver's progress line: '[3/12 | 1m05s elapsed | ~4m10s left] hdb-ra-cpu: started ...', with an
estimate of the time left from this configuration's previous runs (same executable, same arguments)
or else the mean duration of this run's executables."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from . import contract, results
from .runplan import shown
from .util import duration_text

PROGRESS_EVERY_S = 5.0  # at most one progress line per executable this often
FINISHED = ("ok", "failed", "skipped")


class Progress:
    def __init__(self, out_root: str, run_id: str, entries: list[dict[str, Any]], stream: TextIO) -> None:
        self.t0 = time.monotonic()
        self.stream = stream
        self.history = self._history(out_root, run_id)
        self.entries = entries

    @staticmethod
    def _history(out_root: str, run_id: str) -> dict[tuple[str, tuple[str, ...]], float]:
        hist: dict[tuple[str, tuple[str, ...]], float] = {}
        root = Path(out_root)
        if not root.is_dir():
            return hist
        for d in sorted(p.name for p in root.iterdir()):
            if d == run_id:
                continue
            try:
                with (root / d / results.MANIFEST).open() as f:
                    m = json.load(f)
            except (OSError, ValueError):
                continue
            entries = m.get("entries") if isinstance(m, dict) else None
            for e in entries if isinstance(entries, list) else []:
                try:
                    if e.get("status") in ("ok", "skipped") and isinstance(e.get("duration_s"), (int, float)):
                        hist[(e["name"], tuple(e.get("args", [])))] = e["duration_s"]
                except (AttributeError, KeyError, TypeError):
                    continue
        return hist

    def estimate(self, e: dict[str, Any]) -> float | None:
        if e["status"] in FINISHED:
            return 0.0
        h = self.history.get((e["name"], tuple(e["args"])))
        if h is not None:
            return h
        done = [x["duration_s"] for x in self.entries if x["status"] == "ok" and x.get("duration_s")]
        return sum(done) / len(done) if done else None

    def left(self, current: dict[str, Any] | None = None, current_elapsed: float = 0.0) -> float | None:
        total = 0.0
        for e in self.entries:
            est = self.estimate(e)
            if est is None:
                return None
            if e is current:
                est = max(est - current_elapsed, 0.0)
            total += est
        return total

    def say(self, index: int, current: dict[str, Any] | None, msg: str, current_elapsed: float = 0.0) -> None:
        left = self.left(current, current_elapsed)
        eta = "time left unknown" if left is None else f"~{duration_text(left)} left"
        print(f"[{index}/{len(self.entries)} | {duration_text(time.monotonic() - self.t0)} elapsed | {eta}] {msg}",
              file=self.stream, flush=True)


def timed_out(entries: list[dict[str, Any]], left: list[dict[str, Any]]) -> bool:
    """Whether an entry left incomplete (run.json `incomplete`) stopped at its time limit: a resume with
    the same limit would stop it again, so the hint names --timeout."""
    names = {x.get("name") for x in left if isinstance(x, dict)}
    return any(e.get("name") in names and e.get("failure") == "timeout" for e in entries if isinstance(e, dict))


def print_summary(manifest: dict[str, Any], problems: list[str], run_dir: str, out_root: str,
                  log: Callable[[str], None]) -> int:
    """The table at the end of a run: each entry's status, time, cases and reason, the problems of its
    files, the counts, what is left for --resume and any mix of builds; 1 when an entry failed."""
    entries, run_id = manifest["entries"], manifest["run_id"]
    log(f"\nrun-all: summary of {run_id}")
    width = max([22] + [len(shown(e)) for e in entries])
    log(f"{'executable':<{width}} {'status':<8} {'time':>7}  {'cases ok/skip/fail':<18} reason")
    for e in entries:
        c = e.get("cases", {})
        cs = f"{c.get('ok', 0)}/{c.get('skipped', 0)}/{c.get('failed', 0)}" if c else "-"
        log(f"{shown(e):<{width}} {e['status']:<8} {duration_text(e.get('duration_s')):>7}  {cs:<18} "
            f"{e.get('reason', '')}")
    for p in problems:
        log(f"run-all: problem: {p}")
    n = {s: sum(1 for e in entries if e["status"] == s) for s in FINISHED}
    log(f"run-all: {n['ok']} ok, {n['skipped']} skipped, {n['failed']} failed -> {run_dir}")
    left = manifest.get("incomplete") or []
    if left:
        log(f"run-all: the run is incomplete: {len(left)} executable(s) did not take all their cases ("
            + "; ".join(f"{x['name']}: {x['reason']}" for x in left) + "); once the cause is fixed, finish "
            f"with: scripts/run-all --resume {run_id} --out {out_root}"
            + (" (one timed out: the same limit would stop it again; give it longer with --timeout SECONDS)"
               if timed_out(entries, left) else ""))
    mixed = [e for e in entries if e.get("mixed_build")]
    if mixed:
        log("run-all: warning: this run mixes builds: " + "; ".join(f"{e['name']} {e['mixed_build']}" for e in mixed))
    return contract.EXIT_FAILED if n["failed"] else contract.EXIT_OK
