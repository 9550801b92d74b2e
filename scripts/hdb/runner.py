"""scripts/run-all: setup -> build if needed -> bus on each backend -> every other executable the
configuration names, each under a time limit. The manifest (run.json) and the raw JSON are written
atomically as results come, so an interrupted or crashed run loses nothing and can be resumed.

Failure behaviour (docs/driver.md, "When things go wrong"): one driver per run directory (runlock);
every executable in a process group of its own, stopped with the driver on SIGTERM/SIGHUP/SIGINT and,
when the driver is killed with -9, by the watcher process and PR_SET_PDEATHSIG (watchdog); the run
is then marked interrupted and --resume finishes it.

The Runner holds a run's lifetime and its loop; each piece of the work has a module of its own:
runplan (the entries, in order), runstate (run directory, run.json, the build, what a resume keeps),
runexec (one executable: command, environment, process group, time limit, exit classification),
runpeers (a peer as an entry), progress (the progress line). Their public names are importable from
here too, as before the split."""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from . import caches, contract, results, runstate
from . import config as cfgmod
from .progress import FINISHED, PROGRESS_EVERY_S, Progress, print_summary
from .runexec import (
    KILL_GRACE_S,
    MPIRUN_LAUNCH_FAILED,
    POLL_S,
    STOP_SIGNALS,
    Execution,
    Interrupted,
    case_counts,
    classify,
    environment,
    executable_command,
    last_line,
    mpirun_is_openmpi,
    mpirun_reason,
    opencl_vendors,
    reason_line,
    signal_name,
    stop_group,
    stop_group_leftovers,
)
from .runlock import RunLock
from .runpeers import peer_command, peer_job, peer_unavailable
from .runplan import entry_name, large_entries, peer_entries, plan, platform_named, platform_of, shown
from .runstate import (
    ATTEMPT_KEYS,
    HASH_PREFIX,
    MANIFEST_ENTRY_KEYS,
    build_changes,
    build_difference,
    build_record,
    built_executables,
    file_sha256,
    git_commit,
    keep_partial,
    leftover_of,
    load_resumable_manifest,
    make_run_dir,
    resolve_resume,
    run_build,
    setup_and_build,
    short_hash,
    utc_now,
)
from .runstate import binary as entry_binary
from .runstate import csv_paths as entry_csv_paths
from .runstate import log_path as entry_log_path
from .runstate import raw_paths as entry_raw_paths
from .util import UsageError, duration_text, os_error_text, write_json
from .watchdog import Watchdog

Entry = dict[str, Any]  # one entry of run.json


def _absolute(p: str) -> str:
    """os.path.abspath: absolute and normalized, symbolic links kept (not Path.resolve)."""
    return os.path.normpath(Path(p).absolute())


# The names other modules and the tests import from hdb.runner (kept since the split).
__all__ = [
    "ATTEMPT_KEYS", "FINISHED", "HASH_PREFIX", "KILL_GRACE_S", "MANIFEST_ENTRY_KEYS", "MPIRUN_LAUNCH_FAILED",
    "POLL_S", "PROGRESS_EVERY_S", "STOP_SIGNALS", "Interrupted", "Progress", "Runner", "built_executables",
    "entry_name", "file_sha256", "git_commit", "large_entries", "last_line", "load_resumable_manifest",
    "make_run_dir", "mpirun_is_openmpi", "mpirun_reason", "opencl_vendors", "peer_entries", "plan", "platform_named",
    "platform_of", "reason_line", "resolve_resume", "say", "short_hash", "shown", "signal_name", "stop_group",
    "stop_group_leftovers", "utc_now",
]


