"""The contract between the C++ harness and the Python side, in one place: the only Python code that
makes case ids, parameter text, sizes as ids print them, statistics, the stopping rule, throughput
and the other derived figures, the schema string and the exit codes. Each function follows the
C++ it names line by line (same operations in the same order, so the same doubles), and
tests/driver/test_contract.py checks it against real executables: every id, every statistic and
every figure an executable records is rebuilt here from the recorded typed fields and trials.

- ids: `case_id` (harness/case.cpp CaseKey::id), `param_text` (case.cpp param_text),
  `format_size` / `size_label` / `parse_size` / `pow2_range` (harness/sizes.cpp);
  `declared_params` gives a recorded case's params in declared order (the JSON object does not keep
  it; results-schema.md: the declared order is the id's), checked by rebuilding the id.
- statistics: `summarize` (harness/stats.cpp), `StoppingRule` (stats.cpp StoppingRule::done, with
  session.cpp's loop in `StoppingRule.measure`), `trial_measured` (timing.hpp Breakdown::measured),
  `result_stats` (result.cpp record_json's `stats`), `throughput` (result.cpp throughput()).
- the copy ceiling measured again while a run goes on (issue 51): `ceiling_median`, `ceiling_spread`
  and `nearest_ceiling` (harness/ceiling.cpp CeilingTrack), `result_ceiling` (the ceiling a recorded
  result's pct_of_peak is against); the ceiling per access pattern (issue 46): `match_ceiling`
  (harness/patterns.cpp), `pattern_rates` and `case_ceiling` (CeilingTrack::for_case), and
  `pattern_matched` (whether a result's `throughput.ceiling_pattern` names the ceiling of its own mix).
- the cold / warm / hot protocol (docs/methodology.md): `Passes` (what `StoppingRule.measure` took:
  the cold pass, the warm-up passes, the timed passes) and its `protocol` (results[].protocol),
  `last_level_cache_bytes` and `flush_description` (harness/caches.cpp, --flush-caches).
- the document: `SCHEMA` (result.hpp kSchema), the exit codes (errors.hpp ExitCode), `csv_text`
  (result.cpp csv_text, the CSV every executable and peer writes).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "hetdb-bench/2"  # harness/result.hpp kSchema

# harness/errors.hpp ExitCode: what every executable (and peer) exits with; 128 + N for signal N.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIP = 0, 1, 2, 77

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
TRANSFERS = ("none", "pageable", "pinned")
SIZE_CLASSES = {1: (32 * KiB, 1 * MiB), 2: (32 * KiB, 16 * MiB), 3: (32 * KiB, 256 * MiB), 4: (32 * KiB, 1 * GiB)}
_SUFFIX = {"": 1, "B": 1, "K": KiB, "k": KiB, "KB": KiB, "KiB": KiB, "M": MiB, "m": MiB, "MB": MiB, "MiB": MiB,
           "G": GiB, "g": GiB, "GB": GiB, "GiB": GiB}

ParamValue = str | int | float | bool
Params = Mapping[str, ParamValue] | Sequence[tuple[str, ParamValue]]


# --- sizes (harness/sizes.cpp) ---------------------------------------------------------------------
def format_size(n: int) -> str:
    """sizes.cpp format_size: 1073741824 -> '1G', 1048576 -> '1M', 32768 -> '32K', 1000 -> '1000'
    (how an id prints its size; G is the largest unit: 1T prints '1024G')."""
    n = int(n)
    for unit, suffix in ((GiB, "G"), (MiB, "M"), (KiB, "K")):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def size_label(n: int) -> str:
    """sizes.cpp size_label: a power of two as '2^N', anything else as its byte count (results[].size_label)."""
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def parse_size(text: str, what: str = "size") -> int:
    """sizes.cpp parse_size: '4096', '32K', '1M', '1G', '2^20' (K/KB/KiB, M/MB/MiB, G/GB/GiB, B); a
    ValueError with the executables' message otherwise."""
    def fail(why: str) -> int:
        raise ValueError(f"{what}: '{text}' is not a valid size ({why}; use e.g. 4096, 32K, 1M, 1G or 2^20)")
    if not text:
        return fail("empty")
    if "^" in text:
        base, _, e = text.partition("^")
        if base != "2":
            return fail("only powers of 2 may use ^")
        if not e or len(e) > 2 or not all(c in "0123456789" for c in e):
            return fail("bad exponent")
        if int(e) > 40:
            return fail("exponent above 40")
        return 1 << int(e)
    i = value = 0
    while i < len(text) and text[i] in "0123456789":
        if value > 1 << 44:
            return fail("too large")
        value = value * 10 + int(text[i])
        i += 1
    if i == 0:
        return fail("no number")
    mult = _SUFFIX.get(text[i:])
    if mult is None:
        return fail(f"unknown suffix '{text[i:]}'")
    if value == 0:
        return fail("must be positive")
    if value > (1 << 40) // mult:
        return fail("above 1T")
    return value * mult


