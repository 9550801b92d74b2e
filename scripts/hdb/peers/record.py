"""The shared peer framework: what every peer needs to run and record its cases like the harness does,
so its numbers sit beside the executables' in the same hetdb-bench/2 schema and go through the same
checks. A peer hands over typed parameters and trials; everything the C++ harness derives from them
(the id, the statistics, the throughput, the parameter text, the CSV) is made by hdb.contract, the
only Python code that makes them (tests/driver/test_contract.py checks it against the executables).

- `Harness`: the executables' stopping-rule options read from the same flags (--warmup, --passes,
  --max-passes, --max-time, --target-noise, --threads, --seed, --flush-caches); `measure(fn, cold,
  cold_note)` takes the passes the executables' way (contract.StoppingRule.measure): with --warmup N
  >= 1 the cold pass first, timed and kept apart, then N - 1 untimed warm-up passes (N when the
  cold pass ran apart, cold(): a peer's pass on fresh state, e.g. a new connection, which warms
  nothing the timed passes use), then timed passes until the rule says stop; with --flush-caches
  the host's last-level cache is evicted (CacheFlusher, harness/caches.cpp's) before the cold pass
  and every timed pass. It returns a contract.Passes: the timed seconds, the cold pass and the
  protocol that `Document.ok` records.
- `run_guarded`: a peer's main under SIGTERM/SIGHUP/SIGINT and errors, as the executables end: the
  document marked 'interrupted by signal N' (exit 128+N) or 'stopped by an error: ...' (exit 1).
- `Document`: a hetdb-bench/2 document and its CSV (x-csv-columns), rewritten atomically after every
  result (complete: false, "running", until `finish`), like the harness; `ok`, `skipped`, `failed`
  make the result entries from (test, variant, typed params, size) and the passes (contract.Passes:
  the trials and `protocol`). A result is ok only when its answer was checked and equal: `ok`
  refuses anything else, so an unverified peer time cannot be recorded. A peer reads no energy
  counter: its ok results record `energy` as NO_ENERGY (source none, with the reason).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import contract
from ..results import csv_columns
from ..runstate import git_commit
from ..util import write_atomically


# --- options and the stopping rule ----------------------------------------------------------------
class CacheFlusher:
    """harness/caches.cpp HostCacheFlusher: evicts the host's last-level cache by writing, then
    reading, a buffer of twice its size (contract.flush_buffer_bytes), allocated on the first flush
    and kept (its page faults paid once). NumPy does the passes (plain stores and loads; a memset or
    memcpy of glibc may use non-temporal stores, which evict nothing)."""

    def __init__(self, llc_bytes: int) -> None:
        self.llc_bytes, self.bytes = llc_bytes, contract.flush_buffer_bytes(llc_bytes)
        self._buffer: Any = None
        self._round = 0
        self.sink = 0

    def flush(self) -> None:
        import numpy  # the project venv has it (every peer's interpreter); imported only to flush
        if self._buffer is None:
            self._buffer = numpy.zeros(self.bytes // 8, dtype=numpy.uint64)
        # A new value each round, so no write is of an unchanged value; the read's sum is kept.
        self._round += 1
        self._buffer += numpy.uint64(self._round)
        self.sink = int(self._buffer.sum())

    def describe(self) -> str:
        return contract.flush_description(self.llc_bytes)


class Harness:
    """The shared options a peer honours (the same flags and defaults as src/common/harness/options.hpp)."""

    def __init__(self, warmup: int = 1, passes: int = 3, max_passes: int = 50, max_time: float = 2.0,
                 target_noise: float = 0.02, threads: int = 0, seed: int = 42, flush_caches: bool = False) -> None:
        self.warmup, self.passes, self.max_passes = warmup, passes, max(max_passes, passes)
        self.max_time, self.target_noise, self.threads, self.seed = max_time, target_noise, threads, seed
        self.flush_caches = flush_caches
        self.flusher = CacheFlusher(contract.last_level_cache_bytes()) if flush_caches else None

    @staticmethod
    def add_arguments(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--warmup", type=int, default=1)
        ap.add_argument("--passes", type=int, default=3)
        ap.add_argument("--max-passes", type=int, default=50)
        ap.add_argument("--max-time", type=float, default=2.0)
        ap.add_argument("--target-noise", type=float, default=0.02)
        ap.add_argument("--threads", type=int, default=0)
        ap.add_argument("--seed", default="42")
        ap.add_argument("--flush-caches", action="store_true",
                        help="evict the host's last-level cache before the cold pass and every timed pass (warm)")

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> Harness:
        return cls(a.warmup, a.passes, a.max_passes, a.max_time, a.target_noise, a.threads, int(a.seed),
                   bool(getattr(a, "flush_caches", False)))

    def with_warmup(self, warmup: int) -> Harness:
        """The same options (and the same flusher) with another warm-up count."""
        h = Harness(warmup, self.passes, self.max_passes, self.max_time, self.target_noise, self.threads, self.seed)
        h.flush_caches, h.flusher = self.flush_caches, self.flusher
        return h

    def rule(self) -> contract.StoppingRule:
        return contract.StoppingRule(self.passes, self.max_passes, self.max_time, self.target_noise)

    def measure(self, fn: Callable[[], float], cold: Callable[[], float] | None = None,
                cold_note: str = "") -> contract.Passes:
        """The cold pass (with --warmup >= 1: fn(), or cold() when it runs apart, on fresh state the
        timed passes never use), the warm-up passes (--warmup - 1; --warmup after a cold() pass),
        then timed passes of fn() (which returns its own seconds) until the rule stops; with
        --flush-caches the host's LLC is evicted before the cold pass and every timed pass.
        cold_note: what the cold pass paid that the others did not (results[].protocol.cold_note;
        with --warmup 0 there is no cold pass and the note is contract.NO_COLD_NOTE)."""
        p = self.rule().measure(fn, self.warmup, cold, self.flusher.flush if self.flusher else None)
        p.cold_note = cold_note if p.cold is not None else ""  # none taken: contract.NO_COLD_NOTE
        p.flush = self.flusher.describe() if self.flusher else None
        return p

    def stopping_rule(self) -> dict[str, Any]:
        return {"warmup": self.warmup, "min_passes": self.passes, "max_passes": self.max_passes,
                "max_time_s": self.max_time, "target_cv": self.target_noise, "flush_caches": self.flush_caches}


# --- context ----------------------------------------------------------------------------------------
def _cpu_model():
    try:
        with Path("/proc/cpuinfo").open() as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def _os_name():
    try:
        with Path("/etc/os-release").open() as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def context(repo, harness, engine, threads_used, device_extra=None, extra=None):
    """The context block (results-schema.md): the same host keys as the executables', the peer's
    engine and version as `compiler`/`version` and in `device`, whose kind is cpu (peers run on the
    host)."""
    cores = os.cpu_count() or 1
    cpu = _cpu_model()
    device = {"kind": "cpu", "name": cpu, "engine": engine, "threads": threads_used}
    device.update(device_extra or {})
    ctx = {
        "host": socket.gethostname(), "cpu": cpu, "logical_cores": cores, "threads_used": threads_used,
        "memory_bytes": _memory_bytes(), "os": _os_name(),
        "kernel": " ".join((platform.system(), platform.release(), platform.machine())),
        "compiler": f"python {platform.python_version()}", "flags": "", "build_type": "",
        "version": engine, "git_commit": git_commit(repo), "command_line": " ".join(sys.argv),
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seed": harness.seed,
        "stopping_rule": harness.stopping_rule(), "device": device,
        "mpi": {"active": False, "rank": 0, "size": 1, "local_rank": 0, "local_size": 1},
    }
    ctx.update(extra or {})
    return ctx


# --- the document -----------------------------------------------------------------------------------
# results[].energy of a peer's result: no counter is read around a peer's passes (the C++ harness
# reads RAPL and NVML, harness/energy.hpp; a peer's query runs in an engine's threads or a server).
NO_ENERGY = {"source": "none", "reason": "not measured: a peer reads no energy counter (RAPL and NVML are read "
                                         "by the C++ harness only)"}
Case = Mapping[str, Any]  # size_bytes, elements, bytes {input, min_moved}, extra: what the peer measured on


class Document:
    """One peer run's hetdb-bench/2 document (and CSV beside it), rewritten after every result."""

    def __init__(self, benchmark: str, backend: str, ctx: dict[str, Any], json_path: str, csv_path: str | None = None,
                 ceiling_gbps: float = 0.0, transfer: str = "none") -> None:
        self.transfer = transfer  # every result's: "none" (a peer on the host), "pinned" (CuPy's PCIe copies)
        self.doc: dict[str, Any] = {
            "schema": contract.SCHEMA, "benchmark": benchmark, "backend": backend, "context": ctx,
            "ceiling": {"memory_copy_gbps": ceiling_gbps,
                        "definition": "not measured by the peer (0: no % of peak)" if not ceiling_gbps
                        else "measured copy bandwidth, bytes read + bytes written"},
            "results": [], "summary": {"ok": 0, "skipped": 0, "failed": 0}, "complete": False,
            "incomplete_reason": "running"}
        self.json_path, self.csv_path = json_path, csv_path
        self.flush()

    def _base(self, case: Case, test: str, variant: str, params: contract.Params, status: str, reason: str,
              detail: str, checked: bool = False, verified: bool = False) -> dict[str, Any]:
        """The entry of a case: its id made by contract.case_id from the typed fields (params in their
        declared order: a dict's, or (name, value) pairs) and the document's transfer (a peer on the
        host: none)."""
        size = int(case.get("size_bytes", 0))
        pairs = list(params.items()) if isinstance(params, Mapping) else list(params)
        b = case.get("bytes")
        return {"id": contract.case_id(test, variant, pairs, self.transfer, size), "test": test, "variant": variant,
                "params": dict(pairs), "size_bytes": size, "size_label": contract.size_label(size),
                "transfer": self.transfer, "status": status, "reason": reason,
                "verification": {"checked": checked, "verified": verified, "detail": detail},
                "elements": int(case.get("elements", 0)),
                "bytes": {"input": int(b["input"]), "min_moved": int(b["min_moved"]), "transfer": 0} if b
                else {"input": 0, "min_moved": 0, "transfer": 0},
                "phases": [], "trials": [], "extra": dict(case.get("extra", {}))}

    def case_id(self, case: Case, test: str, variant: str, params: contract.Params) -> str:
        """The id the entry of this case gets (whether it is recorded yet or not)."""
        return str(self._base(case, test, variant, params, "", "", "")["id"])

    def ok(self, case: Case, test: str, variant: str, params: contract.Params, passes: contract.Passes,
           checked: bool, verified: bool, detail: str, phase: str = "query", extra: Mapping[str, Any] | None = None,
           trials: list[dict[str, Any]] | None = None, transfer_bytes: int = 0) -> dict[str, Any]:
        """A measured, verified result: one host-time trial per timed pass (passes.times), its
        statistics and throughput as the harness makes them (contract.result_figures), the protocol
        of its passes (passes.protocol: the cold pass, the warm-up count, hot or warm) and NO_ENERGY.
        A peer with a bus (CuPy) hands its own trials (h2d_s, kernel_s, d2h_s, total_s, phases_s {phase},
        one per timed pass, in order) and the bytes a pass moves over it; its phase is then a kernel.
        Anything not checked and equal is recorded as failed instead, never as a time."""
        if not (checked and verified):
            return self.failed(case, test, variant, params, "verification failed: " + detail, detail, checked)
        if not isinstance(passes, contract.Passes):
            raise TypeError("Document.ok records the passes Harness.measure returned (contract.Passes), "
                            "so that the result carries its protocol")
        r = self._base(case, test, variant, params, "ok", "", detail, True, True)
        if trials is not None:
            if len(trials) != len(passes.times):
                raise ValueError(f"{len(trials)} trials for {len(passes.times)} timed passes")
            r["phases"] = [{"name": phase, "kind": "kernel"}]
            r["trials"] = trials
            r["bytes"]["transfer"] = int(transfer_bytes)
        else:
            r["phases"] = [{"name": phase, "kind": "host"}]
            r["trials"] = [contract.host_trial(t, phase) for t in passes.times]
        r.update(contract.result_figures(r, self.doc["ceiling"]["memory_copy_gbps"]))
        r["extra"].update(extra or {})
        r["protocol"] = passes.protocol(phase)
        r["energy"] = dict(NO_ENERGY)
        return self._add(r)

    def skipped(self, case: Case, test: str, variant: str, params: contract.Params, reason: str) -> dict[str, Any]:
        return self._add(self._base(case, test, variant, params, "skipped", reason or "skipped", "not run"))

    def failed(self, case: Case, test: str, variant: str, params: contract.Params, reason: str, detail: str = "",
               checked: bool = False) -> dict[str, Any]:
        return self._add(self._base(case, test, variant, params, "failed", reason or "failed", detail or reason,
                                    checked, False))

    def _add(self, r: dict[str, Any]) -> dict[str, Any]:
        self.doc["results"].append(r)
        self.doc["summary"][r["status"]] += 1
        self.flush()
        return r

    def finish(self, reason: str | None = None) -> None:
        """complete: true (or false with the reason: 'interrupted by signal N', 'stopped by an error: ...')."""
        if reason:
            self.doc["complete"] = False
            self.doc["incomplete_reason"] = reason
        else:
            self.doc["complete"] = True
            self.doc.pop("incomplete_reason", None)
        self.flush()

    def exit_code(self) -> int:
        return contract.EXIT_FAILED if self.doc["summary"]["failed"] else contract.EXIT_OK

    def csv_text(self) -> str:
        return contract.csv_text(self.doc, csv_columns())

    def flush(self) -> None:
        write_atomically(self.json_path, json.dumps(self.doc, indent=1) + "\n")
        if self.csv_path:
            write_atomically(self.csv_path, self.csv_text())


