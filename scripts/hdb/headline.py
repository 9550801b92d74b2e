"""The answer a user came for, on top of the report: for each operation, the best implementation on
each processor (kernel only and with PCIe transfers), its speed-up over the best CPU implementation
and over the database peer (DuckDB), and the input size from which the accelerator, transfers
included, beats the CPU. Only verified results count; every figure names the case id it comes from.

An operation is a benchmark's test with one set of parameters (the peers' `threads` aside); per test
the headline takes the parameter set that the most processors ran (TPC-H: one per data source; ra's
tests with an `input` parameter: one from sorted input and one from unsorted input), at
the largest size at which the CPU and the accelerator both ran, so beyond the caches when the run
went there (a peer that did not run that size has no speed-up in that row). A processor is a
backend's device: the cpu backend, each device backend (opencl, cuda) and each peer. Without a GPU
the OpenCL device stands in and the text says so.
Host execution (cuda-host: the CUDA sources run on the CPU) is no processor: its results never enter
the headline, as an accelerator, a peer or a row of the table (results.processor_rows). Nor does a
result with a figure above the physical ceiling of its run (plausibility.py): it cannot be true.

Every speed-up carries a 95% confidence interval from the trials of both sides: a percentile bootstrap
of the ratio of the two medians, seeded so that a report prints the same interval every time; where
either side has fewer than 3 trials the interval is said to be not available (docs/statistics.md).

DuckDB (docs/peers.md) runs every case in two variants: `sql_table`, its answer materialised inside
DuckDB (a temporary table), the same work as the suite's CPU kernels, whose answer stays in their
own memory; and `sql`, the answer transferred to NumPy (fetchnumpy()). The headline compares
`sql_table` and gives `sql` beside it (a run from before `sql_table` was recorded: `sql`, and says
so). It names per operation the input contract of the comparison. unique, reduce_by_key, join and
the set operations of ra run on sorted input (their param input=sorted: the RA paper's contract, by
key, the set operations by whole tuple; that sort not timed), where DuckDB is handed the same rows
without knowing their order: not equal work, marked and never counted as equal work; and on
unsorted input (input=unsorted: the same relations in random order; the suite's time includes
sorting them, or its `hash` variant runs on them directly), where DuckDB is handed the same
unsorted rows: equal work (issue 29, item 1). A run from before that param has only sorted input
and is named as such. The other operations are equal work.

The report shows the headline as an overview (one row per operation, a column per processor, each
cell the speed-up with transfers first, its interval in brackets) and, folded below it, the details
(one row per operation and processor with the case ids, times and speed-ups with their intervals).
"""
import functools
import math
import statistics
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import caches, plausibility, results
from .config import BENCHMARK_ORDER
from .util import size_text

CPU = "cpu"
DEVICE_BACKENDS = ("cuda", "opencl")  # the accelerator: cuda when it ran, else opencl (never cuda-host)
SUITE_BACKENDS = (CPU,) + DEVICE_BACKENDS

Row = dict[str, Any]  # one result as results.all_rows makes it


def is_device_backend(backend: str) -> bool:
    """cuda, opencl, or opencl-<implementation> (a run with two OpenCL implementations:
    results.separate_implementations)."""
    return backend in DEVICE_BACKENDS or backend.startswith("opencl-")


DB_PEER = "duckdb"  # the end-to-end database peer the speed-ups are quoted against
DB_TABLE = "sql_table"  # its answer materialised in DuckDB: the equal-work variant, compared
DB_NUMPY = "sql"        # its answer transferred to NumPy (fetchnumpy): beside it
DB_VARIANT_TEXT = {DB_TABLE: "DuckDB's answer materialised in DuckDB", DB_NUMPY: "DuckDB's answer transferred to NumPy"}
# The suite's tests that run on input sorted by key (the RA paper's contract; the set operations by
# whole tuple) with that sort not timed, and on unsorted input (issue 29, item 1), as the case's param
# INPUT_PARAM says: 'sorted' (DuckDB is handed the same rows without knowing their order: not equal
# work) or 'unsorted' (the suite's time includes its sort, or a hash variant runs on the rows; DuckDB
# hashes or sorts within its own: equal work). A result without the param (a run from before it) is
# from sorted input, where DuckDB was handed the rows without that contract.
SORTED_INPUT_TESTS = {"ra": ("unique", "reduce_by_key", "join", "set_union", "set_intersection", "set_difference")}
INPUT_PARAM = "input"
SORTED_CONTRACT = "sorted input (suite) vs unsorted (DuckDB)"  # a run from before INPUT_PARAM
SORTED_CASE_CONTRACT = "sorted input, its sort not timed (DuckDB: the same rows, not known sorted)"  # input=sorted
SORTED_ONLY_CONTRACT = "sorted input (its sort not timed)"  # no DuckDB result to compare with
UNSORTED_CONTRACT = "equal work: unsorted input, its sort or hash timed (both sides)"  # input=unsorted
UNSORTED_ONLY_CONTRACT = "unsorted input (its sort or hash timed)"  # no DuckDB result to compare with
EQUAL_CONTRACT = "equal work"
SORTED_MARK = "\u2020"  # a dagger after DuckDB's cell in the overview: the suite's side takes sorted input
PEER_ONLY_PARAMS = ("threads",)  # a peer's own axis, not part of the operation
# ssb's `resident`: a device's own axis. The headline compares the tables crossing the bus
# (resident=no) with the CPU, whose tables are in its memory; resident=yes (data already on the
# device, Crystal's measure) stays in the details, never standing for the operation.
DEVICE_ONLY_PARAMS = ("resident",)
# Parameters that make separate headline operations: TPC-H random vs real tables; ra from sorted vs
# unsorted input (only the unsorted one is equal work with DuckDB, so neither may stand for the other).
SEPARATE_BY = ("data", INPUT_PARAM)
SKIPPED_BENCHMARKS = ("bus",)  # the ceilings, not operations


CONFIDENCE = 0.95   # of every speed-up's interval
MIN_TRIALS = 3      # trials each side needs for an interval
RESAMPLES = 9999    # bootstrap resamples per interval
SEED = 29           # the bootstrap's seed: the same trials give the same interval in every report

Interval = tuple[float, float]
CI_UNAVAILABLE = ""  # why no interval can be computed at all (set by ratio_ci), else ""


