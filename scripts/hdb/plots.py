"""The report's figures, each written as PNG and SVG. Every figure names the host and devices and
labels its axes with units; sizes read 32K..1G. A benchmark without results has no figures.
What the benchmark-specific figures read from the results is listed in docs/driver.md."""
import math
import os
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import plausibility, results
from .config import BENCHMARK_ORDER
from .key_width import tuples_per_s
from .util import Document, Row, StrPath, size_text

try:
    if os.environ.get("HDB_NO_MATPLOTLIB"):
        raise ImportError("HDB_NO_MATPLOTLIB is set")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    MATPLOTLIB_ERROR = None
except ImportError as e:  # reports are still written, without figures
    plt = None  # type: ignore[assignment]
    MATPLOTLIB_ERROR = str(e)

BASELINE_VARIANTS = ("serial", "baseline")  # the papers' single-core CPU baselines
NO_BREAKDOWN = ("bus",)  # bus tests are the transfers themselves
MAX_SERIES = 8  # more lines or bars than this per panel cannot be told apart
# What the benchmark-specific figures read, by name (docs/driver.md, "What the figures read").
MERGE_UNIQUE_PARAM = "unique"          # merge: unique-value fraction, a percentage
NGRAM_ERROR_PARAM = "k"                # ngram: error level
CYCLES_PER_TUPLE = "cycles_per_tuple"  # merge extra
NGRAM_SPEEDUP = "speedup_mean_of_queries"  # ngram extra: mean of the per-query speed-ups
NGRAM_SHARE = "share_accelerated"      # ngram extra: share of queries faster than the baseline


def available() -> bool:
    return plt is not None


class Figure:
    """One written figure: file stem (plots/<stem>.png/.svg), title and a caption for the report."""

    def __init__(self, stem: str, title: str, caption: str, benchmark: str | None) -> None:
        self.stem, self.title, self.caption, self.benchmark = stem, title, caption, benchmark


def _ok(rows):
    """Results a figure can draw: ok, rank 0's, with a kernel time or all of their time on the bus."""
    return [r for r in rows if r["status"] == "ok" and r["rank"] == 0
            and (r["kernel_median_s"] or results.transfer_only(r))]


def _kernel_timed(rows):
    return [r for r in rows if r["kernel_median_s"]]


def _series(rows, label=None):
    """OrderedDict label -> rows of one series (results.series_key), in _group's order; labelled by
    backend and case id (results.series_label) unless `label` says otherwise."""
    out: OrderedDict[Any, list[Row]] = OrderedDict()
    for srs in _group(rows, results.series_key).values():
        out.setdefault((label or results.series_label)(srs[0]), []).extend(srs)
    return out


def _slice(trs, keep=()):
    """Rows of one panel, at most MAX_SERIES series. Parameters with one value are named once in the
    panel's note (and left out of variant_label's labels); while there are more than MAX_SERIES series, the
    parameter with the most values is fixed at its most frequent value (the benchmark's first on a
    tie) and named in the note too. `keep` parameters are an axis of the figure: never fixed, and
    left out of labels. Returns (rows, note); summary.csv and the tables keep every series."""
    keys = list(OrderedDict.fromkeys(k for r in trs for k in r["params"] if k not in keep))
    values = {k: list(OrderedDict.fromkeys(r["params"].get(k) for r in trs)) for k in keys}
    fixed = OrderedDict((k, values[k][0]) for k in keys if len(values[k]) == 1)

    def count(rs):
        return len({(r["backend"], r["variant"], r["transfer"]) + tuple(r["params"].get(k) for k in keys
                                                                        if k not in fixed) for r in rs})
    for k in sorted((k for k in keys if k not in fixed), key=lambda k: -len(values[k])):
        if count(trs) <= MAX_SERIES:
            break
        freq = Counter(r["params"].get(k) for r in trs)
        fixed[k] = max(values[k], key=lambda v: freq[v])
        trs = [r for r in trs if r["params"].get(k) == fixed[k]]
    out = []
    for r in trs:
        shown = {k: v for k, v in r["params"].items() if k not in fixed and k not in keep}
        out.append(dict(r, label_params=shown))
    return out, ", ".join(f"{k}={results.value_text(v)}" for k, v in fixed.items())


