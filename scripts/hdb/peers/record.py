"""The shared peer framework: what every peer needs to measure and record like the harness does
(src/common/harness: session.cpp, stats.cpp, result.cpp), so its numbers sit beside the
executables' in the same hetdb-bench/2 schema and go through the same checks.

- `Harness`: the executables' stopping-rule options read from the same flags (--warmup, --passes,
  --max-passes, --max-time, --target-noise, --threads, --seed); `measure(fn)` runs the warm-up
  passes, then timed passes until the rule says stop (StoppingRule::done), and returns the seconds.
- `summarize`, `throughput`: the harness's statistics and derived figures, by the same definitions.
- `peer_id`: the id of a peer's case from the suite's own id of the same case: its variant replaced,
  the peer's params appended (so test, params in declared order and size are the suite's).
- `run_guarded`: a peer's main under SIGTERM/SIGHUP/SIGINT and errors, as the executables end: the
  document marked 'interrupted by signal N' (exit 128+N) or 'stopped by an error: ...' (exit 1).
- `Document`: a hetdb-bench/2 document and its CSV (x-csv-columns), rewritten atomically after every
  result (complete: false, "running", until `finish`), like the harness; `ok`, `skipped`, `failed`
  make the result entries. A result is ok only when its answer was checked and equal: `ok` refuses
  anything else, so an unverified peer time cannot be recorded.
"""
import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time

from ..results import csv_columns
from ..runner import git_commit
from ..util import write_atomically

SCHEMA = "hetdb-bench/2"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIP = 0, 1, 2, 77


# --- options and the stopping rule ----------------------------------------------------------------
class Harness:
    """The shared options a peer honours (the same flags and defaults as src/common/harness/options.hpp)."""

    def __init__(self, warmup=1, passes=3, max_passes=50, max_time=2.0, target_noise=0.02, threads=0, seed=42):
        self.warmup, self.passes, self.max_passes = warmup, passes, max(max_passes, passes)
        self.max_time, self.target_noise, self.threads, self.seed = max_time, target_noise, threads, seed

    @staticmethod
    def add_arguments(ap):
        ap.add_argument("--warmup", type=int, default=1)
        ap.add_argument("--passes", type=int, default=3)
        ap.add_argument("--max-passes", type=int, default=50)
        ap.add_argument("--max-time", type=float, default=2.0)
        ap.add_argument("--target-noise", type=float, default=0.02)
        ap.add_argument("--threads", type=int, default=0)
        ap.add_argument("--seed", default="42")

    @classmethod
    def from_args(cls, a):
        return cls(a.warmup, a.passes, a.max_passes, a.max_time, a.target_noise, a.threads, int(a.seed))

    def stop(self, times, spent):
        n = len(times)
        if n >= self.max_passes:
            return True
        if n < self.passes:
            return False
        if spent >= self.max_time:
            return True
        return summarize(times)["cv"] <= self.target_noise

    def measure(self, fn):
        """Warm-up passes, then timed passes of fn() (which returns its own seconds) until the rule
        stops; returns the timed seconds."""
        for _ in range(self.warmup):
            fn()
        times, spent = [], 0.0
        while True:
            t = fn()
            times.append(t)
            spent += t
            if self.stop(times, spent):
                return times

    def stopping_rule(self):
        return {"warmup": self.warmup, "min_passes": self.passes, "max_passes": self.max_passes,
                "max_time_s": self.max_time, "target_cv": self.target_noise}


def summarize(xs):
    """{n, min, median, mean, max, stddev, cv}: sample standard deviation, cv = stddev / mean."""
    n = len(xs)
    if n == 0:
        return {"n": 0, "min": 0, "median": 0, "mean": 0, "max": 0, "stddev": 0, "cv": 0}
    mean = sum(xs) / n
    sd = statistics.stdev(xs) if n > 1 else 0.0
    return {"n": n, "min": min(xs), "median": statistics.median(xs), "mean": mean, "max": max(xs),
            "stddev": sd, "cv": sd / mean if mean > 0 else 0.0}