class Runner:
    """One run of scripts/run-all: a new run (cfg, config_name) or a --resume of one."""

    def __init__(self, repo: str, out_root: str, build_dir: str | None, cfg: dict[str, Any] | None = None,
                 config_name: str = "", mpi: int | dict[str, Any] = 0, do_setup: bool = True, do_build: bool = True,
                 force_build: bool = False, resume: str | None = None, stream: TextIO | None = None,
                 report: bool = True, command_line: str = "", allow_mixed_builds: bool = False,
                 resume_timeout_s: float | None = None, resume_no_peers: bool = False) -> None:
        # config_name: the configuration of a new run; with resume, a --config given, which must be the run's.
        # resume_timeout_s, resume_no_peers: --timeout and --no-peers given to a resume, for what is left of the run
        # (runstate.resume_changes).
        self.repo = _absolute(repo)
        self.out_root = _absolute(out_root)
        # A resume keeps the run's build unless --build-dir names another (check_builds decides).
        self.build_dir = _absolute(build_dir) if build_dir else str(Path(self.repo, "build"))
        self.bin_dir = str(Path(self.build_dir, "bin"))
        self.stream = stream or sys.stdout
        self.do_setup, self.do_build, self.force_build, self.make_report = do_setup, do_build, force_build, report
        self.resuming = resume is not None
        self.allow_mixed_builds = allow_mixed_builds
        self.resume_timeout_s, self.resume_no_peers = resume_timeout_s, resume_no_peers
        self.created = False      # this driver made the run directory (a new run)
        self.current: Execution | None = None  # the executable while one runs
        self.stopping: int | None = None  # the signal that is stopping the driver
        self.watchdog: Watchdog | None = None
        self.problems: list[str] = []
        self.lock: RunLock | None = None
        self.mpi_launch: dict[str, Any]
        if resume is not None:
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
            self.out_root = str(Path(self.run_dir).parent)
            self.mpi = self.manifest.get("mpi", 0) or 0
            self.mpi_launch = self.manifest.get("mpi_launch") or {}
            if not build_dir and isinstance(self.manifest.get("build_dir"), str):
                self.build_dir = self.manifest["build_dir"]
                self.bin_dir = str(Path(self.build_dir, "bin"))
        else:
            if mpi and not shutil.which("mpirun"):
                raise UsageError("--mpi needs mpirun on PATH (Debian: openmpi-bin)")
            # mpi: a rank count, or config.mpi_launch's {ranks, hostfile, hosts, args} (runs across nodes).
            self.mpi_launch = dict(mpi) if isinstance(mpi, dict) else ({"ranks": mpi} if mpi else {})
            self.mpi = self.mpi_launch.get("ranks", 0)
            self.run_id, self.run_dir = make_run_dir(self.out_root, config_name)
            self.created = True
            assert cfg is not None, "a new run needs its configuration"
            self.lock = RunLock(self.run_dir, command_line).acquire()
            self.manifest = runstate.new_manifest(self.run_id, config_name, cfg, self.mpi, self.mpi_launch,
                                                  self.build_dir, self.repo, command_line, plan(cfg))
            try:
                for d in (results.RAW_DIR, "logs"):
                    Path(self.run_dir, d).mkdir(parents=True, exist_ok=True)
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
            if self.lock is not None and self.lock.note:
                self.log(f"run-all: {self.lock.note}")
            self.prepare()
            if self.resuming:
                self.check_builds()
            else:
                self.fit_to_caches()
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
            return contract.EXIT_FAILED
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

    def _stop_current(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None

    def _park_running(self, reason: str) -> list[str]:
        """Executables stopped half-way go back to pending: --resume reruns them."""
        return runstate.park_running(self.manifest, reason)

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
        return contract.EXIT_FAILED

    def _abandon_if_empty(self):
        """A new run that never started an executable leaves no directory behind."""
        if not self.created or any(e.get("status") != "pending" for e in self.manifest["entries"]):
            return
        try:
            if runstate.abandoned(self.run_dir):
                self.close()
                shutil.rmtree(self.run_dir, ignore_errors=True)
        except OSError:
            pass

    def check_runnable(self):
        """A selection whose executables are none of them built runs nothing: a usage error naming the
        executables. A peer is no executable to build: in a resume, one left to run (and not dropped by
        --no-peers) makes the run runnable (it runs, or is recorded as skipped with its reason). A new
        run with none of its executables built stays an error (a build forgotten: its peers would run
        without the build's export tools)."""
        left = [e for e in self.manifest["entries"] if self.unfinished(e)]
        exes = [e for e in left if not e.get("peer")]
        if not exes or (self.resuming and not self.resume_no_peers and len(exes) < len(left)):
            return
        built = built_executables(self.bin_dir)
        if any(e["executable"] in built for e in exes):
            return
        wanted = ", ".join(sorted({e["executable"] for e in exes}))
        raise UsageError(f"nothing to run: none of {wanted} is built in {self.bin_dir} "
                         + (f"(built there: {', '.join(b for b in built)})" if built else
                            "(it holds no hdb-* executable: build first, drop --no-build, or give --build-dir)"))

    # --- what is unfinished, and the build it runs with ------------------------------------------
    def unfinished(self, e: Entry) -> bool:
        """An entry whose cases are not all taken (runstate.unfinished): --resume reruns it."""
        return runstate.unfinished(e, self.results_complete)

    def results_complete(self, e: Entry) -> bool:
        """Its document (the merged one under MPI) is there, readable and not marked complete: false."""
        return runstate.results_complete(self.raw_paths(e)[0])

    def binary(self, e):
        """What an entry runs: its executable's path and sha256, and the build folder (runstate.binary)."""
        return entry_binary(e, self.build_dir, self.bin_dir)

    def run_build(self):
        """The build the run began with (runstate.run_build)."""
        return run_build(self.manifest)

    def fit_to_caches(self, machine: caches.Machine | None = None) -> None:
        """A new run of a configuration with [beyond_caches]: its largest sizes follow the caches of this
        machine (caches.fit, after the build: the device's L2 comes from a probe of hdb-bus-<backend>).
        The entries are planned again with them; run.json keeps what was chosen and why
        (`beyond_caches`), and --resume keeps the entries as they are."""
        cfg = self.manifest["config"]
        if not cfg.get("beyond_caches"):
            return
        if machine is None:
            machine = caches.survey(cfg, self.bin_dir, self.environment(), ranks=self.mpi,
                                    hosts=len(self.mpi_launch.get("hosts") or []))
        fitted, record = caches.fit(cfg, machine)
        self.manifest.update(config=fitted, beyond_caches=record, entries=plan(fitted))
        if "measured_by" in machine.llc:  # the machine's caches as measured beside what it reports
            self.manifest.setdefault("context", {})["llc"] = {
                k: machine.llc.get(k) for k in ("measured_bytes", "reported_bytes", "instances", "levels",
                                                "measure_problem") if k in machine.llc}
        self.save()
        for line in caches.summary_lines(record):
            self.log(f"run-all: {line}")

    def record_build(self):
        """A new run records its build once it is built: the folder and the sha256 of every executable
        it plans to run (None: not built), what a --resume must find again."""
        self.manifest["build"] = build_record(self.manifest["entries"], self.build_dir, self.bin_dir)
        self.save()

    def build_difference(self, e, binary):
        """'' when the entry runs with the run's build, else what differs (folder or sha256)."""
        return build_difference(self.manifest, e, binary)

    def check_builds(self):
        """A resume runs the rest with the run's own binaries: another --build-dir, or executables
        rebuilt since (another sha256), would mix two builds in one run's results. That is a usage
        error naming what differs, unless --allow-mixed-builds asks for it; then the mix is recorded
        (run.json mixed_builds, each entry's mixed_build) and the report flags it."""
        build = self.run_build()
        diffs = build_changes(self.manifest, self.build_dir, self.bin_dir,
                              [e for e in self.manifest["entries"] if self.unfinished(e)])
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
        runstate.begin_resume(self.manifest, [e for e in self.manifest["entries"] if self.unfinished(e)], self.log,
                              self._before_rerun, self.resume_timeout_s, self.resume_no_peers,
                              self.missing_results)
        self.save()

    def _before_rerun(self, e: Entry) -> None:
        self._stop_leftover(e)
        self._keep_partial(e)

    def _stop_leftover(self, e):
        """An executable of this run still alive (its driver was killed and nothing stopped it) is
        stopped before its rerun starts, so two copies never write the same files."""
        pid = leftover_of(e, self.raw_paths(e)[0])
        if pid is None:
            return
        self.log(f"run-all: {e['executable']} of the interrupted run is still running (pid {pid}): stopping it "
                 "before the rerun")
        stop_group_leftovers(pid)

    def _keep_partial(self, e):
        """Results of an interrupted executable are kept beside the rerun's: <file>.interrupted-N."""
        keep_partial(self.raw_paths(e) + self.csv_paths(e) + [entry_log_path(self.run_dir, e)])

    def save(self) -> None:
        write_json(str(Path(self.run_dir, results.MANIFEST)), self.manifest)

    def log(self, msg):
        print(msg, file=self.stream, flush=True)

    # --- setup and build -------------------------------------------------------------------
    def prepare(self) -> None:
        """scripts/setup, then the build when needed (runstate.setup_and_build)."""
        setup_and_build(self.repo, self.build_dir, self.bin_dir, self.do_setup, self.do_build, self.force_build,
                        self.log)

    # --- running ---------------------------------------------------------------------------
    def raw_paths(self, e):
        """Where the executable's JSON lands (runstate.raw_paths: <file>.rank<N> too under mpirun)."""
        return entry_raw_paths(self.run_dir, e, self.mpi)

    def csv_paths(self, e):
        """Where the executable's CSV lands: beside its JSON, named alike."""
        return entry_csv_paths(self.run_dir, e, self.mpi)

    def peer_job(self, e):
        return peer_job(e, self.repo, self.build_dir, self.raw_paths(e)[0], self.csv_paths(e)[0])

    def peer_unavailable(self, e):
        """Why a peer cannot run here ('' when it can): its module, the project venv, its package."""
        return peer_unavailable(e, self.repo)

    def command(self, e):
        if e.get("peer"):  # a peer runs on this host, never under mpirun (docs/peers.md)
            return peer_command(self.peer_job(e))
        return executable_command(str(Path(self.bin_dir, e["executable"])), e["args"], self.raw_paths(e)[0],
                                  self.csv_paths(e)[0], self.mpi, self.mpi_launch)

    def environment(self, e=None):
        return environment(self.repo, self.build_dir, self.mpi, e)

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

    def mark_end(self) -> None:
        """finished only when every entry is, else incomplete (runstate.mark_end)."""
        runstate.mark_end(self.manifest, [e for e in self.manifest["entries"] if self.unfinished(e)])

    def run_one(self, index, e, progress):
        log_path = entry_log_path(self.run_dir, e)
        cmd = self.command(e)
        env = self.environment(e)
        vendors = f"OCL_ICD_VENDORS={shlex.quote(env['OCL_ICD_VENDORS'])} " if env.get("OCL_ICD_VENDORS") else ""
        e.update(status="running", command=vendors + " ".join(shlex.quote(c) for c in cmd),
                 log=os.path.relpath(log_path, self.run_dir), reason="", started_utc=utc_now())
        for k in ("failure", "exit_code", "duration_s", "cases", "complete", "mixed_build"):
            e.pop(k, None)
        # The identity of what runs (a sha256 of the executable) and any difference from the run's build.
        e["binary"] = self.binary(e)
        mixed = self.build_difference(e, e["binary"])
        if mixed:
            e["mixed_build"] = mixed
        self.save()
        progress.say(index, e, f"{shown(e)}: started (limit {duration_text(e['timeout_s'])})")
        seen, said = 0, time.monotonic()

        def on_poll(elapsed):
            nonlocal seen, said
            if time.monotonic() - said >= PROGRESS_EVERY_S:
                n, last = self.cases_so_far(e)
                if n > seen:
                    seen, said = n, time.monotonic()
                    progress.say(index, e, f"{shown(e)}: {n} cases done (last {last})", elapsed)

        assert self.watchdog is not None
        with Path(log_path).open("w") as log:
            log.write("$ " + e["command"] + "\n")
            log.flush()
            self.current = run = Execution(cmd, env, self.repo, log, self.watchdog)
            run.watch()
            e["pid"] = run.pid
            self.save()
            run.wait(e["timeout_s"], on_poll)
        e["exit_code"], e["duration_s"] = run.finish()
        self.current = None
        e.pop("pid", None)
        self.classify(e, run.timed_out, log_path)
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

    def _summary_doc(self, e: Entry) -> dict[str, Any] | None:
        return runstate.summary_doc(self.raw_paths(e))

    def cases_so_far(self, e: Entry) -> tuple[int, str]:
        return runstate.cases_so_far(self.raw_paths(e))

    def missing_results(self, e: Entry) -> str:
        """Why the JSON an executable that exited 0 must have written is not usable, or ''."""
        return runstate.missing_results(self.raw_paths(e)[0], self.run_dir)

    def classify(self, e, timed_out, log_path):
        """The entry's status and reason from its exit (runexec.classify) and its cases from its document."""
        e["cases"] = cases = case_counts((self._summary_doc(e) or {}).get("summary", {}))
        classify(e, e["exit_code"], timed_out, log_path, self.mpi, cases, lambda: self.missing_results(e))
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

    def print_summary(self) -> int:
        """The run's summary table (progress.print_summary); 1 when an entry failed, else 0."""
        return print_summary(self.manifest, self.problems, self.run_dir, self.out_root, self.log)


def say(msg: str) -> None:
    """A line on stderr that never raises: after SIGHUP the terminal may be gone (EIO)."""
    try:
        print(msg, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