def _median_ratio(num: Any, den: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.median(num, axis=axis) / np.median(den, axis=axis)


@functools.lru_cache(maxsize=4096)
def ratio_ci(num: tuple[float, ...], den: tuple[float, ...]) -> Interval | None:
    """The CONFIDENCE interval of median(num) / median(den) (a speed-up: the baseline's times over the
    other's) from scipy's bootstrap: each side resampled on its own, RESAMPLES times, percentile
    interval, seeded (SEED). None when a side has fewer than MIN_TRIALS trials or a bound is not finite."""
    if min(len(num), len(den)) < MIN_TRIALS:
        return None
    # Imported here, not with the module: a report is also made under an interpreter without them
    # (HDB_PYTHON set to a bare system Python, as tests/multinode does); it then says why there is no
    # interval, as it says why there are no figures without matplotlib.
    try:
        import numpy as np
        from scipy import stats
    except ImportError as e:
        global CI_UNAVAILABLE
        CI_UNAVAILABLE = f"{e} in this Python"
        return None

    with np.errstate(divide="ignore", invalid="ignore"):
        res = stats.bootstrap((np.asarray(num), np.asarray(den)), _median_ratio, vectorized=True, paired=False,
                              n_resamples=RESAMPLES, confidence_level=CONFIDENCE, method="percentile",
                              rng=np.random.default_rng(SEED))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None


def trial_times(row: Row, key: str) -> tuple[float, ...]:
    """The seconds of each timed pass behind a median: key kernel_median_s -> the trials' kernel_s,
    total_median_s -> total_s."""
    field = key.removesuffix("_median_s") + "_s"
    return tuple(float(t.get(field, 0.0)) for t in row.get("trials") or ())


@dataclass(frozen=True)
class Speedup:
    """A speed-up (the baseline's median time over the other's) with its interval, and the trial
    counts behind it (baseline, other)."""
    value: float
    ci: Interval | None
    n: tuple[int, int]

    @classmethod
    def of(cls, base: Row, other: Row, key: str) -> "Speedup":
        num, den = trial_times(base, key), trial_times(other, key)
        return cls(base[key] / other[key], ratio_ci(num, den), (len(num), len(den)))

    @property
    def above_one(self) -> bool:
        """The whole interval above 1: faster beyond what the trials' spread explains."""
        return self.ci is not None and self.ci[0] > 1

    def interval_text(self) -> str:
        """'95% CI 11.8-12.9', or why there is none: '95% CI not available: 2 and 5 trials'."""
        if self.ci is None:
            if min(self.n) < MIN_TRIALS:
                return f"{CONFIDENCE:.0%} CI not available: {self.n[0]} and {self.n[1]} trials"
            if CI_UNAVAILABLE:
                return f"{CONFIDENCE:.0%} CI not available: {CI_UNAVAILABLE}"
            return f"{CONFIDENCE:.0%} CI not available"
        return f"{CONFIDENCE:.0%} CI {self.ci[0]:.3g}-{self.ci[1]:.3g}"

    def text(self) -> str:
        """'12.3x (95% CI 11.8-12.9)'."""
        return f"{_x(self.value)} ({self.interval_text()})"

    def brackets(self) -> str:
        """The interval as the overview shows it: '[11.8-12.9]'; '' where a side has fewer than MIN_TRIALS
        trials (the sentence above the overview says why there is none: on every cell of a quick run, it
        took the table past a laptop's width), '[CI n/a]' where none can be computed at all."""
        if self.ci is None:
            return "" if min(self.n) < MIN_TRIALS else "[CI n/a]"
        return f"[{self.ci[0]:.3g}-{self.ci[1]:.3g}]"


def _usable(rows: Iterable[Row]) -> list[Row]:
    """Verified, timed results of real processors (host execution left out), not the ceilings, and
    none with a figure above the physical ceiling of its run (plausibility.py)."""
    return [r for r in plausibility.plausible(results.processor_rows(rows)) if r["status"] == "ok" and r["rank"] == 0
            and r["checked"] and r["verified"]
            and r["kernel_median_s"] and r["total_median_s"] and r["benchmark"] not in SKIPPED_BENCHMARKS
            and r["params"].get("resident", "no") == "no"]


def op_params(row: Row) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in row["params"].items() if k not in PEER_ONLY_PARAMS + DEVICE_ONLY_PARAMS))


class Processor:
    """One backend's device as the headline names it."""

    def __init__(self, backend: str, device: str, kind: str) -> None:
        self.backend, self.device, self.kind = backend, device, kind

    @property
    def short(self) -> str:
        """The name of its column in the overview: 'CPU', the backend ('cuda', 'opencl'), the peer."""
        return "CPU" if self.backend == CPU else self.backend

    @property
    def detail(self) -> str:
        """What its short name leaves out: the CPU and its threads, the device and its type, 'peer'."""
        if self.backend == CPU:
            return self.device
        if is_device_backend(self.backend):
            return self.device + (f" ({self.kind} device)" if self.kind else "")
        return "peer" + (f", {self.device}" if self.device != self.backend else "")

    @property
    def label(self) -> str:
        if self.backend == CPU:
            return f"CPU ({self.device})"
        if is_device_backend(self.backend):
            return f"{self.backend}: {self.device}" + (f" [{self.kind} device]" if self.kind else "")
        return f"{self.backend} (peer)"

    @property
    def is_device(self) -> bool:
        return is_device_backend(self.backend)


def processors(docs: Iterable[Mapping[str, Any]]) -> "OrderedDict[str, Processor]":
    """backend -> Processor, from each document's context (device name and type); host execution
    is no processor."""
    out: OrderedDict[str, Processor] = OrderedDict()
    for d in results.processor_docs(docs):
        b = d["backend"]
        if b in out:
            continue
        ctx = d.get("context", {})
        dev = ctx.get("device", {}) or {}
        if b == CPU:
            name = f"{ctx.get('cpu', '?')}, {ctx.get('threads_used', '?')} threads"
        else:
            name = dev.get("name") or b
        out[b] = Processor(b, name, dev.get("type", "") if is_device_backend(b) else "")
    return out


def device_peers(lines: Iterable["Line"]) -> list[str]:
    """The peers other than DuckDB that ran on an accelerator (CuPy): their results carry PCIe transfers,
    so the headline gives them a kernel-only and a with-transfers figure, as the device backends."""
    out: list[str] = []
    for ln in lines:
        for b, rows in ln.per_backend.items():
            if b in (CPU, DB_PEER) or is_device_backend(b) or b in out:
                continue
            if any(r.get("h2d_median_s") or r.get("d2h_median_s") for r in rows):
                out.append(b)
    return sorted(out)


def accelerator(backends: Iterable[str]) -> str | None:
    """The device backend the headline calls the accelerator: cuda when it ran, else opencl (of
    several OpenCL implementations, the first by name)."""
    backends = list(backends)
    for b in DEVICE_BACKENDS:
        if b in backends:
            return b
    several = sorted(b for b in backends if is_device_backend(b))
    return several[0] if several else None


def stand_in_note(procs: Mapping[str, Processor], ran: Iterable[str]) -> str:
    """A sentence when no GPU ran: which device stands in for the accelerator."""
    ran = list(ran)
    if "cuda" in ran:
        return ""
    acc = accelerator(ran)
    ocl = procs.get(acc) if acc else None
    if ocl:
        n = len([x for x in ran if is_device_backend(x)])
        who = "the OpenCL backend" + ("" if acc == "opencl" else f" ({acc}, the first of {n} implementations)")
        kind = f"a {ocl.kind} device" if ocl.kind else "its device"
        if ocl.kind and ocl.kind != "gpu":
            return (f"No GPU ran here: {who} on {ocl.device} ({kind}) stands in for the accelerator, "
                    "so its 'PCIe' time is a copy within host memory and the speed-ups say how the portable kernels "
                    "do on this processor, not what a GPU would do.")
        return f"No CUDA device ran here: {who} on {ocl.device} ({kind}) is the accelerator."
    return "No device backend ran here: there is no accelerator to compare with."


def _groups(rows: Iterable[Row]) -> "OrderedDict[tuple[Any, ...], OrderedDict[Any, list[Row]]]":
    """(benchmark, test, separating params) -> {op params -> rows}, in the order first seen."""
    out: OrderedDict[tuple[Any, ...], OrderedDict[Any, list[Row]]] = OrderedDict()
    for r in rows:
        sep = tuple((k, r["params"].get(k)) for k in SEPARATE_BY if k in r["params"])
        out.setdefault((r["benchmark"], r["test"], sep), OrderedDict()).setdefault(op_params(r), []).append(r)
    return out


