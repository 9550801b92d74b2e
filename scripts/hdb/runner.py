"""scripts/run-all: setup -> build if needed -> bus on each backend -> every other executable the
configuration names, each under a time limit. The manifest (run.json) and the raw JSON are written
atomically as results come, so an interrupted or crashed run loses nothing and can be resumed."""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

from . import config as cfgmod
from . import results
from .util import UsageError, duration_text, write_json

EXIT_SKIP = 77
EXIT_USAGE = 2
POLL_S = 0.25
PROGRESS_EVERY_S = 5.0  # at most one progress line per executable this often
KILL_GRACE_S = 3.0
FINISHED = ("ok", "failed", "skipped")


def entry_name(benchmark, backend):
    return f"{benchmark}-{backend}"


def plan(cfg):
    """Execution order: bus on every backend first (the ceilings), then benchmark by benchmark."""
    out = []
    for bench in cfgmod.ordered_benchmarks(cfg["benchmarks"]):
        for backend in cfg["backends"]:
            out.append({
                "name": entry_name(bench, backend),
                "benchmark": bench,
                "backend": backend,
                "executable": f"hdb-{bench}-{backend}",
                "args": cfgmod.executable_args(cfg, bench),
                "timeout_s": cfgmod.timeout_for(cfg, bench),
                "status": "pending",
            })
    return out


def new_run_id(out_root, config_name):
    base = time.strftime("%Y%m%d-%H%M%S") + "-" + os.path.splitext(os.path.basename(config_name))[0]
    run_id, n = base, 1
    while os.path.exists(os.path.join(out_root, run_id)):
        n += 1
        run_id = f"{base}-{n}"
    return run_id


def git_commit(repo):
    try:
        p = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           timeout=10)
        return p.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def built_executables(bin_dir):
    if not os.path.isdir(bin_dir):
        return []
    return sorted(f for f in os.listdir(bin_dir)
                  if f.startswith("hdb-") and os.access(os.path.join(bin_dir, f), os.X_OK))


def last_line(path):
    """The last non-empty line an executable printed: shown as the reason of a skip or failure."""
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


class Progress:
    """Elapsed time and an estimate of the time left, from this configuration's previous runs
    (same executable, same arguments) or else the mean duration of this run's executables."""

    def __init__(self, out_root, run_id, entries, stream):
        self.t0 = time.monotonic()
        self.stream = stream
        self.history = self._history(out_root, run_id)
        self.entries = entries

    @staticmethod
    def _history(out_root, run_id):
        hist = {}
        if not os.path.isdir(out_root):
            return hist
        for d in sorted(os.listdir(out_root)):
            if d == run_id:
                continue
            try:
                with open(os.path.join(out_root, d, results.MANIFEST)) as f:
                    m = json.load(f)
            except (OSError, ValueError):
                continue
            for e in m.get("entries", []):
                if e.get("status") in ("ok", "skipped") and e.get("duration_s") is not None:
                    hist[(e["name"], tuple(e.get("args", [])))] = e["duration_s"]
        return hist

    def estimate(self, e):
        if e["status"] in FINISHED:
            return 0.0
        h = self.history.get((e["name"], tuple(e["args"])))
        if h is not None:
            return h
        done = [x["duration_s"] for x in self.entries if x["status"] == "ok" and x.get("duration_s")]
        return sum(done) / len(done) if done else None

    def left(self, current=None, current_elapsed=0.0):
        total = 0.0
        for e in self.entries:
            est = self.estimate(e)
            if est is None:
                return None
            if e is current:
                est = max(est - current_elapsed, 0.0)
            total += est
        return total

    def say(self, index, current, msg, current_elapsed=0.0):
        left = self.left(current, current_elapsed)
        eta = "time left unknown" if left is None else f"~{duration_text(left)} left"
        print(f"[{index}/{len(self.entries)} | {duration_text(time.monotonic() - self.t0)} elapsed | {eta}] {msg}",
              file=self.stream, flush=True)


