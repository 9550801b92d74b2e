"""Run configurations (config/*.toml) and the command-line overrides on top of them.

A configuration names the benchmarks and backends to run, the harness options every executable
gets, per-benchmark overrides, and the time limit per executable. See docs/driver.md.
"""
import copy
import glob
import math
import os
import re
import tomllib

from .util import UsageError

BENCHMARK_ORDER = ["bus", "ra", "tpch", "merge", "ngram"]
BACKENDS = ["cpu", "opencl", "cuda", "cuda-host"]
# What a configuration without a `backends` key runs: the real processors.
DEFAULT_BACKENDS = ["cpu", "opencl", "cuda"]
# Host execution (docs/driver.md, "Host execution of the CUDA backend"): the CUDA backend's sources
# compiled by the C++ compiler and run on the CPU, every GPU thread a fiber (hdb-<bench>-cuda-host,
# built with -DHDB_CUDA_HOST=ON; its documents say backend and context.device.kind "cuda-host").
# Its results are verified like any backend's, but its times are a CPU's emulation of a GPU, never a
# processor's figure: every view about real processors (headline, speed-ups, figures, ceilings, key
# widths, scaling, targets, compare) leaves them out, and the report gives them a section of their own.
HOST_EXECUTION_BACKENDS = ("cuda-host",)
HOST_EXECUTION_KINDS = ("cuda-host",)  # context.device.kind of such a document

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
BACKEND_KEYS = set(HARNESS_FLAGS) | {"timeout_s", "args", "large"}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_BACKEND_NAME = re.compile(r"^[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*$")  # cuda-host
# peers = ["duckdb", "pg_trgm"]: systems the driver runs beside the executables, on the same data
# (docs/peers.md); none when the key is absent.
TOP_KEYS = TOP_KEYS | {"peers"}


def config_dir(repo):
    return os.path.join(repo, "config")


def resolve_config_path(repo, name):
    """'quick' -> config/quick.toml; a path to a .toml file is taken as it is."""
    if os.path.sep in name or name.endswith(".toml"):
        path = name
    else:
        path = os.path.join(config_dir(repo), name + ".toml")
    if not os.path.isfile(path):
        known = sorted(f[:-5] for f in os.listdir(config_dir(repo)) if f.endswith(".toml")) \
            if os.path.isdir(config_dir(repo)) else []
        raise UsageError(f"--config {name}: no such configuration {path} (known: {', '.join(known) or 'none'})")
    return path


def known_benchmarks(repo, bin_dir=None):
    """The benchmarks there are: those the build declares (cmake/bench/<name>.cmake, one per
    hdb_add_benchmark), those built in bin_dir (hdb-<name>-<backend>), and the usual five."""
    names = set(BENCHMARK_ORDER)
    names.update(os.path.basename(p)[:-len(".cmake")] for p in glob.glob(os.path.join(repo, "cmake", "bench",
                                                                                       "*.cmake")))
    if bin_dir and os.path.isdir(bin_dir):
        for f in os.listdir(bin_dir):
            bench = split_executable(f)[0]
            if bench:
                names.add(bench)
    return sorted(n for n in names if _NAME.match(n))


def split_executable(name):
    """'hdb-ra-cuda-host' -> ('ra', 'cuda-host'); ('', '') for a name that is not
    hdb-<benchmark>-<backend> of a known backend (a backend's name may hold a '-')."""
    if name.startswith("hdb-"):
        for backend in sorted(BACKENDS, key=len, reverse=True):
            bench = name[len("hdb-"):-len(backend) - 1]
            if name.endswith("-" + backend) and _NAME.match(bench):
                return bench, backend
    return "", ""


