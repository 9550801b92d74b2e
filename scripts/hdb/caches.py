"""Sizes beyond the caches of the machine at hand: a configuration's [beyond_caches] table
(docs/driver.md, "Sizes beyond the caches").

A number counts as memory bandwidth only when its inputs exceed the caches (docs/methodology.md),
and the caches of current servers are large (0.5-1 GB of L3 is common; a Hopper GPU has 50-60 MB of
L2). Before a run starts, once the executables are built, the driver reads

- the host's last-level cache as the executables read it (context.llc_bytes: the largest
  /sys/devices/system/cpu/cpu0/cache/index*/size), times the number of its instances (a parallel
  variant uses every core, and so every instance: two sockets of 32 MB each hold 64 MB), falling
  back to `lscpu` where sysfs says nothing;
- the L2 and the memory of each GPU a CUDA or OpenCL backend of the run drives, from the context of a
  32K probe of hdb-bus-<backend> (context.device.l2_cache_bytes, global_memory_bytes); a backend that
  is not built, a machine without the device (exit 77) or a context without the number leave it
  unknown, never the run broken;
- the host memory available (/proc/meminfo MemAvailable);
- unless [beyond_caches] measure_caches is false: the host's last-level cache as a latency sweep of
  hdb-bus-cpu (latency/serial: dependent loads over working sets of 4K and up) finds it. VMs
  misreport their caches (sysfs says 32 MB of L3 on a 2-core VM here whose loads slow down 6x past
  4 MB: the L3 is shared with other tenants; others report 300 or 480 MB), so the sizes are fitted
  to the knee of the curve where one is found (measure_llc), to the reported size where not;

and makes the largest size of each benchmark's sizes beyond the caches ([bench.<name>.large] sizes,
or the max_size of a min_size..max_size sweep) at least `factor` x the larger of the two caches, the
next power of two, where the memory allows (a conservative footprint per benchmark, FOOTPRINT) and
up to `max_size` (the configuration's time budget). The run records what it chose and why in
run.json's `beyond_caches` (fit's record), which the headline and the report read (headline_note).
"""
from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import config as cfgmod
from .contract import format_size
from .util import absolute_path

SYSFS_CPU = "/sys/devices/system/cpu"
MEMINFO = "/proc/meminfo"
# Host memory one case of a benchmark may take, in bytes per byte of one input (its largest size),
# over every allocation at once: inputs, the backend's output and scratch, the reference answer, the
# expected output and the copy read back, the generator's scratch. Conservative: the executables'
# memory plans (src/common/bench/*.cpp, MemoryPlan) come to less (ra: two inputs, output, expected
# output, read-back and sort scratch; tpch: up to 3.3 inputs for B and C at 64-bit keys, times 6 for
# intermediates, answer and reference; bus: triad's three arrays and a pinned copy; ngram: the index
# and two rebuilt ones). A case that still does not fit is skipped by its executable with the reason.
FOOTPRINT = {"bus": 4, "ra": 12, "tpch": 24, "merge": 10, "ngram": 32}
DEFAULT_FOOTPRINT = 32  # a benchmark without a row: as the most demanding one
MEMORY_SHARE = 0.8  # of MemAvailable (and of a GPU's memory): the rest for the OS, the driver, page cache
PROBE_TIMEOUT_S = 60.0
PROBED_BACKENDS = ("cuda", "opencl")  # backends whose device may be a GPU with an L2 of its own
PROBE_ARGS = ["--only", "h2d/copy", "--sizes", "32K", "--transfer", "pinned", "--warmup", "0", "--passes", "1",
              "--max-passes", "1", "--max-time", "0", "--quiet"]
# The latency sweep (measure_llc): one dependent load per 64-byte line of a random cycle over each
# working set, from 4K up to the next power of two at least LATENCY_REACH x the reported cache (one
# instance's: a chase runs on one core), within LATENCY_MAX_SIZES and the memory. About 20 s to 1G
# on a 2-core VM, most of it building the large cycles.
LATENCY_EXE = "hdb-bus-cpu"
LATENCY_ARGS = ["--only", "latency/serial", "--min-size", "4K", "--warmup", "1", "--passes", "3", "--max-time", "1",
                "--quiet"]
