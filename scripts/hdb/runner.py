"""scripts/run-all: setup -> build if needed -> bus on each backend -> every other executable the
configuration names, each under a time limit. The manifest (run.json) and the raw JSON are written
atomically as results come, so an interrupted or crashed run loses nothing and can be resumed.

Failure behaviour (docs/driver.md, "When things go wrong"): one driver per run directory (runlock);
every executable in a process group of its own, stopped with the driver on SIGTERM/SIGHUP/SIGINT and,
when the driver is killed with -9, by the watcher process and PR_SET_PDEATHSIG (watchdog); the run
is then marked interrupted and --resume finishes it."""
import filecmp
import hashlib
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
from .runlock import RunLock
from .util import UsageError, duration_text, os_error_text, write_json
from .watchdog import Watchdog, child_preexec, group_alive, stop_groups

EXIT_SKIP = 77
EXIT_USAGE = 2
POLL_S = 0.25
PROGRESS_EVERY_S = 5.0  # at most one progress line per executable this often
KILL_GRACE_S = 3.0
FINISHED = ("ok", "failed", "skipped")
HASH_PREFIX = 12  # hex digits of a sha256 shown in messages (run.json keeps all 64)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
# The usage hint the executables print after their real error line (src/common/harness/main.cpp).
_HINT = "run with --help"


class Interrupted(BaseException):
    """Raised in the driver by SIGTERM, SIGHUP or SIGINT (like KeyboardInterrupt, not an Exception)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def entry_name(benchmark, backend, platform=None):
    return f"{benchmark}-{backend}" + (f"-{platform}" if platform else "")


def plan(cfg):
    """Execution order: bus on every backend first (the ceilings), then benchmark by benchmark."""
    out = []
    for bench in cfgmod.ordered_benchmarks(cfg["benchmarks"]):
        for backend, platform in cfgmod.backend_runs(cfg, bench):
            out.append({
                "name": entry_name(bench, backend, platform),
                "benchmark": bench,
                "backend": backend,
                "executable": f"hdb-{bench}-{backend}",
                "args": cfgmod.executable_args(cfg, bench, backend=backend, platform=platform),
                "timeout_s": cfgmod.timeout_for(cfg, bench, backend=backend),
                "status": "pending",
            })
        out += peer_entries(cfg, bench)
        if cfgmod.large_run(cfg, bench):
            out += large_entries(cfg, bench, out)
    return out


def large_entries(cfg, bench, planned):
    """The second run of each of the benchmark's entries at [bench.<name>.large]'s sizes, named
    <benchmark>-<backend>-large (docs/driver.md); none for a backend whose [backend.<name>] table
    says large = false."""
    out = []
    with_peers = cfgmod.large_run(cfg, bench).get("peers", True)
    for e in [e for e in planned if e["benchmark"] == bench and (with_peers or not e.get("peer"))]:
        backend = None if e.get("peer") else e["backend"]
        if not cfgmod.large_run(cfg, bench, backend):
            continue
        big = dict(e, name=e["name"] + "-large", timeout_s=cfgmod.timeout_for(cfg, bench, large=True, backend=backend),
                   args=cfgmod.executable_args(cfg, bench, large=True, peer=bool(e.get("peer")), backend=backend,
                                               platform=None if e.get("peer") else platform_of(e["args"])))
        out.append(big)
    return out


def platform_of(args):
    """The --platform an entry's executable gets (an index or a word), or None."""
    for i, a in enumerate(args):
        value = args[i + 1] if a == "--platform" and i + 1 < len(args) else \
            a.partition("=")[2] if a.startswith("--platform=") else None
        if value is not None:
            return value
    return None


def platform_named(args):
    """The --platform an entry's executable gets when it is a word of a platform's name (not an index)."""
    value = platform_of(args)
    return None if value is None or value.isdigit() else value


def shown(e):
    """The entry as progress lines name it: its executable, and the platform when it names one."""
    p = platform_named(e.get("args", []))
    return e["executable"] + (f" --platform {p}" if p else "")


def opencl_vendors(repo):
    """The project's own OpenCL ICD folder (scripts/setup: the system's platforms and Intel's CPU runtime
    from the virtual environment), or None where setup made none."""
    d = os.path.join(repo, ".venv", "etc", "OpenCL", "hdb-vendors")
    return d if os.path.isdir(d) else None


def peer_entries(cfg, bench):
    """The configuration's peers that answer this benchmark (docs/peers.md), after its executables."""
    from . import peers
    return [{"name": entry_name(bench, p), "benchmark": bench, "backend": p, "executable": f"{p} (peer)",
             "peer": p, "args": cfgmod.executable_args(cfg, bench, peer=True),
             "timeout_s": cfgmod.timeout_for(cfg, bench),
             "status": "pending"} for p in cfg.get("peers", []) if bench in peers.benchmarks(p)]


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


