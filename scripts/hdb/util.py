"""Small shared helpers: the usage error, atomic file writes, size labels, durations."""
import json
import os
import tempfile


class UsageError(Exception):
    """Bad options or input files; the commands exit with status 2 and print the message."""


def os_error_text(err):
    """'/x/run.json: cannot write (No space left on device)': an OSError as one line, for the user."""
    what = err.strerror or str(err)
    if err.filename:
        return f"{err.filename}: {what}"
    return what


def write_atomically(path, data):
    """Writes text or bytes to a temporary file beside `path`, then renames it over `path`, so a
    reader (or a crash) never sees a half-written file."""
    d = os.path.dirname(os.path.abspath(path))
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    except OSError as err:
        raise OSError(err.errno, f"cannot write ({err.strerror})", path) from None
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600; results are meant to be read and published like any output file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):  # named by the file meant, not the temporary one
            raise OSError(err.errno, f"cannot write ({err.strerror})", path) from None
        raise


def write_json(path, doc):
    write_atomically(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


_UNITS = [(1 << 40, "T"), (1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")]


def size_text(n):
    """1048576 -> '1M', 32768 -> '32K', 1000 -> '1000' (the executables' --sizes notation)."""
    n = int(n)
    for unit, suffix in _UNITS:
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def duration_text(s):
    if s is None:
        return "?"
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"
