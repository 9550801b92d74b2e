"""run-all --dry-run: the plan of a new run (its entries, their cases and how long they may take),
printed without running anything and without making a run directory."""
import shlex
import subprocess
from pathlib import Path
from typing import Any, TextIO

from .runplan import Entry, option_value
from .util import duration_text


def count_cases(exe: Path, args: list[str]) -> tuple[int | None, str]:
    """-> (cases, why unknown): the executable's own --list with the entry's arguments."""
    if not exe.is_file():
        return None, "not built"
    try:
        p = subprocess.run([str(exe), *args, "--list"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"--list failed ({e})"
    if p.returncode != 0:
        first = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[0]
        return None, f"--list: {first}"
    return sum(1 for line in p.stdout.splitlines() if line.strip()), ""


def print_plan(entries: list[Entry], cfg: dict[str, Any], config_path: str, bin_dir: str, out: TextIO) -> None:
    """One line per entry: cases (from --list), the timed-pass budget (cases x --max-time: the
    harness stops a case's timed passes there, unless its minimum passes take longer), and its time
    limit; then the totals. Set-up, data generation and verification are not in the budget."""
    print(f"run-all: dry run of {config_path}: {len(entries)} entries; nothing is run and no run directory is made",
          file=out)
    if cfg.get("beyond_caches"):
        print("run-all: [beyond_caches]: the largest sizes follow this machine's caches once the executables are "
              "built; shown here as configured", file=out)
    rows = []
    cases_total, budget_total, limit_total, unknown = 0, 0.0, 0.0, 0
    for e in entries:
        limit = float(e.get("timeout_s") or 0)
        limit_total += limit
        if e.get("peer"):
            cases, why = None, "a peer: no case list"
        else:
            cases, why = count_cases(Path(bin_dir, e["executable"]), e["args"])
        max_time = option_value(e["args"], "--max-time")
        budget = cases * float(max_time) if cases is not None and max_time is not None else None
        if cases is None:
            unknown += 1
        else:
            cases_total += cases
            budget_total += budget or 0
        rows.append((e["name"], "?" if cases is None else str(cases), duration_text(budget), duration_text(limit),
                     why or " ".join([e["executable"], *map(shlex.quote, e["args"])])))
    widths = [max(len(r[i]) for r in rows + [("entry", "cases", "budget", "limit", "")]) for i in range(4)]
    print(f"{'entry':<{widths[0]}}  {'cases':>{widths[1]}}  {'budget':>{widths[2]}}  {'limit':>{widths[3]}}  command",
          file=out)
    for r in rows:
        print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}  {r[4]}", file=out)
    known = len(entries) - unknown
    print(f"total: {cases_total} cases in {known} entr{'y' if known == 1 else 'ies'}"
          + (f" ({unknown} more without a case count)" if unknown else "")
          + f"; a timed-pass budget of {duration_text(budget_total)} (cases x --max-time: a case's timed passes stop "
          "there or at --max-passes, unless its minimum --passes take longer; set-up, data generation and "
          f"verification not counted); at most {duration_text(limit_total)} (the entries' time limits)", file=out)