def reason_line(path):
    """The line of an executable's output that says why it stopped, shown as the reason of a skip or
    failure: the last line with 'error:' in it (the executables print '<exe>: error: ...' and then a
    usage hint, 'Run with --help ...', which is never the reason), else the last line that is not
    that hint. The driver's own first line ('$ command') is not the executable's output."""
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines()]
    except OSError:
        return ""
    if lines and lines[0].startswith("$ "):
        lines = lines[1:]
    lines = [ln for ln in lines if ln]
    errors = [ln for ln in lines if "error:" in ln.lower()]
    if errors:
        return errors[-1][:300]
    lines = [ln for ln in lines if not ln.lower().startswith(_HINT)]
    return lines[-1][:300] if lines else ""


# Open MPI's mpirun exits 255 when it cannot start the job on every node (a daemon that does not
# start or cannot call back), which is not a signal.
MPIRUN_LAUNCH_FAILED = 255


def mpirun_reason(path):
    """The text of the last of Open MPI's messages in an executable's log (a block between lines
    of dashes), on one line: why mpirun ended the job, shown as the reason of the failure."""
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines()]
    except OSError:
        return "see the log"
    rules = [i for i, ln in enumerate(lines) if len(ln) > 20 and set(ln) == {"-"}]
    if len(rules) < 2:
        return reason_line(path) or "see the log"
    text = " ".join(" ".join(lines[rules[-2] + 1:rules[-1]]).split())
    return text.split(" * ")[0][:300]  # the headline, without the list of possible causes


def last_line(path):  # the name earlier versions used
    return reason_line(path)


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
            entries = m.get("entries") if isinstance(m, dict) else None
            for e in entries if isinstance(entries, list) else []:
                try:
                    if e.get("status") in ("ok", "skipped") and isinstance(e.get("duration_s"), (int, float)):
                        hist[(e["name"], tuple(e.get("args", [])))] = e["duration_s"]
                except (AttributeError, KeyError, TypeError):
                    continue
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