def throughput(bytes_, elements, kernel_median, total_median, ceiling_gbps):
    """result.cpp throughput(): a figure whose divisor is 0 is 0. No bus: no transfer figures."""
    def div(a, b):
        return a / b if b > 0 else 0.0
    moved = div(bytes_["min_moved"], kernel_median) / 1e9
    return {"kernel_gbps": div(bytes_["input"], kernel_median) / 1e9,
            "total_gbps": div(bytes_["input"], total_median) / 1e9,
            "transfer_gbps": 0.0, "elements_per_s": div(elements, kernel_median), "moved_gbps": moved,
            "pct_of_peak": div(100 * moved, ceiling_gbps) if ceiling_gbps else 0.0, "parity": 0.0}


def peer_id(suite_id, variant, extra):
    """'join/export[dist=uniform,match=0.5]@1M', 'sql', [('threads', 2)] ->
    'join/sql[dist=uniform,match=0.5,threads=2]@1M'. The suite's id is made by its case model
    (cases.md: test/variant[k=v,...]@SIZE, no transfer without a bus); only the variant is replaced
    and the peer's own params go last, in the order given."""
    test, rest = suite_id.split("/", 1)
    at = rest.find("@")
    size = rest[at:] if at >= 0 else ""
    head = rest[:at] if at >= 0 else rest
    inner = head[head.index("[") + 1:head.rindex("]")] if "[" in head else ""
    params = [inner] if inner else []
    params += [f"{k}={param_text(v)}" for k, v in extra]
    return f"{test}/{variant}" + (f"[{','.join(params)}]" if params else "") + size