def _title(ax, test, note):
    ax.set_title(test + (f"\n({note})" if note else ""), fontsize=8.5)


def _group(rows, key):
    g: OrderedDict[Any, list[Row]] = OrderedDict()
    for r in sorted(rows, key=lambda r: (r["test"], r["backend"], r["variant"], r["params_text"], r["size_bytes"])):
        g.setdefault(key(r), []).append(r)
    return g


def _at(size):
    """' @1M' after a label; nothing for a case outside the size sweep (size 0)."""
    return f" @{size_text(size)}" if size else ""


def _swept(rows):
    """Rows of the size sweep (size > 0): what a figure against input size can draw."""
    return [r for r in rows if r["size_bytes"] > 0]


def _size_axis(ax: Any, sizes: Iterable[int]) -> None:
    ax.set_xscale("log", base=2)
    ticks = sorted(set(s for s in sizes if s > 0))
    if len(ticks) > 12:
        ticks = ticks[::int(math.ceil(len(ticks) / 12))]
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_text(s) for s in ticks], rotation=45, fontsize=7)
    ax.minorticks_off()
    ax.set_xlabel("input size (bytes per input)")


def _grid(n):
    """Two panels a row: each panel's legend (case ids) stands beside it."""
    cols = min(n, 2)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.9 * rows + 0.6), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


_DPI = 110  # of the PNG files


def _finish(fig: Any, out_dir: StrPath, figure: Figure, suptitle: str, machine: str) -> Figure:
    """Names the machine, lays out and writes plots/<stem>.png and .svg; returns `figure`."""
    stem = figure.stem
    fig.suptitle(suptitle, fontsize=11)
    fig.text(0.005, 0.003, machine, fontsize=6.5, ha="left", va="bottom", wrap=True)
    _widen_for_legends(fig)
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    # No engine left behind (tight_layout leaves a placeholder): with one, savefig lays out and draws
    # the figure once more before each file.
    fig.set_layout_engine(None)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    # The saved area takes in every label: tight_layout alone clipped the headline's longest operation
    # names at the left edge once a legend stood outside the axes. It is measured once, for both files:
    # bbox_inches="tight" drew each figure twice per file, and drawing the text is most of a report's time.
    # Measured at the PNG's resolution: text extents in inches depend on it.
    fig.set_dpi(_DPI)
    area = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    for ext in ("png", "svg"):
        fig.savefig(Path(out_dir) / f"{stem}.{ext}", dpi=_DPI, bbox_inches=area)
    plt.close(fig)
    return figure


def _log_axis(axis, set_scale):
    """Log axis with plain numbers (0.5, 2, 40) instead of 4x10^1."""
    from matplotlib.ticker import FuncFormatter
    set_scale("log")
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    # Minor ticks at 2x and 5x of each decade get labels too: a range within one decade has no major tick.
    axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))


def _log_y(ax: Any) -> None:
    _log_axis(ax.yaxis, ax.set_yscale)


def _legend(ax: Any, n: int) -> None:
    """The legend beside the panel, right of its axes, never over the data; _finish widens the
    figure by the widest legend so that the panels keep their width."""
    if n:
        ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)


def _widen_for_legends(fig):
    legends = [ax.get_legend() for ax in fig.axes if ax.get_visible() and ax.get_legend()]
    if not legends:
        return
    # A legend's extent needs its own layout only, not a draw of the whole figure.
    renderer = fig.canvas.get_renderer()
    wide = max(lg.get_window_extent(renderer).width for lg in legends) / fig.dpi + 0.15
    cols = max(len({round(ax.get_position().x0, 3) for ax in fig.axes if ax.get_visible()}), 1)
    w, h = fig.get_size_inches()
    fig.set_size_inches(w + cols * wide, h)