class Runner:
    def __init__(self, repo, out_root, build_dir, cfg=None, config_name="", mpi=0, do_setup=True, do_build=True,
                 force_build=False, resume=None, stream=sys.stdout, report=True, command_line=""):
        self.repo = os.path.abspath(repo)
        self.out_root = os.path.abspath(out_root)
        self.build_dir = os.path.abspath(build_dir)
        self.bin_dir = os.path.join(self.build_dir, "bin")
        self.stream = stream
        self.do_setup, self.do_build, self.force_build, self.make_report = do_setup, do_build, force_build, report
        if resume:
            self.run_dir = resume if os.path.isdir(resume) and os.path.isfile(os.path.join(resume, results.MANIFEST)) \
                else os.path.join(self.out_root, resume)
            self.manifest = results.load_manifest(self.run_dir)
            if self.manifest is None:
                raise UsageError(f"--resume {resume}: no run with a {results.MANIFEST} in {self.run_dir}")
            self.run_id = self.manifest["run_id"]
            self.out_root = os.path.dirname(os.path.abspath(self.run_dir))
            self.mpi = self.manifest.get("mpi", 0)
            for e in self.manifest["entries"]:
                if e["status"] not in FINISHED:
                    self._keep_partial(e)
                    e["status"] = "pending"
            self.manifest.setdefault("resumed", []).append(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        else:
            if mpi and not shutil.which("mpirun"):
                raise UsageError("--mpi needs mpirun on PATH (Debian: openmpi-bin)")
            self.mpi = mpi
            self.run_id = new_run_id(self.out_root, config_name)
            self.run_dir = os.path.join(self.out_root, self.run_id)
            self.manifest = {
                "run_id": self.run_id,
                "config_name": config_name,
                "config": cfg,
                "mpi": mpi,
                "build_dir": self.build_dir,
                "git_commit": git_commit(self.repo),
                "command_line": command_line,
                "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "entries": plan(cfg),
            }
        os.makedirs(os.path.join(self.run_dir, results.RAW_DIR), exist_ok=True)
        os.makedirs(os.path.join(self.run_dir, "logs"), exist_ok=True)
        self.save()

    def _keep_partial(self, e):
        """Results of an interrupted executable are kept beside the rerun's (never overwritten)."""
        for p in self.raw_paths(e) + self.csv_paths(e):
            if os.path.exists(p):
                n = 1
                while os.path.exists(f"{p}.interrupted-{n}"):
                    n += 1
                shutil.copy2(p, f"{p}.interrupted-{n}")

    def save(self):
        write_json(os.path.join(self.run_dir, results.MANIFEST), self.manifest)

    def log(self, msg):
        print(msg, file=self.stream, flush=True)

    # --- setup and build -------------------------------------------------------------------
    def prepare(self):
        setup = os.path.join(self.repo, "scripts", "setup")
        if self.do_setup and os.access(setup, os.X_OK):
            self.log(f"run-all: {setup}")
            rc = subprocess.call([setup], cwd=self.repo)
            if rc != 0:
                self.log(f"run-all: warning: scripts/setup exited {rc}; trying the build anyway")
        if not self.do_build:
            return
        if self.force_build or not built_executables(self.bin_dir):
            if not os.path.isfile(os.path.join(self.build_dir, "CMakeCache.txt")):
                self._call(["cmake", "-S", self.repo, "-B", self.build_dir, "-G", "Ninja"], "configure")
            self._call(["cmake", "--build", self.build_dir], "build")

    def _call(self, cmd, what):
        self.log("run-all: " + " ".join(shlex.quote(c) for c in cmd))
        try:
            rc = subprocess.call(cmd, cwd=self.repo)
        except OSError as e:
            raise RuntimeError(f"{what} failed: {e}") from None
        if rc != 0:
            raise RuntimeError(f"{what} failed (exit {rc}); see the output above")

    # --- running ---------------------------------------------------------------------------
    def raw_paths(self, e):
        """Where the executable's JSON lands. Under mpirun the harness keeps <file>.rank<N> per rank
        while running and rank 0 writes the merged document to <file> at the end (the CSV likewise)."""
        path = os.path.join(self.run_dir, results.RAW_DIR, e["name"] + ".json")
        return [path] + ([f"{path}.rank{r}" for r in range(self.mpi)] if self.mpi else [])

    def csv_paths(self, e):
        """Where the executable's CSV lands: beside its JSON, named alike (results.csv_path_for)."""
        return [results.csv_path_for(p) for p in self.raw_paths(e)]

    def command(self, e):
        exe = os.path.join(self.bin_dir, e["executable"])
        cmd = [exe] + e["args"] + ["--json", self.raw_paths(e)[0], "--csv", self.csv_paths(e)[0]]
        if not self.mpi:
            return cmd
        launcher = ["mpirun", "-np", str(self.mpi)]
        if mpirun_is_openmpi():
            launcher.append("--oversubscribe")
        return launcher + cmd

    def environment(self):
        env = dict(os.environ)
        env.setdefault("POCL_CACHE_DIR", os.path.join(self.build_dir, "pocl-cache"))
        os.makedirs(env["POCL_CACHE_DIR"], exist_ok=True)
        if self.mpi and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        return env

    def run(self):
        entries = self.manifest["entries"]
        progress = Progress(self.out_root, self.run_id, entries, self.stream)
        built = set(built_executables(self.bin_dir))
        self.log(f"run-all: run {self.run_id} -> {self.run_dir}")
        for i, e in enumerate(entries, 1):
            if e["status"] in FINISHED:
                continue
            if e["executable"] not in built:
                e.update(status="skipped", reason=f"not built ({e['executable']} is not in {self.bin_dir})",
                         exit_code=None, duration_s=0.0)
                self.save()
                progress.say(i, e, f"{e['executable']}: skipped, not built")
                continue
            self.run_one(i, e, progress)
        self.manifest["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.save()
        self.aggregate()
        if self.make_report:
            from . import report
            report.generate(self.run_dir, stream=self.stream)
        return self.print_summary()

    def run_one(self, index, e, progress):
        log_path = os.path.join(self.run_dir, "logs", e["name"] + ".log")
        cmd = self.command(e)
        e.update(status="running", command=" ".join(shlex.quote(c) for c in cmd), log=os.path.relpath(log_path,
                 self.run_dir), reason="", started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.save()
        progress.say(index, e, f"{e['executable']}: started (limit {duration_text(e['timeout_s'])})")
        t0 = time.monotonic()
        seen, timed_out, said = 0, False, t0
        with open(log_path, "w") as log:
            log.write("$ " + e["command"] + "\n")
            log.flush()
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.repo,
                                    env=self.environment(), start_new_session=True)
            try:
                while True:
                    try:
                        proc.wait(timeout=POLL_S)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    elapsed = time.monotonic() - t0
                    if time.monotonic() - said >= PROGRESS_EVERY_S:
                        n, last = self.cases_so_far(e)
                        if n > seen:
                            seen, said = n, time.monotonic()
                            progress.say(index, e, f"{e['executable']}: {n} cases done (last {last})", elapsed)
                    if elapsed > e["timeout_s"]:
                        timed_out = True
                        stop_group(proc)
                        break
            except BaseException:
                stop_group(proc)
                e.update(status="pending", reason="interrupted; finish with --resume " + self.run_id)
                self.save()
                raise
        e["duration_s"] = round(time.monotonic() - t0, 3)
        e["exit_code"] = proc.returncode
        self.classify(e, timed_out, log_path)
        self.save()
        self.aggregate()
        c = e.get("cases", {})
        progress.say(index, e, f"{e['executable']}: {e['status']}"
                     + (f" ({e['reason']})" if e["reason"] else "")
                     + f", cases {c.get('ok', 0)} ok / {c.get('skipped', 0)} skipped / {c.get('failed', 0)} failed"
                     + f" in {duration_text(e['duration_s'])}")

    def _summary_doc(self, e):
        """The merged document when it exists, else rank 0's file of a run still going (or crashed)."""
        for p in self.raw_paths(e)[:2]:
            try:
                with open(p) as f:
                    return json.load(f)
            except (OSError, ValueError):
                continue
        return None

    def cases_so_far(self, e):
        doc = self._summary_doc(e) or {}
        res = doc.get("results", [])
        return len(res), (res[-1].get("id", "?") if res else "")

    def classify(self, e, timed_out, log_path):
        rc = e["exit_code"]
        summary = (self._summary_doc(e) or {}).get("summary", {})
        cases = {k: int(summary.get(k, 0)) for k in ("ok", "skipped", "failed")}
        e["cases"] = cases
        if timed_out:
            e.update(status="failed", failure="timeout", reason=f"timed out after {duration_text(e['timeout_s'])}")
        elif rc == 0:
            e.update(status="ok", reason="")
        elif rc == EXIT_SKIP:
            e.update(status="skipped", reason=last_line(log_path) or "exit 77: no device")
        elif rc < 0 or rc > 128:
            sig = -rc if rc < 0 else rc - 128
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            e.update(status="failed", failure="crash", reason=f"crashed ({name})")
        elif rc == EXIT_USAGE:
            e.update(status="failed", failure="usage", reason="usage error: " + last_line(log_path))
        else:
            detail = f"{cases['failed']} failed cases" if cases["failed"] else last_line(log_path)
            e.update(status="failed", failure="exit", reason=f"exit {rc}: {detail}")

    def aggregate(self):
        """summary.csv is rewritten after every executable, so it always holds what has been measured:
        the executables' own CSV files end to end (results.summary_csv). Files that are missing
        are kept in self.problems for the summary (and the report lists them)."""
        try:
            self.problems = results.write_summary_csv(self.run_dir)
        except OSError as err:
            self.problems = [f"summary.csv not written: {err}"]

    def print_summary(self):
        entries = self.manifest["entries"]
        self.log(f"\nrun-all: summary of {self.run_id}")
        self.log(f"{'executable':<22} {'status':<8} {'time':>7}  {'cases ok/skip/fail':<18} reason")
        for e in entries:
            c = e.get("cases", {})
            cs = f"{c.get('ok', 0)}/{c.get('skipped', 0)}/{c.get('failed', 0)}" if c else "-"
            self.log(f"{e['executable']:<22} {e['status']:<8} {duration_text(e.get('duration_s')):>7}  {cs:<18} "
                     f"{e.get('reason', '')}")
        for p in getattr(self, "problems", []):
            self.log(f"run-all: problem: {p}")
        n = {s: sum(1 for e in entries if e["status"] == s) for s in FINISHED}
        self.log(f"run-all: {n['ok']} ok, {n['skipped']} skipped, {n['failed']} failed -> {self.run_dir}")
        return 1 if n["failed"] else 0


def stop_group(proc):
    """Ends the executable and everything it started (mpirun ranks): TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


_openmpi = None


def mpirun_is_openmpi():
    global _openmpi
    if _openmpi is None:
        try:
            p = subprocess.run(["mpirun", "--version"], capture_output=True, text=True, timeout=30)
            _openmpi = "Open MPI" in (p.stdout + p.stderr) or "OpenRTE" in (p.stdout + p.stderr)
        except (OSError, subprocess.SubprocessError):
            _openmpi = False
    return _openmpi