def _backends_by_size(rs: Iterable[Row]) -> dict[int, set[str]]:
    by_size: dict[int, set[str]] = {}
    for r in rs:
        by_size.setdefault(r["size_bytes"], set()).add(r["backend"])
    return by_size


def compared_size(rs: Sequence[Row]) -> int:
    """The size an operation is compared at: the largest at which the CPU and the accelerator both
    ran (beyond the caches when the run went there), else the largest with the most backends."""
    acc = accelerator({r["backend"] for r in rs})
    both = [s for s, b in _backends_by_size(rs).items() if acc and CPU in b and acc in b]
    return max(both) if both else _common_size(rs)


def _common_size(rs: Sequence[Row]) -> int:
    """The largest size at which the most backends have a result."""
    by_size = _backends_by_size(rs)
    most = max(len(v) for v in by_size.values())
    return max(s for s, v in by_size.items() if len(v) == most)


def _pick(variants: Mapping[Any, list[Row]]) -> tuple[Any, list[Row]]:
    """The parameter set of one test the headline shows: most backends, then largest common size,
    then the benchmark's own order."""
    def score(item: tuple[int, tuple[Any, list[Row]]]) -> tuple[int, int, int]:
        i, (_, rs) = item
        return (len({r["backend"] for r in rs}), _common_size(rs), -i)
    _, (params, rs) = max(enumerate(variants.items()), key=score)
    return params, rs


def _best(rs: Sequence[Row], key: str) -> Row:
    """The fastest of some results (at least one) by `key`."""
    return min(rs, key=lambda r: r[key])


def break_even(cpu_rows: Sequence[Row], acc_rows: Sequence[Row]) -> tuple[int | None, str]:
    """The smallest measured size from which the accelerator's best time with transfers stays below
    the best CPU time at every larger measured size: (size or None, text)."""
    sizes = sorted({r["size_bytes"] for r in cpu_rows} & {r["size_bytes"] for r in acc_rows} - {0})
    if not sizes:
        return None, "-"
    wins = []
    for s in sizes:
        c = _best([r for r in cpu_rows if r["size_bytes"] == s], "total_median_s")
        a = _best([r for r in acc_rows if r["size_bytes"] == s], "total_median_s")
        wins.append(a["total_median_s"] < c["total_median_s"])
    if not wins[-1]:
        return None, f"never up to {size_text(sizes[-1])}"
    i = len(wins)
    while i > 0 and wins[i - 1]:
        i -= 1
    if i == 0:
        return sizes[0], f"every size from {size_text(sizes[0])}"
    return sizes[i], f"{size_text(sizes[i])} (slower at {size_text(sizes[i - 1])})"


class Line:
    """One operation: what ran on each processor at the compared size."""

    def __init__(self, bench: str, test: str, params: tuple[tuple[str, Any], ...], size: int,
                 per_backend: "OrderedDict[str, list[Row]]", all_rows: "OrderedDict[str, list[Row]]") -> None:
        self.bench, self.test, self.params, self.size = bench, test, params, size
        self.per_backend = per_backend  # backend -> rows at `size`
        self.all_rows = all_rows        # backend -> rows at every size
        cpu = per_backend.get(CPU, [])
        self.cpu_best = _best(cpu, "total_median_s") if cpu else None
        db = per_backend.get(DB_PEER, [])
        table = [r for r in db if r["variant"] == DB_TABLE]
        numpy = [r for r in db if r["variant"] == DB_NUMPY]
        # The peer's variant compared: sql_table, else (a run from before it) sql, which the text says;
        # a variant of neither name (none is recorded today) as it is.
        self.db_rows = table or numpy or db
        self.db_variant: str | None = self.db_rows[0]["variant"] if self.db_rows else None
        self.db_best = _best(self.db_rows, "total_median_s") if self.db_rows else None
        self.db_numpy_best = _best(numpy, "total_median_s") if numpy else None
        self.acc = accelerator(per_backend)

    @property
    def db_fallback(self) -> bool:
        """DuckDB ran this operation as `sql` only (no `sql_table` result: an older run)."""
        return self.db_variant == DB_NUMPY

    @property
    def input_order(self) -> str:
        """For a test of SORTED_INPUT_TESTS, the order of its input: its param INPUT_PARAM ('sorted' or
        'unsorted'), 'sorted' in a run from before that param; '' for any other test."""
        if self.test not in SORTED_INPUT_TESTS.get(self.bench, ()):
            return ""
        return str(dict(self.params).get(INPUT_PARAM, "sorted"))

    @property
    def sorted_input(self) -> bool:
        """The suite's side takes its input sorted by key, that sort not timed (SORTED_INPUT_TESTS from
        sorted input): never equal work."""
        return self.input_order == "sorted"

    @property
    def before_input_param(self) -> bool:
        """A test of SORTED_INPUT_TESTS from a run without INPUT_PARAM (before issue 29, item 1)."""
        return bool(self.input_order) and INPUT_PARAM not in dict(self.params)

    @property
    def contract(self) -> str:
        """The input contract of the comparison where DuckDB ran: SORTED_CONTRACT (a run from before
        INPUT_PARAM), SORTED_CASE_CONTRACT (input=sorted), UNSORTED_CONTRACT (input=unsorted) or
        EQUAL_CONTRACT; where it did not: SORTED_ONLY_CONTRACT, UNSORTED_ONLY_CONTRACT or ''."""
        if self.sorted_input:
            if not self.db_best:
                return SORTED_ONLY_CONTRACT
            return SORTED_CONTRACT if self.before_input_param else SORTED_CASE_CONTRACT
        if self.input_order == "unsorted":
            return UNSORTED_CONTRACT if self.db_best else UNSORTED_ONLY_CONTRACT
        return EQUAL_CONTRACT if self.db_best else ""

    def rows_of(self, b: str) -> list[Row]:
        """A processor's rows at the compared size; DuckDB's of its compared variant only."""
        return self.db_rows if b == DB_PEER else self.per_backend[b]

    @property
    def params_text(self) -> str:
        """'[dist=uniform,selectivity=0.5]', or '' for a test without parameters."""
        p = ",".join(f"{k}={results.value_text(v)}" for k, v in self.params)
        return f"[{p}]" if p else ""

    @property
    def name(self) -> str:
        return f"{self.bench} {self.test}" + (f" {self.params_text}" if self.params else "")

    def speedup(self, r: Row, key: str) -> float | None:
        return self.cpu_best[key] / r[key] if self.cpu_best else None

    def speedup_ci(self, r: Row, key: str) -> Speedup | None:
        """speedup() with its interval from the trials of the best CPU case and of r."""
        return Speedup.of(self.cpu_best, r, key) if self.cpu_best else None

    def acc_speedup_ci(self, key: str) -> Speedup | None:
        """acc_speedup() with its interval."""
        return self.speedup_ci(_best(self.per_backend[self.acc], key), key) if self.acc else None

    def backend_speedup(self, backend: str, key: str) -> float | None:
        """A processor's best case by `key` over the best CPU (None where it did not run this operation)."""
        rows = self.per_backend.get(backend)
        return self.speedup(_best(rows, key), key) if rows else None

    def acc_speedup(self, key: str) -> float | None:
        """The accelerator's best case by `key` (kernel_median_s, total_median_s) over the best CPU."""
        return self.backend_speedup(self.acc, key) if self.acc else None

    def over_db(self, r: Row) -> float | None:
        """The peer's best time (its compared variant: `sql_table`, else `sql`) over r's."""
        return self.db_best["total_median_s"] / r["total_median_s"] if self.db_best else None

    def over_db_ci(self, r: Row) -> Speedup | None:
        """over_db() with its interval from the trials of the peer's best case and of r."""
        return Speedup.of(self.db_best, r, "total_median_s") if self.db_best else None

    def over_db_numpy(self, r: Row) -> float | None:
        """The peer's best time with its answer transferred to NumPy (`sql`) over r's."""
        return self.db_numpy_best["total_median_s"] / r["total_median_s"] if self.db_numpy_best else None

    def over_db_numpy_ci(self, r: Row) -> Speedup | None:
        """over_db_numpy() with its interval."""
        return Speedup.of(self.db_numpy_best, r, "total_median_s") if self.db_numpy_best else None

    def break_even(self) -> tuple[int | None, str]:
        if not self.acc or CPU not in self.all_rows:
            return None, "-"
        return break_even(self.all_rows[CPU], self.all_rows[self.acc])