def file_sha256(path):
    """The sha256 of a file (an executable: the identity of the binary an entry ran), or None when
    it is not there."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def short_hash(h):
    return f"sha256 {h[:HASH_PREFIX]}" if h else "not built"


def resolve_resume(resume, out_root):
    """The run directory --resume names (a run id under --out, or a directory), or a usage error
    that says which of the neighbours it is: a file, a folder that is no run, nothing at all."""
    candidates = [os.path.abspath(resume)] + ([os.path.join(out_root, resume)] if not os.path.isabs(resume) else [])
    for c in candidates:
        if os.path.isfile(os.path.join(c, results.MANIFEST)):
            return c
    for c in candidates:
        if os.path.isfile(c):
            raise UsageError(f"--resume {resume}: {c} is a file, not a run directory (give the run's folder or its "
                             "run id)")
    for c in candidates:
        if os.path.isdir(c):
            raise UsageError(f"--resume {resume}: {c} is not a run (it has no {results.MANIFEST}): nothing to resume")
    runs = sorted(d for d in os.listdir(out_root) if os.path.isfile(os.path.join(out_root, d, results.MANIFEST))) \
        if os.path.isdir(out_root) else []
    raise UsageError(f"--resume {resume}: no run named {resume} under {out_root}, and no such directory"
                     + (f" (runs there: {', '.join(runs[-5:])})" if runs else ""))


class Runner:
    def __init__(self, repo, out_root, build_dir, cfg=None, config_name="", mpi=0, do_setup=True, do_build=True,
                 force_build=False, resume=None, stream=None, report=True, command_line="", allow_mixed_builds=False):
        # config_name: the configuration of a new run; with resume, a --config given, which must be the run's.
        self.repo = os.path.abspath(repo)
        self.out_root = os.path.abspath(out_root)
        # A resume keeps the run's build unless --build-dir names another (check_builds decides).
        self.build_dir = os.path.abspath(build_dir) if build_dir else os.path.join(self.repo, "build")
        self.bin_dir = os.path.join(self.build_dir, "bin")
        self.stream = stream or sys.stdout
        self.do_setup, self.do_build, self.force_build, self.make_report = do_setup, do_build, force_build, report
        self.resuming = resume is not None
        self.allow_mixed_builds = allow_mixed_builds
        self.created = False      # this driver made the run directory (a new run)
        self.current = None       # the executable's Popen while one runs
        self.stopping = None      # the signal that is stopping the driver
        self.watchdog = None
        self.problems = []
        self.lock = None
        if self.resuming:
            self.run_dir = resolve_resume(resume, self.out_root)
            # The lock first: nothing of the run is read or touched while another driver holds it.
            self.lock = RunLock(self.run_dir, command_line).acquire()
            try:
                self.manifest = load_resumable_manifest(self.run_dir, resume)
                if config_name:
                    self._same_config(config_name)
            except BaseException:
                self.close()
                raise
            self.run_id = self.manifest["run_id"]
            self.out_root = os.path.dirname(self.run_dir)
            self.mpi = self.manifest.get("mpi", 0) or 0
            self.mpi_launch = self.manifest.get("mpi_launch") or {}
            if not build_dir and isinstance(self.manifest.get("build_dir"), str):
                self.build_dir = self.manifest["build_dir"]
                self.bin_dir = os.path.join(self.build_dir, "bin")
        else:
            if mpi and not shutil.which("mpirun"):
                raise UsageError("--mpi needs mpirun on PATH (Debian: openmpi-bin)")
            # mpi: a rank count, or config.mpi_launch's {ranks, hostfile, hosts, args} (runs across nodes).
            self.mpi_launch = dict(mpi) if isinstance(mpi, dict) else ({"ranks": mpi} if mpi else {})
            mpi = self.mpi = self.mpi_launch.get("ranks", 0)
            self.run_id, self.run_dir = make_run_dir(self.out_root, config_name)
            self.created = True
            self.lock = RunLock(self.run_dir, command_line).acquire()
            self.manifest = {
                "run_id": self.run_id,
                "config_name": config_name,
                "config": cfg,
                "mpi": mpi,
                "mpi_launch": self.mpi_launch or None,
                "build_dir": self.build_dir,
                "git_commit": git_commit(self.repo),
                "command_line": command_line,
                "started_utc": utc_now(),
                "state": "running",
                "entries": plan(cfg),
            }
            try:
                for d in (results.RAW_DIR, "logs"):
                    os.makedirs(os.path.join(self.run_dir, d), exist_ok=True)
                self.save()
            except OSError as e:
                self.close()
                raise UsageError(f"--out {out_root}: cannot write the run directory {self.run_dir}: "
                                 f"{os_error_text(e)}") from None

    def _same_config(self, name):
        """--config with --resume is taken only when it names the run's own configuration file: the
        run keeps its configuration, and another one would be silently ignored."""
        def path(n):
            try:
                return os.path.realpath(cfgmod.resolve_config_path(self.repo, n))
            except UsageError:
                return n
        own = self.manifest.get("config_name") or ""
        if path(name) != path(own):
            raise UsageError(f"--resume keeps the run's own configuration ({own}); drop --config {name}")

    # --- the run's lifetime: lock, signals, watcher -------------------------------------------
    def execute(self):
        """prepare (setup, build), then run; stops cleanly on SIGTERM/SIGHUP/SIGINT and on errors
        writing the results; returns the exit status."""
        handlers = {s: signal.signal(s, self._on_signal) for s in STOP_SIGNALS}
        try:
            if self.lock.note:
                self.log(f"run-all: {self.lock.note}")
            self.prepare()
            if self.resuming:
                self.check_builds()
            else:
                self.record_build()
            self.check_runnable()
            if self.resuming:
                self.begin_resume()
            self.watchdog = Watchdog(self.stream)
            return self.run()
        except Interrupted as sig:
            return self.interrupted(sig.signum)
        except KeyboardInterrupt:
            return self.interrupted(signal.SIGINT)
        except RuntimeError as e:  # setup or build failed
            self._abandon_if_empty()
            print(f"run-all: {e}", file=sys.stderr)
            return 1
        except UsageError:
            self._abandon_if_empty()
            raise
        except OSError as err:
            return self.write_failed(err)
        finally:
            # Nothing below may be cut short by a second signal: the run's state is being written.
            for s in STOP_SIGNALS:
                signal.signal(s, signal.SIG_IGN)
            self._stop_current()
            self.close()
            for s, h in handlers.items():
                signal.signal(s, h)

    def _on_signal(self, signum, frame):
        if self.stopping is None:
            self.stopping = signum
            raise Interrupted(signum)
        # A second signal while stopping is ignored: the stop is bounded (KILL_GRACE_S twice).

    def close(self):
        if self.watchdog is not None:
            self.watchdog.close()
            self.watchdog = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _stop_current(self):
        proc = self.current
        if proc is not None:
            if proc.poll() is None:
                stop_group(proc)
            else:
                stop_group_leftovers(proc.pid)
            if self.watchdog is not None:
                self.watchdog.unwatch(proc.pid)
            self.current = None

    def _park_running(self, reason):
        """Executables stopped half-way go back to pending: --resume reruns them."""
        parked = []
        for e in self.manifest["entries"]:
            if e.get("status") == "running":
                e.update(status="pending", reason=reason)
                e.pop("pid", None)
                parked.append(e["name"])
        return parked

    def interrupted(self, signum):
        name = signal_name(signum)
        self._stop_current()
        parked = self._park_running(f"interrupted by {name}; finish with --resume {self.run_id}")
        record = {"signal": name, "at_utc": utc_now(), "running": parked}
        self.manifest.update(state="interrupted", interrupted=record)
        self.manifest.setdefault("interruptions", []).append(record)
        try:
            self.save()
            self.aggregate()
        except OSError as err:
            say(f"run-all: warning: could not mark the run interrupted: {os_error_text(err)}")
        say(f"\nrun-all: interrupted by {name}"
            + (f" while {', '.join(parked)} ran (stopped, back to pending)" if parked else "")
            + f"; the results so far are kept in {self.run_dir}; finish with: scripts/run-all --resume "
            f"{self.run_id} --out {self.out_root}")
        return 128 + signum

    def write_failed(self, err):
        """A result file could not be written (disk full, read-only): stop, keep what is there."""
        msg = os_error_text(err)
        self._stop_current()
        self._park_running(f"stopped: the driver could not write its results ({msg})")
        self.manifest.update(state="failed", error=msg)
        try:
            self.save()
        except OSError:
            pass  # run.json keeps its previous content (it is only ever replaced whole)
        say(f"run-all: error: {msg}; the driver stopped. The results written before are kept in {self.run_dir}; "
            f"once there is room, finish with: scripts/run-all --resume {self.run_id} --out {self.out_root}")
        return 1

    def _abandon_if_empty(self):
        """A new run that never started an executable leaves no directory behind."""
        if not self.created or any(e.get("status") != "pending" for e in self.manifest["entries"]):
            return
        keep = {results.MANIFEST, results.RAW_DIR, "logs", "run.lock"}
        try:
            names = set(os.listdir(self.run_dir))
            if names <= keep and not any(os.listdir(os.path.join(self.run_dir, d)) for d in (results.RAW_DIR, "logs")
                                         if d in names):
                self.close()
                shutil.rmtree(self.run_dir, ignore_errors=True)
        except OSError:
            pass

    def check_runnable(self):
        """A selection whose executables are none of them built runs nothing: a usage error."""
        left = [e for e in self.manifest["entries"] if self.unfinished(e)]
        if not left:
            return
        built = built_executables(self.bin_dir)
        if any(e["executable"] in built for e in left):
            return
        wanted = ", ".join(sorted({e["executable"] for e in left}))
        raise UsageError(f"nothing to run: none of {wanted} is built in {self.bin_dir} "
                         + (f"(built there: {', '.join(b for b in built)})" if built else
                            "(it holds no hdb-* executable: build first, drop --no-build, or give --build-dir)"))

    # --- what is unfinished, and the build it runs with ------------------------------------------
    def unfinished(self, e):
        """An entry whose cases are not all taken: never started or stopped half-way (pending,
        running), or failed before its last case (crash, time limit, an error such as a full disk, a
        usage error): its JSON is missing, unreadable or marked complete: false. --resume reruns
        these; a failed entry that ran every case (a failed verification) is finished."""
        if e["status"] in ("pending", "running"):
            return True
        if e["status"] != "failed":
            return False
        if isinstance(e.get("complete"), bool):
            return not e["complete"]
        return not self.results_complete(e)  # a run.json of an earlier driver: the file decides

    def results_complete(self, e):
        """Its document (the merged one under MPI) is there, readable and not marked complete: false."""
        try:
            return not results.incomplete(results.load_doc(self.raw_paths(e)[0]))
        except UsageError:
            return False

    def binary(self, e):
        """What an entry runs: its executable's path and sha256, and the build folder (a peer runs from
        the checkout with the build's export tools: its build folder only)."""
        if e.get("peer"):
            return {"build_dir": self.build_dir}
        path = os.path.join(self.bin_dir, e["executable"])
        return {"path": path, "build_dir": self.build_dir, "sha256": file_sha256(path)}

    def run_build(self):
        """The build the run began with: {build_dir, executables: {name: sha256 or None}} (a run.json
        of an earlier driver has only build_dir)."""
        b = self.manifest.get("build")
        if isinstance(b, dict) and isinstance(b.get("executables"), dict):
            return b
        return {"build_dir": self.manifest.get("build_dir"), "executables": {}}

    def record_build(self):
        """A new run records its build once it is built: the folder and the sha256 of every executable
        it plans to run (None: not built), what a --resume must find again."""
        exes = sorted({e["executable"] for e in self.manifest["entries"] if not e.get("peer")})
        self.manifest["build"] = {"build_dir": self.build_dir,
                                  "executables": {x: file_sha256(os.path.join(self.bin_dir, x)) for x in exes}}
        self.save()

    def build_difference(self, e, binary):
        """'' when the entry runs with the run's build, else what differs (folder or sha256)."""
        build = self.run_build()
        exe = e["executable"]
        was = build["executables"].get(exe) if not e.get("peer") and exe in build["executables"] else None
        other_hash = not e.get("peer") and exe in build["executables"] and binary["sha256"] != was
        if build.get("build_dir") and binary["build_dir"] != build["build_dir"]:
            hashes = f" ({exe} {short_hash(binary['sha256'])}; the run's: {short_hash(was)})" if other_hash else ""
            return f"ran from build {binary['build_dir']}, not the run's build {build['build_dir']}{hashes}"
        if other_hash:
            return f"ran {exe} {short_hash(binary['sha256'])}, the run's build had {short_hash(was)}"
        return ""

    def check_builds(self):
        """A resume runs the rest with the run's own binaries: another --build-dir, or executables
        rebuilt since (another sha256), would mix two builds in one run's results. That is a usage
        error naming what differs, unless --allow-mixed-builds asks for it; then the mix is recorded
        (run.json mixed_builds, each entry's mixed_build) and the report flags it."""
        build = self.run_build()
        diffs = []
        if build.get("build_dir") and self.build_dir != build["build_dir"]:
            diffs.append(f"--build-dir {self.build_dir} is not the run's build {build['build_dir']}")
        for e in self.manifest["entries"]:
            exe = e["executable"]
            if e.get("peer") or not self.unfinished(e) or exe not in build["executables"]:
                continue
            was, now = build["executables"][exe], file_sha256(os.path.join(self.bin_dir, exe))
            if now != was:
                diffs.append(f"{exe} is {short_hash(now)} now, {short_hash(was)} when the run began")
        if not diffs:
            return
        what = "; ".join(diffs)
        if not self.allow_mixed_builds:
            raise UsageError(f"--resume {self.run_id}: its binaries have changed ({what}): the rest of the run would "
                             f"come from another build than its first part. Resume with the run's build "
                             f"(--build-dir {build['build_dir']}, unchanged), or pass --allow-mixed-builds to mix "
                             "them (each entry then records its build and the report flags the mix)")
        self.log(f"run-all: warning: mixing builds in {self.run_id} (--allow-mixed-builds): {what}")
        self.manifest.setdefault("mixed_builds", []).append({"at_utc": utc_now(), "build_dir": self.build_dir,
                                                             "differences": diffs})

    def begin_resume(self):
        """Before rerunning: stop an executable a killed driver left running, keep the partial files
        of every executable that did not finish (interrupted, or failed before its last case: a crash,
        a full disk), and mark them pending. Says what it reruns, and why a failed one is not rerun."""
        m = self.manifest
        left = [e for e in m["entries"] if self.unfinished(e)]
        if m.get("state", "running") == "running" and any(e["status"] == "running" for e in left):
            record = {"signal": "unknown (the driver ended without marking the run: killed with -9 or crashed)",
                      "at_utc": None, "running": [e["name"] for e in left if e["status"] == "running"]}
            m.setdefault("interruptions", []).append(record)
        rerun = {e["name"] for e in left}
        for e in m["entries"]:
            if e["status"] == "failed" and e["name"] not in rerun:
                c = e.get("cases") or {}
                self.log(f"run-all: {e['name']}: failed, but it ran all its cases ({c.get('failed', 0)} failed): "
                         f"kept, not rerun ({e.get('reason', '')})")
        for e in left:
            if e["status"] == "failed":
                self.log(f"run-all: {e['name']}: rerun: it failed before its last case ({e.get('reason', '')})")
            self._stop_leftover(e)
            self._keep_partial(e)
            if e.get("started_utc"):  # the attempt's outcome stays in run.json
                e.setdefault("attempts", []).append({k: e[k] for k in ATTEMPT_KEYS if k in e})
            e["status"] = "pending"
            e.pop("pid", None)
        if not left:
            self.log(f"run-all: nothing to resume in {self.run_id}: every executable finished")
        m.pop("interrupted", None)
        m.pop("error", None)
        m["state"] = "running"
        m.setdefault("resumed", []).append(utc_now())
        self.save()

    def _stop_leftover(self, e):
        """An executable of this run still alive (its driver was killed and nothing stopped it) is
        stopped before its rerun starts, so two copies never write the same files. It is recognised
        by the pid recorded in run.json and its command line naming this run's JSON file."""
        pid = e.get("pid")
        if not isinstance(pid, int) or pid <= 1:
            return
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except OSError:
            return
        if os.fsencode(self.raw_paths(e)[0]) not in cmdline:
            return
        self.log(f"run-all: {e['executable']} of the interrupted run is still running (pid {pid}): stopping it "
                 "before the rerun")
        stop_group_leftovers(pid)

    def _keep_partial(self, e):
        """Results of an interrupted executable are kept beside the rerun's (never overwritten): moved
        to <file>.interrupted-N, so the rerun starts with no file of the earlier attempt in its place."""
        log = os.path.join(self.run_dir, "logs", e["name"] + ".log")
        for p in self.raw_paths(e) + self.csv_paths(e) + [log]:
            if not os.path.exists(p):
                continue
            n = 1
            while os.path.exists(f"{p}.interrupted-{n}"):
                n += 1
            if n > 1 and filecmp.cmp(p, f"{p}.interrupted-{n - 1}", shallow=False):
                os.remove(p)  # kept already, by an earlier resume
            else:
                os.replace(p, f"{p}.interrupted-{n}")

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

    def peer_job(self, e):
        from . import peers
        return peers.PeerJob(peer=e["peer"], benchmark=e["benchmark"], python=peers.venv_python(self.repo),
                             repo=self.repo, build_dir=self.build_dir, json=self.raw_paths(e)[0],
                             csv=self.csv_paths(e)[0], args=list(e["args"]), timeout_s=e["timeout_s"])

    def peer_unavailable(self, e):
        """Why a peer cannot run here ('' when it can): its module, the project venv, its package."""
        from . import peers
        mod = peers.module(e["peer"])
        if mod is None:
            return f"peer {e['peer']} is not in this checkout (scripts/hdb/peers)"
        ok, why = mod.available(peers.venv_python(self.repo))
        return "" if ok else why

    def command(self, e):
        if e.get("peer"):  # a peer runs on this host, never under mpirun (docs/peers.md)
            from . import peers
            return peers.module(e["peer"]).command(self.peer_job(e))
        exe = os.path.join(self.bin_dir, e["executable"])
        cmd = [exe] + e["args"] + ["--json", self.raw_paths(e)[0], "--csv", self.csv_paths(e)[0]]
        if not self.mpi:
            return cmd
        launcher = ["mpirun", "-np", str(self.mpi)]
        if mpirun_is_openmpi():
            launcher.append("--oversubscribe")
        if self.mpi_launch.get("hostfile"):
            launcher += ["--hostfile", self.mpi_launch["hostfile"]]
        return launcher + list(self.mpi_launch.get("args") or []) + cmd

    def environment(self, e=None):
        env = dict(os.environ)
        # An OpenCL platform chosen by name may be one the project installed (Intel's CPU runtime in
        # .venv): its ICD folder, unless the user chose one. A platform chosen by index keeps the
        # system's list, whose order it refers to.
        vendors = opencl_vendors(self.repo)
        if e and not e.get("peer") and platform_named(e["args"]) and vendors and "OCL_ICD_VENDORS" not in env:
            env["OCL_ICD_VENDORS"] = vendors
        # Peers run as `python -m hdb.peers.<module>`: the hdb package must be importable.
        scripts = os.path.join(self.repo, "scripts")
        env["PYTHONPATH"] = scripts + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
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
            if e.get("peer"):
                why = self.peer_unavailable(e)
                if why:
                    e.update(status="skipped", reason=why, exit_code=None, duration_s=0.0)
                    self.save()
                    progress.say(i, e, f"{shown(e)}: skipped, {why}")
                    continue
            elif e["executable"] not in built:
                e.update(status="skipped", reason=f"not built ({e['executable']} is not in {self.bin_dir})",
                         exit_code=None, duration_s=0.0)
                self.save()
                progress.say(i, e, f"{shown(e)}: skipped, not built")
                continue
            self.run_one(i, e, progress)
        self.mark_end()
        self.save()
        self.aggregate()
        if self.make_report:
            from . import report
            report.generate(self.run_dir, stream=self.stream)
        return self.print_summary()

    def mark_end(self):
        """finished only when every entry is: an entry that failed before its last case leaves the run
        incomplete (state "incomplete", entries named in `incomplete`), which --resume finishes."""
        m = self.manifest
        left = [e for e in m["entries"] if self.unfinished(e)]
        if left:
            m.update(state="incomplete", ended_utc=utc_now(),
                     incomplete=[{"name": e["name"], "reason": e.get("reason", "")} for e in left])
            m.pop("finished_utc", None)
        else:
            m.update(state="finished", finished_utc=utc_now())
            m.pop("incomplete", None)

    def run_one(self, index, e, progress):
        log_path = os.path.join(self.run_dir, "logs", e["name"] + ".log")
        cmd = self.command(e)
        env = self.environment(e)
        vendors = f"OCL_ICD_VENDORS={shlex.quote(env['OCL_ICD_VENDORS'])} " if env.get("OCL_ICD_VENDORS") else ""
        e.update(status="running", command=vendors + " ".join(shlex.quote(c) for c in cmd), log=os.path.relpath(log_path,
                 self.run_dir), reason="", started_utc=utc_now())
        for k in ("failure", "exit_code", "duration_s", "cases", "complete", "mixed_build"):
            e.pop(k, None)
        # The identity of what runs (a sha256 of the executable) and any difference from the run's build.
        e["binary"] = self.binary(e)
        mixed = self.build_difference(e, e["binary"])
        if mixed:
            e["mixed_build"] = mixed
        self.save()
        progress.say(index, e, f"{shown(e)}: started (limit {duration_text(e['timeout_s'])})")
        t0 = time.monotonic()
        seen, timed_out, said = 0, False, t0
        with open(log_path, "w") as log:
            log.write("$ " + e["command"] + "\n")
            log.flush()
            # Its own process group (killpg reaches mpirun's ranks too); SIGTERM from the kernel if the
            # driver dies (PR_SET_PDEATHSIG), and the watcher stops the group if the driver is killed.
            self.current = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.repo, env=env,
                                            start_new_session=True, preexec_fn=child_preexec(os.getpid()))
            proc = self.current
            self.watchdog.watch(proc.pid)
            e["pid"] = proc.pid
            self.save()
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
                        progress.say(index, e, f"{shown(e)}: {n} cases done (last {last})", elapsed)
                if elapsed > e["timeout_s"]:
                    timed_out = True
                    stop_group(proc)
                    break
        stop_group_leftovers(proc.pid)  # whatever it left in its group (an mpirun daemon) goes with it
        self.watchdog.unwatch(proc.pid)
        self.current = None
        e.pop("pid", None)
        e["duration_s"] = round(time.monotonic() - t0, 3)
        e["exit_code"] = proc.returncode
        self.classify(e, timed_out, log_path)
        if self.mpi:
            # Where the ranks ran: the hosts and their ranks, as the merged document records them.
            hosts = ((self._summary_doc(e) or {}).get("mpi") or {}).get("hosts")
            if isinstance(hosts, list):
                e["mpi_hosts"] = hosts
        self.save()
        self.aggregate()
        c = e.get("cases", {})
        progress.say(index, e, f"{shown(e)}: {e['status']}"
                     + (f" ({e['reason']})" if e["reason"] else "")
                     + f", cases {c.get('ok', 0)} ok / {c.get('skipped', 0)} skipped / {c.get('failed', 0)} failed"
                     + f" in {duration_text(e['duration_s'])}")

    def _summary_doc(self, e):
        """The merged document when it exists, else rank 0's file of a run still going (or crashed)."""
        for p in self.raw_paths(e)[:2]:
            try:
                with open(p) as f:
                    doc = json.load(f)
                if isinstance(doc, dict):
                    return doc
            except (OSError, ValueError):
                continue
        return None

    def cases_so_far(self, e):
        doc = self._summary_doc(e) or {}
        res = doc.get("results", [])
        if not isinstance(res, list):
            return 0, ""
        return len(res), (res[-1].get("id", "?") if res and isinstance(res[-1], dict) else "")

    def missing_results(self, e):
        """Why the JSON an executable that exited 0 must have written is not usable, or ''."""
        path = self.raw_paths(e)[0]
        rel = os.path.relpath(path, self.run_dir)
        if not os.path.exists(path):
            return f"it wrote no results ({rel} is missing)"
        try:
            doc = results.load_doc(path)
        except UsageError as err:
            return f"its results are not usable: {str(err).replace(path, rel)}"
        if results.incomplete(doc):
            return f"its results are marked incomplete ({rel}: {results.incomplete_text(doc)})"
        return ""

    def classify(self, e, timed_out, log_path):
        rc = e["exit_code"]
        summary = (self._summary_doc(e) or {}).get("summary", {})
        cases = {}
        for k in ("ok", "skipped", "failed"):
            try:
                cases[k] = int(summary.get(k, 0)) if isinstance(summary, dict) else 0
            except (TypeError, ValueError):
                cases[k] = 0
        e["cases"] = cases
        if timed_out:
            e.update(status="failed", failure="timeout", reason=f"timed out after {duration_text(e['timeout_s'])}")
        elif rc == 0:
            missing = self.missing_results(e)
            if missing:
                e.update(status="failed", failure="no-results", reason=f"exit 0 but {missing}")
            else:
                e.update(status="ok", reason="")
        elif rc == EXIT_SKIP:
            e.update(status="skipped", reason=reason_line(log_path) or "exit 77: no device")
        elif self.mpi and rc == MPIRUN_LAUNCH_FAILED:
            e.update(status="failed", failure="exit", reason=f"exit {rc}: mpirun: {mpirun_reason(log_path)}")
        elif rc < 0 or rc > 128:
            sig = -rc if rc < 0 else rc - 128
            e.update(status="failed", failure="crash", reason=f"crashed ({signal_name(sig)})")
        elif rc == EXIT_USAGE:
            e.update(status="failed", failure="usage", reason="usage error: " + reason_line(log_path))
        else:
            detail = f"{cases['failed']} failed cases" if cases["failed"] else reason_line(log_path)
            if self.mpi and not cases["failed"] and set(detail) <= set("-"):  # the end of an Open MPI banner
                detail = "mpirun: " + mpirun_reason(log_path)
            e.update(status="failed", failure="exit", reason=f"exit {rc}: {detail}")
        if e["status"] != "skipped":
            # Whether its cases are all taken: what --resume and the run's state go by (unfinished).
            e["complete"] = e["status"] == "ok" or (not timed_out and self.results_complete(e))

    def aggregate(self):
        """summary.csv is rewritten after every executable, so it always holds what has been measured:
        the executables' own CSV files end to end (results.summary_csv). Files that are missing
        are kept in self.problems for the summary (and the report lists them)."""
        try:
            self.problems = results.write_summary_csv(self.run_dir)
        except OSError as err:
            self.problems = [f"summary.csv not written: {os_error_text(err)}"]

    def print_summary(self):
        entries = self.manifest["entries"]
        self.log(f"\nrun-all: summary of {self.run_id}")
        width = max([22] + [len(shown(e)) for e in entries])
        self.log(f"{'executable':<{width}} {'status':<8} {'time':>7}  {'cases ok/skip/fail':<18} reason")
        for e in entries:
            c = e.get("cases", {})
            cs = f"{c.get('ok', 0)}/{c.get('skipped', 0)}/{c.get('failed', 0)}" if c else "-"
            self.log(f"{shown(e):<{width}} {e['status']:<8} {duration_text(e.get('duration_s')):>7}  {cs:<18} "
                     f"{e.get('reason', '')}")
        for p in self.problems:
            self.log(f"run-all: problem: {p}")
        n = {s: sum(1 for e in entries if e["status"] == s) for s in FINISHED}
        self.log(f"run-all: {n['ok']} ok, {n['skipped']} skipped, {n['failed']} failed -> {self.run_dir}")
        left = self.manifest.get("incomplete") or []
        if left:
            self.log(f"run-all: the run is incomplete: {len(left)} executable(s) did not take all their cases ("
                     + "; ".join(f"{x['name']}: {x['reason']}" for x in left) + "); once the cause is fixed, finish "
                     f"with: scripts/run-all --resume {self.run_id} --out {self.out_root}")
        mixed = [e for e in entries if e.get("mixed_build")]
        if mixed:
            self.log("run-all: warning: this run mixes builds: "
                     + "; ".join(f"{e['name']} {e['mixed_build']}" for e in mixed))
        return 1 if n["failed"] else 0