LATENCY_TIMEOUT_S = 120.0
LATENCY_REACH = 4
LATENCY_MAX_SIZES = (64 << 20, 1 << 30)
# A level of the curve ends where the next size's loads take KNEE_STEP x as long: the levels of the
# machines measured take 3x (L1 to L2), 1.7x a doubling for two doublings (L2 to L3) and 6x (L3 to
# memory) as long; a busy neighbour moves a point by 10-30 %.
KNEE_STEP = 1.5
# The largest size of a sweep that finds the LLC must be memory: its loads take MEMORY_RATIO x as
# long as the LLC's or more, at least MEMORY_MIN_NS (a DRAM load takes 60-200 ns on the machines
# measured, an L3 load no more than 40), and it is LATENCY_REACH x the LLC's knee or more (a sweep
# that stops just past a knee cannot tell a last level from a middle one).
MEMORY_RATIO = 3.0
MEMORY_MIN_NS = 50.0


# --- the host's last-level cache -------------------------------------------------------------------
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def parse_cache_size(text: str) -> int:
    """'32768K' (sysfs), '480 MiB', '1.5 MiB', '32 MB', '512' -> bytes; 0 when it is none of these."""
    m = _SIZE.match(text or "")
    if not m:
        return 0
    unit = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * unit)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _cpu_list(text: str) -> frozenset[int]:
    """'0-3,8' -> {0, 1, 2, 3, 8}."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit():
            out.update(range(int(lo), int(hi if hi.isdigit() else lo) + 1))
    return frozenset(out)


def sysfs_llc(sysfs: str | os.PathLike[str] = SYSFS_CPU) -> dict[str, Any] | None:
    """The last-level cache by sysfs, as the executables read it (context.cpp last_level_cache_bytes:
    the largest size among cpu0's cache/index*), with its level and the number of its instances
    (distinct shared_cpu_list of that index over the CPUs); None where sysfs has no cache sizes."""
    root = Path(sysfs)
    best: tuple[int, int, str] | None = None  # (bytes, level, index folder)
    for d in sorted((root / "cpu0" / "cache").glob("index*")):
        size = parse_cache_size(_read(d / "size"))
        if size <= 0 or _read(d / "type") == "Instruction":
            continue
        level = int(_read(d / "level") or 0) if _read(d / "level").isdigit() else 0
        if best is None or (size, level) > (best[0], best[1]):
            best = (size, level, d.name)
    if best is None:
        return None
    size, level, index = best
    shared = set()
    for cpu in root.glob("cpu[0-9]*"):
        cpus = _read(cpu / "cache" / index / "shared_cpu_list")
        if cpus:
            shared.add(_cpu_list(cpus))
    instances = max(1, len(shared))
    return {"bytes": size * instances, "per_instance": size, "instances": instances, "level": level,
            "source": f"sysfs {root / 'cpu0' / 'cache' / index}" + (f" x {instances} instances" if instances > 1
                                                                     else "")}


_LSCPU = re.compile(r"^\s*L(\d)\s*(?:cache)?\s*:\s*(.+?)\s*(?:\((\d+)\s+instances?\))?\s*$", re.IGNORECASE)


def parse_lscpu(text: str) -> dict[str, Any] | None:
    """The last-level cache in lscpu's output: 'L3 cache: 480 MiB (1 instance)' (util-linux 2.34 on:
    the total of its instances) or 'L3 cache: 32768K' (older: one instance's); the highest level
    listed. None where it lists no cache."""
    best: dict[str, Any] | None = None
    for line in text.splitlines():
        m = _LSCPU.match(line)  # L1d/L1i do not match (a letter after the level): never the last level
        size = parse_cache_size(m.group(2)) if m else 0
        if not m or size <= 0:
            continue
        level = int(m.group(1))
        # With '(N instances)' lscpu prints the total of the instances; without, one instance's size.
        instances = int(m.group(3)) if m.group(3) else 1
        if best is None or level > best["level"]:
            best = {"bytes": size, "per_instance": size // max(1, instances), "instances": instances,
                    "level": level, "source": f"lscpu: {line.strip()}"}
    return best


def run_lscpu() -> str:
    try:
        p = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=30, env=dict(os.environ, LC_ALL="C"))
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout if p.returncode == 0 else ""


def host_llc(sysfs: str | os.PathLike[str] = SYSFS_CPU, lscpu: Callable[[], str] = run_lscpu) -> dict[str, Any]:
    """The host's last-level cache: {bytes (all instances), per_instance, instances, level, source};
    bytes 0 with the reason in source when neither sysfs nor lscpu names one."""
    return sysfs_llc(sysfs) or parse_lscpu(lscpu()) or {
        "bytes": 0, "per_instance": 0, "instances": 0, "level": 0,
        "source": f"unknown (no cache sizes under {Path(sysfs) / 'cpu0' / 'cache'}, none in lscpu)"}


def available_memory(meminfo: str | os.PathLike[str] = MEMINFO) -> int:
    """MemAvailable (else MemTotal) of /proc/meminfo in bytes; 0 when unknown."""
    values = {}
    for line in _read(Path(meminfo)).splitlines():
        k, _, v = line.partition(":")
        words = v.split()
        if words and words[0].isdigit():
            values[k.strip()] = int(words[0]) * (1024 if words[1:2] == ["kB"] else 1)
    return values.get("MemAvailable") or values.get("MemTotal") or 0


# --- the host's last-level cache, measured: the knees of a latency curve -----------------------------
def _knees(pts: Sequence[tuple[int, float]]) -> list[bool]:
    """Per point of a sorted curve: whether the next size's loads take KNEE_STEP x as long or more. A
    size slower than a larger one counts as the larger one's: a working set never gets faster as it
    grows, so such a point is noise (another tenant's burst), not a level."""
    floor = [min(ns for _, ns in pts[i:]) for i in range(len(pts))]
    return [i + 1 < len(pts) and floor[i + 1] >= KNEE_STEP * floor[i] for i in range(len(pts))]


def cache_levels(curve: Iterable[tuple[int, float]]) -> list[dict[str, Any]]:
    """The cache levels a latency curve [(size_bytes, ns_per_load)] shows, smallest first:
    [{bytes, ns_per_load}], each the largest size that level holds. A level ends at a knee, a size
    whose successor's loads take KNEE_STEP x as long or more (_knees); consecutive knees are one level
    ending at the last of them (a step spread over two doublings, as a victim or shared cache gives)."""
    pts = sorted((int(s), float(ns)) for s, ns in curve if s > 0 and ns > 0)
    knee = _knees(pts)
    return [{"bytes": s, "ns_per_load": ns} for i, (s, ns) in enumerate(pts) if knee[i] and not knee[i + 1]]


def find_llc(curve: Iterable[tuple[int, float]]) -> tuple[int | None, list[dict[str, Any]], str]:
    """(the last-level cache in bytes, or None where the curve does not tell; the levels
    (cache_levels); why not, '' when found). The LLC ends at the last knee whose loads take less than
    1/MEMORY_RATIO of the largest size's: the last level under that, or where the step into memory
    spreads over two doublings (4M 17 ns, 8M 83 ns, 16M 130 ns on a VM here: its level ends at 8M,
    part of which is already memory), the last size of it under that. A step within memory (TLB
    misses) is no cache. Found only where the sweep is clearly in memory past it: every size
    LATENCY_REACH x the knee or more takes MEMORY_MIN_NS or more (a sweep that stops inside the caches
    ends on a plateau of one of them). A cache level slower than MEMORY_MIN_NS counts as memory: none
    measured comes near."""
    pts = sorted((int(s), float(ns)) for s, ns in curve if s > 0 and ns > 0)
    levels = cache_levels(pts)
    if len(pts) < 3:
        return None, levels, f"{len(pts)} sizes measured, too few for a curve"
    (top, top_ns), span = pts[-1], f"{size_text(pts[0][0])}..{size_text(pts[-1][0])}"
    if not levels:
        return None, levels, f"no knee in the latency curve ({span}: {pts[0][1]:.3g}-{top_ns:.3g} ns per load)"
    if top_ns < MEMORY_MIN_NS:
        return None, levels, (f"the largest size ({size_text(top)}, {top_ns:.3g} ns per load) is not clearly memory "
                              f"(under {MEMORY_MIN_NS:g} ns): the sweep {span} may stop inside the caches")
    below = [s for (s, ns), knee in zip(pts, _knees(pts), strict=True) if knee and ns * MEMORY_RATIO < top_ns]
    if not below:
        return None, levels, (f"no knee under 1/{MEMORY_RATIO:g} of the largest size's {top_ns:.3g} ns per load "
                              f"({span})")
    llc = below[-1]
    if top < LATENCY_REACH * llc:
        return None, levels, (f"the sweep stops at {size_text(top)}, less than {LATENCY_REACH}x the knee at "
                              f"{size_text(llc)}: it cannot tell a last level from a middle one")
    # LATENCY_REACH x past the knee the sizes are memory (at 2x part of a set may still hit): a
    # plateau under MEMORY_MIN_NS there is a cache level slower than a third of memory, not memory
    s, ns = min(((s, ns) for s, ns in pts if s >= LATENCY_REACH * llc), key=lambda p: p[1])
    if ns < MEMORY_MIN_NS:
        return None, levels, (f"{size_text(s)}, {LATENCY_REACH}x past the knee at {size_text(llc)} or more, "
                              f"takes {ns:.3g} ns per load, under {MEMORY_MIN_NS:g} ns: a cache level too slow to "
                              "tell from memory")
    return llc, levels, ""


def latency_max_size(reported: int, memory_bytes: int) -> int:
    """The largest working set of the latency sweep: the next power of two at least LATENCY_REACH x
    the reported cache (the largest of LATENCY_MAX_SIZES where none is reported: the case that most
    needs measuring), within LATENCY_MAX_SIZES and the memory (bus's footprint per byte)."""
    lo, hi = LATENCY_MAX_SIZES
    size = min(max(_pow2_at_least(LATENCY_REACH * reported), lo), hi) if reported > 0 else hi
    cap = _pow2_at_most(memory_bytes * MEMORY_SHARE / FOOTPRINT["bus"]) if memory_bytes > 0 else 0
    return min(size, cap) if cap else size


def measure_llc(exe: str | os.PathLike[str], reported: int, memory_bytes: int = 0,
                env: Mapping[str, str] | None = None, timeout: float = LATENCY_TIMEOUT_S,
                run: ProcessRun = subprocess.run) -> dict[str, Any]:
    """Runs the latency sweep of `exe` (hdb-bus-cpu) and finds the last-level cache in it:
    {measured_bytes (one instance's: the chase runs on one core; None when not found), levels,
    measured_by (the command), measure_problem (why not, where not found)}. Never raises: an executable
    that is not built, fails, runs past `timeout` or writes no latency results leaves it unknown."""
    exe = absolute_path(exe)
    args = [*LATENCY_ARGS, "--max-size", format_size(latency_max_size(reported, memory_bytes))]
    out: dict[str, Any] = {"measured_bytes": None, "levels": [], "measured_by": " ".join([exe.name, *args])}

    def problem(why: str) -> dict[str, Any]:
        return dict(out, measure_problem=why)

    if not exe.is_file() or not os.access(exe, os.X_OK):
        return problem(f"{exe.name} is not built")
    with tempfile.TemporaryDirectory(prefix="hdb-latency-") as tmp:
        path = Path(tmp, "latency.json")
        try:
            p = run([str(exe), *args, "--json", str(path)], capture_output=True, text=True, timeout=timeout,
                    env=dict(env) if env is not None else None, cwd=tmp)
        except subprocess.TimeoutExpired:
            return problem(f"{exe.name} did not finish the sweep in {timeout:g} s")
        except OSError as e:
            return problem(f"{exe.name} did not start: {e.strerror or e}")
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
    if p.returncode != 0:
        last = next((ln.strip() for ln in reversed((p.stdout + p.stderr).splitlines()) if ln.strip()), "")
        return problem(f"{exe.name}: exit {p.returncode}" + (f" ({last[:160]})" if last else ""))
    curve = []
    for r in (doc.get("results") if isinstance(doc, dict) else None) or []:
        ns = (r.get("extra") or {}).get("ns_per_load") if isinstance(r, dict) else None
        if isinstance(ns, (int, float)) and r.get("test") == "latency" and r.get("status") == "ok" and \
                isinstance(r.get("size_bytes"), int):
            curve.append((r["size_bytes"], float(ns)))
    if not curve:
        return problem(f"{exe.name} wrote no latency results (built before its latency test?)")
    found, levels, why = find_llc(curve)
    out.update(measured_bytes=found, levels=levels)
    return problem(why) if found is None else out


def with_measurement(llc: Mapping[str, Any], measured: Mapping[str, Any]) -> dict[str, Any]:
    """host_llc's answer with measure_llc's: `reported_bytes` the reported size (all instances),
    `bytes` (what the sizing uses) the measured one times the instances where measured, else the
    reported one; `source` says which."""
    out = {**llc, "reported_bytes": int(llc.get("bytes") or 0), **measured}
    if measured.get("measured_bytes"):
        n = max(1, int(llc.get("instances") or 1))
        out["bytes"] = int(measured["measured_bytes"]) * n
        out["source"] = (f"measured: the knee of a latency sweep ({measured['measured_by']})"
                         + (f" x {n} instances" if n > 1 else "") + f"; reported: {llc.get('source', '?')}")
    return out


def llc_text(llc: Mapping[str, Any]) -> str:
    """'480M LLC', '4M LLC (measured; 32M reported)', '32M LLC (measured)': the host's LLC of
    run.json's record (with_measurement's)."""
    text = cache_label("LLC", int(llc.get("bytes") or 0))
    if not llc.get("measured_bytes"):
        return text
    reported = int(llc.get("reported_bytes") or 0)
    return text + (f" (measured; {size_text(reported)} reported)" if reported and reported != llc["bytes"]
                   else " (measured)")


# --- the device's L2: a probe of the bus executable --------------------------------------------------
ProcessRun = Callable[..., "subprocess.CompletedProcess[str]"]


def probe_device(exe: str | os.PathLike[str], extra: Sequence[str], env: Mapping[str, str] | None = None,
                 timeout: float = PROBE_TIMEOUT_S, run: ProcessRun = subprocess.run) -> dict[str, Any]:
    """Runs `exe` (hdb-bus-<backend>) on one 32K case and reads its document's context.device:
    {device, kind, type, l2_bytes, memory_bytes, source} (l2_bytes/memory_bytes None when its context
    does not give them), or {error} when it did not run: not built, no device (exit 77), a time
    limit, no readable document. Never raises."""
    exe = absolute_path(exe)  # it runs in a folder of its own
    if not exe.is_file() or not os.access(exe, os.X_OK):
        return {"error": f"{exe.name} is not built"}
    with tempfile.TemporaryDirectory(prefix="hdb-cache-probe-") as tmp:
        out = Path(tmp, "probe.json")
        cmd = [str(exe), *PROBE_ARGS, *extra, "--json", str(out)]
        try:
            p = run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(env) if env is not None else None,
                    cwd=tmp)
        except subprocess.TimeoutExpired:
            return {"error": f"{exe.name} did not finish a 32K case in {timeout:g} s"}
        except OSError as e:
            return {"error": f"{exe.name} did not start: {e.strerror or e}"}
        try:
            doc = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
    dev = ((doc or {}).get("context") or {}).get("device") if isinstance(doc, dict) else None
    if p.returncode != 0 and not (isinstance(dev, dict) and dev.get("name")):
        last = next((ln.strip() for ln in reversed((p.stdout + p.stderr).splitlines()) if ln.strip()), "")
        why = "no device" if p.returncode == 77 else f"exit {p.returncode}"
        return {"error": f"{exe.name}: {why}" + (f" ({last[:160]})" if last else "")}
    if not isinstance(dev, dict):
        return {"error": f"{exe.name} wrote no document with a context.device"}

    def number(*keys: str) -> int | None:
        for k in keys:
            v = dev.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                return int(v)
        return None

    return {"device": str(dev.get("name") or exe.name), "kind": str(dev.get("kind") or ""),
            "type": str(dev.get("type") or ("gpu" if dev.get("kind") == "cuda" else "")),
            "l2_bytes": number("l2_cache_bytes", "global_mem_cache_bytes"),
            "memory_bytes": number("global_memory_bytes"),
            "source": f"{exe.name} --sizes 32K: context.device"}


def device_caches(cfg: Mapping[str, Any], bin_dir: str | os.PathLike[str], env: Mapping[str, str] | None = None,
                  run: ProcessRun = subprocess.run) -> list[dict[str, Any]]:
    """The devices of the run's CUDA and OpenCL backends (each OpenCL platform the configuration
    lists): one probe_device answer per backend run, with its backend and platform."""
    out: list[dict[str, Any]] = []
    for backend in PROBED_BACKENDS:
        if not any(backend in cfgmod.bench_backends(dict(cfg), b) for b in cfg["benchmarks"]):
            continue
        opts, _ = cfgmod.resolve_options(cfgmod.option_layers(dict(cfg), "bus", backend=backend))
        base = ["--device", str(opts["device"])] if "device" in opts else []
        for platform in cfgmod.backend_table(dict(cfg), backend).get("platforms") or [opts.get("platform")]:
            extra = base + (["--platform", str(platform)] if platform is not None else [])
            found = probe_device(Path(bin_dir, f"hdb-bus-{backend}"), extra, env, run=run)
            out.append({"backend": backend, **({"platform": str(platform)} if platform is not None else {}), **found})
    return out


# --- what the run can do: the machine ---------------------------------------------------------------
@dataclass
class Machine:
    """What fit() sizes for: the host's LLC (host_llc), the probed devices (device_caches), the host
    memory available (bytes) and the ranks that share one host's memory."""
    llc: dict[str, Any]
    devices: list[dict[str, Any]] = field(default_factory=list)
    memory_bytes: int = 0
    ranks_per_host: int = 1


def survey(cfg: Mapping[str, Any], bin_dir: str | os.PathLike[str], env: Mapping[str, str] | None = None,
           ranks: int = 0, hosts: int = 0, sysfs: str | os.PathLike[str] = SYSFS_CPU,
           lscpu: Callable[[], str] = run_lscpu) -> Machine:
    """The machine at hand, read before the run (sysfs/lscpu, /proc/meminfo, the bus probes) and,
    unless [beyond_caches] measure_caches is false, the host's LLC measured (measure_llc)."""
    per_host = max(1, math.ceil(max(ranks, 1) / max(hosts, 1)))
    devices, memory, llc = device_caches(cfg, bin_dir, env), available_memory(), host_llc(sysfs, lscpu)
    if (cfg.get("beyond_caches") or {}).get("measure_caches", True):
        llc = with_measurement(llc, measure_llc(Path(bin_dir, LATENCY_EXE), int(llc.get("per_instance") or 0),
                                                memory, env))
    return Machine(llc, devices, memory, per_host)


# --- sizing: the configuration's sizes beyond the caches, for this machine ----------------------------
def is_gpu(d: Mapping[str, Any]) -> bool:
    """A probed device (device_caches) that is a GPU: its L2 is a cache of its own."""
    return not d.get("error") and (d.get("kind") == "cuda" or str(d.get("type", "")).lower() not in ("", "cpu"))


def _pow2_at_least(n: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


def _pow2_at_most(n: float) -> int:
    return 1 << int(math.floor(math.log2(n))) if n >= 1 else 0


def size_text(n: float) -> str:
    """A size for a sentence: '1G', '960M', '71.5M' (format_size where it is exact)."""
    n = int(math.ceil(n))
    for unit, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if n >= unit:
            return format_size(n) if n % unit == 0 else f"{n / unit:.1f}{suffix}"
    return str(n)


def _largest_setting(cfg: Mapping[str, Any], bench: str) -> tuple[str, int, str]:
    """(kind, bytes, where) of the benchmark's largest size beyond the caches: 'large' (its
    [bench.<name>.large] sizes), 'sweep' (the max_size of its min_size..max_size sweep) or 'list' (a
    size list every variant runs: not extended)."""
    table = cfg["bench"].get(bench, {})
    if table.get("large"):
        sizes = cfgmod.parse_sizes(f"[bench.{bench}.large]", "sizes", table["large"]["sizes"])[1]
        return "large", max(sizes), f"[bench.{bench}.large] sizes"
    opts, origin = cfgmod.resolve_options(cfgmod.option_layers(dict(cfg), bench, backend=None)[:2])
    if "sizes" in opts:
        return "list", max(cfgmod.parse_sizes(origin["sizes"], "sizes", opts["sizes"])[1]), f"{origin['sizes']} sizes"
    if "max_size" in opts:
        return "sweep", cfgmod.parse_size(origin["max_size"], "max_size", opts["max_size"]), \
            f"{origin['max_size']} max_size"
    hi = cfgmod.SIZE_CLASSES[opts.get("size_class", cfgmod.DEFAULT_SIZE_CLASS)][1]
    return "sweep", hi, f"{origin.get('size_class', '[harness]')} size class"


def _replace_largest(sizes_text: str, largest: int, new: int) -> str:
    items = [s.strip() for s in sizes_text.split(",")]
    out = [format_size(new) if cfgmod.parse_size("sizes", None, s) == largest else s for s in items]
    return ",".join(out)


def cache_label(what: str, n: int) -> str:
    """'480M LLC', '60M cuda L2'."""
    return f"{size_text(n)} {what}"


def cache_text(cache: Mapping[str, Any]) -> str:
    """A cache fit() sized against ({what, bytes} and, for a measured LLC, reported_bytes):
    '60M cuda L2', '480M LLC', '4M LLC (measured; 32M reported)'."""
    if cache.get("measured"):
        return llc_text({"bytes": cache["bytes"], "measured_bytes": True,
                         "reported_bytes": cache.get("reported_bytes")})
    return cache_label(str(cache["what"]), int(cache["bytes"]))


def fit(cfg: Mapping[str, Any], machine: Machine) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the configuration with each benchmark's largest size beyond the caches raised for this
    machine, the record run.json keeps as `beyond_caches`). Without a [beyond_caches] table: the
    configuration unchanged and an empty record."""
    spec = cfg.get("beyond_caches")
    out = copy.deepcopy(dict(cfg))
    if not spec:
        return out, {}
    factor, max_size = float(spec["factor"]), cfgmod.parse_size("[beyond_caches]", "max_size", spec["max_size"])
    scale_timeouts = spec.get("scale_timeouts", True)
    host_usable = int(machine.memory_bytes * MEMORY_SHARE / max(1, machine.ranks_per_host))
    record: dict[str, Any] = {
        "factor": factor, "max_size": max_size, "llc": machine.llc,
        "devices": machine.devices, "memory": {"host_available_bytes": machine.memory_bytes,
                                               "ranks_per_host": machine.ranks_per_host, "share": MEMORY_SHARE},
        "benchmarks": {}, "short_of": []}
    # the host's LLC as the sentences name it: measured, and what was reported beside it
    host: dict[str, Any] = {"what": "LLC", "bytes": int(machine.llc.get("bytes") or 0)}
    if machine.llc.get("measured_bytes"):
        host.update(measured=True, reported_bytes=int(machine.llc.get("reported_bytes") or 0))
    for bench in cfgmod.ordered_benchmarks(out["benchmarks"]):
        if bench in cfgmod.SCALE_FACTOR_BENCHMARKS:  # no size sweep: its tables follow --sf
            continue
        backends = cfgmod.bench_backends(out, bench)
        gpus = [d for d in machine.devices if d["backend"] in backends and is_gpu(d)]
        caches = [host] + [{"what": f"{d['backend']} L2", "bytes": int(d["l2_bytes"])} for d in gpus
                           if d.get("l2_bytes")]
        chosen = max(caches, key=lambda c: c["bytes"])
        cache = chosen["bytes"]
        kind, configured, where = _largest_setting(out, bench)
        entry: dict[str, Any] = {"setting": where, "configured": configured, "largest": configured,
                                 "cache": dict(chosen)}
        record["benchmarks"][bench] = entry
        if cache <= 0:
            entry.update(reached=None, reason="no cache size known (neither sysfs nor lscpu names one)")
            record["short_of"].append(f"{bench}: {entry['reason']}")
            continue
        want = factor * cache
        target = _pow2_at_least(want)
        entry["target"] = target
        footprint = FOOTPRINT.get(bench, DEFAULT_FOOTPRINT)
        usable = [("host", host_usable)] if host_usable > 0 else []
        usable += [(f"{d['backend']} device", int(d["memory_bytes"] * MEMORY_SHARE)) for d in gpus
                   if d.get("memory_bytes")]
        mem_cap = min((_pow2_at_most(u / footprint) for _, u in usable), default=target)
        limits = []
        if kind == "list":
            new = configured
            if configured < want:
                limits.append("configuration")
        else:
            new = max(configured, min(target, mem_cap, max_size))
            if new < want:
                limits += (["memory"] if mem_cap < target else []) + (["time"] if max_size < target else [])
        entry.update(largest=new, reached=new >= want)
        if new > configured:
            _raise_largest(out, bench, kind, configured, new, scale_timeouts, entry)
        if not entry["reached"]:
            why = []
            if "memory" in limits:
                scarce = min(usable, key=lambda u: u[1])
                why.append(f"memory ({bench} takes up to {footprint} bytes per input byte: {format_size(target)} "
                           f"would need {size_text(footprint * target)}, {size_text(scarce[1])} of {scarce[0]} memory "
                           "usable)")
            if "time" in limits:
                why.append(f"time ([beyond_caches] max_size {format_size(max_size)})")
            if "configuration" in limits:
                why.append(f"the configuration: {where} is a size list every variant runs, not extended "
                           f"(a [bench.{bench}.large] table would be)")
            entry["limits"] = limits
            entry["reason"] = (f"largest size {size_text(new)} < {factor:g}x the {cache_text(chosen)} = "
                               f"{size_text(want)}: " + "; ".join(why))
            record["short_of"].append(f"{bench}: {entry['reason']}")
    return out, record


def _raise_largest(cfg: dict[str, Any], bench: str, kind: str, old: int, new: int, scale_timeouts: bool,
                   entry: dict[str, Any]) -> None:
    """Writes the benchmark's new largest size into its table, and (scale_timeouts) its time limit
    grown with it: a run at 4x the size takes about 4x as long."""
    table = cfg["bench"].setdefault(bench, {})
    ratio = new / old
    if kind == "large":
        large = table["large"]
        large["sizes"] = _replace_largest(large["sizes"], old, new)
        if scale_timeouts:
            large["timeout_s"] = entry["timeout_s"] = cfgmod.timeout_for(cfg, bench, large=True) * ratio
        return
    # a sweep: the benchmark's table takes the whole size setting, with the new max_size
    opts, _ = cfgmod.resolve_options(cfgmod.option_layers(cfg, bench, backend=None)[:2])
    for k in cfgmod.SIZE_KEYS:
        table.pop(k, None)
    table.update({k: opts[k] for k in ("min_size", "size_class") if k in opts})
    table["max_size"] = format_size(new)
    if scale_timeouts:
        table["timeout_s"] = entry["timeout_s"] = cfgmod.timeout_for(cfg, bench) * ratio


# --- what the run says about it ---------------------------------------------------------------------
def summary_lines(record: Mapping[str, Any]) -> list[str]:
    """The driver's lines before the run starts: the caches found and what each benchmark's largest
    size became."""
    if not record:
        return []
    llc = record.get("llc") or {}
    found = [f"host LLC unknown ({llc.get('source', '?')})"]
    if llc.get("bytes"):
        reported = int(llc.get("reported_bytes") or 0)
        measured = "" if not llc.get("measured_bytes") else " measured" if reported in (0, llc["bytes"]) else \
            f" measured, {size_text(reported)} reported"
        found = [f"host LLC {size_text(llc['bytes'])}{measured} ({llc.get('source', '?')})"]
    if llc.get("measure_problem"):
        found[0] += f", not measured: {llc['measure_problem']}"
    for d in record.get("devices", []):
        name = d["backend"] + (f" --platform {d['platform']}" if d.get("platform") else "")
        if d.get("error"):
            found.append(f"{name}: {d['error']}")
        else:
            found.append(f"{name} {d.get('device')}: L2 " + (size_text(d["l2_bytes"]) if d.get("l2_bytes") else
                                                                "not in its context"))
    lines = ["sizes beyond the caches: " + "; ".join(found)]
    for bench, e in record.get("benchmarks", {}).items():
        if e["largest"] != e["configured"]:
            lines.append(f"  {bench}: largest size {size_text(e['configured'])} -> {size_text(e['largest'])} "
                         f"({e['setting']})" + (f", time limit {e['timeout_s']:.0f} s" if "timeout_s" in e else ""))
    lines += [f"  {s}" for s in record.get("short_of", [])]
    return lines


def largest_cache(record: Mapping[str, Any], benchmarks: Iterable[str] | None = None) -> tuple[int, str]:
    """(bytes, '480M LLC') of the largest cache the benchmarks (all recorded by default) were sized
    against: the host's LLC over all its instances, or a GPU's L2 where larger; (0, '') without."""
    wanted = set(benchmarks) if benchmarks is not None else None
    best = max((e["cache"] for b, e in (record or {}).get("benchmarks", {}).items()
                if e.get("cache", {}).get("bytes") and (wanted is None or b in wanted)),
               key=lambda c: c["bytes"], default=None)
    return (int(best["bytes"]), cache_text(best)) if best else (0, "")


def host_cache(record: Mapping[str, Any], benchmarks: Iterable[str] | None = None) -> tuple[int, str]:
    """(bytes, '4M LLC (measured; 32M reported)') of the host's LLC the run was sized against (its
    `llc`; in a record without one, the largest LLC its benchmarks were sized against); (0, '')
    without."""
    llc = (record or {}).get("llc") or {}
    if llc.get("bytes"):
        return int(llc["bytes"]), llc_text(llc)
    wanted = set(benchmarks) if benchmarks is not None else None
    return largest_cache({"benchmarks": {b: e for b, e in (record or {}).get("benchmarks", {}).items()
                                         if e["cache"]["what"] == "LLC"}}, wanted)


def headline_note(record: Mapping[str, Any] | None, benchmarks: Iterable[str] | None = None) -> str:
    """The headline's sentence on the sizes beyond the caches, from run.json's `beyond_caches`, for
    the benchmarks given (the headline's operations'; all recorded by default):
    'The largest sizes follow this machine's caches: at least 2x the 480M LLC (960M).' or, where one
    fell short, 'The largest sizes stop short of 2x the caches for tpch (512M < 2x the 480M LLC:
    memory) and ngram (32M < 2x the 480M LLC: configuration).' '' without a record (a configuration
    without [beyond_caches])."""
    if not record or not record.get("benchmarks"):
        return ""
    wanted = set(benchmarks) if benchmarks is not None else None
    benches = {b: e for b, e in record["benchmarks"].items() if wanted is None or b in wanted}
    if not benches:
        return ""
    factor = record.get("factor", 2)
    groups: dict[str, list[str]] = {}  # the same shortfall, said once for its benchmarks
    for b, e in benches.items():
        if e.get("reached") is True:
            continue
        if e.get("reached") is None:
            why = "no cache size known"
        else:
            why = (f"{size_text(e['largest'])} < {factor:g}x the {cache_text(e['cache'])}"
                   f": {' and '.join(e.get('limits') or ['?'])}")
        groups.setdefault(why, []).append(b)
    if not groups:
        cache, label = largest_cache(record, benches)
        times = f"{size_text(factor * cache)}"  # beside a label in brackets of its own, after a colon
        return (f"The largest sizes follow this machine's caches: at least {factor:g}x the {label}"
                + (f": {times}." if label.endswith(")") else f" ({times})."))
    return (f"The largest sizes stop short of {factor:g}x the caches for "
            + _and([f"{_and(bs)} ({why})" for why, bs in groups.items()]) + ".")


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def read_record(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """run.json's `beyond_caches` of a run directory ({} when the run has none or run.json is unreadable)."""
    try:
        m = json.loads(Path(run_dir, "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    rec = m.get("beyond_caches") if isinstance(m, dict) else None
    return rec if isinstance(rec, dict) else {}
