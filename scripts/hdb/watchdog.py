"""Children never outlive the driver: a watcher process and PR_SET_PDEATHSIG.

Every executable (or mpirun) the driver starts is the leader of a process group of its own
(start_new_session), so one killpg() reaches it and everything it started (mpirun's ranks). The
driver stops that group itself on a time limit and on SIGTERM/SIGHUP/SIGINT. Two mechanisms cover
the case where the driver cannot, because it was killed with SIGKILL (or crashed):

1. The watcher: one small process per driver, started in a session of its own (so a signal to the
   driver's terminal or process group does not reach it), holding the read end of a pipe whose only
   write end the driver holds. The driver writes "+<pgid>" when it starts a child and "-<pgid>"
   when the child has ended. When the driver dies, however it dies, the kernel closes the write end;
   the watcher reads end-of-file and sends SIGTERM to every group still registered, then SIGKILL
   to those still alive after a grace period, and exits. A driver that exits normally has no group
   registered; the watcher then just exits. This needs nothing but pipes and process groups.
2. PR_SET_PDEATHSIG (Linux): each child asks the kernel for SIGTERM when its parent dies, set in
   the child between fork and exec, so the executable (or mpirun, which then ends its ranks) is told
   at once even if the watcher is gone. Only the direct child gets it; the watcher covers the group.

Run as a script (python watchdog.py FD) it is the watcher; it imports only the standard library.
"""
import ctypes
import ctypes.util
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

GRACE_S = 3.0
PR_SET_PDEATHSIG = 1

_libc = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _prctl = _libc.prctl
    except (OSError, AttributeError):
        _libc = None


def child_preexec(parent_pid: int) -> Callable[[], None]:
    """preexec_fn for a child: SIGTERM when the driver dies (Linux); if the driver is already gone
    (it died between fork and here), the child ends before it starts."""
    def preexec() -> None:
        if _libc is not None:
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(143)
    return preexec


def pdeathsig_available() -> bool:
    return _libc is not None


class Watchdog:
    """The driver's side: starts the watcher, registers and unregisters child process groups."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.broken = False
        self.w: int | None = None
        r, w = os.pipe()
        try:
            # An absolute, normalised path (os.path.abspath), for a watcher that runs as a script of its own.
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.normpath(Path(__file__).absolute()), str(r)],
                pass_fds=(r,), start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        except OSError as e:
            os.close(w)
            self.proc, self.w, self.broken = None, None, True
            print(f"run-all: warning: no watcher process ({e.strerror}); if the driver is killed with -9 its "
                  "running executable is stopped only by PR_SET_PDEATHSIG", file=stream)
            return
        finally:
            os.close(r)
        self.w = w

    def _send(self, line: str) -> None:
        if self.w is None:
            return
        try:
            os.write(self.w, line.encode() + b"\n")
        except OSError:
            if not self.broken:
                self.broken = True
                print("run-all: warning: the watcher process is gone; if the driver is killed with -9 its running "
                      "executable is stopped only by PR_SET_PDEATHSIG", file=self.stream)

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}")

    def unwatch(self, pgid: int) -> None:
        self._send(f"-{pgid}")

    def close(self) -> None:
        """Closing the pipe is the watcher's signal to stop what is left and exit."""
        if self.w is not None:
            os.close(self.w)
            self.w = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2 * GRACE_S + 2)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None


def group_alive(pgid: int) -> bool:
    """Whether process group pgid still has a member (one we may not signal counts as alive)."""
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def stop_groups(groups: Sequence[int], grace_s: float | None = None) -> None:
    """TERM every group, wait up to grace_s while any is alive, then KILL them all: the one way the
    watcher and the driver stop what a benchmark left running."""
    grace_s = GRACE_S if grace_s is None else grace_s
    for g in groups:
        try:
            os.killpg(g, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(group_alive(g) for g in groups):
        time.sleep(0.05)
    for g in groups:
        try:
            os.killpg(g, signal.SIGKILL)
        except OSError:
            pass


def watcher_main(fd: int) -> int:
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    groups: set[int] = set()
    buf = b""
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError as e:
            if e.errno == errno.EINTR:
                continue
            break
        if not data:
            break  # the driver is gone (or has finished): every write end is closed
        buf += data
        *lines, buf = buf.split(b"\n")
        for ln in lines:
            try:
                n = int(ln[1:])
            except ValueError:
                continue
            if n > 1:
                (groups.add if ln[:1] == b"+" else groups.discard)(n)
    if groups:
        stop_groups(sorted(groups))
    return 0


if __name__ == "__main__":
    sys.exit(watcher_main(int(sys.argv[1])))