def say(msg):
    """A line on stderr that never raises: after SIGHUP the terminal may be gone (EIO)."""
    try:
        print(msg, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def make_run_dir(out_root, config_name):
    """Creates results/<run-id>/ (mkdir, never an existing one: two drivers started in the same
    second get two directories); an --out that cannot be written is a usage error."""
    base = time.strftime("%Y%m%d-%H%M%S") + "-" + os.path.splitext(os.path.basename(config_name))[0]
    try:
        os.makedirs(out_root, exist_ok=True)
        n = 1
        while True:
            run_id = base if n == 1 else f"{base}-{n}"
            try:
                os.mkdir(os.path.join(out_root, run_id))
                return run_id, os.path.join(out_root, run_id)
            except FileExistsError:
                n += 1
    except OSError as e:
        raise UsageError(f"--out {out_root}: cannot create a run directory there: {os_error_text(e)}") from None


MANIFEST_ENTRY_KEYS = ("name", "benchmark", "backend", "executable", "args", "timeout_s", "status")
# What an entry keeps of an attempt that --resume reruns (run.json entries[].attempts).
ATTEMPT_KEYS = ("status", "failure", "reason", "exit_code", "duration_s", "cases", "started_utc", "binary",
                "mixed_build")


def load_resumable_manifest(run_dir, resume):
    """run.json of a run to resume, checked: a corrupt or foreign file is a usage error naming it."""
    path = os.path.join(run_dir, results.MANIFEST)
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
    if why:
        raise UsageError(f"--resume {resume}: {path} is corrupt ({why}): this run cannot be resumed. Its raw/ "
                         f"results are untouched (scripts/report {run_dir} still reports them); start a new run "
                         "for the rest")
    return m


def stop_group(proc):
    """Ends the executable and everything it started (mpirun ranks): TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    stop_group_leftovers(proc.pid)


def stop_group_leftovers(pgid):
    """Stops what is left in a process group whose leader has ended (or one that is not the
    driver's child: a leftover of a killed driver): TERM, then KILL after the grace period. The kernel does not give a
    process group's id to a new process while the group has members, so this never reaches another
    program."""
    if group_alive(pgid):
        stop_groups([pgid], KILL_GRACE_S)


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
