"""Running one executable (or peer) of a run: its command line (under mpirun when the run has ranks)
and environment, its own process group under a time limit, stopped with everything it started
(TERM, then KILL), and how its exit is classified (ok, skipped, failed: timeout, crash, usage, exit)
with the reason its log gives (docs/driver.md, "When things go wrong")."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from . import contract
from .runplan import platform_named
from .util import duration_text
from .watchdog import Watchdog, child_preexec, group_alive, stop_groups

POLL_S = 0.25
KILL_GRACE_S = 3.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
# The usage hint the executables print after their real error line (src/common/harness/main.cpp).
_HINT = "run with --help"
# Open MPI's mpirun exits 255 when it cannot start the job on every node (a daemon that does not
# start or cannot call back), which is not a signal.
MPIRUN_LAUNCH_FAILED = 255

Entry = dict[str, Any]


class Interrupted(BaseException):
    """Raised in the driver by SIGTERM, SIGHUP or SIGINT (like KeyboardInterrupt, not an Exception)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


# --- the command and its environment ----------------------------------------------------------------
_openmpi: bool | None = None


def mpirun_is_openmpi() -> bool:
    global _openmpi
    if _openmpi is None:
        try:
            p = subprocess.run(["mpirun", "--version"], capture_output=True, text=True, timeout=30)
            _openmpi = "Open MPI" in (p.stdout + p.stderr) or "OpenRTE" in (p.stdout + p.stderr)
        except (OSError, subprocess.SubprocessError):
            _openmpi = False
    return _openmpi


def executable_command(exe: str, args: list[str], json_path: str, csv_path: str, mpi: int,
                       mpi_launch: dict[str, Any]) -> list[str]:
    """An executable's argv: its arguments and its output files, under mpirun when the run has ranks."""
    cmd = [exe, *args, "--json", json_path, "--csv", csv_path]
    if not mpi:
        return cmd
    launcher = ["mpirun", "-np", str(mpi)]
    if mpirun_is_openmpi():
        launcher.append("--oversubscribe")
    if mpi_launch.get("hostfile"):
        launcher += ["--hostfile", mpi_launch["hostfile"]]
    return launcher + list(mpi_launch.get("args") or []) + cmd


def opencl_vendors(repo: str) -> str | None:
    """The project's own OpenCL ICD folder (scripts/setup: the system's platforms and Intel's CPU runtime
    from the virtual environment), or None where setup made none."""
    d = Path(repo, ".venv", "etc", "OpenCL", "hdb-vendors")
    return str(d) if d.is_dir() else None


