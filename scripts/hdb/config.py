"""Run configurations (config/*.toml) and the command-line overrides on top of them.

A configuration names the benchmarks and backends to run, the harness options every executable
gets, per-benchmark overrides, and the time limit per executable. See docs/driver.md.
"""
import copy
import json
import math
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import contract
from .contract import format_size
from .util import StrPath, UsageError, absolute_path

Config = dict[str, Any]  # a validated configuration, as load() returns it

BENCHMARK_ORDER = ["bus", "ra", "tpch", "ssb", "merge", "ngram"]
# Benchmarks without a size sweep: their data follows a scale factor (`--sf`), so no size of theirs is
# raised beyond the caches ([beyond_caches]) and their executables refuse the size options (they would
# select nothing: SSB at SF 1 reads 216 MB whatever --sizes says). The [harness] sizes, and run-all's
# --sizes, are the other benchmarks'; a size key or a large run in their own [bench.<name>] is an error.
SCALE_FACTOR_BENCHMARKS = ("ssb",)
# Every backend, declared once in config/backends.json, which CMake reads too (cmake/HdbTargets.cmake):
# adding a backend is a row there (docs/cases.md, "Adding a backend").
BACKENDS_FILE = Path(__file__).resolve().parents[2] / "config" / "backends.json"
_BACKEND_ROWS: list[dict[str, Any]] = json.loads(BACKENDS_FILE.read_text(encoding="utf-8"))["backends"]
BACKENDS = [str(b["name"]) for b in _BACKEND_ROWS]
# What a configuration without a `backends` key runs: the real processors.
DEFAULT_BACKENDS = [str(b["name"]) for b in _BACKEND_ROWS if b.get("default")]
# Host execution (docs/driver.md, "Host execution of the CUDA backend"): the CUDA backend's sources
# compiled by the C++ compiler and run on the CPU, every GPU thread a fiber (hdb-<bench>-cuda-host,
# built with -DHDB_CUDA_HOST=ON; its documents say backend and context.device.kind "cuda-host").
# Its results are verified like any backend's, but its times are a CPU's emulation of a GPU, never a
# processor's figure: every view about real processors (headline, speed-ups, figures, ceilings, key
# widths, scaling, targets, compare) leaves them out, and the report gives them a section of their own.
HOST_EXECUTION_BACKENDS = tuple(str(b["name"]) for b in _BACKEND_ROWS if b.get("host_execution"))
HOST_EXECUTION_KINDS = HOST_EXECUTION_BACKENDS  # context.device.kind of such a document: its backend's name

