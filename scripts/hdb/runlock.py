"""One driver per run directory: <run>/run.lock, an flock()ed file holding the holder's pid.

The kernel lock (flock, exclusive, non-blocking) is what excludes a second driver: it is released
by the kernel when its holder exits in any way (kill -9 included), so a lock can never be held by a
dead process. The file's content says who holds it ({"pid", "host", "since", "command"}); the
holder empties it when it lets go. A lock that can be taken while the file still names a holder
was left by a driver that died without letting go (killed with -9, a crash, a power cut): it is
*stale*, taken over, and the take-over is reported (note). On a file system without flock (some
network mounts), the pid alone decides: a holder on this host whose pid is alive keeps the lock.
"""
import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any, NoReturn

from .util import StrPath, UsageError

LOCK_FILE = "run.lock"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


def _describe(holder: dict[str, Any] | None) -> str:
    if not holder:
        return "another run-all"
    return (f"run-all pid {holder.get('pid', '?')} on {holder.get('host', '?')}, since {holder.get('since', '?')}"
            + (f": {holder['command']}" if holder.get("command") else ""))


class RunLock:
    def __init__(self, run_dir: StrPath, command: str = "") -> None:
        self.run_dir = run_dir
        self.path = str(Path(run_dir) / LOCK_FILE)
        self.command = command
        self.fd: int | None = None
        self.note = ""  # set when a stale lock was taken over

    def _read(self, fd: int) -> dict[str, Any] | None:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            text = os.read(fd, 4096).decode("utf-8", "replace").strip()
        except OSError:
            return None
        if not text:
            return None
        try:
            holder = json.loads(text)
            return holder if isinstance(holder, dict) else {"pid": "?", "raw": text[:80]}
        except ValueError:
            return {"pid": "?", "raw": text[:80]}

    def refuse(self, holder: dict[str, Any] | None) -> NoReturn:
        raise UsageError(f"run {self.run_dir} is in use by {_describe(holder)}. Two drivers must not run one run "
                         f"(they would write the same files): wait for it to finish, or stop it (kill "
                         f"{holder.get('pid', 'PID') if holder else 'PID'}; it then marks the run interrupted) and "
                         f"run --resume again")

    def acquire(self) -> "RunLock":
        """Takes the lock or raises UsageError naming the holder; sets self.note on a stale take-over."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise UsageError(f"cannot create the lock file {self.path}: {e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            kernel_lock = True
        except BlockingIOError:
            holder = self._read(fd)
            os.close(fd)
            self.refuse(holder)
        except OSError as e:
            if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                os.close(fd)
                raise
            kernel_lock = False
        previous = self._read(fd)
        if previous:
            pid = previous.get("pid")
            same_host = previous.get("host") == socket.gethostname()
            alive = isinstance(pid, int) and same_host and pid_alive(pid)
            if not kernel_lock and (alive or not same_host):
                os.close(fd)
                self.refuse(previous)
            why = ("that process is gone" if same_host and not alive else
                   "it no longer holds the lock" if kernel_lock else "")
            self.note = (f"took over the stale lock of {_describe(previous)} ({why}: that driver was killed or "
                         "crashed without letting go)")
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": self.command}
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, (json.dumps(me) + "\n").encode())
            os.fsync(fd)
        except OSError as e:
            os.close(fd)
            raise OSError(e.errno, f"cannot write the lock file: {e.strerror}", self.path) from None
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None