def param_text(v):
    """How a value prints inside an id (case.cpp param_text: shortest form that reads back)."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    return str(v)


# --- context ----------------------------------------------------------------------------------------
def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
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
        with open("/etc/os-release") as f:
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
def size_label(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def _csv_field(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    s = param_text(v) if isinstance(v, float) else str(v)
    if any(c in s for c in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


class Document:
    """One peer run's hetdb-bench/2 document (and CSV beside it), rewritten after every result."""

    def __init__(self, benchmark, backend, ctx, json_path, csv_path=None, ceiling_gbps=0.0):
        self.doc = {"schema": SCHEMA, "benchmark": benchmark, "backend": backend, "context": ctx,
                    "ceiling": {"memory_copy_gbps": ceiling_gbps,
                                "definition": "not measured by the peer (0: no % of peak)" if not ceiling_gbps
                                else "measured copy bandwidth, bytes read + bytes written"},
                    "results": [], "summary": {"ok": 0, "skipped": 0, "failed": 0}, "complete": False,
                    "incomplete_reason": "running"}
        self.json_path, self.csv_path = json_path, csv_path
        self.flush()

    @staticmethod
    def _base(case, test, variant, params, status, reason, detail, checked=False, verified=False):
        return {"id": case["id"], "test": test, "variant": variant, "params": params,
                "size_bytes": int(case.get("size_bytes", 0)), "size_label": size_label(case.get("size_bytes", 0)),
                "transfer": "none", "status": status, "reason": reason,
                "verification": {"checked": checked, "verified": verified, "detail": detail},
                "elements": int(case.get("elements", 0)),
                "bytes": {"input": int(case["bytes"]["input"]), "min_moved": int(case["bytes"]["min_moved"]),
                          "transfer": 0} if "bytes" in case else {"input": 0, "min_moved": 0, "transfer": 0},
                "phases": [], "trials": [], "extra": dict(case.get("extra", {}))}

    def ok(self, case, test, variant, params, times, checked, verified, detail, phase="query", extra=None):
        """A measured, verified result. `case` carries id, size_bytes, elements, bytes, extra.
        Anything not checked and equal is recorded as failed instead, never as a time."""
        if not (checked and verified):
            return self.failed(case, test, variant, params, "verification failed: " + detail, detail, checked)
        r = self._base(case, test, variant, params, "ok", "", detail, True, True)
        r["phases"] = [{"name": phase, "kind": "host"}]
        r["trials"] = [{"h2d_s": 0.0, "kernel_s": t, "d2h_s": 0.0, "total_s": t, "phases_s": {phase: t}}
                       for t in times]
        s = summarize(times)
        zero = summarize([0.0] * len(times))
        r["stats"] = {"kernel_s": s, "total_s": s, "h2d_s": zero, "d2h_s": zero, "phases_s": {phase: s}}
        r["throughput"] = throughput(r["bytes"], r["elements"], s["median"], s["median"],
                                     self.doc["ceiling"]["memory_copy_gbps"])
        r["extra"].update(extra or {})
        return self._add(r)

    def skipped(self, case, test, variant, params, reason):
        return self._add(self._base(case, test, variant, params, "skipped", reason or "skipped", "not run"))

    def failed(self, case, test, variant, params, reason, detail="", checked=False):
        return self._add(self._base(case, test, variant, params, "failed", reason or "failed", detail or reason,
                                    checked, False))

    def _add(self, r):
        self.doc["results"].append(r)
        self.doc["summary"][r["status"]] += 1
        self.flush()
        return r

    def finish(self, reason=None):
        """complete: true (or false with the reason: 'interrupted by signal N', 'stopped by an error: ...')."""
        if reason:
            self.doc["complete"] = False
            self.doc["incomplete_reason"] = reason
        else:
            self.doc["complete"] = True
            self.doc.pop("incomplete_reason", None)
        self.flush()

    def exit_code(self):
        return EXIT_FAILED if self.doc["summary"]["failed"] else EXIT_OK

    def csv_text(self):
        cols = csv_columns()
        device = self.doc["context"]["device"]["name"]
        lines = [",".join(cols)]
        for r in self.doc["results"]:
            st = r.get("stats", {})
            tp = r.get("throughput", {})
            row = {"id": r["id"], "benchmark": self.doc["benchmark"], "backend": self.doc["backend"], "rank": 0,
                   "device": device, "test": r["test"], "variant": r["variant"],
                   "params": ";".join(f"{k}={param_text(v)}" for k, v in sorted(r["params"].items())),
                   "size_bytes": r["size_bytes"], "transfer": r["transfer"], "status": r["status"],
                   "checked": r["verification"]["checked"], "verified": r["verification"]["verified"],
                   "passes": len(r["trials"]),
                   "kernel_median_s": st.get("kernel_s", {}).get("median"), "kernel_cv": st.get("kernel_s", {}).get("cv"),
                   "total_median_s": st.get("total_s", {}).get("median"), "total_cv": st.get("total_s", {}).get("cv"),
                   "h2d_median_s": st.get("h2d_s", {}).get("median"), "d2h_median_s": st.get("d2h_s", {}).get("median"),
                   "elements": r["elements"], "input_bytes": r["bytes"]["input"],
                   "min_moved_bytes": r["bytes"]["min_moved"], "transfer_bytes": r["bytes"]["transfer"],
                   "reason": r["reason"]}
            for k in ("kernel_gbps", "total_gbps", "transfer_gbps", "elements_per_s", "moved_gbps", "pct_of_peak",
                      "parity"):
                row[k] = tp.get(k)
            lines.append(",".join(_csv_field(row.get(c)) for c in cols))
        return "\n".join(lines) + "\n"

    def flush(self):
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
def work_dir(prefix, root=None):
    """A fresh temporary folder named <prefix><pid>-..., so that remove_stale_dirs can tell whose it is."""
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root)


def remove_stale_dirs(prefix, root=None, before_remove=None):
    """Removes the folders <prefix><pid>-... under root (the temporary folder) whose process is gone: a
    kill -9 (the driver's SIGKILL after its grace period) skips every clean-up of a peer. before_remove
    (path) runs first (pg_trgm stops a server still running there). A live process's folder stays."""
    root = root or tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for n in names:
        if not n.startswith(prefix):
            continue
        try:
            pid = int(n[len(prefix):].split("-", 1)[0])
        except ValueError:
            continue
        if pid == os.getpid() or os.path.exists(f"/proc/{pid}"):
            continue
        path = os.path.join(root, n)
        if before_remove:
            before_remove(path)
        shutil.rmtree(path, ignore_errors=True)


# --- stopping ---------------------------------------------------------------------------------------
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_stopping = []  # the signal that is stopping the peer


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
            return EXIT_FAILED
        signum = _stopping[0]
    except Stop as s:
        signum = s.signum
    if state.doc:
        state.doc.finish(f"interrupted by signal {signum}")
    return 128 + signum