def lines(rows: Iterable[Row]) -> list[Line]:
    """One Line per headline operation, in benchmark order."""
    out = []
    for (bench, test, _), variants in _groups(_usable(rows)).items():
        _, rs = _pick(variants)
        params = tuple((k, v) for k, v in rs[0]["params"].items() if k not in PEER_ONLY_PARAMS + DEVICE_ONLY_PARAMS)
        size = compared_size(rs)
        per: OrderedDict[str, list[Row]] = OrderedDict()
        every: OrderedDict[str, list[Row]] = OrderedDict()
        for r in rs:
            every.setdefault(r["backend"], []).append(r)
            if r["size_bytes"] == size:
                per.setdefault(r["backend"], []).append(r)
        order = [b for b in SUITE_BACKENDS if b in per] + [b for b in per if b not in SUITE_BACKENDS]
        out.append(Line(bench, test, params, size, OrderedDict((b, per[b]) for b in order), every))
    rank = {b: i for i, b in enumerate(BENCHMARK_ORDER)}
    return sorted(out, key=lambda ln: rank.get(ln.bench, len(rank)))  # stable: tests keep their order


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}x"


@dataclass(frozen=True)
class Cell:
    """A table cell that carries more than its text: a note after it (smaller in the HTML report),
    a title (the HTML report shows it on hover; details the Markdown report has elsewhere) and
    whether the text is the figure to read first (bold in the HTML report)."""
    text: str
    note: str = ""
    title: str = ""
    strong: bool = False

    def __str__(self) -> str:
        return self.text + (f" {self.note}" if self.note else "")


def _ms_text(s: float) -> str:
    return f"{s * 1e3:.4g}"


def columns(ls: Iterable[Line]) -> list[str]:
    """The processors of the overview, one column each: the CPU, the device backends, the peers."""
    seen: list[str] = []
    for ln in ls:
        seen += [b for b in ln.per_backend if b not in seen]
    return [b for b in SUITE_BACKENDS if b in seen] + [b for b in seen if b not in SUITE_BACKENDS and
                                                       is_device_backend(b)] \
        + [b for b in seen if b not in SUITE_BACKENDS and not is_device_backend(b)]


def _processor(procs: Mapping[str, Processor], b: str) -> Processor:
    return procs.get(b) or Processor(b, b, "")


def _cases(ln: Line, b: str, rows: Sequence[Row] | None = None) -> tuple[Row, Row]:
    """The best case of a processor (of `rows` where given) kernel-only and with its transfers; DuckDB's
    of its compared variant."""
    rs = ln.rows_of(b) if rows is None else rows
    return _best(rs, "kernel_median_s"), _best(rs, "total_median_s")


def _variant_text(v: str) -> str:
    """'sql_table: DuckDB's answer materialised in DuckDB'."""
    return f"{v}: {DB_VARIANT_TEXT[v]}" if v in DB_VARIANT_TEXT else v


def _db_title(ln: Line, r: Row) -> list[str]:
    """The lines a cell's title has on DuckDB beside processor r: the variant compared, with NumPy
    beside it, the input contract."""
    out = []
    db, numpy = ln.over_db_ci(r), ln.over_db_numpy_ci(r)
    if db and ln.db_variant:
        out.append(f"vs {DB_PEER} ({_variant_text(ln.db_variant)}): {db.text()}")
    if numpy and not ln.db_fallback:
        out.append(f"vs {DB_PEER} +NumPy ({DB_NUMPY}): {numpy.text()}")
    if ln.db_best:
        out.append(f"input: {ln.contract}")
    return out


def _cell(ln: Line, b: str, p: Processor) -> Cell:
    """One processor on one operation: the speed-up with transfers over the best CPU first, then
    kernel-only where that differs (a peer has no transfers); the CPU (the baseline), or a processor
    of an operation the CPU did not run, by its time. The case ids and times on hover."""
    if b not in ln.per_backend:
        return Cell("-", title=f"{p.label}: no verified result of {ln.name} at this size")
    k, t = _cases(ln, b)
    title = [p.label, f"best kernel-only: {k['id']}, {_ms_text(k['kernel_median_s'])} ms",
             f"best with PCIe: {'the same case' if t is k else t['id']}, {_ms_text(t['total_median_s'])} ms"]
    with_pcie, kernel = ln.speedup_ci(t, "total_median_s"), ln.speedup_ci(k, "kernel_median_s")
    if b != CPU and with_pcie and kernel:
        title += [f"speed-up with PCIe: {with_pcie.text()}", f"speed-up kernel-only: {kernel.text()}"]
    if b != DB_PEER:
        title += _db_title(ln, t)
    else:
        title.insert(1, f"variant {_variant_text(ln.db_variant or '?')}")
        if ln.db_numpy_best and not ln.db_fallback:
            n = ln.db_numpy_best
            title.append(f"+NumPy ({DB_NUMPY}): {n['id']}, {_ms_text(n['total_median_s'])} ms"
                         + (f", speed-up {s.text()}" if (s := ln.speedup_ci(n, "total_median_s")) else ""))
        title.append(f"input: {ln.contract}")
    if b == CPU:
        return Cell(f"{_ms_text(t['total_median_s'])} ms", title="\n".join(title), strong=True)
    if with_pcie is None or kernel is None:
        return Cell(f"{_ms_text(t['total_median_s'])} ms", f"(kernel {_ms_text(k['kernel_median_s'])} ms)",
                    "\n".join(title), True)
    # The interval of the figure read first only, and kernel-only where it differs; a peer's kernel time
    # is its time less the fetch of its answer, not a device's without transfers: in its title. Every
    # interval is in the title and the details (four processors with both intervals took 1540 px).
    note = with_pcie.brackets()
    if b != DB_PEER and _x(kernel.value) != _x(with_pcie.value):
        note = f"{note} (kernel {_x(kernel.value)})".strip()
    if b == DB_PEER:
        # sql's figure beside sql_table's is in the title and the details: in the note it took the overview
        # past the page's width (1366 px, four processors); a figure of sql alone says so
        if ln.db_fallback:
            note += " (+NumPy)"
        if ln.sorted_input:
            note += f" {SORTED_MARK}"  # db_column_note says what it means; the title and the details in words
    return Cell(_x(with_pcie.value), note, "\n".join(title), True)