# Harness options a configuration may set, mapped to the executables' shared flags (issue 2).
HARNESS_FLAGS = {
    "sizes": "--sizes",
    "min_size": "--min-size",
    "max_size": "--max-size",
    "size_class": "--size-class",
    "passes": "--passes",
    "max_passes": "--max-passes",
    "max_time": "--max-time",
    "warmup": "--warmup",
    "target_noise": "--target-noise",
    "transfer": "--transfer",
    "threads": "--threads",
    "device": "--device",
    "platform": "--platform",
    "seed": "--seed",
}
SIZE_KEYS = ("sizes", "min_size", "max_size", "size_class")
TOP_KEYS = {"description", "benchmarks", "backends", "timeout_s", "harness", "bench", "backend", "mpi"}
MPI_KEYS = {"ranks", "hostfile", "args"}
# backends: the backends this benchmark runs on, of those the configuration names (all by default).
BENCH_KEYS = set(HARNESS_FLAGS) | {"timeout_s", "args", "peer_args", "large", "backends"}
# [bench.<name>.large]: a second run of the benchmark's executables (and peers) at sizes beyond the
# last-level caches, for the variants and parameters `only` and `args` select (docs/driver.md).
LARGE_KEYS = {"sizes", "only", "peer_only", "peers", "args", "timeout_s"}
# [backend.<name>]: overrides of [harness] (and [bench.<name>]) keys for one backend's executables,
# plus args (options every executable of the backend takes, replacing the same options given before),
# timeout_s (its executables' time limit: the longer of this and the benchmark's) and large (false:
# its executables make no [bench.<name>.large] second run). For a slow backend such as cuda-host.
BACKEND_KEYS = set(HARNESS_FLAGS) | {"timeout_s", "args", "large", "platforms"}
# [backend.opencl] platforms = ["nvidia", "pocl", "intel"]: the OpenCL backend's executables run once
# per platform listed (--platform: a word of the platform's name, or its index), each an entry
# <benchmark>-opencl-<platform> whose results the report keeps apart by implementation. A platform not
# installed is recorded as skipped with the reason. Without the key: one run on the loader's first
# platform (or the one `platform` names), as <benchmark>-opencl.
_PLATFORM = re.compile(r"^[a-z0-9][a-z0-9_]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_BACKEND_NAME = re.compile(r"^[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*$")  # cuda-host
# peers = ["duckdb", "pg_trgm"]: systems the driver runs beside the executables, on the same data
# (docs/peers.md); none when the key is absent.
TOP_KEYS = TOP_KEYS | {"peers"}
# [beyond_caches]: the largest size of each benchmark's sizes beyond the caches ([bench.<name>.large]
# sizes, or a sweep's max_size) follows the machine at hand: at least `factor` x the larger of the host's
# last-level cache and the device's L2, the next power of two, where the memory allows and up to
# `max_size` (the time budget); scale_timeouts (default true): their time limits grow with them;
# measure_caches (default true): the host's LLC is the one a latency sweep finds, not the one the
# machine reports (VMs misreport it). Done by the driver before the run (caches.py), recorded in
# run.json's `beyond_caches` (docs/driver.md).
TOP_KEYS = TOP_KEYS | {"beyond_caches"}
BEYOND_CACHES_KEYS = {"factor", "max_size", "scale_timeouts", "measure_caches"}


def config_dir(repo: StrPath) -> str:
    return str(Path(repo) / "config")


def resolve_config_path(repo: StrPath, name: str) -> str:
    """'quick' -> config/quick.toml; a path to a .toml file is taken as it is."""
    if os.path.sep in name or name.endswith(".toml"):
        path = name
    else:
        path = str(Path(config_dir(repo)) / (name + ".toml"))
    if not Path(path).is_file():
        folder = Path(config_dir(repo))
        known = sorted(f.name[:-5] for f in folder.iterdir() if f.name.endswith(".toml")) if folder.is_dir() else []
        raise UsageError(f"--config {name}: no such configuration {path} (known: {', '.join(known) or 'none'})")
    return path


def known_benchmarks(repo: StrPath, bin_dir: StrPath | None = None) -> list[str]:
    """The benchmarks there are: those the build declares (cmake/bench/<name>.cmake, one per
    hdb_add_benchmark), those built in bin_dir (hdb-<name>-<backend>), and the usual five."""
    names = set(BENCHMARK_ORDER)
    names.update(p.name[:-len(".cmake")] for p in (Path(repo) / "cmake" / "bench").glob("*.cmake"))
    if bin_dir and Path(bin_dir).is_dir():
        for f in Path(bin_dir).iterdir():
            bench = split_executable(f.name)[0]
            if bench:
                names.add(bench)
    return sorted(n for n in names if _NAME.match(n))


def split_executable(name: str) -> tuple[str, str]:
    """'hdb-ra-cuda-host' -> ('ra', 'cuda-host'); ('', '') for a name that is not
    hdb-<benchmark>-<backend> of a known backend (a backend's name may hold a '-')."""
    if name.startswith("hdb-"):
        for backend in sorted(BACKENDS, key=len, reverse=True):
            bench = name[len("hdb-"):-len(backend) - 1]
            if name.endswith("-" + backend) and _NAME.match(bench):
                return bench, backend
    return "", ""


def load(path: StrPath) -> Config:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"{path}: cannot read the configuration: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise UsageError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} on line {line}); a configuration is "
                         "a TOML file in UTF-8") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: not valid TOML: {e}") from None
    return validate(doc, str(path))


def _number(value: Any) -> bool:
    """A finite int or float (TOML also has nan and inf), never a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


# --- values: checked here, before any run directory exists, by the rules the harness applies -------
# (src/common/harness/options.cpp and sizes.cpp). A value the executables would refuse is one usage
# error naming its key, not a run directory whose every executable fails; the same rules hold for
# [harness], every [bench.<name>] (and .large), every [backend.<name>], the command line, and the
# harness options written into `args` and `peer_args`.

# The size range of each --size-class (sizes.cpp size_class_range).
SIZE_CLASSES = contract.SIZE_CLASSES
DEFAULT_SIZE_CLASS = 1
# Integer options and the range the harness accepts (options.cpp: CLI::Range / NonNegativeNumber);
# None: no upper bound.
_INT_RANGES = {"size_class": (1, 4), "passes": (1, 100000), "max_passes": (1, 100000), "warmup": (0, 1000),
               "threads": (0, 4096), "device": (0, None), "seed": (0, (1 << 64) - 1)}
_FLOAT_RANGES = {"max_time": (0.0, 86400.0), "target_noise": (0.0, 10.0)}
TRANSFERS = ("pageable", "pinned", "both")


def _label(where: str, key: str | None) -> str:
    return f"{where}: '{key}'" if key else where


def parse_size(where: str, key: str | None, text: Any) -> int:
    """One size as the harness reads it (contract.parse_size, sizes.cpp: 4096, 32K, 1M, 1G, 2^20; B,
    K/k/KB/KiB, M/m/MB/MiB, G/g/GB/GiB; at most 1T): bytes. Surrounding blanks are the driver's to drop
    (it passes the normalised text on). Anything else is a usage error naming where it was given and
    why, in the executables' words; a negative or fractional number says so rather than "no number" or
    "unknown suffix '.5M'"."""
    text = str(text).strip()
    what = _label(where, key)
    try:
        return contract.parse_size(text, what)
    except ValueError as e:
        msg = str(e)
    hint = ("negative" if text.startswith("-") and "^" not in text else
            "not a whole number of bytes" if re.match(r"^[0-9]+\.", text) else None)
    head, tail = f"{what}: '{text}' is not a valid size (", "; use e.g."
    if hint and msg.startswith(head) and tail in msg:
        msg = head + hint + msg[msg.index(tail, len(head)):]
    raise UsageError(msg) from None


def parse_sizes(where: str, key: str | None, value: Any) -> tuple[str, list[int]]:
    """A size list ("32K,1M" or a TOML list): (normalised text, [bytes]). An empty item and a size
    given twice (1M and 1024K are one size) are errors: the harness would measure that size twice
    under one id."""
    items = value if isinstance(value, list) else str(value).split(",")
    texts = [str(v).strip() for v in items]
    if not texts or texts == [""]:
        raise UsageError(f"{_label(where, key)}: names no size (e.g. \"32K,1M\")")
    sizes: list[int] = []
    seen: dict[int, str] = {}
    for t in texts:
        if not t:
            raise UsageError(f"{_label(where, key)}: an empty size in {','.join(texts)!r} (two commas, or one at "
                             "an end)")
        n = parse_size(where, key, t)
        if n in seen:
            twice = f"{t} is given twice" if t == seen[n] else f"{seen[n]} and {t} are the same size"
            raise UsageError(f"{_label(where, key)}: {twice}; each size runs once (the harness would measure it "
                             "twice under one id)")
        seen[n] = t
        sizes.append(n)
    return ",".join(texts), sizes


def _harness_value(where, key, value):
    """One [harness]-style key's value, checked by the harness's own rules; returns it normalised."""
    if key == "sizes":
        if not isinstance(value, (str, list)) or isinstance(value, bool) or (
                isinstance(value, list) and not all(isinstance(v, (str, int)) and not isinstance(v, bool)
                                                    for v in value)):
            raise UsageError(f"{where}: 'sizes' must be a string like \"32K,1M\" or a list of sizes")
        return parse_sizes(where, key, value)[0]
    if key in ("min_size", "max_size"):
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise UsageError(f"{where}: '{key}' must be a size such as \"32K\" or a number of bytes")
        parse_size(where, key, value)
        return str(value).strip()
    if key == "platform":
        # --platform: an index, or a word of the platform's name (harness options.cpp)
        if isinstance(value, bool) or not (isinstance(value, int) and value >= 0 or
                                           isinstance(value, str) and _PLATFORM.match(value.lower())):
            raise UsageError(f"{where}: 'platform' must be an OpenCL platform's index or a word of its name "
                             f"(pocl, intel, nvidia), not {value!r}")
        return value
    if key == "transfer":
        if value not in TRANSFERS:
            raise UsageError(f"{where}: transfer must be pageable, pinned or both, not {value!r}")
        return value
    if key in _FLOAT_RANGES:
        flo, fhi = _FLOAT_RANGES[key]
        if not _number(value) or not flo <= value <= fhi:
            raise UsageError(f"{where}: '{key}' must be a non-negative, finite number (at most {fhi:g}), not "
                             f"{value!r}")
        return value
    lo, hi = _INT_RANGES.get(key, (0, None))
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        what = "a non-negative integer" if hi is None else f"an integer in {lo}..{hi}"
        raise UsageError(f"{where}: '{key}' must be {what}, not {value!r}")
    return value


# The harness options by flag (--sizes -> sizes): how an option inside `args` is recognised.
_FLAG_KEYS = {flag: key for key, flag in HARNESS_FLAGS.items()}


def _typed(key, text):
    """The text of an option in `args` as the value a configuration would give that key."""
    if key in _FLOAT_RANGES:
        try:
            return float(text)
        except ValueError:
            return text
    if key in _INT_RANGES:
        t = text.strip()
        return int(t) if t.isdigit() or (t[:1] == "-" and t[1:].isdigit()) else text
    return text


def _check_args(where, key, args):
    """The harness options written into an `args` list follow the rules of the keys they stand for
    (["--sizes", "0"] is refused like sizes = "0"); a harness option without its value is an error."""
    flags = _FLAG_KEYS
    for i, a in enumerate(args):
        flag, eq, text = a.partition("=")
        if flag not in flags:
            continue
        if not eq:
            if i + 1 >= len(args):
                raise UsageError(f"{where}: '{key}': {flag} has no value")
            text = args[i + 1]
        _harness_value(f"{where} '{key}' {flag}", flags[flag], _typed(flags[flag], text))


def _names(where, key, value, allowed=None, pattern=_NAME):
    if not isinstance(value, list) or not all(isinstance(v, str) and pattern.match(v) for v in value):
        raise UsageError(f"{where}: '{key}' must be a list of lower-case names")
    twice = sorted({v for v in value if value.count(v) > 1})
    if twice:  # two entries of one name would write the same raw files
        raise UsageError(f"{where}: '{key}' names {', '.join(twice)} twice")
    if allowed is not None:
        bad = [v for v in value if v not in allowed]
        if bad:
            raise UsageError(f"{where}: unknown {key} {', '.join(bad)} (allowed: {', '.join(allowed)})")
    return list(value)


def _backends(where, value):
    """A list of known backends (cuda-host has a '-' in its name)."""
    return _names(where, "backends", value, BACKENDS, _BACKEND_NAME)


def _backend_tables(where, tables):
    """[backend.<name>] tables (BACKEND_KEYS): one per known backend; an unknown name is an error, so a
    misspelt table never silently leaves a slow backend at the full sweep."""
    if not isinstance(tables, dict):
        raise UsageError(f"{where}: [backend] must be a table of [backend.<name>] tables")
    out = {}
    for name, table in tables.items():
        w = f"{where} [backend.{name}]"
        if name not in BACKENDS:
            raise UsageError(f"{w}: no backend named {name!r} (known: {', '.join(BACKENDS)})")
        if not isinstance(table, dict):
            raise UsageError(f"{w}: must be a table of {', '.join(sorted(BACKEND_KEYS))}")
        b = {}
        for k, v in table.items():
            if k not in BACKEND_KEYS:
                raise UsageError(f"{w}: unknown key '{k}' (allowed: {', '.join(sorted(BACKEND_KEYS))})")
            if k == "timeout_s":
                b[k] = _timeout(w, v)
            elif k == "args":
                b[k] = _args_list(w, k, v)
            elif k == "large":
                if not isinstance(v, bool):
                    raise UsageError(f"{w}: 'large' must be true or false (whether its executables make the "
                                     "[bench.<name>.large] second runs)")
                b[k] = v
            elif k == "platforms":
                b[k] = _platforms(w, name, v)
            else:
                b[k] = _harness_value(w, k, v)
        _one_size_setting(w, b)
        out[name] = b
    return out


def _platforms(where, backend, value):
    """[backend.opencl] platforms: OpenCL platforms by a word of their names, each run once."""
    if backend != "opencl":
        raise UsageError(f"{where}: 'platforms' is an OpenCL key ([backend.opencl])")
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and _PLATFORM.match(v) for v in value):
        raise UsageError(f"{where}: 'platforms' must be a non-empty list of lower-case words of OpenCL platform "
                         f"names, e.g. [\"pocl\", \"intel\"], not {value!r}")
    twice = sorted({v for v in value if value.count(v) > 1})
    if twice:
        raise UsageError(f"{where}: 'platforms' names {', '.join(twice)} twice")
    return list(value)


def backend_runs(cfg: Config, benchmark: str) -> list[tuple[str, str | None]]:
    """[(backend, platform)] the benchmark's executables run as: one per backend, the OpenCL backend
    once per platform its table lists (platform None: no --platform of its own)."""
    out: list[tuple[str, str | None]] = []
    for b in bench_backends(cfg, benchmark):
        for p in backend_table(cfg, b).get("platforms") or [None]:
            out.append((b, p))
    return out


def _args_list(where, key, value):
    """An `args`/`peer_args` list: strings, with the harness options in it checked like their keys."""
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise UsageError(f"{where}: '{key}' must be a list of strings")
    _check_args(where, key, value)
    return list(value)


def _one_size_setting(where, table):
    """A table gives its sizes as a list (sizes) or as a sweep (min_size, max_size, size_class), not
    both: the harness refuses --sizes with --min-size/--max-size, and would ignore --size-class."""
    sweep = [k for k in SIZE_KEYS if k != "sizes" and k in table]
    if "sizes" in table and sweep:
        raise UsageError(f"{where}: 'sizes' cannot be combined with {', '.join(repr(k) for k in sweep)} (give the "
                         "sizes as a list, or as a sweep)")


def _timeout(where, value):
    if not _number(value) or value <= 0:
        raise UsageError(f"{where}: 'timeout_s' must be a positive, finite number of seconds, not {value!r}")
    return float(value)


def validate(doc: dict[str, Any], where: str = "config") -> Config:
    """Checks every key and value; returns a normalised copy. Unknown keys are errors, so a typo
    never silently runs the wrong sweep."""
    for k in doc:
        if k not in TOP_KEYS:
            raise UsageError(f"{where}: unknown key '{k}' (allowed: {', '.join(sorted(TOP_KEYS))})")
    if not isinstance(doc.get("description", ""), str):
        raise UsageError(f"{where}: 'description' must be a string")
    out = {
        "description": doc.get("description", ""),
        "benchmarks": _names(where, "benchmarks", doc.get("benchmarks", BENCHMARK_ORDER)),
        "backends": _backends(where, doc.get("backends", DEFAULT_BACKENDS)),
        "timeout_s": _timeout(where, doc.get("timeout_s", 600)),
        "harness": {},
        "bench": {},
        "backend": _backend_tables(where, doc.get("backend", {})),
        "peers": _peers(where, doc.get("peers", [])),
    }
    harness = doc.get("harness", {})
    if not isinstance(harness, dict):
        raise UsageError(f"{where}: [harness] must be a table")
    for k, v in harness.items():
        if k not in HARNESS_FLAGS:
            raise UsageError(f"{where}: [harness] unknown key '{k}' (allowed: {', '.join(sorted(HARNESS_FLAGS))})")
        out["harness"][k] = _harness_value(f"{where} [harness]", k, v)
    _one_size_setting(f"{where} [harness]", out["harness"])
    bench = doc.get("bench", {})
    if not isinstance(bench, dict):
        raise UsageError(f"{where}: [bench] must be a table of [bench.<name>] tables")
    for name, table in bench.items():
        w = f"{where} [bench.{name}]"
        if not _NAME.match(name) or not isinstance(table, dict):
            raise UsageError(f"{w}: must be a table named after a benchmark")
        b = {}
        for k, v in table.items():
            if k not in BENCH_KEYS:
                raise UsageError(f"{w}: unknown key '{k}' (allowed: {', '.join(sorted(BENCH_KEYS))})")
            if k == "timeout_s":
                b[k] = _timeout(w, v)
            elif k in ("args", "peer_args"):
                b[k] = _args_list(w, k, v)
            elif k == "large":
                b[k] = _large(f"{where} [bench.{name}.large]", v)
            elif k == "backends":
                b[k] = _backends(w, v)
            else:
                b[k] = _harness_value(w, k, v)
        if name in SCALE_FACTOR_BENCHMARKS:
            sized = [k for k in (*SIZE_KEYS, "large") if k in b]
            if sized:
                raise UsageError(f"{w}: {', '.join(sized)}: {name} has no input sizes (its tables follow --sf "
                                 "in args)")
        _one_size_setting(w, b)
        out["bench"][name] = b
    if "mpi" in doc:
        out["mpi"] = _mpi_table(f"{where} [mpi]", doc["mpi"], str(absolute_path(where).parent))
    if "beyond_caches" in doc:
        out["beyond_caches"] = _beyond_caches(f"{where} [beyond_caches]", doc["beyond_caches"])
    return out


def _beyond_caches(where, table):
    """[beyond_caches]: factor (1..64, required), max_size (a size, required: the time budget),
    scale_timeouts and measure_caches (true or false, default true)."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: must be a table with factor, max_size, scale_timeouts, measure_caches")
    for k in table:
        if k not in BEYOND_CACHES_KEYS:
            raise UsageError(f"{where}: unknown key '{k}' (allowed: {', '.join(sorted(BEYOND_CACHES_KEYS))})")
    for k in ("factor", "max_size"):
        if k not in table:
            raise UsageError(f"{where}: '{k}' is required (e.g. factor = 2, max_size = \"1G\")")
    factor = table["factor"]
    if not _number(factor) or not 1 <= factor <= 64:
        raise UsageError(f"{where}: 'factor' must be a number from 1 to 64 (the largest size at least that many "
                         f"times the largest cache), not {factor!r}")
    out = {"factor": factor, "max_size": _harness_value(where, "max_size", table["max_size"])}
    for k in ("scale_timeouts", "measure_caches"):
        if k in table:
            if not isinstance(table[k], bool):
                raise UsageError(f"{where}: '{k}' must be true or false")
            out[k] = table[k]
    return out