def argument_parser(prog, description):
    """The peers' command line: --json, --csv, --build-dir, the harness options, and whatever else
    the benchmark's executables take (kept for the export tool: parse_known_args)."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("benchmark")
    ap.add_argument("--json", required=True)
    ap.add_argument("--csv")
    ap.add_argument("--build-dir", required=True)
    Harness.add_arguments(ap)
    return ap


# --- temporary folders ------------------------------------------------------------------------------
def work_dir(prefix: str, root: str | None = None) -> str:
    """A fresh temporary folder named <prefix><pid>-..., so that remove_stale_dirs can tell whose it is."""
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root)


def remove_stale_dirs(prefix: str, root: str | None = None, before_remove: Callable[[str], Any] | None = None) -> None:
    """Removes the folders <prefix><pid>-... under root (the temporary folder) whose process is gone: a
    kill -9 (the driver's SIGKILL after its grace period) skips every clean-up of a peer. before_remove
    (path) runs first (pg_trgm stops a server still running there). A live process's folder stays."""
    top = Path(root or tempfile.gettempdir())
    try:
        names = [p.name for p in top.iterdir()]
    except OSError:
        return
    for n in names:
        if not n.startswith(prefix):
            continue
        try:
            pid = int(n[len(prefix):].split("-", 1)[0])
        except ValueError:
            continue
        if pid == os.getpid() or Path(f"/proc/{pid}").exists():
            continue
        path = str(top / n)
        if before_remove:
            before_remove(path)
        shutil.rmtree(path, ignore_errors=True)


# --- stopping ---------------------------------------------------------------------------------------
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_stopping: list[int] = []  # the signal that is stopping the peer


class Stop(BaseException):
    """Raised by SIGTERM, SIGHUP, SIGINT (like KeyboardInterrupt, not an Exception)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, frame):
    _stopping.append(signum)
    raise Stop(signum)


def stopped():
    """Call in an `except Exception` that records a case's failure: a library that turns a signal into
    its own error (DuckDB's "Query interrupted") must stop the peer, not fail the case."""
    if _stopping:
        raise Stop(_stopping[0])


def run_guarded(prog, body):
    """Runs body(state) -> exit status with the stop signals caught; state.doc is the Document once the
    body makes one. A signal finishes it 'interrupted by signal N' and returns 128 + N; any other
    error 'stopped by an error: ...', printed as one '<prog>: error: ...' line, and returns 1."""
    state = argparse.Namespace(doc=None)
    for s in STOP_SIGNALS:
        signal.signal(s, _on_signal)
    try:
        return body(state)
    except Exception as e:  # noqa: BLE001 - one line; the document says it stopped
        if not _stopping:
            if state.doc:
                state.doc.finish(f"stopped by an error: {e}")
            print(f"{prog}: error: {e}", file=sys.stderr)
            return contract.EXIT_FAILED
        signum = _stopping[0]
    except Stop as s:
        signum = s.signum
    if state.doc:
        state.doc.finish(f"interrupted by signal {signum}")
    return 128 + signum