def _header(ls: Sequence[Line], b: str, p: Processor) -> Cell:
    """A processor's column head: its short name, its full name on hover; the CPU is the baseline,
    DuckDB's column names the variant it compares."""
    if b == CPU:
        return Cell(p.short, "(baseline)", p.label)
    if b != DB_PEER:
        return Cell(p.short, title=p.label)
    variants = {ln.db_variant for ln in ls if ln.db_variant}
    title = [p.label]
    if DB_TABLE in variants:
        title += [f"{DB_TABLE}: {DB_VARIANT_TEXT[DB_TABLE]}",
                  f"+NumPy (each cell's title): {DB_NUMPY}, {DB_VARIANT_TEXT[DB_NUMPY]}"]
    if DB_NUMPY in variants:
        title.append(f"(+NumPy) after a figure: {DB_NUMPY} only, {DB_VARIANT_TEXT[DB_NUMPY]}")
    return Cell(p.short, f"({'/'.join(v for v in (DB_TABLE, DB_NUMPY) if v in variants)})" if variants else "",
                "\n".join(title))


def telling_keys(ls: Iterable[Line]) -> dict[tuple[str, str], list[str]]:
    """Per test (bench, test) of `ls`: the parameters that tell its operations apart."""
    by_test: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for o in ls:
        by_test.setdefault((o.bench, o.test), []).append(dict(o.params))
    return {t: results.differing_keys(ps) for t, ps in by_test.items()}


def telling_params(ln: Line, ls: Sequence[Line], keys: Mapping[tuple[str, str], list[str]] | None = None) -> str:
    """'[input=sorted]': the parameters that tell this operation from the others of its test in the
    overview (its full name, in the details table and the cell's title, has them all; so the overview
    fits a laptop's width). `keys`: telling_keys(ls), where the caller has it (the overview reckons it
    once for all its rows)."""
    differ = (telling_keys(ls) if keys is None else keys).get((ln.bench, ln.test), [])
    mine = dict(ln.params)
    shown = [k for k in mine if k in differ]
    return "[" + ",".join(f"{k}={results.value_text(mine[k])}" for k in shown) + "]" if shown else ""


def overview(ls: Sequence[Line], procs: Mapping[str, Processor]) -> tuple[list[Cell], list[list[Cell]]]:
    """Header and rows of the headline's overview: one row per operation, its size, a column per
    processor (named short, its full name on hover and in processor_note), the break-even size."""
    bs = columns(ls)
    accs = sorted({ln.acc for ln in ls if ln.acc})
    header = [Cell("operation"), Cell("size", title="the input size compared (TPC-H on real tables: its tables)")] \
        + [_header(ls, b, _processor(procs, b)) for b in bs] \
        + [Cell("break-even size", f"({accs[0]})" if len(accs) == 1 else "(accelerator)",
                "the accelerator, transfers included, against the best CPU implementation")]
    out = []
    keys = telling_keys(ls)
    for ln in ls:
        be = ln.break_even()[1]
        out.append([Cell(f"{ln.bench} {ln.test}", telling_params(ln, ls, keys), ln.name),
                    Cell(size_text(ln.size) if ln.size else "its tables")]
                   + [_cell(ln, b, _processor(procs, b)) for b in bs]
                   + [Cell(be, title=f"{ln.acc}: {be}" if ln.acc else "no accelerator ran this operation")])
    return header, out


def db_column_note(ls: Sequence[Line]) -> str:
    """What the overview's DuckDB column compares, where it has one; '' without."""
    variants = {ln.db_variant for ln in ls if ln.db_variant}
    if not variants:
        return ""
    parts = []
    if DB_TABLE in variants:
        parts.append(f"{DB_VARIANT_TEXT[DB_TABLE]} (`{DB_TABLE}`) as a speed-up over the best CPU implementation; "
                     f"{DB_VARIANT_TEXT[DB_NUMPY]} (`{DB_NUMPY}`) is in its title and in the details (+NumPy)")
    if DB_NUMPY in variants:
        parts.append(f"'+NumPy' marks an operation with no `{DB_TABLE}` result: its `{DB_NUMPY}` figure, the transfer "
                     "to NumPy included")
    if any(ln.sorted_input and ln.before_input_param and ln.db_variant for ln in ls):
        parts.append(f"{SORTED_MARK} marks an operation the suite runs on input already sorted by key, that sort not "
                     f"timed, where DuckDB is handed the rows without that order: {SORTED_CONTRACT}, not equal work")
    if any(ln.sorted_input and not ln.before_input_param and ln.db_variant for ln in ls):
        parts.append(f"{SORTED_MARK} marks an operation from sorted input ({INPUT_PARAM}=sorted), that sort not timed "
                     f"on the suite's side, where DuckDB is handed the same rows without knowing their order: "
                     f"{SORTED_CASE_CONTRACT}, not equal work (from unsorted input, {INPUT_PARAM}=unsorted, it is)")
    return f"In the {DB_PEER} column: " + "; ".join(parts) + "."


def processor_note(ls: Sequence[Line], procs: Mapping[str, Processor]) -> str:
    """What the overview's columns name: 'Processors: CPU: fixture CPU, 2 threads; cuda: ...'."""
    return "Processors: " + "; ".join(f"{p.short}: {p.detail}" for p in (_processor(procs, b) for b in columns(ls))) \
        + "."