# --- MPI: [mpi] in a configuration, --mpi/--hostfile/--mpi-args on the command line -------------

def _ranks(where, value):
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise UsageError(f"{where}: 'ranks' must be a positive number of ranks or a list of them (e.g. [1, 2, 4])")
    return sorted(set(values))


def _launcher_args(where, value):
    """Launcher options: a list of strings, or one string split as the shell would."""
    import shlex
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    if not isinstance(value, str):
        raise UsageError(f"{where}: must be a string of launcher options or a list of strings")
    try:
        return shlex.split(value)
    except ValueError as e:
        raise UsageError(f"{where}: cannot split {value!r} into options: {e}") from None


def _mpi_table(where, table, base):
    """[mpi]: ranks (N or [N, ...]), hostfile (relative to the configuration's folder), args."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: must be a table with ranks, hostfile, args")
    for k in table:
        if k not in MPI_KEYS:
            raise UsageError(f"{where}: unknown key '{k}' (allowed: {', '.join(sorted(MPI_KEYS))})")
    out = {}
    if "ranks" in table:
        out["ranks"] = _ranks(where, table["ranks"])
    if "hostfile" in table:
        if not isinstance(table["hostfile"], str) or not table["hostfile"]:
            raise UsageError(f"{where}: 'hostfile' must be a path")
        out["hostfile"] = str(Path(base) / table["hostfile"])
    if "args" in table:
        out["args"] = _launcher_args(f"{where} 'args'", table["args"])
    return out


def read_hostfile(path: StrPath, where: str = "--hostfile") -> list[dict[str, Any]]:
    """The hosts of an Open MPI hostfile ('host slots=N', '#' comments) or an MPICH one ('host:N'):
    [{'host', 'slots'}] (slots None when not given). A missing, unreadable or empty file is a usage
    error naming it."""
    try:
        with Path(path).open(encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UsageError(f"{where} {path}: cannot read it ({e.strerror})") from None
    hosts = []
    for line in lines:
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, _, n = words[0].partition(":")
        slots = int(n) if n.isdigit() else None
        for w in words[1:]:
            if w.startswith("slots=") and w[6:].isdigit():
                slots = int(w[6:])
        hosts.append({"host": host, "slots": slots})
    if not hosts:
        raise UsageError(f"{where} {path}: names no host (one line per node: 'HOST slots=N')")
    return hosts


def apply_mpi_overrides(mpi: dict[str, Any], ranks: Iterable[int] | None = None, hostfile: StrPath | None = None,
                        args: str | list[str] | None = None) -> dict[str, Any]:
    """--mpi, --hostfile and --mpi-args over the configuration's [mpi] table; a hostfile or launcher
    options without any rank count is a usage error, and so is a hostfile that cannot be read."""
    mpi = copy.deepcopy(mpi)
    if ranks:
        mpi["ranks"] = _ranks("--mpi", list(ranks))
    if hostfile is not None:
        mpi["hostfile"] = str(absolute_path(hostfile))
    if args is not None:
        mpi["args"] = _launcher_args("--mpi-args", args)
    if not mpi.get("ranks"):
        for key, opt in (("hostfile", "--hostfile"), ("args", "--mpi-args")):
            if key in mpi:
                raise UsageError(f"{opt} needs --mpi N (or 'ranks' in the configuration's [mpi] table): "
                                 "it only applies to runs under mpirun")
    if mpi.get("hostfile"):
        mpi["hosts"] = read_hostfile(mpi["hostfile"], "--hostfile" if hostfile is not None else "[mpi] hostfile")
    return mpi


def mpi_launch(mpi: dict[str, Any]) -> dict[str, Any] | None:
    """How one run starts its executables: {'ranks', 'hostfile', 'hosts', 'args'}; None without MPI."""
    if not mpi.get("ranks"):
        return None
    return {"ranks": mpi["ranks"][0], "hostfile": mpi.get("hostfile", ""), "hosts": mpi.get("hosts", []),
            "args": mpi.get("args", [])}


def _large(where, table):
    if not isinstance(table, dict):
        raise UsageError(f"{where}: must be a table with sizes, only, args")
    for k in table:
        if k not in LARGE_KEYS:
            raise UsageError(f"{where}: unknown key '{k}' (allowed: {', '.join(sorted(LARGE_KEYS))})")
    if "sizes" not in table:
        raise UsageError(f"{where}: 'sizes' is required (the sizes beyond the caches, e.g. \"256M\")")
    out = {"sizes": _harness_value(where, "sizes", table["sizes"])}
    for k in ("only", "peer_only", "args"):
        if k in table:
            v = table[k]
            if not isinstance(v, list) or not v or not all(isinstance(a, str) and a for a in v):
                raise UsageError(f"{where}: '{k}' must be a non-empty list of strings")
            if k == "args":
                _check_args(where, k, v)
            out[k] = list(v)
    if "timeout_s" in table:
        out["timeout_s"] = _timeout(where, table["timeout_s"])
    if "peers" in table:
        if not isinstance(table["peers"], bool):
            raise UsageError(f"{where}: 'peers' must be true or false (whether the peers run the large sizes too)")
        out["peers"] = table["peers"]
    return out


def apply_overrides(cfg: Config, benchmarks: Sequence[str] | None = None, backends: Sequence[str] | None = None,
                    sizes: str | None = None, passes: int | None = None, device: int | None = None,
                    timeout: float | None = None) -> Config:
    """Command-line options win over the configuration, including its per-benchmark tables."""
    cfg = copy.deepcopy(cfg)
    if benchmarks:
        cfg["benchmarks"] = _names("--benchmarks", "benchmarks", benchmarks)
    if backends:
        cfg["backends"] = _backends("--backends", backends)
    tables = [cfg["harness"]] + list(cfg["bench"].values()) + list(cfg.get("backend", {}).values())
    if sizes:
        for t in tables:
            for k in SIZE_KEYS + ("large",):  # --sizes names every size that runs
                t.pop(k, None)
        cfg.pop("beyond_caches", None)  # ... and no size follows the caches
        cfg["harness"]["sizes"] = parse_sizes("--sizes", None, sizes)[0]
    if passes is not None:
        if passes < 1:
            raise UsageError("--passes must be at least 1")
        for t in tables:
            t.pop("passes", None)
            if t.get("max_passes", passes) < passes:
                t["max_passes"] = passes
        cfg["harness"]["passes"] = passes
    if device is not None:
        if device < 0:
            raise UsageError("--device must be a non-negative index")
        for t in tables:
            t.pop("device", None)
        cfg["harness"]["device"] = device
    if timeout is not None:
        cfg["timeout_s"] = _timeout("--timeout", timeout)
        if "beyond_caches" in cfg:  # the limit given is the limit: it does not grow with the sizes
            cfg["beyond_caches"]["scale_timeouts"] = False
        for t in list(cfg["bench"].values()) + list(cfg.get("backend", {}).values()):
            t.pop("timeout_s", None)
            t.get("large", {}).pop("timeout_s", None)  # a second run's limit too: the one given is the limit
    return cfg


def ordered_benchmarks(names: Sequence[str]) -> list[str]:
    """bus first (its ceilings are what every report compares with), then the config's order."""
    return (["bus"] if "bus" in names else []) + [n for n in names if n != "bus"]


