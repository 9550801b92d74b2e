"""Peers: other systems a user would pick instead of the suite's kernels (DuckDB for select/join on
a CPU, PostgreSQL pg_trgm for fuzzy text search), run by the driver on the suite's own data and
recorded in the same hetdb-bench/2 schema, with the peer's name as the backend (docs/peers.md).
They are never linked into the core executables.

The interface every peer module implements (kept small on purpose):

    BENCHMARKS = ("ra", "tpch", "ssb")   # the suite's benchmarks the peer answers

    def available(python) -> (bool, str)
        Whether the peer can run with this interpreter (the driver's own: the project virtual
        environment's python, scripts/setup makes it) and on this machine. (False, reason) makes the driver record the
        entry as skipped with that reason; it never runs silently nothing.

    def command(job) -> list[str]
        The argv of one run of one benchmark (a PeerJob below). The driver runs it exactly as it runs
        an executable: its own process group, the time limit, logs/<benchmark>-<peer>.log, and the
        executables' exit codes (0 ok, 1 a case failed, 2 usage, 77 cannot run: skipped with the
        last output line as the reason). It must write job.json (a hetdb-bench/2 document,
        backend = the peer's name) and job.csv (the same results, x-csv-columns) and rewrite them
        after every case, as the harness does. A result whose answer was not verified against the
        suite's reference is recorded as failed, never as a time.

A command (not a function called in the driver) so that the driver's time limit, signals,
--resume and progress apply to a peer unchanged, and a peer (DuckDB in its threads, a PostgreSQL
cluster) runs isolated from the driver, in a process group of its own. Its interpreter is the
driver's (sys.executable): scripts/hdb/python runs the driver in the project venv, which holds every
peer's Python packages.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

# name -> (module scripts/hdb/peers/<module>.py, the benchmarks it answers). A configuration's
# `peers` may name any of them; the driver runs a peer after the executables of each benchmark it
# answers, and records it as skipped, with the reason, when its module or its package is missing.
_REGISTRY = {"duckdb": ("duckdb_peer", ("ra", "tpch", "ssb")), "pg_trgm": ("pg_trgm", ("ngram",)),
             "cupy": ("cupy_peer", ("ra",))}
_MODULES = {n: m for n, (m, _) in _REGISTRY.items()}


@dataclass
class PeerJob:
    peer: str          # "duckdb"
    benchmark: str     # "ra", "tpch", "ngram"
    python: str        # interpreter to run the peer with (the driver's: interpreter())
    repo: str          # repository root (absolute)
    build_dir: str     # the build folder; its bin/ holds the suite's executables and export tools
    json: str          # where the hetdb-bench/2 document goes
    csv: str           # where its CSV goes
    args: list = field(default_factory=list)  # the executables' flags for this benchmark
    #                    (config.executable_args: --sizes, --passes, --max-time, --seed, ... and args)
    timeout_s: float = 0  # the driver's time limit for this run (0: none); a peer may budget by it


def names() -> list[str]:
    """Peers whose module is present, in registry order."""
    here = Path(__file__).absolute().parent
    return [n for n, m in _MODULES.items() if (here / f"{m}.py").is_file()]


def known() -> list[str]:
    """Every peer name a configuration may list (present or not)."""
    return list(_MODULES)


def benchmarks(name: str) -> tuple[str, ...]:
    """The benchmarks a peer answers (the registry's, so known without importing the module)."""
    return _REGISTRY[name][1] if name in _REGISTRY else ()


def module(name: str) -> ModuleType | None:
    """The peer's module, or None when its file is not there."""
    if name not in names():
        return None
    return importlib.import_module(f"{__name__}.{_MODULES[name]}")


def interpreter() -> str:
    """The interpreter a peer runs with: the driver's own (the project venv's python, which
    scripts/hdb/python runs the driver with, or $HDB_PYTHON)."""
    return sys.executable or ""