def table(ls: Sequence[Line], procs: Mapping[str, Processor]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the headline's details: one row per operation and processor, the case ids
    and times the overview's speed-ups come from, and every speed-up with its interval."""
    header = ["operation", "processor", "best kernel-only (case id)", "kernel ms", "best with PCIe (case id)",
              "with-PCIe ms", "speed-up with PCIe", "speed-up kernel-only", f"vs {DB_PEER}", f"{DB_PEER} variant",
              f"vs {DB_PEER} (+NumPy)", "input contract"]
    out = []
    for ln in ls:
        variant = f"{ln.db_variant} (no {DB_TABLE} result)" if ln.db_fallback else ln.db_variant or "-"
        for b in ln.per_backend:
            # DuckDB: a row for its compared variant, and one for sql (+NumPy) beside it
            shown = [(_processor(procs, b).short, ln.rows_of(b), variant)]
            if b == DB_PEER and ln.db_numpy_best and not ln.db_fallback:
                shown.append((f"{_processor(procs, b).short} +NumPy",
                              [r for r in ln.per_backend[b] if r["variant"] == DB_NUMPY], DB_NUMPY))
            for name, rs, compared in shown:
                k, t = _cases(ln, b, rs)
                with_pcie, kernel = ln.speedup_ci(t, "total_median_s"), ln.speedup_ci(k, "kernel_median_s")
                db = ln.over_db_ci(t) if b != DB_PEER else None
                numpy = ln.over_db_numpy_ci(t) if b != DB_PEER and not ln.db_fallback else None
                out.append([ln.name, name, k["id"], _ms_text(k["kernel_median_s"]),
                            "same" if t is k else t["id"], _ms_text(t["total_median_s"]),
                            with_pcie.text() if with_pcie and b != CPU else "-",
                            kernel.text() if kernel and b != CPU else "-", db.text() if db else "-", compared,
                            numpy.text() if numpy else "-", ln.contract or "-"])
    return header, out


# Benchmarks whose operations are the parts of one workload (a query set): the headline adds per
# processor the geometric mean of its best time over the workload's operations (SSB's 13 queries).
GEOMEAN_BENCHMARKS = ("ssb",)


# headline.csv / headline.json (scripts/report): one record per operation and processor, the decision
# numbers of the overview with their intervals, for pandas, DuckDB or a spreadsheet. A figure that does
# not apply (a speed-up of the CPU baseline itself, an interval with too few trials) is empty / null.
RECORD_FIELDS = ("benchmark", "operation", "params", "size_bytes", "processor", "device", "baseline", "case_id",
                 "total_s", "kernel_s", "speedup_total", "speedup_total_ci_low", "speedup_total_ci_high",
                 "speedup_kernel", "speedup_kernel_ci_low", "speedup_kernel_ci_high", "over_duckdb",
                 "over_duckdb_ci_low", "over_duckdb_ci_high", "break_even_bytes", "contract", "equal_work")


def records(ls: Sequence[Line], procs: Mapping[str, Processor]) -> list[dict[str, Any]]:
    """The headline as data: per operation (Line) and processor that ran it, its fastest verified case
    (by time with transfers) and its speed-ups over the best CPU implementation, with transfers and
    kernel-only, each with its CONFIDENCE interval; over DuckDB where it ran; the break-even size on the
    accelerator's record; the input contract and whether the comparison with DuckDB is equal work."""
    out: list[dict[str, Any]] = []
    for ln in ls:
        be = ln.break_even()[0]
        for b in ln.per_backend:
            rs = ln.rows_of(b)
            if not rs:
                continue
            best = _best(rs, "total_median_s")
            p = procs.get(b)
            rec: dict[str, Any] = {
                "benchmark": ln.bench, "operation": ln.test, "params": ln.params_text.strip("[]"),
                "size_bytes": ln.size, "processor": b, "device": p.detail if p else "",
                "baseline": b == CPU, "case_id": best["id"], "total_s": best["total_median_s"],
                "kernel_s": best["kernel_median_s"] or None}
            for name, key in (("speedup_total", "total_median_s"), ("speedup_kernel", "kernel_median_s")):
                fastest = _best(rs, key)
                sp = ln.speedup_ci(fastest, key) if b != CPU and fastest[key] else None
                rec[name] = sp.value if sp else None
                rec[name + "_ci_low"], rec[name + "_ci_high"] = sp.ci if sp and sp.ci else (None, None)
            od = ln.over_db_ci(best) if b != DB_PEER else None
            rec["over_duckdb"] = od.value if od else None
            rec["over_duckdb_ci_low"], rec["over_duckdb_ci_high"] = od.ci if od and od.ci else (None, None)
            rec["break_even_bytes"] = be if b == ln.acc else None
            rec["contract"] = ln.contract
            rec["equal_work"] = ln.contract == EQUAL_CONTRACT
            out.append(rec)
    return out


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def geomean_table(ls: Sequence[Line], procs: Mapping[str, Processor]) -> tuple[list[str], list[list[str]]]:
    """Per benchmark of GEOMEAN_BENCHMARKS and processor (the overview's columns): the geometric mean of
    its best time with transfers over the operations it ran (DuckDB: its compared variant, and +NumPy in
    a row of its own), how many of the benchmark's operations that is, and the geometric mean of the
    speed-up over the best CPU implementation over the operations both ran (the geometric mean of
    ratios, so one slow query weighs no more than one fast one). No rows without such a benchmark."""
    header = ["benchmark", "processor", "operations", "geometric mean ms", "geometric mean speed-up over the CPU"]
    out = []
    for bench in GEOMEAN_BENCHMARKS:
        bl = [ln for ln in ls if ln.bench == bench]
        if not bl:
            continue
        for b in columns(bl):
            # (name, rows of each line): DuckDB's compared variant, and sql (+NumPy) in a row of its own
            shown = [(_processor(procs, b).short, [ln.rows_of(b) if b in ln.per_backend else [] for ln in bl])]
            if b == DB_PEER and any(ln.db_numpy_best and not ln.db_fallback for ln in bl):
                shown.append((f"{_processor(procs, b).short} +NumPy",
                               [[r for r in ln.per_backend.get(DB_PEER, []) if r["variant"] == DB_NUMPY] for ln in bl]))
            for name, per_line in shown:
                best = [(ln, _best(rs, "total_median_s")) for ln, rs in zip(bl, per_line, strict=True) if rs]
                if not best:
                    continue
                secs = _geomean([r["total_median_s"] for _, r in best])
                ups = [ln.cpu_best["total_median_s"] / r["total_median_s"] for ln, r in best if ln.cpu_best]
                up = "baseline" if b == CPU else (f"{_x(_geomean(ups))} over {len(ups)}" if ups else "-")
                out.append([bench, name, f"{len(best)} of {len(bl)}", _ms_text(secs), up])
    return header, out


VERDICT_HEADER = ["processor", "operations", "faster, with transfers", "faster, kernel only", "geo-mean speed-up",
                  "kernel only", "% of its ceiling"]


def verdict(ls: Sequence[Line], procs: Mapping[str, Processor]) -> tuple[list[str], list[list[Cell]]]:
    """The report's first table: per processor of the overview, on how many of the operations it shares
    with the CPU it beats the best CPU implementation (transfers counted, and kernel only; in the note
    how many with the whole interval of the speed-up above 1), the geometric mean of those speed-ups,
    and the median % of its ceiling of its fastest cases (each against the measured ceiling of its
    access pattern, or the copy's: the row's ceiling_pattern; where its results have one: a peer's
    have none). The CPU's row is the baseline."""
    rows = []
    for b in columns(ls):
        mine = [ln for ln in ls if b in ln.per_backend]
        p = _processor(procs, b)
        pcts = [r["pct_of_peak"] for ln in mine if (r := _best(ln.rows_of(b), "total_median_s"))["pct_of_peak"]]
        pct = Cell(f"{statistics.median(pcts):.0f} %", f"of {len(pcts)}") if pcts else Cell("-")
        if b == CPU:
            rows.append([Cell(p.short, "(baseline)", p.label), Cell(str(len(mine))), Cell("baseline"), Cell("-"),
                         Cell("1x"), Cell("-"), pct])
            continue
        both = [ln for ln in mine if ln.cpu_best]
        cells = [Cell(p.short, title=p.label), Cell(str(len(mine)))]
        ups: dict[str, list[float]] = {}
        for key in ("total_median_s", "kernel_median_s"):
            sp = [s for ln in both if (r := _best(ln.rows_of(b), key))[key] and (s := ln.speedup_ci(r, key))]
            ups[key] = [s.value for s in sp]
            wins, sure = sum(s.value > 1 for s in sp), sum(s.above_one for s in sp)
            cells.append(Cell(f"{wins} of {len(sp)}", f"({sure} sure)", strong=key == "total_median_s")
                         if sp else Cell("-"))
        cells += [Cell(_x(_geomean(ups[k])), strong=k == "total_median_s") if ups[k] else Cell("-")
                  for k in ("total_median_s", "kernel_median_s")]
        rows.append(cells + [pct])
    return VERDICT_HEADER, rows


def verdict_sentence(ls: Sequence[Line], procs: Mapping[str, Processor]) -> str:
    """The verdict in a sentence, with what the verdict table's columns mean."""
    with_acc = [ln for ln in ls if ln.acc and ln.cpu_best]
    cols = ("Per processor below: on how many operations it is faster than the best CPU implementation "
            f"('sure': the whole {CONFIDENCE:.0%} interval of the speed-up above 1), the geometric mean of its "
            "speed-ups, and the median % of its ceiling (the measured ceiling of each case's access pattern, or "
            "the copy's) its fastest cases reach.")
    if not with_acc:
        return "No accelerator ran an operation the CPU ran: nothing here says whether one pays off. " + cols
    acc = with_acc[0].acc or ""
    p = _processor(procs, acc)
    total = [s.value for ln in with_acc if (s := ln.acc_speedup_ci("total_median_s"))]
    wins = sum(v > 1 for v in total)
    stand_in = bool(p.kind) and p.kind != "gpu"  # OpenCL on a CPU device
    who = f"{p.short} ({p.device}" + (f", a {p.kind} device standing in for a GPU)" if stand_in else ")")
    return (f"{who} is faster than the best CPU implementation on {wins} of {len(with_acc)} operations, its "
            f"transfers counted: geometric-mean speed-up {_x(_geomean(total)) if total else '-'}. " + cols)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _faster(ls: Sequence[Line], best: str) -> tuple[int, int]:
    """(operations on which the best CPU implementation is faster than DuckDB's best of the variant
    `best` names (db_best, db_numpy_best), those with the whole interval of the speed-up above 1)."""
    faster = sure = 0
    for ln in ls:
        db = getattr(ln, best)
        if ln.cpu_best and db:
            faster += ln.cpu_best["total_median_s"] < db["total_median_s"]
            sure += Speedup.of(db, ln.cpu_best, "total_median_s").above_one
    return faster, sure


def _equal_work_clause(ls: Sequence[Line], best: str) -> str:
    """'; on the 7 operations of equal work, faster on 6 of 7 (5 with the whole interval above 1)', or ''
    where every operation is equal work (or none is)."""
    equal = [ln for ln in ls if not ln.sorted_input]
    if len(equal) == len(ls) or not equal:
        return ""
    f, s = _faster(equal, best)
    return (f"; on the {len(equal)} operation{'' if len(equal) == 1 else 's'} of equal work, faster on {f} of "
            f"{len(equal)} ({s} with the whole interval above 1)")


def db_sentences(ls: Sequence[Line]) -> list[str]:
    """The sentences on DuckDB: the best CPU implementation against its answer materialised in DuckDB
    (`sql_table`, the equal-work variant), then against its answer transferred to NumPy (`sql`); a run
    without `sql_table` (older) compares `sql` and says so; what the input contracts mean for the counts
    (_input_sentences)."""
    with_db = [ln for ln in ls if ln.db_best and ln.cpu_best]
    if not with_db:
        return [f"No {DB_PEER} results in this run: no {DB_PEER} column, and no speed-up over it."] if ls else []
    out = []
    table = [ln for ln in with_db if ln.db_variant == DB_TABLE]
    numpy = [ln for ln in ls if ln.db_numpy_best and ln.cpu_best]
    alike = "same data, same size, answers verified alike"
    if table:
        f, s = _faster(table, "db_best")
        out.append(f"The suite's best CPU implementation is faster than {DB_PEER} on {f} of {len(table)} operations "
                   f"{DB_PEER} ran ({DB_VARIANT_TEXT[DB_TABLE]}, `{DB_TABLE}`; {alike}); with the whole "
                   f"{CONFIDENCE:.0%} confidence interval above 1, on {s}{_equal_work_clause(table, 'db_best')}.")
        if numpy:
            f, s = _faster(numpy, "db_numpy_best")
            out.append(f"With {DB_VARIANT_TEXT[DB_NUMPY]} (`{DB_NUMPY}`: the query and fetchnumpy()), faster on {f} of "
                       f"{len(numpy)}; with the whole interval above 1, on {s}"
                       f"{_equal_work_clause(numpy, 'db_numpy_best')}.")
        only = [ln for ln in with_db if ln.db_fallback]
        if only:
            out.append(f"{DB_PEER} ran {_and([ln.name for ln in only])} without `{DB_TABLE}`: "
                       f"{'that operation is' if len(only) == 1 else 'those operations are'} counted with NumPy only.")
    elif numpy:
        f, s = _faster(numpy, "db_numpy_best")
        out.append(f"The suite's best CPU implementation is faster than {DB_PEER} on {f} of {len(numpy)} operations "
                   f"{DB_PEER} ran, with {DB_VARIANT_TEXT[DB_NUMPY]} (`{DB_NUMPY}`: the query and fetchnumpy(); "
                   f"{alike}); with the whole {CONFIDENCE:.0%} confidence interval above 1, on {s}"
                   f"{_equal_work_clause(numpy, 'db_numpy_best')}.")
        out.append(f"This run has no `{DB_TABLE}` results ({DB_VARIANT_TEXT[DB_TABLE]}, the equal-work variant, which "
                   f"the peer records since issue 29): on {DB_PEER}'s side the comparison includes the transfer to "
                   "NumPy.")
    out += _input_sentences(with_db)
    return out


def _input_sentences(with_db: Sequence[Line]) -> list[str]:
    """What the input contracts of the operations DuckDB ran mean for the counts: the operations from
    sorted input are not equal work (a run from before INPUT_PARAM: all of SORTED_INPUT_TESTS), those
    from unsorted input are."""
    def tests(ls: Sequence[Line]) -> str:
        return _and(list(dict.fromkeys(ln.test for ln in ls)))

    out = []
    before = [ln for ln in with_db if ln.sorted_input and ln.before_input_param]
    if before:
        out.append(f"Not equal work on {len(before)} of the {len(with_db)} ({tests(before)}): the suite's side "
                   "takes its input already sorted by key (the RA paper's contract) and its time excludes that sort, "
                   f"while {DB_PEER} is handed the rows without that contract and hashes or sorts them within its "
                   f"time ('{SORTED_CONTRACT}' in the details, {SORTED_MARK} in the overview); this run is from "
                   "before the suite's cases from unsorted input (issue 29, item 1), which are equal work.")
    new = [ln for ln in with_db if ln.sorted_input and not ln.before_input_param]
    if new:
        out.append(f"From sorted input ({INPUT_PARAM}=sorted), {len(new)} of the {len(with_db)} ({tests(new)}) are "
                   "not equal work and not counted as such: the suite's side takes its input already sorted (the RA "
                   "paper's contract: by key, the set operations by whole tuple) and its time excludes that sort, "
                   f"while {DB_PEER} is handed the same rows without knowing their order and hashes or sorts them "
                   f"within its time ('{SORTED_CASE_CONTRACT}' in the details, {SORTED_MARK} in the overview).")
    unsorted = [ln for ln in with_db if ln.input_order == "unsorted"]
    if unsorted:
        out.append(f"From unsorted input ({INPUT_PARAM}=unsorted), {len(unsorted)} of the {len(with_db)} "
                   f"({tests(unsorted)}) are equal work: both sides are handed the same rows in random order, the "
                   "suite's time includes sorting them (phase input_sort) or its hash variant runs on them, and "
                   f"{DB_PEER} hashes or sorts them within its time ('{UNSORTED_CONTRACT}' in the details).")
    return out


def summary(ls: Sequence[Line], procs: Mapping[str, Processor], docs: Iterable[Mapping[str, Any]],
            beyond_caches: Mapping[str, Any] | None = None) -> list[str]:
    """The sentences above the table: the answer in numbers, what stands in, what was compared.
    beyond_caches: run.json's record of the sizes beyond the caches (caches.read_record), where the
    run has one: the cache it names is the one the sizes are counted against (else the largest
    context.llc_bytes), and its note follows."""
    ran = {b for ln in ls for b in ln.per_backend}
    out = []
    note = stand_in_note(procs, ran)
    if note:
        out.append(note)
    with_acc = [ln for ln in ls if ln.acc and ln.cpu_best]
    if with_acc:
        acc = with_acc[0].acc
        k = sum(1 for ln in with_acc if (ln.acc_speedup("kernel_median_s") or 0) > 1)
        t = sum(1 for ln in with_acc if (ln.acc_speedup("total_median_s") or 0) > 1)
        k_sure = sum(1 for ln in with_acc if (s := ln.acc_speedup_ci("kernel_median_s")) and s.above_one)
        t_sure = sum(1 for ln in with_acc if (s := ln.acc_speedup_ci("total_median_s")) and s.above_one)
        out.append(f"The accelerator ({acc}) beats the best CPU implementation on {k} of {len(with_acc)} operations "
                   f"kernel-only and on {t} of {len(with_acc)} with its PCIe transfers counted; with the whole "
                   f"{CONFIDENCE:.0%} confidence interval of the speed-up above 1, on {k_sure} and {t_sure}.")
    out += db_sentences(ls)
    with_db = [ln for ln in ls if ln.db_best and ln.cpu_best]
    if with_acc or with_db:
        out.append(f"In brackets after each speed-up: its {CONFIDENCE:.0%} confidence interval from the trials of "
                   f"both sides (a bootstrap of the ratio of the medians; not available, and no brackets, where a "
                   f"side has fewer than {MIN_TRIALS} trials: docs/statistics.md).")
    docs = list(docs)
    benches = {ln.bench for ln in ls}
    try:
        cache, label = caches.host_cache(beyond_caches or {}, benches)
        cache_note = caches.headline_note(beyond_caches, benches)
    except (KeyError, TypeError, ValueError, AttributeError):  # a run.json edited by hand: as without it
        cache, label, cache_note = 0, "", ""
    if not cache:
        llc = max((d.get("context", {}).get("llc_bytes") or 0 for d in docs), default=0)
        cache, label = llc, f"{size_text(llc)} last-level cache"
    sized = [ln for ln in ls if ln.size > 0]  # size 0: whole tables at a scale factor (ssb), no size sweep
    # Each processor against its own cache: the CPU's side against the host's LLC, a GPU's against
    # its L2 (a 300M host LLC says nothing of kernels whose cache is a 60M L2).
    counts = [(cache, label, sized)] if cache else []
    for acc in dict.fromkeys(ln.acc for ln in sized if ln.acc):
        l2, l2_label = device_cache(acc, docs, beyond_caches or {}, benches)
        if l2 and l2 != cache:
            counts.append((l2, l2_label, [ln for ln in sized if ln.acc == acc]))
    if counts and sized:
        unsized = [ln for ln in ls if ln.size <= 0]
        table_benches = ", ".join(sorted({ln.bench for ln in unsized}))
        if cache and len(counts) > 1:
            counts[0] = (cache, f"CPU's {label}", sized)
        clauses = [f"{sum(1 for ln in lines if ln.size > n)} of {len(lines)}"
                   + (" operations at a size" if i == 0 else "") + f" beyond the {text}"
                   for i, (n, text, lines) in enumerate(counts)]
        out.append("Compared at the largest size the CPU and the accelerator both ran: " + _and(clauses)
                   + f" (memory-bound), the others within {'it' if len(counts) == 1 else 'them'}"
                   + (f"; {len(unsized)} more ({table_benches}) ran on whole tables at a scale factor, in neither "
                      "count." if unsized else "."))
    if cache_note and ls:
        out.append(cache_note)
    return out


def device_cache(acc: str, docs: Iterable[Mapping[str, Any]], beyond_caches: Mapping[str, Any],
                 benches: Iterable[str]) -> tuple[int, str]:
    """(bytes, '60M cuda L2') of the L2 of the GPU the accelerator `acc` ran on: its documents'
    context (plausibility.cache_bytes), else the run's probe of it (beyond_caches' devices), else the
    L2 the benchmarks were sized against; (0, '') for a device on the CPU (its cache is the host's)
    or where unknown."""
    mine = [d for d in docs if d.get("backend") == acc]
    if not mine or any(((d.get("context") or {}).get("device") or {}).get("type") == "cpu" for d in mine):
        return 0, ""
    l2 = max((plausibility.cache_bytes(dict(d)) for d in mine), default=(0, ""))
    if l2[0] and l2[1] == "L2":
        return l2[0], caches.cache_label(f"{acc} L2", l2[0])
    try:
        probed = max((int(d["l2_bytes"]) for d in beyond_caches.get("devices") or []
                      if d.get("backend") == acc and d.get("l2_bytes") and caches.is_gpu(d)), default=0)
        if probed:
            return probed, caches.cache_label(f"{acc} L2", probed)
        return caches.largest_cache({"benchmarks": {b: e for b, e in (beyond_caches.get("benchmarks") or {}).items()
                                                    if e.get("cache", {}).get("what") == f"{acc} L2"}}, benches)
    except (KeyError, TypeError, ValueError, AttributeError):  # a run.json edited by hand: as without it
        return 0, ""


TEXT_PEER = "pg_trgm"  # the n-gram peer: other semantics (word_similarity), so a table of its own


def _fmt(v: Any, f: str = "{:.3g}") -> str:
    return "-" if not isinstance(v, (int, float)) else f.format(v)


def text_peer_table(rows: Iterable[Row]) -> tuple[list[str], list[list[str]]]:
    """pg_trgm beside nsearch (docs/peers.md): per verified pg_trgm search case, at the same size and
    error level k, the per-query median of pg_trgm and of the suite's fastest CPU search variant
    (extra.query_median_s), hits per query of both and the overlap of the hit sets. A pass of
    pg_trgm is fewer queries than one of nsearch, so only per-query times are compared."""
    ok = [r for r in _usable(rows) if r["benchmark"] == "ngram" and r["test"] == "search"]
    suite: dict[tuple[Any, int], tuple[float, Row]] = {}
    for r in ok:
        q = r["extra"].get("query_median_s")
        if r["backend"] == CPU and isinstance(q, (int, float)) and q > 0:
            key = (r["params"].get("k"), r["size_bytes"])
            if key not in suite or q < suite[key][0]:
                suite[key] = (q, r)
    header = ["pg_trgm case id", "pg_trgm ms/query", "nsearch ms/query (case id)", "nsearch faster by",
              "hits/query pg_trgm", "hits/query nsearch", "Jaccard", "nsearch hits pg_trgm found"]
    out = []
    for r in ok:
        if r["backend"] != TEXT_PEER:
            continue
        e = r["extra"]
        q = e.get("query_median_s")
        best = suite.get((r["params"].get("k"), r["size_bytes"]))
        out.append([r["id"], _fmt(q * 1e3 if q else None),
                    f"{best[0] * 1e3:.3g} ({best[1]['id']})" if best else "-",
                    _x(q / best[0]) if best and q else "-", _fmt(e.get("mean_hits_per_query")),
                    _fmt(e.get("nsearch_mean_hits_per_query")), _fmt(e.get("jaccard_mean"), "{:.2f}"),
                    _fmt(e.get("share_of_nsearch_hits_found") * 100 if isinstance(
                        e.get("share_of_nsearch_hits_found"), (int, float)) else None, "{:.0f}%")])
    return header, out
