"""Combines run directories into one, for one report: scripts/gpu-check runs every benchmark as a
run of its own (so that each has its own deadline inside a device call), and the reference run of a
GPU is all of them together.

    scripts/hdb/python -m hdb.combine OUT_DIR RUN_DIR...

OUT_DIR gets raw/ and logs/ of every run (their file names are benchmark-backend, so they do not
clash; a clash is an error, never an overwrite) and a run.json whose entries are every run's, in
order, each naming the run it came from. The combined run is `finished` only when every part is; a
part that was still `running` (its call stopped at its limit) makes it `incomplete`, and the report
says so. Then scripts/report OUT_DIR."""
import json
import pathlib
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from . import contract
from .util import StrPath


def _load(run_dir: StrPath) -> Any:
    path = pathlib.Path(run_dir) / "run.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"combine: {run_dir} is not a run directory ({path}: {e})") from e


def combine(out_dir: StrPath, run_dirs: Sequence[StrPath]) -> dict[str, Any]:
    out = pathlib.Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"combine: {out} exists and is not empty; give a new directory")
    runs = [(pathlib.Path(d), _load(d)) for d in run_dirs]
    if not runs:
        raise SystemExit("combine: no run directories given")
    # Every clash is found before anything is written.
    files: list[tuple[pathlib.Path, pathlib.Path]] = []
    seen: set[tuple[str, str]] = set()
    for path, _ in runs:
        for sub in ("raw", "logs"):
            for f in sorted((path / sub).glob("*")) if (path / sub).is_dir() else []:
                if (sub, f.name) in seen:
                    raise SystemExit(f"combine: {sub}/{f.name} is in two of the runs; not overwritten")
                seen.add((sub, f.name))
                files.append((f, out / sub / f.name))
    for sub in ("raw", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for src, dest in files:
        shutil.copy2(src, dest)
    entries = []
    for path, manifest in runs:
        for e in manifest.get("entries", []):
            entries.append(dict(e, combined_from=manifest.get("run_id", path.name)))
    # A part still marked running was stopped from outside (the device call's time limit): its
    # executable's results so far are kept, and the combined run names it as not finished.
    left = [{"name": e.get("name", "?"), "reason": e.get("reason") or
             ("stopped from outside while running (a device call's time limit); its results so far are kept"
              if e.get("status") == "running" else e.get("status", "?"))}
            for e in entries if e.get("status") not in ("ok", "skipped")]
    first = runs[0][1]
    states = {m.get("state") for _, m in runs}
    combined = dict(first)
    combined.update(
        run_id=out.name,
        entries=entries,
        started_utc=min(m.get("started_utc", "") for _, m in runs),
        state="finished" if states == {"finished"} and not left else "incomplete",
        incomplete=left,
        command_line="; ".join(m.get("command_line", "") for _, m in runs),
        combined_from=[{"run_id": m.get("run_id", p.name), "state": m.get("state"),
                        "command_line": m.get("command_line", "")} for p, m in runs],
    )
    # The first part's end times are no end of the whole: set from every part, or none.
    combined.pop("finished_utc", None)
    combined.pop("ended_utc", None)
    ends = [m.get("finished_utc") or m.get("ended_utc") for _, m in runs]
    if all(ends):
        combined["finished_utc" if combined["state"] == "finished" else "ended_utc"] = max(ends)
    (out / "run.json").write_text(json.dumps(combined, indent=1, sort_keys=True) + "\n")
    return combined


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return contract.EXIT_OK
    if len(argv) < 2:
        print("usage: scripts/hdb/python -m hdb.combine OUT_DIR RUN_DIR...", file=sys.stderr)
        return contract.EXIT_USAGE
    combined = combine(argv[0], argv[1:])
    print(f"combine: {len(combined['entries'])} entries of {len(argv) - 1} runs -> {argv[0]} "
          f"({combined['state']})")
    return contract.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
