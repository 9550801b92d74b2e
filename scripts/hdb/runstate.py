"""A run's bookkeeping: its directory and run.json, where each entry's files go, the build it runs
with (the sha256 of every executable, so a --resume never mixes builds unasked) and what a resume
keeps of an interrupted attempt (docs/driver.md, "When things go wrong")."""
from __future__ import annotations

import filecmp
import hashlib
import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import results
from .util import UsageError, os_error_text

HASH_PREFIX = 12  # hex digits of a sha256 shown in messages (run.json keeps all 64)
MANIFEST_ENTRY_KEYS = ("name", "benchmark", "backend", "executable", "args", "timeout_s", "status")
# What an entry keeps of an attempt that --resume reruns (run.json entries[].attempts).
ATTEMPT_KEYS = ("status", "failure", "reason", "exit_code", "duration_s", "cases", "started_utc", "binary",
                "mixed_build", "timeout_s")

Entry = dict[str, Any]
Manifest = dict[str, Any]


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def git_commit(repo: str) -> str:
    """The commit of the tree the driver runs from, as the executables name theirs (cmake/GitCommit.cmake):
    12 hex digits, "-dirty" when tracked files differ from it, "unknown" outside git."""
    try:
        p = subprocess.run(["git", "-C", repo, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                           timeout=10)
        commit = p.stdout.strip()
        if p.returncode != 0 or not commit:
            return "unknown"
        dirty = subprocess.run(["git", "-C", repo, "diff", "--quiet", "HEAD", "--"], capture_output=True, timeout=30)
        return commit + ("-dirty" if dirty.returncode == 1 else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def built_executables(bin_dir: str) -> list[str]:
    d = Path(bin_dir)
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir() if p.name.startswith("hdb-") and os.access(p, os.X_OK))


def file_sha256(path: str) -> str | None:
    """The sha256 of a file (an executable: the identity of the binary an entry ran), or None when
    it is not there."""
    h = hashlib.sha256()
    try:
        with Path(path).open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def short_hash(h: str | None) -> str:
    return f"sha256 {h[:HASH_PREFIX]}" if h else "not built"


# --- the run directory and run.json ---------------------------------------------------------------
def resolve_resume(resume: str, out_root: str) -> str:
    """The run directory --resume names (a run id under --out, or a directory), or a usage error
    that says which of the neighbours it is: a file, a folder that is no run, nothing at all."""
    candidates = [Path(resume).absolute()] + ([Path(out_root, resume)] if not Path(resume).is_absolute() else [])
    for c in candidates:
        if (c / results.MANIFEST).is_file():
            return os.path.normpath(c)
    for c in candidates:
        if c.is_file():
            raise UsageError(f"--resume {resume}: {c} is a file, not a run directory (give the run's folder or its "
                             "run id)")
    for c in candidates:
        if c.is_dir():
            raise UsageError(f"--resume {resume}: {c} is not a run (it has no {results.MANIFEST}): nothing to resume")
    root = Path(out_root)
    runs = sorted(d.name for d in root.iterdir() if (d / results.MANIFEST).is_file()) if root.is_dir() else []
    raise UsageError(f"--resume {resume}: no run named {resume} under {out_root}, and no such directory"
                     + (f" (runs there: {', '.join(runs[-5:])})" if runs else ""))


def make_run_dir(out_root: str, config_name: str) -> tuple[str, str]:
    """Creates results/<run-id>/ (mkdir, never an existing one: two drivers started in the same
    second get two directories); an --out that cannot be written is a usage error."""
    base = time.strftime("%Y%m%d-%H%M%S") + "-" + Path(config_name).stem
    try:
        Path(out_root).mkdir(parents=True, exist_ok=True)
        n = 1
        while True:
            run_id = base if n == 1 else f"{base}-{n}"
            try:
                Path(out_root, run_id).mkdir()
                return run_id, str(Path(out_root, run_id))
            except FileExistsError:
                n += 1
    except OSError as e:
        raise UsageError(f"--out {out_root}: cannot create a run directory there: {os_error_text(e)}") from None


def load_resumable_manifest(run_dir: str, resume: str) -> Manifest:
    """run.json of a run to resume, checked: a corrupt or foreign file is a usage error naming it."""
    path = Path(run_dir, results.MANIFEST)
    why = ""
    try:
        m = results.load_manifest(run_dir)
    except (OSError, ValueError) as e:
        m, why = None, os_error_text(e) if isinstance(e, OSError) else f"not JSON: {e}"
    if m is not None and not why:
        entries = m.get("entries") if isinstance(m, dict) else None
        if not isinstance(m, dict) or not isinstance(m.get("run_id"), str):
            why = "no run_id"
        elif not isinstance(entries, list) or not all(
                isinstance(e, dict) and all(k in e for k in MANIFEST_ENTRY_KEYS) for e in entries):
            why = "its entries are not the driver's (name, executable, args, status, ...)"
    if why or not isinstance(m, dict):
        raise UsageError(f"--resume {resume}: {path} is corrupt ({why}): this run cannot be resumed. Its raw/ "
                         f"results are untouched (scripts/report {run_dir} still reports them); start a new run "
                         "for the rest")
    return m


def raw_paths(run_dir: str, e: Entry, mpi: int) -> list[str]:
    """Where the executable's JSON lands. Under mpirun the harness keeps <file>.rank<N> per rank
    while running and rank 0 writes the merged document to <file> at the end (the CSV likewise)."""
    path = str(Path(run_dir, results.RAW_DIR, e["name"] + ".json"))
    return [path] + ([f"{path}.rank{r}" for r in range(mpi)] if mpi else [])


def csv_paths(run_dir: str, e: Entry, mpi: int) -> list[str]:
    """Where the executable's CSV lands: beside its JSON, named alike (results.csv_path_for)."""
    return [results.csv_path_for(p) for p in raw_paths(run_dir, e, mpi)]


def log_path(run_dir: str, e: Entry) -> str:
    return str(Path(run_dir, "logs", e["name"] + ".log"))


def keep_partial(paths: list[str]) -> None:
    """Results of an interrupted executable are kept beside the rerun's (never overwritten): moved
    to <file>.interrupted-N, so the rerun starts with no file of the earlier attempt in its place."""
    for p in paths:
        if not Path(p).exists():
            continue
        n = 1
        while Path(f"{p}.interrupted-{n}").exists():
            n += 1
        if n > 1 and filecmp.cmp(p, f"{p}.interrupted-{n - 1}", shallow=False):
            Path(p).unlink()  # kept already, by an earlier resume
        else:
            Path(p).replace(f"{p}.interrupted-{n}")


def leftover_of(e: Entry, json_path: str) -> int | None:
    """The pid of an executable of this run still alive (its driver was killed and nothing stopped
    it), recognised by the pid recorded in run.json and its command line naming this run's JSON file."""
    pid = e.get("pid")
    if not isinstance(pid, int) or pid <= 1:
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return pid if os.fsencode(json_path) in cmdline else None


# --- the build a run runs with ----------------------------------------------------------------------
def binary(e: Entry, build_dir: str, bin_dir: str) -> dict[str, Any]:
    """What an entry runs: its executable's path and sha256, and the build folder (a peer runs from
    the checkout with the build's export tools: its build folder only)."""
    if e.get("peer"):
        return {"build_dir": build_dir}
    path = str(Path(bin_dir, e["executable"]))
    return {"path": path, "build_dir": build_dir, "sha256": file_sha256(path)}


def run_build(manifest: Manifest) -> dict[str, Any]:
    """The build the run began with: {build_dir, executables: {name: sha256 or None}} (a run.json
    of an earlier driver has only build_dir)."""
    b = manifest.get("build")
    if isinstance(b, dict) and isinstance(b.get("executables"), dict):
        return b
    return {"build_dir": manifest.get("build_dir"), "executables": {}}


def build_record(entries: list[Entry], build_dir: str, bin_dir: str) -> dict[str, Any]:
    """The build a new run records once it is built: the folder and the sha256 of every executable it
    plans to run (None: not built), what a --resume must find again."""
    exes = sorted({e["executable"] for e in entries if not e.get("peer")})
    return {"build_dir": build_dir, "executables": {x: file_sha256(str(Path(bin_dir, x))) for x in exes}}


def build_difference(manifest: Manifest, e: Entry, binary: dict[str, Any]) -> str:
    """'' when the entry runs with the run's build, else what differs (folder or sha256)."""
    build = run_build(manifest)
    exe = e["executable"]
    was = build["executables"].get(exe) if not e.get("peer") and exe in build["executables"] else None
    other_hash = not e.get("peer") and exe in build["executables"] and binary["sha256"] != was
    if build.get("build_dir") and binary["build_dir"] != build["build_dir"]:
        hashes = f" ({exe} {short_hash(binary['sha256'])}; the run's: {short_hash(was)})" if other_hash else ""
        return f"ran from build {binary['build_dir']}, not the run's build {build['build_dir']}{hashes}"
    if other_hash:
        return f"ran {exe} {short_hash(binary['sha256'])}, the run's build had {short_hash(was)}"
    return ""


def build_changes(manifest: Manifest, build_dir: str, bin_dir: str, unfinished: list[Entry]) -> list[str]:
    """What differs between the build a resume would run the unfinished entries with and the run's
    own: another build folder, executables rebuilt since (another sha256)."""
    build = run_build(manifest)
    diffs = []
    if build.get("build_dir") and build_dir != build["build_dir"]:
        diffs.append(f"--build-dir {build_dir} is not the run's build {build['build_dir']}")
    for e in unfinished:
        exe = e["executable"]
        if e.get("peer") or exe not in build["executables"]:
            continue
        was, now = build["executables"][exe], file_sha256(str(Path(bin_dir, exe)))
        if now != was:
            diffs.append(f"{exe} is {short_hash(now)} now, {short_hash(was)} when the run began")
    return diffs


# --- setup and the build ------------------------------------------------------------------------------
def setup_and_build(repo: str, build_dir: str, bin_dir: str, do_setup: bool, do_build: bool, force_build: bool,
                    log: Callable[[str], None]) -> None:
    """scripts/setup (a failure is a warning: the build is tried anyway), then configure and build
    when nothing is built or a build is forced; a failed build is a RuntimeError."""
    setup = str(Path(repo, "scripts", "setup"))
    if do_setup and os.access(setup, os.X_OK):
        log(f"run-all: {setup}")
        rc = subprocess.call([setup], cwd=repo)
        if rc != 0:
            log(f"run-all: warning: scripts/setup exited {rc}; trying the build anyway")
    if not do_build:
        return
    if force_build or not built_executables(bin_dir):
        if not Path(build_dir, "CMakeCache.txt").is_file():
            _call(["cmake", "-S", repo, "-B", build_dir, "-G", "Ninja"], "configure", repo, log)
        _call(["cmake", "--build", build_dir], "build", repo, log)


def _call(cmd: list[str], what: str, repo: str, log: Callable[[str], None]) -> None:
    log("run-all: " + " ".join(shlex.quote(c) for c in cmd))
    try:
        rc = subprocess.call(cmd, cwd=repo)
    except OSError as e:
        raise RuntimeError(f"{what} failed: {e}") from None
    if rc != 0:
        raise RuntimeError(f"{what} failed (exit {rc}); see the output above")


# --- an entry's output documents --------------------------------------------------------------------
def summary_doc(paths: list[str]) -> dict[str, Any] | None:
    """The merged document when it exists, else rank 0's file of a run still going (or crashed)
    (paths: raw_paths of the entry)."""
    for p in paths[:2]:
        try:
            with Path(p).open() as f:
                doc = json.load(f)
            if isinstance(doc, dict):
                return doc
        except (OSError, ValueError):
            continue
    return None


def cases_so_far(paths: list[str]) -> tuple[int, str]:
    """How many cases an entry has recorded so far, and the id of the last."""
    doc = summary_doc(paths) or {}
    res = doc.get("results", [])
    if not isinstance(res, list):
        return 0, ""
    return len(res), (res[-1].get("id", "?") if res and isinstance(res[-1], dict) else "")


def results_complete(path: str) -> bool:
    """Its document (the merged one under MPI) is there, readable and not marked complete: false."""
    try:
        return not results.incomplete(results.load_doc(path))
    except UsageError:
        return False


def missing_results(path: str, run_dir: str) -> str:
    """Why the JSON an executable that exited 0 must have written is not usable, or ''."""
    rel = os.path.relpath(path, run_dir)
    if not Path(path).exists():
        return f"it wrote no results ({rel} is missing)"
    try:
        doc = results.load_doc(path)
    except UsageError as err:
        return f"its results are not usable: {str(err).replace(path, rel)}"
    if results.incomplete(doc):
        return f"its results are marked incomplete ({rel}: {results.incomplete_text(doc)})"
    return ""


# --- the run's state --------------------------------------------------------------------------------
def new_manifest(run_id: str, config_name: str, cfg: dict[str, Any], mpi: int, mpi_launch: dict[str, Any],
                 build_dir: str, repo: str, command_line: str, entries: list[Entry]) -> Manifest:
    """run.json of a new run, before anything ran."""
    return {
        "run_id": run_id,
        "config_name": config_name,
        "config": cfg,
        "mpi": mpi,
        "mpi_launch": mpi_launch or None,
        "build_dir": build_dir,
        "git_commit": git_commit(repo),
        "command_line": command_line,
        "started_utc": utc_now(),
        "state": "running",
        "entries": entries,
    }


def unfinished(e: Entry, complete: Callable[[Entry], bool]) -> bool:
    """An entry whose cases are not all taken: never started or stopped half-way (pending,
    running), or failed before its last case (crash, time limit, an error such as a full disk, a
    usage error): its JSON is missing, unreadable or marked complete: false (complete(e) reads its
    file for a run.json of an earlier driver). --resume reruns these; a failed entry that ran every
    case (a failed verification) is finished, while its JSON is: an entry that finished (ok, or
    failed with every case run) whose file has since gone missing or been damaged has lost its
    results, and --resume reruns it too (damaged(e) says so)."""
    if e["status"] in ("pending", "running"):
        return True
    if e["status"] not in ("failed", "ok"):
        return False
    if e["status"] == "failed" and e.get("complete") is False:
        return True
    return not complete(e)  # ok, complete, or a run.json of an earlier driver: the file decides


def damaged(e: Entry) -> bool:
    """An entry that finished but whose results file is unusable now (unfinished() for that reason)."""
    return e["status"] == "ok" or (e["status"] == "failed" and e.get("complete") is True)


def park_running(manifest: Manifest, reason: str) -> list[str]:
    """Executables stopped half-way go back to pending: --resume reruns them. Returns their names."""
    parked = []
    for e in manifest["entries"]:
        if e.get("status") == "running":
            e.update(status="pending", reason=reason)
            e.pop("pid", None)
            parked.append(e["name"])
    return parked


def mark_end(manifest: Manifest, left: list[Entry]) -> None:
    """finished only when every entry is: an entry that failed before its last case (left) leaves the
    run incomplete (state "incomplete", entries named in `incomplete`), which --resume finishes."""
    if left:
        manifest.update(state="incomplete", ended_utc=utc_now(),
                        incomplete=[{"name": e["name"], "reason": e.get("reason", "")} for e in left])
        manifest.pop("finished_utc", None)
    else:
        manifest.update(state="finished", finished_utc=utc_now())
        manifest.pop("incomplete", None)


def resume_changes(manifest: Manifest, left: list[Entry], timeout_s: float | None, no_peers: bool,
                   log: Callable[[str], None]) -> None:
    """What a resume may change in the rest of a run (the entries `left` unfinished), recorded, never
    silent: --timeout gives them a new time limit (a run stopped by a too short one would time out
    again on every resume), --no-peers drops the peers among them (marked skipped, with the reason).
    Each change is one record in run.json's `resume_changes` ({at_utc, timeout_s: {name: [was,
    now]}, peers_dropped: [names]}); each entry's attempts keep the limit they ran under."""
    record: dict[str, Any] = {}
    if no_peers:
        dropped = [e for e in left if e.get("peer")]
        at = utc_now()
        for e in dropped:
            e.update(status="skipped", reason=f"peer dropped by --resume --no-peers ({at})", exit_code=None,
                     duration_s=0.0)
            e.pop("complete", None)
        if dropped:
            record["peers_dropped"] = [e["name"] for e in dropped]
            log(f"run-all: --no-peers: {', '.join(record['peers_dropped'])} dropped (recorded as skipped)")
        else:
            log("run-all: --no-peers: no peer is left to run in this run: nothing dropped")
    if timeout_s is not None:
        changed = {e["name"]: [e["timeout_s"], timeout_s] for e in left
                   if e["status"] != "skipped" and e["timeout_s"] != timeout_s}
        for e in left:
            if e["name"] in changed:
                e["timeout_s"] = timeout_s
        if changed:
            record["timeout_s"] = changed
            log(f"run-all: --timeout: the time limit of {', '.join(changed)} is {timeout_s:g} s from now on "
                "(recorded in run.json resume_changes)")
        else:
            log(f"run-all: --timeout: no entry left to run has another limit than {timeout_s:g} s: nothing changed")
    if record:
        manifest.setdefault("resume_changes", []).append({"at_utc": utc_now(), **record})


def begin_resume(manifest: Manifest, left: list[Entry], log: Callable[[str], None],
                 before_rerun: Callable[[Entry], None], timeout_s: float | None = None, no_peers: bool = False,
                 lost: Callable[[Entry], str] = lambda e: "its results are lost") -> None:
    """A resume's changes to run.json before it reruns `left` (the unfinished entries): an interruption
    the killed driver could not record, each rerun attempt kept in `attempts`, the new time limit and
    the peers dropped (resume_changes), the entries pending again; says what it reruns, and why a
    failed entry is not rerun. before_rerun(e) stops what is left of the entry and keeps its partial
    files; lost(e) says what became of the results of an entry that finished (damaged)."""
    m = manifest
    if m.get("state", "running") == "running" and any(e["status"] == "running" for e in left):
        record = {"signal": "unknown (the driver ended without marking the run: killed with -9 or crashed)",
                  "at_utc": None, "running": [e["name"] for e in left if e["status"] == "running"]}
        m.setdefault("interruptions", []).append(record)
    for e in left:
        if e.get("started_utc"):  # the outcome of the attempt a resume reruns or drops stays in run.json
            e.setdefault("attempts", []).append({k: e[k] for k in ATTEMPT_KEYS if k in e})
    resume_changes(m, left, timeout_s, no_peers, log)
    for e in [e for e in left if e["status"] == "skipped"]:  # dropped: stopped if alive, partial files kept
        before_rerun(e)
        e.pop("pid", None)
    dropped = [e for e in left if e["status"] == "skipped"]
    left = [e for e in left if e["status"] != "skipped"]
    rerun = {e["name"] for e in left}
    for e in m["entries"]:
        if e["status"] == "failed" and e["name"] not in rerun:
            c = e.get("cases") or {}
            log(f"run-all: {e['name']}: failed, but it ran all its cases ({c.get('failed', 0)} failed): "
                f"kept, not rerun ({e.get('reason', '')})")
    for e in left:
        if damaged(e):
            why = lost(e)
            log(f"run-all: {e['name']}: rerun: it finished, but {why}")
            e["reason"] = f"rerun by --resume: {why}"
        elif e["status"] == "failed":
            log(f"run-all: {e['name']}: rerun: it failed before its last case ({e.get('reason', '')})")
        before_rerun(e)
        e["status"] = "pending"
        e.pop("pid", None)
    if not left:
        log(f"run-all: nothing to resume in {m['run_id']}: every executable finished"
            + (" (the peers left were dropped)" if dropped else ""))
    m.pop("interrupted", None)
    m.pop("error", None)
    m["state"] = "running"
    m.setdefault("resumed", []).append(utc_now())


def abandoned(run_dir: str) -> bool:
    """Whether a new run's directory holds nothing but what the driver made before any executable ran
    (run.json, an empty raw/ and logs/, its lock): then it is removed."""
    keep = {results.MANIFEST, results.RAW_DIR, "logs", "run.lock"}
    names = {p.name for p in Path(run_dir).iterdir()}
    return names <= keep and not any(any(Path(run_dir, d).iterdir()) for d in (results.RAW_DIR, "logs")
                                     if d in names)