def environment(repo: str, build_dir: str, mpi: int, e: Entry | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # An OpenCL platform chosen by name may be one the project installed (Intel's CPU runtime in
    # .venv): its ICD folder, unless the user chose one. A platform chosen by index keeps the
    # system's list, whose order it refers to.
    vendors = opencl_vendors(repo)
    if e and not e.get("peer") and platform_named(e["args"]) and vendors and "OCL_ICD_VENDORS" not in env:
        env["OCL_ICD_VENDORS"] = vendors
    # Peers run as `python -m hdb.peers.<module>`: the hdb package must be importable.
    scripts = str(Path(repo, "scripts"))
    env["PYTHONPATH"] = scripts + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("POCL_CACHE_DIR", str(Path(build_dir, "pocl-cache")))
    Path(env["POCL_CACHE_DIR"]).mkdir(parents=True, exist_ok=True)
    if mpi and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


# --- process groups ---------------------------------------------------------------------------------
def stop_group(proc: subprocess.Popen[Any]) -> None:
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


def stop_group_leftovers(pgid: int) -> None:
    """Stops what is left in a process group whose leader has ended (or one that is not the
    driver's child: a leftover of a killed driver): TERM, then KILL after the grace period. The kernel does not give a
    process group's id to a new process while the group has members, so this never reaches another
    program."""
    if group_alive(pgid):
        stop_groups([pgid], KILL_GRACE_S)


class Execution:
    """One executable running in a process group of its own, under the time limit."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: str, log: IO[str], watchdog: Watchdog) -> None:
        # Its own process group (killpg reaches mpirun's ranks too); SIGTERM from the kernel if the
        # driver dies (PR_SET_PDEATHSIG), and the watcher stops the group if the driver is killed.
        self.watchdog = watchdog
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                     start_new_session=True, preexec_fn=child_preexec(os.getpid()))
        self.timed_out = False

    def watch(self) -> None:
        """The watcher stops its group should the driver be killed (call once the driver holds it)."""
        self.watchdog.watch(self.proc.pid)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait(self, timeout_s: float, on_poll: Callable[[float], None]) -> None:
        """Until it ends, or stopped at the time limit (timed_out); on_poll(elapsed) between polls."""
        while True:
            try:
                self.proc.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            elapsed = time.monotonic() - self.t0
            on_poll(elapsed)
            if elapsed > timeout_s:
                self.timed_out = True
                stop_group(self.proc)
                break

    def stop(self) -> None:
        """Stopped from outside (the driver is stopping): the group, or what is left of it."""
        if self.proc.poll() is None:
            stop_group(self.proc)
        else:
            stop_group_leftovers(self.proc.pid)
        self.watchdog.unwatch(self.proc.pid)

    def finish(self) -> tuple[int | None, float]:
        """After wait(): whatever it left in its group (an mpirun daemon) goes with it; (exit code, seconds)."""
        stop_group_leftovers(self.proc.pid)
        self.watchdog.unwatch(self.proc.pid)
        return self.proc.returncode, round(time.monotonic() - self.t0, 3)


# --- what the log says ------------------------------------------------------------------------------
def reason_line(path: str) -> str:
    """The line of an executable's output that says why it stopped, shown as the reason of a skip or
    failure: the last line with 'error:' in it (the executables print '<exe>: error: ...' and then a
    usage hint, 'Run with --help ...', which is never the reason), else the last line that is not
    that hint. The driver's own first line ('$ command') is not the executable's output."""
    try:
        with Path(path).open(errors="replace") as f:
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


def mpirun_reason(path: str) -> str:
    """The text of the last of Open MPI's messages in an executable's log (a block between lines
    of dashes), on one line: why mpirun ended the job, shown as the reason of the failure."""
    try:
        with Path(path).open(errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines()]
    except OSError:
        return "see the log"
    rules = [i for i, ln in enumerate(lines) if len(ln) > 20 and set(ln) == {"-"}]
    if len(rules) < 2:
        return reason_line(path) or "see the log"
    text = " ".join(" ".join(lines[rules[-2] + 1:rules[-1]]).split())
    return text.split(" * ")[0][:300]  # the headline, without the list of possible causes


def last_line(path: str) -> str:  # the name earlier versions used
    return reason_line(path)


def case_counts(summary: Any) -> dict[str, int]:
    """{ok, skipped, failed} of a document's summary (0 for what it lacks or garbles)."""
    cases = {}
    for k in ("ok", "skipped", "failed"):
        try:
            cases[k] = int(summary.get(k, 0)) if isinstance(summary, dict) else 0
        except (TypeError, ValueError):
            cases[k] = 0
    return cases


def classify(e: Entry, rc: Any, timed_out: bool, log_path: str, mpi: int, cases: dict[str, int],
             missing: Callable[[], str]) -> None:
    """An entry's status, failure kind and reason from how its executable ended: the exit codes of
    contract (0 ok, 77 skipped, 2 usage), a signal (crash), the time limit, mpirun's launch failure;
    missing() says why the results of an exit 0 are unusable ('' when they are fine)."""
    if timed_out:
        e.update(status="failed", failure="timeout", reason=f"timed out after {duration_text(e['timeout_s'])}")
    elif rc == contract.EXIT_OK:
        why = missing()
        if why:
            e.update(status="failed", failure="no-results", reason=f"exit 0 but {why}")
        else:
            e.update(status="ok", reason="")
    elif rc == contract.EXIT_SKIP:
        e.update(status="skipped", reason=reason_line(log_path) or f"exit {contract.EXIT_SKIP}: no device")
    elif mpi and rc == MPIRUN_LAUNCH_FAILED:
        e.update(status="failed", failure="exit", reason=f"exit {rc}: mpirun: {mpirun_reason(log_path)}")
    elif rc < 0 or rc > 128:
        sig = -rc if rc < 0 else rc - 128
        e.update(status="failed", failure="crash", reason=f"crashed ({signal_name(sig)})")
    elif rc == contract.EXIT_USAGE:
        e.update(status="failed", failure="usage", reason="usage error: " + reason_line(log_path))
    else:
        detail = f"{cases['failed']} failed cases" if cases["failed"] else reason_line(log_path)
        if mpi and not cases["failed"] and set(detail) <= set("-"):  # the end of an Open MPI banner
            detail = "mpirun: " + mpirun_reason(log_path)
        e.update(status="failed", failure="exit", reason=f"exit {rc}: {detail}")