def _with_transfer(r):
    return (r["h2d_median_s"] or 0) + (r["d2h_median_s"] or 0) > 0


def throughput(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _swept(_ok(rows))
    if not rows:
        return None
    tests = _group(rows, lambda r: r["test"])
    fig, axes = _grid(len(tests))
    for ax, (test, trs) in zip(axes, tests.items(), strict=False):
        n = 0
        trs, note = _slice(trs)
        for label, srs in _series(trs).items():
            xs = [r["size_bytes"] for r in srs]
            line, = ax.plot(xs, [results.headline_gbps(r) for r in srs], marker="o", ms=3, label=label)
            n += 1
            if any(_with_transfer(r) and not results.transfer_only(r) for r in srs):
                ax.plot(xs, [r["total_gbps"] for r in srs], ls="--", marker="x", ms=3, color=line.get_color(),
                        label=label + " with PCIe")
                n += 1
        _size_axis(ax, [r["size_bytes"] for r in trs])
        _log_y(ax)
        ax.set_ylabel("throughput (GB/s of input)")
        _title(ax, test, note)
        ax.grid(True, which="both", alpha=0.3)
        _legend(ax, n)
    figure = Figure(f"throughput-{bench}", f"{bench}: throughput vs size", "Median kernel-only throughput (solid) "
                    "and throughput including host-device transfers (dashed), GB/s of input, log-log; a host<->device "
                    "copy (bus h2d/d2h) is drawn by its transfer bandwidth.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: throughput vs input size (kernel only; dashed: with PCIe "
                   "transfers)", machine)


def pct_of_peak(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = [r for r in _swept(_ok(rows)) if r["pct_of_peak"]]
    if not rows:
        return None
    tests = _group(rows, lambda r: r["test"])
    fig, axes = _grid(len(tests))
    for ax, (test, trs) in zip(axes, tests.items(), strict=False):
        trs, note = _slice(trs)
        groups = _series(trs)
        for label, srs in groups.items():
            ax.plot([r["size_bytes"] for r in srs], [r["pct_of_peak"] for r in srs], marker="o", ms=3, label=label)
        ax.axhline(100, color="k", lw=0.8, ls=":")
        _size_axis(ax, [r["size_bytes"] for r in trs])
        ax.set_ylabel("% of measured copy bandwidth")
        _title(ax, test, note)
        ax.grid(True, alpha=0.3)
        _legend(ax, len(groups))
    figure = Figure(f"peak-{bench}", f"{bench}: % of peak", "Declared minimum bytes moved (inputs read once, "
                    "outputs written once) per median kernel second, as a percentage of the device's copy bandwidth "
                    "measured nearest to the case (throughput.ceiling_gbps). Above 100% at small sizes means the data "
                    "sat in cache.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: minimum bytes moved per second as % of the measured copy "
                   "ceiling", machine)


def _largest(srs):
    return max(srs, key=lambda r: r["size_bytes"])


def _common_size(trs):
    """The largest size at which the most series of one test ran, so bars side by side compare
    like with like."""
    counts: dict[Any, set[Any]] = {}
    for r in trs:
        counts.setdefault(r["size_bytes"], set()).add(results.series_key(r))
    most = max(len(v) for v in counts.values())
    return max(size for size, v in counts.items() if len(v) == most)


def breakdown(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if not rows or bench in NO_BREAKDOWN:
        return None
    tests = _group(rows, lambda r: r["test"])
    fig, axes = _grid(len(tests))
    parts = [("h2d", "#d62728"), ("kernel", "#1f77b4"), ("d2h", "#ff7f0e"), ("other host time", "#bbbbbb")]
    for ax, (test, trs) in zip(axes, tests.items(), strict=False):
        trs, note = _slice(trs)
        size = _common_size(trs)
        bars = [srs[0] for srs in _series([r for r in trs if r["size_bytes"] == size]).values()]
        labels = [f"{r['backend']}: {r['id']}" + ("" if r["checked"] else " not verified") for r in bars]
        left = [0.0] * len(bars)
        for name, color in parts:
            if name == "other host time":
                vals = [max((r["total_median_s"] or 0) - (r["h2d_median_s"] or 0) - (r["kernel_median_s"] or 0)
                            - (r["d2h_median_s"] or 0), 0) * 1e3 for r in bars]
            else:
                vals = [(r[f"{name}_median_s"] or 0) * 1e3 for r in bars]
            if not any(vals):  # a part no bar has (h2d on the CPU) is not in the legend either
                continue
            ax.barh(range(len(bars)), vals, left=left, color=color, label=name, height=0.5)
            left = [a + b for a, b in zip(left, vals, strict=False)]
        # Each bar's case id above it, so that long ids take no width from the bars.
        for i, label in enumerate(labels):
            ax.text(0.005, i - 0.3, label, fontsize=6.5, ha="left", va="bottom", transform=ax.get_yaxis_transform())
        ax.set_yticks([])
        ax.set_ylim(len(bars) - 0.5, -0.8)
        ax.set_xlabel("median time per pass (ms)")
        _title(ax, test, note)
        ax.grid(True, axis="x", alpha=0.3)
        _legend(ax, len(ax.get_legend_handles_labels()[0]))
    figure = Figure(f"breakdown-{bench}", f"{bench}: transfer vs kernel time", "Stacked median h2d / kernel / "
                    "d2h time per pass for each backend and variant, per test at the largest size most of them ran "
                    "at; grey is host time outside the three.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: time per pass split into host->device, kernel, device->host",
                   machine)


def _baselines(rows):
    """(test, params, size) -> the cpu baseline row (serial, or the paper's 'baseline')."""
    out: dict[Any, Any] = {}
    for r in rows:
        if r["backend"] == "cpu" and r["variant"] in BASELINE_VARIANTS:
            out.setdefault((r["test"], results.params_key(r["params"]), r["size_bytes"]), r)
    return out


def _speedups(rows, gpu_only=False):
    """test -> [(label, size, kernel speed-up, with-transfer speed-up)] at each series' largest size
    that has a baseline."""
    out: OrderedDict[Any, Any] = OrderedDict()
    for test, trs in _group(rows, lambda r: r["test"]).items():
        trs, _ = _slice(trs)
        base = _baselines(trs)
        name = test
        for label, srs in _series(trs, results.variant_label).items():
            s0 = srs[0]
            if s0["backend"] == "cpu" and s0["variant"] in BASELINE_VARIANTS:
                continue
            if gpu_only and s0["backend"] == "cpu":
                continue
            matched = [(r, base[k]) for r in srs
                       for k in [(r["test"], results.params_key(r["params"]), r["size_bytes"])] if k in base]
            if not matched:
                continue
            r, b = max(matched, key=lambda m: m[0]["size_bytes"])
            out.setdefault(name, []).append((label, r["size_bytes"], b["kernel_median_s"] / r["kernel_median_s"],
                                             b["total_median_s"] / r["total_median_s"] if r["total_median_s"] else
                                             None, f"{b['backend']}/{b['variant']}"))
    return out


def _grouped_bars(ax, groups, value_index):
    """groups: name -> [(label, ..values)]; one cluster of bars per group, one colour per label."""
    labels = []
    for items in groups.values():
        for it in items:
            if it[0] not in labels:
                labels.append(it[0])
    width = 0.8 / max(len(labels), 1)
    cmap = plt.get_cmap("tab20")
    for j, label in enumerate(labels):
        xs, ys = [], []
        for i, items in enumerate(groups.values()):
            for it in items:
                if it[0] == label and it[value_index] is not None:
                    xs.append(i + (j - (len(labels) - 1) / 2) * width)
                    ys.append(it[value_index])
        ax.bar(xs, ys, width=width, color=cmap(j % 20), label=label, edgecolor="white")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(list(groups), fontsize=7 if len(groups) > 6 else 8, rotation=30 if len(groups) > 4 else 0,
                       ha="right" if len(groups) > 4 else "center")
    return labels


def speedup(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if bench in NO_BREAKDOWN:
        return None
    sp = _speedups(rows)
    if not sp:
        return None
    base_names = sorted({it[4] for items in sp.values() for it in items})
    fig, axes = plt.subplots(2, 1, figsize=(min(max(8, 0.9 * len(sp) + 4), 16), 8.5), squeeze=False)
    for ax, idx, what in ((axes[0][0], 2, "kernel only"), (axes[1][0], 3, "with transfers")):
        labels = _grouped_bars(ax, sp, idx)
        ax.axhline(1, color="k", lw=0.8)
        _log_y(ax)
        ax.set_ylabel(f"speed-up over {', '.join(base_names)} (x)")
        ax.set_title(what, fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        _legend(ax, len(labels))
    figure = Figure(f"speedup-{bench}", f"{bench}: speed-up over cpu serial", "Median time of the CPU baseline "
                    "divided by the median time of each backend/variant at the same test, parameters and size; left "
                    "kernel only, right including PCIe transfers. Log scale; 1 = as fast as the baseline.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: speed-up over the single-core CPU baseline per primitive "
                   "(largest size each ran at)", machine)


def _extra(r, key):
    """A numeric figure of results[].extra, by its name."""
    v = r["extra"].get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def merge_cycles(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str, hz: float | None) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if bench != "merge" or not rows:
        return None
    ukey = MERGE_UNIQUE_PARAM if any(MERGE_UNIQUE_PARAM in r["params"] for r in rows) else None
    rows, note = _slice(rows, keep=(ukey,) if ukey else ())
    by_u = _group(rows, lambda r: r["params"].get(ukey) if ukey else None)
    fig, axes = plt.subplots(1, len(by_u), figsize=(6 * len(by_u), 4.8), squeeze=False)
    drawn = False
    order = sorted(by_u.items(), key=lambda kv: (0, kv[0], "") if _number(kv[0]) else (1, 0, str(kv[0])))
    for ax, (u, urs) in zip(axes[0], order, strict=False):
        groups: OrderedDict[Any, Any] = OrderedDict()
        for test, trs in _group(urs, lambda r: r["test"]).items():
            for label, srs in _series(trs, lambda r: results.variant_label(r, drop=(ukey,))).items():
                r = _largest(srs)
                cpt = _extra(r, CYCLES_PER_TUPLE)
                if cpt is None and hz and r["elements"]:
                    cpt = r["kernel_median_s"] * hz / r["elements"]
                if cpt is not None:
                    groups.setdefault(test, []).append((label, cpt))
        if not groups:
            ax.set_visible(False)
            continue
        drawn = True
        labels = _grouped_bars(ax, groups, 1)
        _log_y(ax)
        ax.set_ylabel("CPU cycles per tuple (TSC)")
        _title(ax, (f"{ukey} = {results.value_text(u)}%" if _number(u) else f"{ukey} = {u}") if ukey
               else "all results", note)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        _legend(ax, len(labels))
    if not drawn:
        plt.close(fig)
        return None
    figure = Figure("merge-cycles", "merge: cycles per tuple", "Cycles per tuple of each merge step, from the "
                    "result's extra.cycles_per_tuple or else median kernel time x measured TSC rate / tuples; one "
                    "panel per unique-value fraction.", bench)
    return _finish(fig, out_dir, figure, "merge: cycles per tuple per step (largest size)", machine)


def merge_gpu_speedup(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    if bench != "merge":
        return None
    sp = _speedups(_kernel_timed(_ok(rows)), gpu_only=True)
    if not sp:
        return None
    fig, ax = plt.subplots(figsize=(max(7, 1.5 * len(sp) + 4), 4.8))
    flat = OrderedDict((k, [(f"{it[0]} kernel", it[2]) for it in v] + [(f"{it[0]} with PCIe", it[3]) for it in v])
                       for k, v in sp.items())
    labels = _grouped_bars(ax, flat, 1)
    ax.axhline(1, color="k", lw=0.8)
    _log_y(ax)
    ax.set_ylabel("GPU speed-up over cpu " + "/".join(BASELINE_VARIANTS) + " (x)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    _legend(ax, len(labels))
    figure = Figure("merge-gpu-speedup", "merge: GPU speed-up", "Speed-up of each device backend over the CPU "
                    "baseline per merge step, kernel only and including PCIe transfers.", bench)
    return _finish(fig, out_dir, figure, "merge: GPU speed-up per step with and without transfers", machine)


def ngram_errors(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    ekey = NGRAM_ERROR_PARAM
    rows = [r for r in _kernel_timed(_ok(rows)) if _number(r["params"].get(ekey))]
    if bench != "ngram" or not rows:
        return None
    rows, note = _slice(rows, keep=(ekey,))
    base: dict[Any, Any] = {}
    for r in rows:
        if r["backend"] == "cpu" and r["variant"] in BASELINE_VARIANTS:
            base.setdefault((r["test"], results.params_key(r["params"]), r["size_bytes"]), r)
    speed, share = defaultdict(list), defaultdict(list)
    several_tests = len({x["test"] for x in rows}) > 1
    for r in rows:
        e = r["params"][ekey]
        # One line per series across error levels (_slice leaves the kept error level out of labels).
        label = results.variant_label(r, drop=(ekey,), with_test=several_tests)
        sh = _extra(r, NGRAM_SHARE)
        if sh is not None:
            share[label].append((e, sh * 100 if sh <= 1 else sh, r["size_bytes"]))
        if r["backend"] == "cpu" and r["variant"] in BASELINE_VARIANTS:
            continue
        s = _extra(r, NGRAM_SPEEDUP)
        b = base.get((r["test"], results.params_key(r["params"]), r["size_bytes"]))
        if s is None and b:
            s = b["kernel_median_s"] / r["kernel_median_s"]
        if s is not None:
            speed[label].append((e, s, r["size_bytes"]))
    if not speed and not share:
        return None
    panels = [p for p in ((speed, "speed-up over cpu baseline (x)", True), (share, "queries accelerated (%)", False))
              if p[0]]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8), squeeze=False)
    for ax, (data, ylabel, logy) in zip(axes[0], panels, strict=False):
        for label, pts in sorted(data.items()):
            big = max(p[2] for p in pts)
            pts = sorted(p for p in pts if p[2] == big)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=f"{label}{_at(big)}")
        if logy:
            _log_y(ax)
            ax.axhline(1, color="k", lw=0.8)
        ax.set_xlabel(f"error level ({ekey})" + (f"; {note}" if note else ""))
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        _legend(ax, len(data))
    figure = Figure("ngram-errors", "ngram: speed-up vs error level", "Per error level k: speed-up over the CPU "
                    f"baseline (extra.{NGRAM_SPEEDUP} when the benchmark reports it, else the ratio of median times) "
                    f"and the share of queries accelerated (extra.{NGRAM_SHARE}).", bench)
    return _finish(fig, out_dir, figure, "ngram: speed-up and share of queries accelerated vs error level", machine)


def tpch_kernels(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if bench != "tpch" or not rows:
        return None
    groups_k: OrderedDict[Any, Any] = OrderedDict()
    groups_t: OrderedDict[Any, Any] = OrderedDict()
    fused: set[Any] = set()
    for test, trs in _group(rows, lambda r: r["test"]).items():
        trs, _ = _slice(trs)
        size = _common_size(trs)
        for label, srs in _series([r for r in trs if r["size_bytes"] == size], results.variant_label).items():
            r = srs[0]
            if "fused" in r["variant"]:
                fused.add(label)
            name = f"{test}{_at(size)}"
            groups_k.setdefault(name, []).append((label, r["kernel_median_s"] * 1e3))
            groups_t.setdefault(name, []).append((label, r["total_median_s"] * 1e3))
    fig, axes = plt.subplots(1, 2, figsize=(max(9, 2 * len(groups_k) + 6), 4.8), squeeze=False)
    for ax, groups, what in ((axes[0][0], groups_k, "kernel only"), (axes[0][1], groups_t, "with transfers")):
        labels = _grouped_bars(ax, groups, 1)
        for patch_group, label in zip(ax.containers, labels, strict=False):
            if label in fused:
                for p in patch_group:
                    p.set_hatch("//")
        _log_y(ax)
        ax.set_ylabel("median time per query (ms)")
        ax.set_title(what + " (hatched: fused)", fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        _legend(ax, len(labels))
    figure = Figure("tpch-kernels", "tpch: micro-kernels", "Median time of each micro-kernel (A, B, C) per backend "
                    "and variant at the largest size most of them ran at; fused variants hatched.", bench)
    return _finish(fig, out_dir, figure, "tpch: time per micro-kernel per backend, fused vs operator-at-a-time",
                   machine)


def headline(lines: Sequence[Any], out_dir: StrPath, machine: str, acc_label: str) -> Figure | None:
    """The headline's figure: per operation, the speed-up over the best CPU implementation of the
    accelerator's best implementation (kernel only, with PCIe), of DuckDB and of a peer on the
    accelerator (CuPy: kernel only, with PCIe), at the compared size."""
    from .headline import DB_PEER, device_peers
    peers = device_peers(lines)
    ops = [ln for ln in lines if ln.cpu_best and (ln.acc or ln.db_best or any(ln.per_backend.get(p) for p in peers))]
    if not available() or not ops:
        return None
    acc = next((ln.acc for ln in ops if ln.acc), "accelerator")
    # The variant the headline compares (sql_table: the answer materialised in DuckDB; sql where a run
    # has only that).
    db_variants = sorted({ln.db_best["variant"] for ln in ops if ln.db_best})
    bars = [(f"{acc} kernel only", "#1f77b4", lambda ln: ln.acc_speedup("kernel_median_s")),
            (f"{acc} with PCIe", "#ff7f0e", lambda ln: ln.acc_speedup("total_median_s")),
            (f"{DB_PEER} {'/'.join(db_variants)} (best of its thread counts)", "#2ca02c",
             lambda ln: ln.db_best and ln.speedup(ln.db_best, "total_median_s"))]
    # A peer on the accelerator (CuPy): kernel-only and with its PCIe transfers, like the accelerator.
    shades = [("#9467bd", "#c5b0d5"), ("#8c564b", "#c49c94")]
    def peer_bar(peer: str, key: str) -> Callable[[Any], float | None]:
        return lambda ln: ln.backend_speedup(peer, key)

    for p, (dark, light) in zip(peers, shades * len(peers), strict=False):
        bars += [(f"{p} kernel only", dark, peer_bar(p, "kernel_median_s")),
                 (f"{p} with PCIe", light, peer_bar(p, "total_median_s"))]
    bars = [b for b in bars if any(b[2](ln) for ln in ops)]  # no slot for a processor that ran none
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.42 * len(ops)))
    h = 0.8 / len(bars)
    for j, (label, color, value) in enumerate(bars):
        ys, xs = [], []
        for i, ln in enumerate(ops):
            v = value(ln)
            if v:
                ys.append(i + (j - (len(bars) - 1) / 2) * h)
                xs.append(v)
        if xs:
            ax.barh(ys, xs, height=h, color=color, label=label)
    ax.set_yticks(range(len(ops)))
    ax.set_yticklabels([f"{ln.name} @{size_text(ln.size)}" if ln.size else ln.name for ln in ops], fontsize=7)
    ax.invert_yaxis()
    _log_axis(ax.xaxis, ax.set_xscale)
    ax.axvline(1, color="k", lw=0.8)
    ax.set_xlabel("speed-up over the best CPU implementation (x, log scale; right of 1 = faster than the CPU)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    _legend(ax, len(bars))
    figure = Figure("headline", "headline: speed-up over the best CPU implementation",
                    f"Per operation at the size compared in the headline table: the best time on the accelerator "
                    f"({acc_label}) kernel-only and with its PCIe transfers, {DB_PEER}'s best time"
                    + "".join(f", {p}'s kernel-only and with its transfers" for p in peers)
                    + ", each as the best CPU implementation's time divided by it.", "headline")
    return _finish(fig, out_dir, figure, "Does the accelerator pay off? Speed-up over the best CPU implementation",
                   machine)


def key_widths(pairs: Sequence[tuple[Row, Row]], out_dir: StrPath, machine: str) -> Figure | None:
    """One panel per benchmark and backend: tuples per second at 32- and 64-bit keys, bars side by
    side per test, for the variant and parameters fastest at 32 bits (key_width.pairs: each pair at
    the largest size both widths ran; the report's table lists every pair)."""
    if not pairs:
        return None
    best: OrderedDict[Any, Any] = OrderedDict()
    for r32, r64 in pairs:
        k = (r32["benchmark"], r32["backend"], r32["test"])
        if k not in best or tuples_per_s(r32) > tuples_per_s(best[k][0]):
            best[k] = (r32, r64)
    panels: OrderedDict[Any, Any] = OrderedDict()
    for (bench, backend, test), (r32, r64) in best.items():
        panels.setdefault((bench, backend), OrderedDict())[f"{test}/{r32['variant']}"] = [
            ("32-bit keys", tuples_per_s(r32) / 1e6), ("64-bit keys", tuples_per_s(r64) / 1e6)]
    widest = max(len(g) for g in panels.values())
    fig, axes = plt.subplots(len(panels), 1, figsize=(min(max(8, 0.7 * widest + 4), 16), 3.6 * len(panels) + 0.8),
                             squeeze=False)
    for ax, ((bench, backend), groups) in zip((a[0] for a in axes), panels.items(), strict=False):
        labels = _grouped_bars(ax, groups, 1)
        _log_y(ax)
        ax.set_ylabel("million tuples per second (kernel)")
        ax.set_title(f"{bench} on {backend}", fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        _legend(ax, len(labels))
    figure = Figure("key-width", "32- vs 64-bit keys", "Kernel throughput in tuples per second at both key "
                    "widths, per test the variant and parameters fastest at 32 bits, at the largest size both "
                    "widths ran (an input of that size holds fewer 64-bit-key tuples). Log scale.", "key-width")
    return _finish(fig, out_dir, figure, "32- vs 64-bit keys: tuples per second per case", machine)


def all_figures(rows: Iterable[Row], docs: Sequence[Document], out_dir: StrPath,
                include_unverified: bool = False) -> list[Figure]:
    """Every figure the rows support, grouped by benchmark in a fixed order. Results measured
    without verification (--no-verify) are drawn only when include_unverified is set; results with a
    figure above the physical ceiling of the run, or a peer contradicts (results.contradict), never."""
    if not available():
        return []
    # Host execution (cuda-host) times a CPU's emulation of a GPU: never drawn beside processors; a
    # figure above the physical ceiling of the run (plausibility.py) cannot be true: never drawn.
    rows = [r for r in plausibility.plausible(results.processor_rows(rows))
            if (r["checked"] or include_unverified) and not r.get("contradicted_by")]  # a peer's (contradict)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    machine = results.machine_line(docs)
    hz = results.tsc_hz(docs)
    figs = []
    by_bench = _group(rows, lambda r: r["benchmark"])
    order = [b for b in BENCHMARK_ORDER if b in by_bench] + [b for b in by_bench if b not in BENCHMARK_ORDER]
    for bench in order:
        brs = by_bench[bench]
        for f in (throughput(brs, bench, out_dir, machine), pct_of_peak(brs, bench, out_dir, machine),
                  breakdown(brs, bench, out_dir, machine), speedup(brs, bench, out_dir, machine),
                  merge_cycles(brs, bench, out_dir, machine, hz), merge_gpu_speedup(brs, bench, out_dir, machine),
                  ngram_errors(brs, bench, out_dir, machine), tpch_kernels(brs, bench, out_dir, machine)):
            if f is not None:
                figs.append(f)
    return figs