def load(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
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
    return validate(doc, path)


def _number(value):
    """A finite int or float (TOML also has nan and inf), never a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _harness_value(where, key, value):
    if key in ("sizes",):
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if not isinstance(value, str) or not value:
            raise UsageError(f"{where}: '{key}' must be a string like \"32K,1M\" or a list of sizes")
        return value
    if key in ("min_size", "max_size", "transfer"):
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise UsageError(f"{where}: '{key}' must be a string")
        if key == "transfer" and value not in ("pageable", "pinned", "both"):
            raise UsageError(f"{where}: transfer must be pageable, pinned or both, not {value!r}")
        return str(value)
    if key in ("max_time", "target_noise"):
        if not _number(value) or value < 0:
            raise UsageError(f"{where}: '{key}' must be a non-negative, finite number")
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{where}: '{key}' must be a non-negative integer")
    return value


def _names(where, key, value, allowed=None, pattern=_NAME):
    if not isinstance(value, list) or not all(isinstance(v, str) and pattern.match(v) for v in value):
        raise UsageError(f"{where}: '{key}' must be a list of lower-case names")
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
                if not isinstance(v, list) or not all(isinstance(a, str) for a in v):
                    raise UsageError(f"{w}: 'args' must be a list of strings")
                b[k] = list(v)
            elif k == "large":
                if not isinstance(v, bool):
                    raise UsageError(f"{w}: 'large' must be true or false (whether its executables make the "
                                     "[bench.<name>.large] second runs)")
                b[k] = v
            else:
                b[k] = _harness_value(w, k, v)
        out[name] = b
    return out


def _timeout(where, value):
    if not _number(value) or value <= 0:
        raise UsageError(f"{where}: 'timeout_s' must be a positive, finite number of seconds, not {value!r}")
    return float(value)


def validate(doc, where="config"):
    """Checks every key and value; returns a normalised copy. Unknown keys are errors, so a typo
    never silently runs the wrong sweep."""
    for k in doc:
        if k not in TOP_KEYS:
            raise UsageError(f"{where}: unknown key '{k}' (allowed: {', '.join(sorted(TOP_KEYS))})")
    out = {
        "description": str(doc.get("description", "")),
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
                if not isinstance(v, list) or not all(isinstance(a, str) for a in v):
                    raise UsageError(f"{w}: '{k}' must be a list of strings")
                b[k] = list(v)
            elif k == "large":
                b[k] = _large(f"{where} [bench.{name}.large]", v)
            elif k == "backends":
                b[k] = _backends(w, v)
            else:
                b[k] = _harness_value(w, k, v)
        out["bench"][name] = b
    if "mpi" in doc:
        out["mpi"] = _mpi_table(f"{where} [mpi]", doc["mpi"], os.path.dirname(os.path.abspath(where)))
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
        out["hostfile"] = os.path.join(base, table["hostfile"])
    if "args" in table:
        out["args"] = _launcher_args(f"{where} 'args'", table["args"])
    return out


def read_hostfile(path, where="--hostfile"):
    """The hosts of an Open MPI hostfile ('host slots=N', '#' comments) or an MPICH one ('host:N'):
    [{'host', 'slots'}] (slots None when not given). A missing, unreadable or empty file is a usage
    error naming it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
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


def apply_mpi_overrides(mpi, ranks=None, hostfile=None, args=None):
    """--mpi, --hostfile and --mpi-args over the configuration's [mpi] table; a hostfile or launcher
    options without any rank count is a usage error, and so is a hostfile that cannot be read."""
    mpi = copy.deepcopy(mpi)
    if ranks:
        mpi["ranks"] = _ranks("--mpi", list(ranks))
    if hostfile is not None:
        mpi["hostfile"] = os.path.abspath(hostfile)
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


def mpi_launch(mpi):
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
            out[k] = list(v)
    if "timeout_s" in table:
        out["timeout_s"] = _timeout(where, table["timeout_s"])
    if "peers" in table:
        if not isinstance(table["peers"], bool):
            raise UsageError(f"{where}: 'peers' must be true or false (whether the peers run the large sizes too)")
        out["peers"] = table["peers"]
    return out


def apply_overrides(cfg, benchmarks=None, backends=None, sizes=None, passes=None, device=None, timeout=None):
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
        cfg["harness"]["sizes"] = _harness_value("--sizes", "sizes", sizes)
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
        for t in list(cfg["bench"].values()) + list(cfg.get("backend", {}).values()):
            t.pop("timeout_s", None)
    return cfg


def ordered_benchmarks(names):
    """bus first (its ceilings are what every report compares with), then the config's order."""
    return (["bus"] if "bus" in names else []) + [n for n in names if n != "bus"]


def bench_backends(cfg, benchmark):
    """The backends the benchmark runs on: the configuration's, less those its table leaves out."""
    only = cfg["bench"].get(benchmark, {}).get("backends")
    return [b for b in cfg["backends"] if only is None or b in only]


def large_run(cfg, benchmark, backend=None):
    """The benchmark's [bench.<name>.large] table, or None (also for a backend whose [backend.<name>]
    table says large = false)."""
    if backend is not None and backend_table(cfg, backend).get("large") is False:
        return None
    return cfg["bench"].get(benchmark, {}).get("large")


def backend_table(cfg, backend):
    """The [backend.<name>] table of a backend ({} without one; a peer has none)."""
    return cfg.get("backend", {}).get(backend, {}) if backend else {}


def executable_args(cfg, benchmark, large=False, peer=False, backend=None):
    """The flags one executable gets: the [harness] table with [bench.<name>] on top, then the
    executable's backend's [backend.<name>] on top of that (for a large run, all but its sizes), then
    args, the backend table's last, each replacing the same option given before.
    large: its second run at the sizes, --only selection and args of [bench.<name>.large] (a peer
    gets peer_only as its --only: its variants have other names). peer: a peer's, with the table's
    peer_args last, each replacing the same option given before."""
    opts = dict(cfg["harness"])
    bench = dict(cfg["bench"].get(benchmark, {}))
    own = {} if peer else dict(backend_table(cfg, backend))
    if large:
        big = bench.pop("large")
        bench.pop("peer_args", None)  # the second run's sizes and selection are the large table's
        for k in SIZE_KEYS:
            bench.pop(k, None)
        bench["sizes"] = big["sizes"]
        only = big.get("peer_only" if peer else "only")
        bench["args"] = big.get("args", bench.get("args", [])) + (["--only", ",".join(only)] if only else [])
    if any(k in bench for k in SIZE_KEYS):
        for k in SIZE_KEYS:
            opts.pop(k, None)
    opts.update({k: v for k, v in bench.items() if k in HARNESS_FLAGS})
    if large:  # the second run's sizes are the large table's
        for k in SIZE_KEYS:
            own.pop(k, None)
    if any(k in own for k in SIZE_KEYS):
        for k in SIZE_KEYS:
            opts.pop(k, None)
    opts.update({k: v for k, v in own.items() if k in HARNESS_FLAGS})
    if opts.get("passes") is not None and opts.get("max_passes") is not None and opts["max_passes"] < opts["passes"]:
        opts["max_passes"] = opts["passes"]
    args = []
    for k in HARNESS_FLAGS:
        if k in opts:
            args += [HARNESS_FLAGS[k], str(opts[k])]
    args += list(bench.get("args", []))
    if own.get("args"):
        args = _replace_options(args, own["args"])
    return _replace_options(args, bench.get("peer_args", [])) if peer else args


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


def timeout_for(cfg, benchmark, large=False, backend=None):
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


def override_peers(cfg, peers=None, no_peers=False):
    """--peers a,b replaces the configuration's peers; --no-peers runs none."""
    if no_peers:
        cfg["peers"] = []
    elif peers:
        cfg["peers"] = _peers("--peers", peers)
    return cfg
