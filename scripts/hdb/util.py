"""Small shared helpers: the usage error, atomic file writes, size labels, durations."""
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .contract import format_size

# A path as the public functions take it: a str (what most callers have) or a Path.
StrPath = str | os.PathLike[str]
# One result as results.py flattens it (a row of summary.csv), and one results document (hetdb-bench/2 JSON).
Row = dict[str, Any]
Document = dict[str, Any]


def absolute_path(path: StrPath) -> Path:
    """os.path.abspath as a Path: absolute and normalised ('..' removed lexically), symbolic links
    kept (Path.resolve would follow them)."""
    return Path(os.path.normpath(Path(path).absolute()))


class UsageError(Exception):
    """Bad options or input files; the commands exit with status 2 and print the message."""


def os_error_text(err: OSError) -> str:
    """'/x/run.json: cannot write (No space left on device)': an OSError as one line, for the user."""
    what = err.strerror or str(err)
    if err.filename:
        return f"{err.filename}: {what}"
    return what


def write_atomically(path: StrPath, data: str | bytes | bytearray) -> None:
    """Writes text or bytes to a temporary file beside `path`, then renames it over `path`, so a
    reader (or a crash) never sees a half-written file."""
    d = absolute_path(path).parent
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix="." + Path(path).name + ".", suffix=".tmp", dir=d)
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
        tmp = Path(tmp_name)
        tmp.chmod(0o666 & ~umask)
        tmp.replace(path)
    except BaseException as err:
        try:
            Path(tmp_name).unlink()
        except OSError:
            pass
        if isinstance(err, OSError):  # named by the file meant, not the temporary one
            raise OSError(err.errno, f"cannot write ({err.strerror})", path) from None
        raise


def write_json(path: StrPath, doc: Any) -> None:
    write_atomically(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def size_text(n: int | str) -> str:
    """1048576 -> '1M', 32768 -> '32K', 1000 -> '1000' (the executables' --sizes notation, as the ids
    print sizes: contract.format_size, the one spelling)."""
    return format_size(int(n))


def duration_text(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"
