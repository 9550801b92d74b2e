"""The report's view of how the passes were taken and what they cost in energy (issue 29; the rules are
docs/methodology.md's "Cold, warm and hot" and "The machine's state and energy"): per backend, the
timed passes' state (hot or warm), the cold pass against the timed median, run-time compilation, the
energy source (or why there is none) and joules per pass; per host, the machine's state."""
from __future__ import annotations

import statistics
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]


def _cold_ratio(r: Row) -> float | None:
    """The cold pass's total time over the timed passes' median total (None without either)."""
    cold = (r.get("protocol") or {}).get("cold")
    med = r.get("total_median_s")
    if not cold or not med:
        return None
    t = cold.get("total_s") or cold.get("kernel_s")
    return t / med if t else None


def energy_text(rows: Sequence[Row]) -> str:
    """'rapl: median 0.12 J per pass over 40 cases' or 'none: <the first reason>' (the rows' energy)."""
    measured = [r["energy"] for r in rows if (r.get("energy") or {}).get("source", "none") != "none"]
    if measured:
        sources = sorted({e["source"] for e in measured})
        jpp = statistics.median(e["joules_per_pass"] for e in measured)
        return f"{'/'.join(sources)}: median {jpp:.3g} J per pass over {len(measured)} cases"
    reasons = [r["energy"].get("reason", "") for r in rows if r.get("energy")]
    return f"none: {reasons[0]}" if reasons else "not recorded (results from before issue 29)"


def backend_table(rows: Iterable[Row]) -> tuple[list[str], list[list[Any]]]:
    """One row per (benchmark, backend) of the ok results that carry a protocol."""
    by: OrderedDict[tuple[str, str], list[Row]] = OrderedDict()
    for r in rows:
        if r.get("status") == "ok" and r.get("protocol"):
            by.setdefault((r["benchmark"], r["backend"]), []).append(r)
    out = []
    for (bench, backend), rs in by.items():
        timed = sorted({r["protocol"].get("timed_as", "?") for r in rs})
        ratios = [x for x in (_cold_ratio(r) for r in rs) if x is not None]
        compile_s = sum(r["protocol"].get("compile_s", 0) for r in rs)
        throttled = sum(1 for r in rs if r["protocol"].get("throttled"))
        out.append([bench, backend, len(rs), "/".join(timed),
                    f"{statistics.median(ratios):.2f}x (max {max(ratios):.1f}x)" if ratios else "no cold pass",
                    f"{compile_s:.2f} s" if compile_s else "-",
                    throttled or "-", energy_text(rs)])
    header = ["benchmark", "backend", "cases", "timed passes", "cold pass / timed median (total)",
              "kernel compilation", "cases throttled", "energy"]
    return header, out


def machine_table(docs: Iterable[Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """context.machine per host: governor and clocks (or why there are none), SMT, NUMA nodes."""
    seen: OrderedDict[str, list[Any]] = OrderedDict()
    for d in docs:
        c = d.get("context", {})
        m = c.get("machine")
        host = c.get("host", "?")
        if m is None or host in seen:
            continue
        if m.get("governor"):
            freq = f"{m['governor']}, {m.get('frequency_mhz', '?')} MHz (max {m.get('frequency_max_mhz', '?')})"
        else:
            freq = m.get("cpufreq", "?")
        seen[host] = [host, freq, {True: "on", False: "off"}.get(m.get("smt_active"), "?"), m.get("numa_nodes", "?")]
    return ["host", "frequency", "SMT", "NUMA nodes"], list(seen.values())


def energy_sentence(rows: Iterable[Row]) -> str:
    """The headline's sentence on energy: per backend its joules per pass, or why there are none."""
    by: OrderedDict[str, list[Row]] = OrderedDict()
    for r in rows:
        if r.get("status") == "ok" and r.get("energy"):
            by.setdefault(r["backend"], []).append(r)
    if not by:
        return ""
    return "Energy per operation (one pass, read around the timed passes): " + "; ".join(
        f"{backend} {energy_text(rs)}" for backend, rs in by.items()) + "."
