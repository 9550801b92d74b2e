"""Planning a run: the entries of run.json (one per executable, peer and large run) in the order the
driver runs them, and how an entry is named and shown (docs/driver.md)."""
from __future__ import annotations

from typing import Any

from . import config as cfgmod

Entry = dict[str, Any]  # one entry of run.json's `entries`


def entry_name(benchmark: str, backend: str, platform: str | None = None) -> str:
    return f"{benchmark}-{backend}" + (f"-{platform}" if platform else "")


def plan(cfg: dict[str, Any]) -> list[Entry]:
    """Execution order: bus on every backend first (the ceilings), then benchmark by benchmark."""
    out: list[Entry] = []
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


def large_entries(cfg: dict[str, Any], bench: str, planned: list[Entry]) -> list[Entry]:
    """The second run of each of the benchmark's entries at [bench.<name>.large]'s sizes, named
    <benchmark>-<backend>-large (docs/driver.md); none for a backend whose [backend.<name>] table
    says large = false."""
    out = []
    with_peers = (cfgmod.large_run(cfg, bench) or {}).get("peers", True)
    for e in [e for e in planned if e["benchmark"] == bench and (with_peers or not e.get("peer"))]:
        backend = None if e.get("peer") else e["backend"]
        if not cfgmod.large_run(cfg, bench, backend):
            continue
        big = dict(e, name=e["name"] + "-large", timeout_s=cfgmod.timeout_for(cfg, bench, large=True, backend=backend),
                   args=cfgmod.executable_args(cfg, bench, large=True, peer=bool(e.get("peer")), backend=backend,
                                               platform=None if e.get("peer") else platform_of(e["args"])))
        out.append(big)
    return out


def peer_entries(cfg: dict[str, Any], bench: str) -> list[Entry]:
    """The configuration's peers that answer this benchmark (docs/peers.md), after its executables."""
    from . import peers
    return [{"name": entry_name(bench, p), "benchmark": bench, "backend": p, "executable": f"{p} (peer)",
             "peer": p, "args": cfgmod.executable_args(cfg, bench, peer=True),
             "timeout_s": cfgmod.timeout_for(cfg, bench),
             "status": "pending"} for p in cfg.get("peers", []) if bench in peers.benchmarks(p)]


def option_value(args: list[str], name: str) -> str | None:
    """The value an entry's executable gets for option `name` (`name VALUE` or `name=VALUE`), or None."""
    for i, a in enumerate(args):
        value = args[i + 1] if a == name and i + 1 < len(args) else \
            a.partition("=")[2] if a.startswith(name + "=") else None
        if value is not None:
            return value
    return None


def platform_of(args: list[str]) -> str | None:
    """The --platform an entry's executable gets (an index or a word), or None."""
    return option_value(args, "--platform")


def platform_named(args: list[str]) -> str | None:
    """The --platform an entry's executable gets when it is a word of a platform's name (not an index)."""
    value = platform_of(args)
    return None if value is None or value.isdigit() else value


def shown(e: Entry) -> str:
    """The entry as progress lines name it: its executable, and the platform when it names one."""
    p = platform_named(e.get("args", []))
    return e["executable"] + (f" --platform {p}" if p else "")