def bench_backends(cfg: Config, benchmark: str) -> list[str]:
    """The backends the benchmark runs on: the configuration's, less those its table leaves out."""
    only = cfg["bench"].get(benchmark, {}).get("backends")
    return [b for b in cfg["backends"] if only is None or b in only]


def large_run(cfg: Config, benchmark: str, backend: str | None = None) -> dict[str, Any] | None:
    """The benchmark's [bench.<name>.large] table, or None (also for a backend whose [backend.<name>]
    table says large = false)."""
    if backend is not None and backend_table(cfg, backend).get("large") is False:
        return None
    return cfg["bench"].get(benchmark, {}).get("large")


def backend_table(cfg: Config, backend: str | None) -> dict[str, Any]:
    """The [backend.<name>] table of a backend ({} without one; a peer has none)."""
    return cfg.get("backend", {}).get(backend, {}) if backend else {}


def option_layers(cfg: Config, benchmark: str, large: bool = False, peer: bool = False,
                  backend: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The tables an executable's harness options come from, first to last, as (name, keys):
    [harness], [bench.<name>], for a large run [bench.<name>.large] (its sizes), then the
    executable's [backend.<name>] (not for a peer; in a large run without its sizes). A benchmark of
    SCALE_FACTOR_BENCHMARKS gets no size option from any of them: it has no size sweep."""
    bench = cfg["bench"].get(benchmark, {})
    unsized = benchmark in SCALE_FACTOR_BENCHMARKS

    def keep(t: dict[str, Any], sizes: bool) -> dict[str, Any]:
        return {k: v for k, v in t.items() if k in HARNESS_FLAGS and (sizes or k not in SIZE_KEYS)}

    layers = [("[harness]", keep(cfg["harness"], not unsized)),
              (f"[bench.{benchmark}]", keep(bench, not (large or unsized)))]
    if large:
        layers.append((f"[bench.{benchmark}.large]", {"sizes": bench["large"]["sizes"]}))
    if not peer:
        layers.append((f"[backend.{backend}]", keep(backend_table(cfg, backend), not (large or unsized))))
    return layers


def resolve_options(layers: Iterable[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, str]]:
    """(options, origin): each layer's keys over the ones before, except that a layer which sets any
    size key replaces the whole size setting before it; origin names the table of each key."""
    opts: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name, table in layers:
        if any(k in table for k in SIZE_KEYS):
            for k in SIZE_KEYS:
                opts.pop(k, None)
                origin.pop(k, None)
        for k, v in table.items():
            opts[k], origin[k] = v, name
    if opts.get("passes") is not None and opts.get("max_passes") is not None and opts["max_passes"] < opts["passes"]:
        opts["max_passes"] = opts["passes"]
    return opts, origin


def executable_args(cfg: Config, benchmark: str, large: bool = False, peer: bool = False,
                    backend: str | None = None, platform: str | None = None) -> list[str]:
    """The flags one executable gets: the options of option_layers (resolve_options), then args, the
    backend table's last, each replacing the same option given before.
    large: its second run at the sizes, --only selection and args of [bench.<name>.large] (a peer
    gets peer_only as its --only: its variants have other names). peer: a peer's, with the table's
    peer_args last, each replacing the same option given before."""
    opts, _ = resolve_options(option_layers(cfg, benchmark, large, peer, backend))
    bench = cfg["bench"].get(benchmark, {})
    own = {} if peer else backend_table(cfg, backend)
    extra = list(bench.get("args", []))
    if large:
        big = bench["large"]
        only = big.get("peer_only" if peer else "only")
        extra = list(big.get("args", extra)) + (["--only", ",".join(only)] if only else [])
    args = []
    for k in HARNESS_FLAGS:
        if k in opts:
            args += [HARNESS_FLAGS[k], str(opts[k])]
    args += extra
    if own.get("args"):
        args = _replace_options(args, own["args"])
    if platform is not None and not peer:
        args = _replace_options(args, ["--platform", platform])
    return _replace_options(args, [] if large else bench.get("peer_args", [])) if peer else args


def check_runs(cfg: Config, where: str) -> None:
    """Every executable the configuration would run gets options the harness accepts together: a
    min_size above max_size (or the size class's bound), a sweep with no power of two in it, or an
    option given twice (a harness option in `args` beside the key that sets it) are usage errors
    naming the executable and the tables, found before any run directory is made."""
    from . import peers
    for bench in ordered_benchmarks(cfg["benchmarks"]):
        runs = [(b, False) for b in bench_backends(cfg, bench)]
        runs += [(p, True) for p in cfg.get("peers", []) if bench in peers.benchmarks(p)]
        for name, peer in runs:
            backend = None if peer else name
            larges = [False] + ([True] if large_run(cfg, bench, backend) and (
                not peer or (large_run(cfg, bench) or {}).get("peers", True)) else [])
            for large in larges:
                who = (f"peer {name}" if peer else f"hdb-{bench}-{name}") + (" (large run)" if large else "")
                _check_sweep(f"{where}: {who}", resolve_options(option_layers(cfg, bench, large, peer, backend)))
                _check_twice(f"{where}: {who}", executable_args(cfg, bench, large, peer, backend))


def _check_sweep(where, resolved):
    """The sweep of min_size..max_size (each from its table, else the size class's) holds a power of two."""
    opts, origin = resolved
    if "sizes" in opts:
        return
    cls = opts.get("size_class", DEFAULT_SIZE_CLASS)
    lo, hi = SIZE_CLASSES[cls]

    def named(k: str, default: int) -> str:
        return (f"{k} {opts[k]} ({origin[k]})" if k in opts else
                f"size class {cls}'s {k.split('_')[0]} {_size_text(default)}")

    if "min_size" in opts:
        lo = parse_size(origin["min_size"], "min_size", opts["min_size"])
    if "max_size" in opts:
        hi = parse_size(origin["max_size"], "max_size", opts["max_size"])
    if lo > hi:
        raise UsageError(f"{where}: {named('min_size', lo)} is larger than {named('max_size', hi)}")
    if not any(lo <= 1 << e <= hi for e in range(41)):
        raise UsageError(f"{where}: no power of two between {named('min_size', lo)} and {named('max_size', hi)}: "
                         "the sweep would hold no size")


def _check_twice(where, args):
    """An option given twice (the executables refuse it): a harness key and the same option in args."""
    flags = [a.partition("=")[0] for a in args if a.startswith("--")]
    twice = sorted({f for f in flags if flags.count(f) > 1})
    if twice:
        raise UsageError(f"{where}: gets {', '.join(twice)} twice ({' '.join(args)}); the executables refuse an "
                         "option given twice: set it once, as a key or in 'args'")


_size_text = format_size  # sizes as the ids print them (contract.format_size)


def _replace_options(args, extra):
    """args + extra, where an option extra names (--sizes 1M) replaces the same option in args:
    the executables refuse an option given twice."""
    named = {a for a in extra if a.startswith("--")}
    out, i = [], 0
    while i < len(args):
        if args[i] in named:
            i += 2  # the option and its value
            continue
        out.append(args[i])
        i += 1
    return out + list(extra)


def timeout_for(cfg: Config, benchmark: str, large: bool = False, backend: str | None = None) -> float:
    """The time limit of one executable: the large table's, else the benchmark's, else the
    configuration's; a [backend.<name>] timeout_s raises it for that backend (never lowers it)."""
    bench = cfg["bench"].get(benchmark, {})
    if large and "timeout_s" in bench.get("large", {}):
        limit = bench["large"]["timeout_s"]
    else:
        limit = bench.get("timeout_s", cfg["timeout_s"])
    return max(limit, backend_table(cfg, backend).get("timeout_s", 0))


def _peers(where, value):
    from .peers import known
    return _names(where, "peers", value, known())


def override_peers(cfg: Config, peers: Sequence[str] | None = None, no_peers: bool = False) -> Config:
    """--peers a,b replaces the configuration's peers; --no-peers runs none."""
    if no_peers:
        cfg["peers"] = []
    elif peers:
        cfg["peers"] = _peers("--peers", peers)
    return cfg