def pow2_range(lo: int, hi: int) -> list[int]:
    """sizes.cpp pow2_range: the powers of two from lo (rounded up) to hi."""
    s, out = 1, []
    while s < lo:
        s <<= 1
    while s <= hi:
        out.append(s)
        s <<= 1
    return out


# --- parameters and ids (harness/case.cpp) --------------------------------------------------------
def param_text(v: ParamValue) -> str:
    """case.cpp param_text: how a typed value prints inside an id (and the CSV's params column).
    A string as it is; a float with no fraction below 1e15 as an integer ('100'), else the shortest
    %.{1..17}g that reads back as the same double ('0.5', '1e-06', '1e+15'); an integer as its
    digits; a boolean as JSON writes it ('true')."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v == math.floor(v) and math.fabs(v) < 1e15:
            return f"{v:.0f}"
        text = ""
        for prec in range(1, 18):
            text = f"{v:.{prec}g}"
            if float(text) == v:
                break
        return text
    return str(int(v))


def _pairs(params: Params) -> list[tuple[str, ParamValue]]:
    return list(params.items()) if isinstance(params, Mapping) else [(k, v) for k, v in params]


def case_id(test: str, variant: str, params: Params = (), transfer: str = "none", size_bytes: int = 0) -> str:
    """case.cpp CaseKey::id: 'test/variant[k=v,...,transfer=MODE]@SIZE'. params in declared order (a
    dict's order, or (name, value) pairs); transfer last and only when not 'none'; the brackets only
    when there is something in them; '@SIZE' only for a case of the size sweep (size_bytes > 0)."""
    if transfer not in TRANSFERS:
        raise ValueError(f"transfer '{transfer}' is none of {', '.join(TRANSFERS)}")
    inner = [f"{k}={param_text(v)}" for k, v in _pairs(params)]
    if transfer != "none":
        inner.append(f"transfer={transfer}")
    return (f"{test}/{variant}" + (f"[{','.join(inner)}]" if inner else "")
            + (f"@{format_size(size_bytes)}" if size_bytes else ""))


def params_text(params: Mapping[str, ParamValue]) -> str:
    """result.cpp csv_row: the CSV's params column, 'k=v;k=v' in the document's key order (a JSON
    object's order in the C++: by name)."""
    return ";".join(f"{k}={param_text(v)}" for k, v in sorted(params.items()))


def declared_params(result: Mapping[str, Any]) -> dict[str, ParamValue]:
    """A recorded result's typed params in their declared order. A JSON object keeps no order
    (results-schema.md: the declared order is the id's), so the names are ordered as the id lists
    them; the id is then made again from the typed fields (case_id) and must be the recorded one,
    else ValueError: no id is ever taken apart and pieced together by hand."""
    params = dict(result.get("params") or {})
    rid, test = result["id"], result["test"]
    head = rid[len(test) + 1 + len(result["variant"]):]

    def at(name: str) -> int:
        for lead in ("[", ","):
            i = head.find(f"{lead}{name}=")
            if i >= 0:
                return i
        return len(head)
    ordered = {k: params[k] for k in sorted(params, key=at)}
    made = case_id(test, result["variant"], ordered, result.get("transfer", "none"), int(result.get("size_bytes", 0)))
    if made != rid:
        raise ValueError(f"the recorded id {rid} is not the id of its fields ({made})")
    return ordered


# --- statistics and the stopping rule (harness/stats.cpp, session.cpp, timing.hpp) -----------------
def summarize(values: Iterable[float]) -> dict[str, Any]:
    """stats.cpp summarize: {n, min, median, mean, max, stddev, cv} of a sample, computed as the C++
    does (sorted; the mean summed in sorted order and kept within [min, max]; the sample standard
    deviation (n - 1) from that mean; cv = stddev / mean, 0 when the mean is 0 or n < 2)."""
    v = sorted(float(x) for x in values)
    n = len(v)
    if n == 0:
        return {"n": 0, "min": 0.0, "median": 0.0, "mean": 0.0, "max": 0.0, "stddev": 0.0, "cv": 0.0}
    lo, hi = v[0], v[-1]
    m = n // 2
    median = v[m] if n % 2 else 0.5 * (v[m - 1] + v[m])
    total = 0.0
    for x in v:  # std::accumulate, left to right (never sum(): Python 3.12's is compensated)
        total += x
    mean = min(max(total / n, lo), hi)
    stddev = cv = 0.0
    if n > 1:
        ss = 0.0
        for x in v:
            ss += (x - mean) * (x - mean)
        stddev = math.sqrt(ss / (n - 1))
        cv = stddev / mean if mean > 0 else 0.0
    return {"n": n, "min": lo, "median": median, "mean": mean, "max": hi, "stddev": stddev, "cv": cv}


def trial_measured(trial: Mapping[str, float]) -> float:
    """timing.hpp Breakdown::measured: the time the stopping rule judges (kernel, else the transfers,
    else the total)."""
    k, xfer = trial.get("kernel_s", 0.0), trial.get("h2d_s", 0.0) + trial.get("d2h_s", 0.0)
    return k if k > 0 else xfer if xfer > 0 else trial.get("total_s", 0.0)


def trial_spent(trial: Mapping[str, float]) -> float:
    """session.cpp: what a pass adds to the seconds spent (its total, else its kernel time)."""
    t = trial.get("total_s", 0.0)
    return t if t > 0 else trial.get("kernel_s", 0.0)


@dataclass
class StoppingRule:
    """stats.cpp StoppingRule (options.hpp's defaults; max_passes is raised to min_passes as
    options.cpp does)."""
    min_passes: int = 3
    max_passes: int = 50
    max_time: float = 2.0
    target_noise: float = 0.02

    def __post_init__(self) -> None:
        self.max_passes = max(self.max_passes, self.min_passes)

    def done(self, times: Sequence[float], elapsed: float) -> bool:
        n = len(times)
        if n >= self.max_passes:
            return True
        if n < self.min_passes:
            return False
        if elapsed >= self.max_time:
            return True
        return bool(summarize(times)["cv"] <= self.target_noise)

    def passes_taken(self, trials: Sequence[Mapping[str, float]]) -> int:
        """How many passes session.cpp's loop takes given these trials in order (the first n after
        which done() holds): a recorded case's trial count must be this."""
        measured: list[float] = []
        spent = 0.0
        for t in trials:
            spent += trial_spent(t)
            measured.append(trial_measured(t))
            if self.done(measured, spent):
                break
        return len(measured)

    def measure(self, one_pass: Callable[[], float], warmup: int = 0, cold_pass: Callable[[], float] | None = None,
                before_pass: Callable[[], Any] | None = None) -> Passes:
        """session.cpp Session::take_passes for a pass that returns its own seconds (its kernel and
        total time alike, as a peer's query). With warmup >= 1 the first pass is the cold one, timed
        and kept apart, then warmup - 1 untimed warm-up passes; with warmup 0 there is none (the
        first timed pass is the cold one). Then timed passes until done(). The cold pass is never a
        trial and its seconds do not count towards max_time. before_pass (the --flush-caches
        eviction) runs, untimed, before the cold pass and before every timed pass, never before a
        warm-up pass. A peer whose cold pass runs apart (cold_pass: on fresh state, a new
        connection, that the timed passes never use) warms nothing the timed passes use with it:
        `warmup` warm-up passes follow it, not warmup - 1 (Passes.warmup_passes says how many)."""
        cold = None
        if warmup >= 1:
            if before_pass:
                before_pass()
            cold = (cold_pass or one_pass)()
        warmups = warmup if cold_pass else max(warmup - 1, 0)
        for _ in range(warmups):
            one_pass()
        times: list[float] = []
        spent = 0.0
        while True:
            if before_pass:
                before_pass()
            t = one_pass()
            spent += t
            times.append(t)
            if self.done(times, spent):
                return Passes(times, cold, warmups)


def host_trial(seconds: float, phase: str | None = None) -> dict[str, Any]:
    """A trial of host time only (a peer's pass): no transfers, kernel = total = the pass's seconds."""
    return {"h2d_s": 0.0, "kernel_s": seconds, "d2h_s": 0.0, "total_s": seconds,
            "phases_s": {phase: seconds} if phase else {}}


# --- the cold / warm / hot protocol (harness/session.cpp, harness/caches.cpp) -----------------------
# session.cpp take_passes: the cold note of a case taken with --warmup 0 (no cold pass).
NO_COLD_NOTE = "none taken (--warmup 0): the first timed pass is the case's first"
FLUSH_UNKNOWN_LLC = 1 << 30  # caches.cpp kUnknownLlcFlush: the flush buffer without a readable cache size


def last_level_cache_bytes(root: str = "/sys/devices/system/cpu") -> int:
    """caches.cpp last_level_cache_bytes: the largest of cpu0's cache/index0..7/size ('32768K'
    style: K, M, G), 0 when none is readable. root replaces /sys/devices/system/cpu for tests."""
    best = 0
    for i in range(8):
        try:
            text = Path(root, "cpu0", "cache", f"index{i}", "size").read_text().split()
        except OSError:
            continue
        if not text:
            continue
        s = text[0]
        digits = s[:len(s) - len(s.lstrip("0123456789"))]  # strtoull: the leading digits
        v = int(digits) if digits else 0
        best = max(best, v << {"K": 10, "M": 20, "G": 30}.get(s[-1], 0))
    return best


def flush_buffer_bytes(llc_bytes: int) -> int:
    """caches.cpp HostCacheFlusher: twice the last-level cache (a shared LLC with an adaptive
    replacement policy keeps part of a buffer of only its size), FLUSH_UNKNOWN_LLC without one."""
    return 2 * llc_bytes if llc_bytes else FLUSH_UNKNOWN_LLC


def flush_description(llc_bytes: int) -> str:
    """caches.cpp HostCacheFlusher::describe, results[].protocol.flush:
    'host LLC 32M: wrote and read a 64M buffer'."""
    what = f"host LLC {format_size(llc_bytes)}" if llc_bytes else "host LLC of unknown size (sysfs has none)"
    return f"{what}: wrote and read a {format_size(flush_buffer_bytes(llc_bytes))} buffer"


@dataclass
class Passes:
    """The passes of one case as StoppingRule.measure took them: the timed passes' seconds (the
    trials), the cold pass's (None with --warmup 0), the untimed warm-up passes between them, and
    what a peer knows of them: why its cold pass is cold (cold_note) and what --flush-caches evicted
    before every timed pass (flush; None: nothing, the passes are hot)."""
    times: list[float]
    cold: float | None = None
    warmup_passes: int = 0
    cold_note: str = ""
    flush: str | None = None

    @property
    def timed_as(self) -> str:
        return "warm" if self.flush else "hot"

    def protocol(self, phase: str | None = None) -> dict[str, Any]:
        """results[].protocol (docs/results-schema.json $defs/protocol): the cold pass as a host
        trial (host_trial), its note (cold_note; without one, NO_COLD_NOTE when there is no cold
        pass), the warm-up count, hot or warm, and the flush when warm."""
        p: dict[str, Any] = {
            "cold": host_trial(self.cold, phase) if self.cold is not None else None,
            "cold_note": self.cold_note or ("the first pass after the case was set up" if self.cold is not None
                                            else NO_COLD_NOTE),
            "warmup_passes": self.warmup_passes, "timed_as": self.timed_as}
        if self.flush:
            p["flush"] = self.flush
        return p


def result_stats(trials: Sequence[Mapping[str, Any]], phases: Sequence[str] = ()) -> dict[str, Any]:
    """result.cpp record_json's `stats`: kernel_s, total_s, h2d_s, d2h_s and each declared phase's
    (phases: the names of results[].phases, in order)."""
    st: dict[str, Any] = {k: summarize(t[k] for t in trials) for k in ("kernel_s", "total_s", "h2d_s", "d2h_s")}
    st["phases_s"] = {p: summarize(t["phases_s"][p] for t in trials if p in t.get("phases_s", {})) for p in phases}
    return st


def throughput(trials: Sequence[Mapping[str, Any]], input_bytes: int, elements: int, min_moved: int,
               transfer_bytes: int, ceiling_gbps: float, with_ceiling: bool = False) -> dict[str, float]:
    """result.cpp throughput(): GB/s of the input over the median kernel and total time, of the
    transferred bytes over the median transfer time, elements per second, the declared minimum bytes
    moved per second and its % of the ceiling, parity (transfer over kernel time). A figure whose
    time is 0 is 0; so is every figure without trials. with_ceiling: the figures carry
    `ceiling_gbps` too, the ceiling pct_of_peak is against, as the harness records it since issue 51
    (0 where there is no kernel time to set against it); a peer's figures do not."""
    t = {"kernel_gbps": 0.0, "total_gbps": 0.0, "transfer_gbps": 0.0, "elements_per_s": 0.0, "moved_gbps": 0.0,
         "pct_of_peak": 0.0, "parity": 0.0}
    if with_ceiling:
        t["ceiling_gbps"] = 0.0
    if not trials:
        return t
    st = result_stats(trials)
    k, tot = st["kernel_s"]["median"], st["total_s"]["median"]
    xfer = st["h2d_s"]["median"] + st["d2h_s"]["median"]
    if xfer > 0:
        t["transfer_gbps"] = float(transfer_bytes) / xfer / 1e9
    if k > 0:
        t["kernel_gbps"] = float(input_bytes) / k / 1e9
        t["elements_per_s"] = float(elements) / k
        t["moved_gbps"] = float(min_moved) / k / 1e9
        t["parity"] = xfer / k
        if ceiling_gbps > 0:
            t["pct_of_peak"] = 100.0 * t["moved_gbps"] / ceiling_gbps
        if with_ceiling:
            t["ceiling_gbps"] = float(ceiling_gbps)
    if tot > 0:
        t["total_gbps"] = float(input_bytes) / tot / 1e9
    return t


def result_ceiling(result: Mapping[str, Any], doc_ceiling_gbps: float) -> float:
    """The ceiling a recorded result's pct_of_peak is against: its own `throughput.ceiling_gbps`,
    the sample measured nearest to its timed passes (issue 51), where it carries one; else the
    document's `ceiling.memory_copy_gbps` (doc_ceiling_gbps), which is all that documents written
    before issue 51 and the peers' have."""
    own = (result.get("throughput") or {}).get("ceiling_gbps")
    return float(own) if isinstance(own, (int, float)) and not isinstance(own, bool) else float(doc_ceiling_gbps)


def result_figures(result: Mapping[str, Any], ceiling_gbps: float) -> dict[str, Any]:
    """A result's `stats` and `throughput` from its trials, phases and bytes, as record_json makes
    them ({} for a result without trials: it carries neither). ceiling_gbps: the document's ceiling;
    a result that records a ceiling of its own (throughput.ceiling_gbps) is made against that one,
    and its figures carry it as the recorded ones do (result_ceiling). A recorded `ceiling_pattern`
    (issue 46) is carried as recorded, the name of that ceiling (case_ceiling makes both from the
    document's ceiling samples and patterns)."""
    trials = result.get("trials") or []
    if not trials:
        return {}
    b = result["bytes"]
    recorded = result.get("throughput") or {}
    own = "ceiling_gbps" in recorded
    t: dict[str, Any] = throughput(trials, b["input"], result["elements"], b["min_moved"], b["transfer"],
                                   result_ceiling(result, ceiling_gbps), with_ceiling=own)
    if "ceiling_pattern" in recorded:
        t["ceiling_pattern"] = recorded["ceiling_pattern"]
    return {"stats": result_stats(trials, [p["name"] for p in result.get("phases", [])]), "throughput": t}


# --- the ceiling per access pattern (issue 46: harness/patterns.cpp, CeilingTrack::for_case) --------
# The first ceiling sample measures every access pattern (ceiling.patterns); a case is divided by the
# ceiling of the mix its bytes declare (bytes.read, written, random_read, random_item), from those
# rates scaled by the copy sample nearest to it over patterns.copy. throughput.ceiling_pattern names
# it: a measured pattern ('read'), an interpolation between two ('copy..read (75% read)'), with a
# gather part (' + gather4'); or one of the fallbacks to the copy rate, which start with this:
PATTERN_FALLBACK_PREFIX = "copy ("  # "copy (reads and writes undeclared)", "copy (only copy measured)"
PATTERNS = ("read", "write", "copy", "add", "triad", "gather4", "gather32")  # patterns.hpp kAllPatterns


def pattern_matched(label: Any) -> bool:
    """True when `label` (throughput.ceiling_pattern) names the ceiling of the case's own mix: one
    measured pattern, or an interpolation between two measured ones (either with a gather part).
    False for '' (no ceiling), for a fallback to the copy rate ('copy (...)'), for a mix beyond the
    measured patterns that takes the nearest one ('add (100% read)': the mix reads more than any
    pattern measured, so its ceiling is not its own), for random reads taken as sequential, and
    for a result without the field (before issue 46, a peer's)."""
    if not isinstance(label, str) or not label or label.startswith(PATTERN_FALLBACK_PREFIX):
        return False
    sequential = label.split(" + ")[0]
    return " (" not in sequential or ".." in sequential.split(" (")[0]


def _sequential(points: Sequence[tuple[float, float, str]], share: float) -> tuple[float, str]:
    """patterns.cpp sequential(): nanoseconds per byte and the name of a sequential mix with `share`
    of its bytes read, points (read share, GB/s, name) in the order of their shares."""
    lo: tuple[float, float, str] | None = None
    hi: tuple[float, float, str] | None = None
    for p in points:
        if p[0] <= share + 1e-9:
            lo = p
        if hi is None and p[0] >= share - 1e-9:
            hi = p
    rounded = _lround(100 * share)
    pct = f" ({rounded}% read)"
    if lo is None or hi is None:  # beyond the measured points: the nearest one, named with the share
        near = lo or hi
        assert near is not None  # points is not empty
        return 1 / near[1], near[2] + pct
    if lo is hi:
        return 1 / lo[1], lo[2]
    t = 1 / lo[1] + (share - lo[0]) / (hi[0] - lo[0]) * (1 / hi[1] - 1 / lo[1])
    for p in (lo, hi):  # a share that rounds to a point's is named after it (a reduce's few bytes of answer)
        if _lround(100 * p[0]) == rounded:
            return t, p[2]
    return t, f"{lo[2]}..{hi[2]}{pct}"


def _lround(x: float) -> int:
    """std::lround of x >= 0: the nearest integer, halves away from 0 (x - floor(x) is exact; x + 0.5
    is not: 0.49999999999999994 + 0.5 rounds to 1)."""
    n = math.floor(x)
    return n + 1 if x - n >= 0.5 else n


def _random_access(rates: Mapping[str, float], item: int) -> tuple[float, str]:
    """patterns.cpp random_access(): nanoseconds per random access of `item` bytes and the name; 0
    when no gather was measured."""
    g4, g32 = rates.get("gather4", 0.0), rates.get("gather32", 0.0)
    t4, t32 = (4 / g4 if g4 > 0 else 0.0), (32 / g32 if g32 > 0 else 0.0)
    if t4 == 0 and t32 == 0:
        return 0.0, ""
    if t32 == 0 or (item <= 4 and t4 > 0):
        return t4, "gather4"
    if t4 == 0 or item >= 32:
        return t32, "gather32"
    return t4 + (float(item) - 4) / 28 * (t32 - t4), "gather4..gather32"


def match_ceiling(mix: Mapping[str, Any], rates: Mapping[str, float]) -> tuple[float, str]:
    """patterns.cpp match_ceiling(): (GB/s, name) of the ceiling of a case that moves `mix` (a
    result's `bytes`: read, written, random_read, random_item; none of them: undeclared) from the
    pattern `rates` (GB/s by pattern name; absent or 0: not measured). Sequential bytes at the time
    per byte interpolated by their read share between the measured patterns either side (add's point
    the better of add and triad); random reads at the gather rate per access, added in time. (0, '')
    where nothing is known."""
    def rate(name: str) -> float:
        return float(rates.get(name) or 0.0)
    copy = rate("copy")
    read, written = int(mix.get("read") or 0), int(mix.get("written") or 0)
    if read + written == 0:
        return copy, "copy (reads and writes undeclared)" if copy > 0 else ""
    points: list[tuple[float, float, str]] = []
    if rate("write") > 0:
        points.append((0.0, rate("write"), "write"))
    if copy > 0:
        points.append((0.5, copy, "copy"))
    add = max(rate("add"), rate("triad"))
    if add > 0:
        points.append((2.0 / 3, add, "add" if rate("add") >= rate("triad") else "triad"))
    if rate("read") > 0:
        points.append((1.0, rate("read"), "read"))
    if not points:
        return 0.0, ""
    if len(points) == 1 and copy > 0:
        return copy, "copy (only copy measured)"
    total = float(read + written)
    random = min(int(mix.get("random_read") or 0), read)
    item = max(int(mix.get("random_item", 4)), 1)
    per_access, gather = _random_access({k: rate(k) for k in ("gather4", "gather32")}, item)
    note = ""
    if random > 0 and per_access == 0:  # no gather measured: the random reads at the sequential rate
        random = 0
        note = " (random reads as sequential: no gather measured)"
    seq_read = read - random
    seq = seq_read + written
    ns, name = 0.0, ""
    if seq > 0:
        per_byte, name = _sequential(points, seq_read / seq)
        ns += per_byte * float(seq)
    if random > 0:
        ns += per_access * float(math.ceil(random / item))
        name = name + " + " + gather if name else gather
    return total / ns, name + note


def pattern_rates(patterns: Mapping[str, float] | None, copy: float) -> dict[str, float]:
    """CeilingTrack::for_case's rates of a case whose nearest copy sample is `copy`: the document's
    ceiling.patterns scaled by copy / patterns.copy; {'copy': copy} where the patterns hold no copy."""
    own = float((patterns or {}).get("copy") or 0.0)
    if own > 0:
        f = copy / own
        return {k: float(v) * f for k, v in (patterns or {}).items()}
    return {"copy": copy}


def case_ceiling(ceiling: Mapping[str, Any], result: Mapping[str, Any]) -> tuple[float, str]:
    """CeilingTrack::for_case: (throughput.ceiling_gbps, throughput.ceiling_pattern) of a result with
    kernel time, from the document's `ceiling` (samples, patterns) and the result's timed_at_s and
    bytes; (0, '') without samples."""
    copy = nearest_ceiling(ceiling.get("samples") or [], float(result.get("timed_at_s", 0.0)))
    if copy <= 0:
        return 0.0, ""
    return match_ceiling(result.get("bytes") or {}, pattern_rates(ceiling.get("patterns"), copy))


# --- the copy ceiling, measured again while the run goes on (harness/ceiling.cpp, issue 51) --------
def _sample_rates(samples: Iterable[Mapping[str, Any]]) -> list[float]:
    return [float(s["gbps"]) for s in samples]


def ceiling_median(samples: Iterable[Mapping[str, Any]]) -> float:
    """CeilingTrack::median: the median of the samples' gbps (ceiling.memory_copy_gbps), 0 without
    samples; of an even count the mean of the middle two, (a + b) / 2 as the C++ computes it."""
    v = sorted(_sample_rates(samples))
    n = len(v)
    if n == 0:
        return 0.0
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def ceiling_spread(samples: Sequence[Mapping[str, Any]]) -> float:
    """CeilingTrack::spread: (max - min) / median of the samples' gbps (ceiling.spread); 0 with fewer
    than two samples, and where the median is 0 (no sample the C++ keeps is 0: it drops those)."""
    v = _sample_rates(samples)
    median = ceiling_median(samples)
    if len(v) < 2 or median <= 0:
        return 0.0
    return (max(v) - min(v)) / median


def nearest_ceiling(samples: Iterable[Mapping[str, Any]], at_s: float) -> float:
    """CeilingTrack::nearest: the gbps of the sample nearest in time to at_s (a result's timed_at_s),
    the earlier of two as near; 0 (unknown) without samples."""
    best, gap = 0.0, 0.0
    for s in samples:
        g = abs(float(s["at_s"]) - at_s)
        if best == 0 or g < gap:
            best, gap = float(s["gbps"]), g
    return best


# --- the CSV (harness/result.cpp csv_text) ----------------------------------------------------------
def csv_field(v: Any) -> str:
    """result.cpp csv_field: empty for no value, booleans 0/1, floats as param_text, quoted when needed."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    s = v if isinstance(v, str) else param_text(v) if isinstance(v, float) else str(v)
    if not any(c in s for c in ',"\n\r'):
        return s
    return '"' + s.replace('"', '""') + '"'


def csv_row(doc: Mapping[str, Any], r: Mapping[str, Any], rank: int, device: str) -> dict[str, Any]:
    """result.cpp csv_row: one result's fields, read by name (None where the result lacks one)."""
    def at(a: str, b: str, c: str | None = None) -> Any:
        v = (r.get(a) or {}).get(b)
        return v if c is None or v is None else v.get(c)
    row = {"id": r.get("id", ""), "benchmark": doc.get("benchmark", ""), "backend": doc.get("backend", ""),
           "rank": rank, "device": device, "test": r.get("test", ""), "variant": r.get("variant", ""),
           "params": params_text(r.get("params") or {}), "size_bytes": r.get("size_bytes", 0),
           "transfer": r.get("transfer", "none"), "status": r.get("status", ""),
           "checked": at("verification", "checked"), "verified": at("verification", "verified"),
           "passes": len(r.get("trials") or []),
           "kernel_median_s": at("stats", "kernel_s", "median"), "kernel_cv": at("stats", "kernel_s", "cv"),
           "total_median_s": at("stats", "total_s", "median"), "total_cv": at("stats", "total_s", "cv"),
           "h2d_median_s": at("stats", "h2d_s", "median"), "d2h_median_s": at("stats", "d2h_s", "median"),
           "elements": r.get("elements", 0), "input_bytes": at("bytes", "input"),
           "min_moved_bytes": at("bytes", "min_moved"), "transfer_bytes": at("bytes", "transfer"),
           "reason": r.get("reason", "")}
    for k in ("kernel_gbps", "total_gbps", "transfer_gbps", "elements_per_s", "moved_gbps", "pct_of_peak",
              "ceiling_gbps", "ceiling_pattern", "parity"):
        row[k] = at("throughput", k)  # ceiling_*: None (an empty cell) for a peer's or an older result
    for k in NOT_APPLICABLE_WHEN_ZERO:
        if row[k] == 0 and not isinstance(row[k], bool):
            row[k] = None
    return row


# Columns x-csv-columns gained after executables had written CSV files with the columns before them,
# in the order they were added (issue 51: ceiling_gbps, after pct_of_peak; issue 46: ceiling_pattern,
# after ceiling_gbps). Each is also a throughput field of the same name. A CSV with exactly the
# columns but the last few of these, beside a document whose results lack those too, is an earlier
# executable's: the driver puts it into summary.csv with those cells empty (results.summary_csv) and
# tests/check_results.py takes it.
CSV_COLUMNS_ADDED = ("ceiling_gbps", "ceiling_pattern")


def earlier_csv_columns(columns: Sequence[str], added: Sequence[str] = CSV_COLUMNS_ADDED) -> list[str]:
    """The CSV columns without `added` (by default every column of CSV_COLUMNS_ADDED: the earliest
    executables' columns)."""
    return [c for c in columns if c not in added]


def earlier_csv_headers(columns: Sequence[str]) -> list[tuple[list[str], tuple[str, ...]]]:
    """[(columns, the added columns they lack)] of each earlier executable's CSV, newest first: the
    columns without the last column added, without the last two, ..., without all of them."""
    n = len(CSV_COLUMNS_ADDED)
    return [(earlier_csv_columns(columns, CSV_COLUMNS_ADDED[i:]), CSV_COLUMNS_ADDED[i:]) for i in range(n - 1, -1, -1)]


# result.cpp kNotApplicableWhenZero: figures whose 0 in a document means "does not apply" (no such phase,
# no transfer, no ceiling, no kernel time to divide by), written as an empty CSV cell, never as 0.
NOT_APPLICABLE_WHEN_ZERO = ("kernel_median_s", "h2d_median_s", "d2h_median_s", "kernel_gbps", "total_gbps",
                            "transfer_gbps", "elements_per_s", "moved_gbps", "pct_of_peak", "ceiling_gbps",
                            "parity")


def csv_text(doc: Mapping[str, Any], columns: Sequence[str]) -> str:
    """result.cpp csv_text: the header (columns: docs/results-schema.json x-csv-columns) and one row
    per result of a one-rank document."""
    ctx = doc.get("context") or {}
    device = (ctx.get("device") or {}).get("name", doc.get("backend", ""))
    rank = (ctx.get("mpi") or {}).get("rank", 0)
    lines = [",".join(columns)]
    for r in doc.get("results", []):
        row = csv_row(doc, r, rank, device)
        lines.append(",".join(csv_field(row.get(c)) for c in columns))
    return "\n".join(lines) + "\n"
