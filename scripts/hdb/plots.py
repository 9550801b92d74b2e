"""The report's figures, each written as PNG and SVG. Every figure names the host and devices and
labels its axes with units; sizes read 32K..1G. A benchmark without results has no figures.
Every figure is drawn at the size the report shows it: its PNG is at most MAX_WIDTH_PX pixels wide
at 1x (report.html's column is 1268 CSS px), its text at least FONT points at DPI (a point is a CSS
point: 9 pt is 12 px), so the page never shrinks it; the headline's figure is at most
MAX_HEADLINE_HEIGHT_PX tall. Figure.width_px and height_px are the PNG's real size.
What the benchmark-specific figures read from the results is listed in docs/driver.md."""
import functools
import itertools
import math
import os
import re
import struct
import textwrap
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from . import plausibility, results
from .config import BENCHMARK_ORDER
from .headline import telling_keys
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

# The size of the figures. report.css's body is at most 1300 px with 1em of padding a side: a
# 1268-px column, in which a PNG of at most MAX_WIDTH_PX is shown at 1x, pixel for pixel.
DPI = 96  # of the PNG files: one point of a figure's text is one CSS point at 1x
MAX_WIDTH_PX = 1260
MAX_HEADLINE_HEIGHT_PX = 820  # a laptop's screen (900 px) less the browser's bars
WIDTH_IN = 1248 / DPI  # every figure is drawn this wide; its PNG, cut to what is drawn, is no wider
FONT = 9  # points: the smallest text of a figure (ticks, legends, notes, the machine line)
TITLE_FONT = 10
SUPTITLE_FONT = 11
PANEL_H = 3.4  # inches a row of panels takes (title, axes, size axis)
# Characters of a legend label (DejaVu Sans at FONT: about 6.5 px each) before it wraps, beside a
# panel of a two-column figure and of a one-column figure: the panel keeps about 400 / 650 px.
LEGEND_CHARS = {1: 64, 2: 30}
_STYLE: dict[str, Any] = {"font.size": FONT, "axes.titlesize": TITLE_FONT, "axes.labelsize": FONT,
                          "xtick.labelsize": FONT, "ytick.labelsize": FONT, "legend.fontsize": FONT,
                          "figure.titlesize": SUPTITLE_FONT, "figure.dpi": DPI, "savefig.dpi": DPI}

DotRow = tuple[str, str, Any]  # ('h', heading, None) or ('op', label, what the marks read)
# A dot plot's mark: (legend label, colour, marker, filled, value of a row's object or None).
Mark = tuple[str, str, str, bool, Callable[[Any], float | None]]
_P = ParamSpec("_P")
_R = TypeVar("_R")


def available() -> bool:
    return plt is not None


def _styled(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Draws a figure with the figures' text sizes and DPI (_STYLE), whatever matplotlib's defaults."""
    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if plt is None:
            return fn(*args, **kwargs)
        with plt.rc_context(_STYLE):  # type: ignore[arg-type]
            return fn(*args, **kwargs)
    return wrapper


class Figure:
    """One written figure: file stem (plots/<stem>.png/.svg), title and a caption for the report;
    width_px and height_px, the PNG's size in pixels once written (the report's <img width height>),
    read back from the file."""

    def __init__(self, stem: str, title: str, caption: str, benchmark: str | None) -> None:
        self.stem, self.title, self.caption, self.benchmark = stem, title, caption, benchmark
        self.width_px: int | None = None
        self.height_px: int | None = None


def png_size(path: StrPath) -> tuple[int, int]:
    """(width, height) in pixels of a PNG file, from its IHDR chunk."""
    with Path(path).open("rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG file")
    w, h = struct.unpack(">II", head[16:24])
    return w, h


def _ok(rows):
    """Results a figure can draw: ok, rank 0's, with a kernel time or all of their time on the bus."""
    return [r for r in rows if r["status"] == "ok" and r["rank"] == 0
            and (r["kernel_median_s"] or results.transfer_only(r))]


def _kernel_timed(rows):
    return [r for r in rows if r["kernel_median_s"]]


def _shown(v: Any) -> bool:
    """A parameter value a label names: not None (a row without that parameter), not empty, not NaN."""
    return v is not None and v != "" and not (isinstance(v, float) and math.isnan(v))


def _label(r: Row, drop: Iterable[str | None] = (), with_test: bool = False) -> str:
    """'opencl: tuned[type=u32]': a line or bar whose test (and size) the panel names elsewhere, in the
    case id's spelling: backend, variant and the parameters that vary in the panel (row['label_params']
    where _slice fixed some; less `drop`, the figure's own axis), then the transfer mode where the
    panel's device cases have more than one (row['label_transfer']). No None, empty or NaN value."""
    drop = set(drop)
    params = r["label_params"] if "label_params" in r else r["params"]
    inner = [f"{k}={results.value_text(v)}" for k, v in params.items() if k not in drop and _shown(v)]
    if r["transfer"] != "none" and r.get("label_transfer", True):
        inner.append(f"transfer={r['transfer']}")
    name = (f"{r['test']}/" if with_test else "") + r["variant"]
    return (f"{r['backend']}: {name}" + (f"[{','.join(inner)}]" if inner else "")
            + ("" if r["checked"] else " not verified"))


def _series(rows, label=None):
    """OrderedDict label -> rows of one series (results.series_key), in _group's order; labelled by
    _label unless `label` says otherwise."""
    out: OrderedDict[Any, list[Row]] = OrderedDict()
    for srs in _group(rows, results.series_key).values():
        out.setdefault((label or _label)(srs[0]), []).extend(srs)
    return out


def _slice(trs, keep=()):
    """Rows of one panel, at most MAX_SERIES series. Parameters with one value are named once in the
    panel's note (and left out of _label's labels); while there are more than MAX_SERIES series, the
    parameter with the most values is fixed at its most frequent value (the benchmark's first on a
    tie) and named in the note too. `keep` parameters are an axis of the figure: never fixed, and
    left out of labels. One transfer mode of every device case is named in the note too, not in each
    label. A parameter fixed at no value (the rows without it) is not named. Returns (rows, note);
    summary.csv and the tables keep every series."""
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
    # One transfer mode for every device case, and no backend with cases both with and without it:
    # the mode tells no two series apart.
    modes = {r["transfer"] for r in trs} - {"none"}
    one_mode = next(iter(modes)) if len(modes) == 1 else None
    by_backend: dict[str, set[str]] = defaultdict(set)
    for r in trs:
        by_backend[r["backend"]].add(r["transfer"])
    if one_mode and any(len(m) > 1 for m in by_backend.values()):
        one_mode = None
    out = []
    for r in trs:
        shown = {k: v for k, v in r["params"].items() if k not in fixed and k not in keep}
        out.append(dict(r, label_params=shown, label_transfer=one_mode is None))
    note = [f"{k}={results.value_text(v)}" for k, v in fixed.items() if _shown(v)]
    return out, ", ".join(note + ([f"transfer={one_mode}"] if one_mode else []))


def _columns(ax: Any) -> int:
    """How many columns of panels the figure of `ax` has."""
    spec = ax.get_subplotspec()
    return spec.get_gridspec().ncols if spec is not None else 1


def _wrap(text: str, limit: int) -> str:
    """A label of more than `limit` characters on several lines, broken after ',' '[' or ' '."""
    if len(text) <= limit:
        return text
    lines, line = [], ""
    for piece in re.split(r"(?<=[,\[ ])", text):
        if line and len(line) + len(piece) > limit:
            lines.append(line.rstrip())
            line = piece
        else:
            line += piece
    lines.append(line)
    return "\n".join(lines)


def _title(ax, test, note):
    chars = 66 if _columns(ax) > 1 else 120
    ax.set_title(test + ("\n" + _wrap(f"({note})", chars) if note else ""), fontsize=TITLE_FONT)


def _notes(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


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
    turn = len(ticks) > 6
    ax.set_xticklabels([size_text(s) for s in ticks], rotation=45 if turn else 0, ha="right" if turn else "center",
                       fontsize=FONT)
    ax.minorticks_off()
    ax.set_xlabel("input size (bytes per input)")


def _one_size(series: Any) -> bool:
    """Every series of a panel has exactly one size: the panel is bars, not one-point curves."""
    return all(len({r["size_bytes"] for r in srs}) == 1 for srs in series.values())


def _bars(ax: Any, items: Sequence[tuple[str, float | None, float | None]], xlabel: str,
          names: tuple[str, str] = ("", ""), ref: float | None = None) -> int:
    """A panel of one size: a horizontal bar per series (items: label, value, second value or None),
    labelled on the axis; with second values, two bars a series (names: what each is). The value
    axis is linear from 0; `ref` a dotted line (100 %). Returns the number of legend entries."""
    two = any(it[2] for it in items)
    h = 0.4 if two else 0.6
    ys = list(range(len(items)))
    drawn = []
    for j, (name, color) in enumerate(((names[0], "#1f77b4"), (names[1], "#ff7f0e"))):
        if j and not two:
            break
        off = (j - 0.5) * h if two else 0.0
        pts = [(y + off, it[1 + j]) for y, it in zip(ys, items, strict=True) if it[1 + j]]
        if not pts:
            continue
        ax.barh([p[0] for p in pts], [p[1] for p in pts], height=h, color=color, label=name or None)
        drawn.append(name)
        for y, v in pts:
            ax.text(v, y, f" {v:.3g}", va="center", ha="left", fontsize=FONT)
    ax.set_yticks(ys)
    ax.set_yticklabels([_wrap(it[0], LEGEND_CHARS[min(_columns(ax), 2)]) for it in items])
    ax.set_ylim(len(items) - 0.5, -0.5)
    top = max([v for it in items for v in it[1:] if v] + [ref or 0, 0])
    ax.set_xlim(0, top * 1.2 if top else 1)
    if ref is not None:
        ax.axvline(ref, color="k", lw=0.8, ls=":")
    ax.set_xlabel(xlabel)
    ax.grid(True, axis="x", alpha=0.3)
    return len([d for d in drawn if d])


def _grid(n, panel_h=PANEL_H):
    """Two panels a row: each panel's legend (its series) stands beside it."""
    cols = min(n, 2)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(WIDTH_IN, panel_h * rows + 1.0), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _finish(fig: Any, out_dir: StrPath, figure: Figure, suptitle: str, machine: str,
            legend: Sequence[Any] | None = None) -> Figure:
    """Names the machine, lays out and writes plots/<stem>.png and .svg; returns `figure` with the
    PNG's size. The figure is WIDTH_IN wide at most (narrower if drawn so), the PNG cut to what is
    drawn and never wider than MAX_WIDTH_PX. legend: handles of a legend for the whole figure,
    under its title."""
    stem = figure.stem
    fig.set_dpi(DPI)
    w, h = fig.get_size_inches()
    if w > WIDTH_IN:
        fig.set_size_inches(WIDTH_IN, h)
        w = WIDTH_IN
    top = 0.36  # inches: the title
    fig.suptitle(_wrap(suptitle, int(w * DPI / 8)), fontsize=SUPTITLE_FONT, y=1 - 0.06 / h, va="top")
    if suptitle and len(suptitle) > int(w * DPI / 8):
        top += 0.2
    if legend:
        ncol = min(len(legend), 4)
        fig.legend(handles=list(legend), loc="upper center", bbox_to_anchor=(0.5, 1 - top / h), ncol=ncol,
                   frameon=False, fontsize=FONT, handlelength=1.6, columnspacing=1.5)
        top += 0.24 * math.ceil(len(legend) / ncol) + 0.06
    lines = textwrap.wrap(machine, int(w * DPI / 6.6)) or [""]
    fig.text(0.005, 0.04 / h, "\n".join(lines), fontsize=FONT, ha="left", va="bottom")
    bottom = 0.08 + 0.19 * len(lines)
    renderer = fig.canvas.get_renderer()
    pad = plt.rcParams["savefig.pad_inches"]
    # The saved area takes in every label: tight_layout alone clipped the headline's longest operation
    # names at the left edge once a legend stood outside the axes. It is measured once, for both files:
    # bbox_inches="tight" drew each figure twice per file, and drawing the text is most of a report's time.
    # Measured at the PNG's resolution (set above): text extents in inches depend on it.
    # Should what is drawn stand out of the figure (a label longer than the figure is wide), the figure
    # is made narrower by that much and laid out again, so that the PNG stays within MAX_WIDTH_PX.
    for _ in range(3):
        fig.tight_layout(rect=(0, bottom / h, 1, 1 - top / h), pad=0.5, h_pad=1.2, w_pad=1.5)
        area = fig.get_tightbbox(renderer).padded(pad)
        over = area.width - min(w, MAX_WIDTH_PX / DPI)
        if over <= 0:
            break
        w = max(w - over - 0.05, 4.0)
        fig.set_size_inches(w, h)
    # Never outside the figure: what tight_layout could not fit in is cut rather than widening the PNG.
    from matplotlib.transforms import Bbox
    area = Bbox.intersection(area, Bbox.from_bounds(0, 0, w, h)) or Bbox.from_bounds(0, 0, w, h)
    # No engine left behind (tight_layout leaves a placeholder): with one, savefig lays out and draws
    # the figure once more before each file.
    fig.set_layout_engine(None)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(Path(out_dir) / f"{stem}.{ext}", dpi=DPI, bbox_inches=area)
    plt.close(fig)
    figure.width_px, figure.height_px = png_size(Path(out_dir) / f"{stem}.png")
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


def _legend(ax: Any, n: int, handles: Sequence[Any] | None = None) -> None:
    """The legend beside the panel, right of its axes, never over the data; its labels wrapped to
    the width a panel of the figure's columns leaves (LEGEND_CHARS). handles: the entries, where
    not every labelled artist of the panel is one."""
    if not n:
        return
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    else:
        labels = [hd.get_label() for hd in handles]
    chars = LEGEND_CHARS[min(_columns(ax), 2)]
    ax.legend(handles, [_wrap(lb, chars) for lb in labels], fontsize=FONT, loc="upper left",
              bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False, handlelength=1.6)


def _with_transfer(r):
    return (r["h2d_median_s"] or 0) + (r["d2h_median_s"] or 0) > 0


@_styled
def throughput(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _swept(_ok(rows))
    if not rows:
        return None
    tests = _group(rows, lambda r: r["test"])
    fig, axes = _grid(len(tests))
    for ax, (test, trs) in zip(axes, tests.items(), strict=False):
        trs, note = _slice(trs)
        series = _series(trs)
        if _one_size(series):
            sizes = {srs[0]["size_bytes"] for srs in series.values()}
            items = [(label + ("" if len(sizes) == 1 else _at(srs[0]["size_bytes"])), results.headline_gbps(srs[0]),
                      srs[0]["total_gbps"] if _with_transfer(srs[0]) and not results.transfer_only(srs[0]) else None)
                     for label, srs in series.items()]
            n = _bars(ax, items, "throughput (GB/s of input)", ("kernel only", "with PCIe transfers"))
            _title(ax, test, _notes(note, f"at {size_text(sizes.pop())} per input" if len(sizes) == 1 else ""))
            _legend(ax, n if n > 1 else 0)
            continue
        handles = []
        for label, srs in series.items():
            xs = [r["size_bytes"] for r in srs]
            line, = ax.plot(xs, [results.headline_gbps(r) for r in srs], marker="o", ms=3, label=label)
            handles.append(line)
            if any(_with_transfer(r) and not results.transfer_only(r) for r in srs):
                ax.plot(xs, [r["total_gbps"] for r in srs], ls="--", marker="x", ms=3, color=line.get_color(),
                        label=label + " with PCIe")
        _size_axis(ax, [r["size_bytes"] for r in trs])
        _log_y(ax)
        ax.set_ylabel("throughput (GB/s of input)")
        _title(ax, test, note)
        ax.grid(True, which="both", alpha=0.3)
        # One entry a series: its dashed line (with PCIe) has its colour, as the title says.
        _legend(ax, len(handles), handles)
    figure = Figure(f"throughput-{bench}", f"{bench}: throughput vs size", "Median kernel-only throughput (solid) "
                    "and throughput including host-device transfers (dashed), GB/s of input, log-log; a host<->device "
                    "copy (bus h2d/d2h) is drawn by its transfer bandwidth. A test measured at one size only is "
                    "drawn as bars (kernel only, and with PCIe transfers), from 0.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: throughput vs input size (kernel only; dashed: with PCIe "
                   "transfers)", machine)


@_styled
def pct_of_peak(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = [r for r in _swept(_ok(rows)) if r["pct_of_peak"]]
    if not rows:
        return None
    tests = _group(rows, lambda r: r["test"])
    fig, axes = _grid(len(tests))
    ylabel = "% of its measured ceiling"
    for ax, (test, trs) in zip(axes, tests.items(), strict=False):
        trs, note = _slice(trs)
        groups = _series(trs)
        if _one_size(groups):
            sizes = {srs[0]["size_bytes"] for srs in groups.values()}
            _bars(ax, [(label + ("" if len(sizes) == 1 else _at(srs[0]["size_bytes"])), srs[0]["pct_of_peak"], None)
                       for label, srs in groups.items()], ylabel, ref=100)
            _title(ax, test, _notes(note, f"at {size_text(sizes.pop())} per input" if len(sizes) == 1 else ""))
            continue
        for label, srs in groups.items():
            ax.plot([r["size_bytes"] for r in srs], [r["pct_of_peak"] for r in srs], marker="o", ms=3, label=label)
        ax.axhline(100, color="k", lw=0.8, ls=":")
        _size_axis(ax, [r["size_bytes"] for r in trs])
        ax.set_ylim(bottom=0)  # a percentage from 0: no range that starts at 72 %
        ax.set_ylabel(ylabel)
        _title(ax, test, note)
        ax.grid(True, alpha=0.3)
        _legend(ax, len(groups))
    figure = Figure(f"peak-{bench}", f"{bench}: % of its ceiling", "Declared minimum bytes moved (inputs read "
                    "once, outputs written once) per median kernel second, as a percentage of the ceiling measured "
                    "for the case's access pattern (the copy where it declares none; throughput.ceiling_pattern "
                    "names it). Above 100% only where the data partly sits in a cache. A test measured at one size "
                    "only is drawn as bars.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: minimum bytes moved per second as % of the measured ceiling "
                   "of its access pattern", machine)


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


@_styled
def breakdown(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if not rows or bench in NO_BREAKDOWN:
        return None
    tests = _group(rows, lambda r: r["test"])
    panels = []
    for test, trs in tests.items():
        trs, note = _slice(trs)
        size = _common_size(trs)
        panels.append((test, note, size, [srs[0] for srs in _series([r for r in trs if r["size_bytes"] == size])
                                          .values()]))
    # A bar and its label above it take about 0.42 in (40 px).
    fig, axes = _grid(len(tests), max(PANEL_H, 0.42 * max(len(p[3]) for p in panels) + 1.5))
    parts = [("h2d", "#d62728"), ("kernel", "#1f77b4"), ("d2h", "#ff7f0e"), ("other host time", "#bbbbbb")]
    handles: dict[str, Any] = {}  # one legend for the figure: the parts any panel has, in their order
    for ax, (test, note, size, bars) in zip(axes, panels, strict=False):
        labels = [_label(r) for r in bars]
        left = [0.0] * len(bars)
        for name, color in parts:
            if name == "other host time":
                vals = [max((r["total_median_s"] or 0) - (r["h2d_median_s"] or 0) - (r["kernel_median_s"] or 0)
                            - (r["d2h_median_s"] or 0), 0) * 1e3 for r in bars]
            else:
                vals = [(r[f"{name}_median_s"] or 0) * 1e3 for r in bars]
            if not any(vals):  # a part no bar has (h2d on the CPU) is not in the legend either
                continue
            bar = ax.barh(range(len(bars)), vals, left=left, color=color, label=name, height=0.5)
            handles.setdefault(name, bar)
            left = [a + b for a, b in zip(left, vals, strict=False)]
        # Each bar's label above it, so that long labels take no width from the bars.
        for i, label in enumerate(labels):
            ax.text(0.005, i - 0.3, label, fontsize=FONT, ha="left", va="bottom", transform=ax.get_yaxis_transform())
        ax.set_yticks([])
        ax.set_ylim(len(bars) - 0.5, -0.95)
        ax.set_xlim(left=0)
        ax.set_xlabel("median time per pass (ms)")
        _title(ax, test, _notes(note, f"at {size_text(size)} per input" if size else ""))
        ax.grid(True, axis="x", alpha=0.3)
    figure = Figure(f"breakdown-{bench}", f"{bench}: transfer vs kernel time", "Stacked median h2d / kernel / "
                    "d2h time per pass for each backend and variant, per test at the largest size most of them ran "
                    "at; grey is host time outside the three.", bench)
    return _finish(fig, out_dir, figure, f"{bench}: time per pass split into host->device, kernel, device->host",
                   machine, legend=[handles[name] for name, _ in parts if name in handles])


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
        for label, srs in _series(trs).items():
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
    ax.set_xticklabels(list(groups), fontsize=FONT, rotation=30 if len(groups) > 4 else 0,
                       ha="right" if len(groups) > 4 else "center")
    return labels


def _speedup_rows(sp: Any) -> list[DotRow]:
    """The rows of a speed-up dot plot: a heading per test (with the size when every series of it
    ran at one), then a row per series (its size after it otherwise)."""
    rows: list[DotRow] = []
    for test, items in sp.items():
        sizes = {it[1] for it in items}
        one = len(sizes) == 1 and 0 not in sizes
        rows.append(("h", test + (f" at {size_text(next(iter(sizes)))} per input" if one else ""), None))
        rows += [("op", it[0] + ("" if one else _at(it[1])), it) for it in items]
    return rows


# The speed-up figures' marks: with transfers filled, kernel only hollow (as the headline's).
_SPEEDUP_MARKS: list[Mark] = [("with transfers", "#1f77b4", "o", True, lambda it: it[3]),
                              ("kernel only", "#1f77b4", "o", False, lambda it: it[2])]


@_styled
def speedup(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if bench in NO_BREAKDOWN:
        return None
    sp = _speedups(rows)
    if not sp:
        return None
    base_names = sorted({it[4] for items in sp.values() for it in items})
    fig, handles = _dot_plot(_speedup_rows(sp), _SPEEDUP_MARKS, f"speed-up over {', '.join(base_names)} (x, log)", 2)
    figure = Figure(f"speedup-{bench}", f"{bench}: speed-up over cpu serial", "Median time of the CPU baseline "
                    "divided by the median time of each backend/variant at the same test, parameters and size; "
                    "hollow kernel only, filled including PCIe transfers. Log scale; 1 = as fast as the baseline.",
                    bench)
    return _finish(fig, out_dir, figure, f"{bench}: speed-up over the single-core CPU baseline per primitive "
                   "(largest size each ran at)", machine, legend=handles)


def _extra(r, key):
    """A numeric figure of results[].extra, by its name."""
    v = r["extra"].get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@_styled
def merge_cycles(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str, hz: float | None) -> Figure | None:
    rows = _kernel_timed(_ok(rows))
    if bench != "merge" or not rows:
        return None
    ukey = MERGE_UNIQUE_PARAM if any(MERGE_UNIQUE_PARAM in r["params"] for r in rows) else None
    rows, note = _slice(rows, keep=(ukey,) if ukey else ())
    by_u = _group(rows, lambda r: r["params"].get(ukey) if ukey else None)
    fig, axes = plt.subplots(len(by_u), 1, figsize=(WIDTH_IN, PANEL_H * len(by_u) + 1.0), squeeze=False)
    drawn = False
    order = sorted(by_u.items(), key=lambda kv: (0, kv[0], "") if _number(kv[0]) else (1, 0, str(kv[0])))
    for ax, (u, urs) in zip(axes[:, 0], order, strict=False):
        groups: OrderedDict[Any, Any] = OrderedDict()
        for test, trs in _group(urs, lambda r: r["test"]).items():
            for label, srs in _series(trs, lambda r: _label(r, drop=(ukey,))).items():
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


@_styled
def merge_gpu_speedup(rows: Sequence[Row], bench: str, out_dir: StrPath, machine: str) -> Figure | None:
    if bench != "merge":
        return None
    sp = _speedups(_kernel_timed(_ok(rows)), gpu_only=True)
    if not sp:
        return None
    fig, handles = _dot_plot(_speedup_rows(sp), _SPEEDUP_MARKS,
                             "GPU speed-up over cpu " + "/".join(BASELINE_VARIANTS) + " (x, log)", 2)
    figure = Figure("merge-gpu-speedup", "merge: GPU speed-up", "Speed-up of each device backend over the CPU "
                    "baseline per merge step, kernel only (hollow) and including PCIe transfers (filled).", bench)
    return _finish(fig, out_dir, figure, "merge: GPU speed-up per step with and without transfers", machine,
                   legend=handles)


@_styled
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
        label = _label(r, drop=(ekey,), with_test=several_tests)
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
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_IN, PANEL_H * len(panels) + 1.0), squeeze=False)
    for ax, (data, ylabel, logy) in zip(axes[:, 0], panels, strict=False):
        bigs = {label: max(p[2] for p in pts) for label, pts in data.items()}
        one = len(set(bigs.values())) == 1  # every line at one size: named once, in the axis label
        for label, pts in sorted(data.items()):
            pts = sorted(p for p in pts if p[2] == bigs[label])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                    label=label if one else f"{label}{_at(bigs[label])}")
        if logy:
            _log_y(ax)
            ax.axhline(1, color="k", lw=0.8)
        else:
            ax.set_ylim(bottom=0)  # a percentage from 0
        size = next(iter(bigs.values())) if one else 0
        ax.set_xlabel(_notes(f"error level ({ekey})", f"at {size_text(size)} per input" if size else "", note))
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        _legend(ax, len(data))
    figure = Figure("ngram-errors", "ngram: speed-up vs error level", "Per error level k: speed-up over the CPU "
                    f"baseline (extra.{NGRAM_SPEEDUP} when the benchmark reports it, else the ratio of median times) "
                    f"and the share of queries accelerated (extra.{NGRAM_SHARE}).", bench)
    return _finish(fig, out_dir, figure, "ngram: speed-up and share of queries accelerated vs error level", machine)


@_styled
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
        for label, srs in _series([r for r in trs if r["size_bytes"] == size]).items():
            r = srs[0]
            if "fused" in r["variant"]:
                fused.add(label)
            name = f"{test}{_at(size)}"
            groups_k.setdefault(name, []).append((label, r["kernel_median_s"] * 1e3))
            groups_t.setdefault(name, []).append((label, r["total_median_s"] * 1e3))
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH_IN, 2 * PANEL_H + 1.0), squeeze=False)
    for ax, groups, what in ((axes[0][0], groups_k, "kernel only"), (axes[1][0], groups_t, "with transfers")):
        labels = _grouped_bars(ax, groups, 1)
        for patch_group, label in zip(ax.containers, labels, strict=False):
            if label in fused:
                for p in patch_group:
                    p.set_hatch("//")
        _log_y(ax)
        ax.set_ylabel("median time per query (ms)")
        ax.set_title(what + " (hatched: fused)", fontsize=TITLE_FONT)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        _legend(ax, len(labels))
    figure = Figure("tpch-kernels", "tpch: micro-kernels", "Median time of each micro-kernel (A, B, C) per backend "
                    "and variant at the largest size most of them ran at; fused variants hatched.", bench)
    return _finish(fig, out_dir, figure, "tpch: time per micro-kernel per backend, fused vs operator-at-a-time",
                   machine)


# A dot plot's rows (operations or series, and their headings) a column holds before the figure takes
# another column beside it; a row is 15 to 25 px tall.
DOT_ROWS = 30
HEADLINE_COLUMNS = 3  # the headline's columns at most: about 3 x 40 operations fit MAX_HEADLINE_HEIGHT_PX
_ROW_IN = (15 / DPI, 25 / DPI)
_DOT_FRAME_IN = 1.75  # the title, the speed-up axis and the machine line
_MARK_MS = {True: 5.5, False: 8.0}  # a filled mark inside the ring of a hollow one where the two are equal



def _dot_columns(rows: list[DotRow], ncols: int) -> list[list[DotRow]]:
    """The rows cut into ncols columns of about equal height, at a heading where that costs little; a
    column that begins below a heading begins with it again ('ra (continued)'). No column ends with
    a heading."""
    if ncols <= 1 or len(rows) < 2 * ncols:
        return [rows]
    heading = []
    last = ""
    for kind, text, _ in rows:
        last = text if kind == "h" else last
        heading.append(last)
    best: tuple[tuple[int, int], tuple[int, ...]] | None = None
    n = len(rows)
    for cuts in itertools.combinations(range(1, n), ncols - 1):
        bounds = (0, *cuts, n)
        spans = list(itertools.pairwise(bounds))
        if any(rows[b - 1][0] == "h" for _, b in spans):
            continue
        inside = sum(rows[a][0] != "h" for a, _ in spans)
        tallest = max(b - a + (rows[a][0] != "h") for a, b in spans)
        key = (tallest + 2 * inside, tallest)  # a cut below a heading is worth two rows
        if best is None or key < best[0]:
            best = (key, bounds)
    if best is None:
        return [rows]
    out = []
    for a, b in itertools.pairwise(best[1]):
        col = rows[a:b]
        if col[0][0] != "h":
            col = [("h", f"{heading[a].split(' at ')[0]} (continued)", None), *col]
        out.append(col)
    return out


def _dot_plot(rows: list[DotRow], marks: Sequence[Mark], xlabel: str, max_columns: int,
              max_height_px: int = MAX_HEADLINE_HEIGHT_PX) -> tuple[Any, list[Any]]:
    """A dot plot: a row per object under its heading (shaded, bold), on a shared log axis each
    mark's value (filled or hollow; a thin line joins two marks of one colour and marker: kernel
    only and with transfers), a line at 1x. Rows beyond DOT_ROWS stand in up to max_columns columns
    side by side; the figure is at most max_height_px tall while a row can keep 15 px. Returns the
    figure and the legend's handles (for _finish)."""
    from matplotlib.lines import Line2D
    ncols = 1
    while ncols < max_columns and max(map(len, _dot_columns(rows, ncols))) > DOT_ROWS:
        ncols += 1
    columns = _dot_columns(rows, ncols)
    tallest = max(map(len, columns))
    legend_in = 0.24 * math.ceil(len(marks) / 4) + 0.06
    room = max_height_px / DPI - 0.2 - _DOT_FRAME_IN - legend_in
    row_in = min(max(room / tallest, _ROW_IN[0]), _ROW_IN[1])
    fig, axes = plt.subplots(1, len(columns), figsize=(WIDTH_IN, _DOT_FRAME_IN + legend_in + row_in * tallest),
                             squeeze=False, sharex=True)
    values = [v for m in marks for _, _, obj in rows if obj is not None for v in [m[4](obj)] if v]
    lo, hi = min(values + [1.0]), max(values + [1.0])
    for ax, col in zip(axes[0], columns, strict=True):
        for i, (kind, _text, obj) in enumerate(col):
            if kind == "h":
                ax.axhspan(i - 0.5, i + 0.5, color="#eeeeee", lw=0, zorder=0)
                continue
            ax.axhline(i, color="#dddddd", lw=0.6, zorder=0)
            got = [(m, m[4](obj)) for m in marks]
            for a, b in itertools.pairwise(got):
                if a[0][1:3] == b[0][1:3] and a[1] and b[1]:
                    ax.plot([a[1], b[1]], [i, i], color=a[0][1], lw=1.0, alpha=0.6, zorder=1)
            for (_, color, marker, filled, _), v in got:
                if v:
                    ax.plot([v], [i], ls="none", marker=marker, ms=_MARK_MS[filled], mew=1.3, color=color,
                            mfc=color if filled else "white", zorder=4 if filled else 3)
        ax.set_yticks(range(len(col)))
        ax.set_yticklabels([text for _, text, _ in col])
        for tick, (kind, _, _) in zip(ax.get_yticklabels(), col, strict=True):
            if kind == "h":
                tick.set_fontweight("bold")
        ax.tick_params(axis="y", length=0)
        ax.set_ylim(tallest - 0.5, -0.5)
        _log_axis(ax.xaxis, ax.set_xscale)
        ax.axvline(1, color="k", lw=0.9, zorder=2)
        ax.set_xlim(lo / 1.6, hi * 1.6)
        ax.set_xlabel(xlabel)
        ax.grid(True, axis="x", which="both", alpha=0.3)
    handles = [Line2D([], [], ls="none", marker=marker, ms=_MARK_MS[filled], mew=1.3, color=color,
                      mfc=color if filled else "white", label=label) for label, color, marker, filled, _ in marks]
    return fig, handles


def _op_labels(ops: Sequence[Any]) -> list[str]:
    """Each operation's row label: its test, then only the parameters that tell operations of the
    same test apart ('unique (input=sorted)'); its benchmark and its size are said once, above."""
    differ = telling_keys(ops)
    out = []
    for ln in ops:
        p = dict(ln.params)
        shown = [f"{k}={results.value_text(p[k])}" for k in differ[(ln.bench, ln.test)] if k in p and _shown(p[k])]
        out.append(ln.test + (f" ({', '.join(shown)})" if shown else ""))
    return out


def _headline_rows(ops: Sequence[Any]) -> list[DotRow]:
    """The headline's rows in benchmark order: ('h', 'ra at 256M per input', None) heads each
    benchmark (its most frequent size), then ('op', label, line) per operation, the size after the
    label where it is another."""
    labels = dict(zip(map(id, ops), _op_labels(ops), strict=True))
    by_bench: OrderedDict[str, list[Any]] = OrderedDict()
    for ln in ops:
        by_bench.setdefault(ln.bench, []).append(ln)
    rows: list[DotRow] = []
    for bench, lns in by_bench.items():
        sizes = Counter(ln.size for ln in lns if ln.size)
        common = max(sizes, key=lambda s: (sizes[s], s)) if sizes else 0
        rows.append(("h", bench + (f" at {size_text(common)} per input" if common else ""), None))
        rows += [("op", labels[id(ln)] + (_at(ln.size) if ln.size and ln.size != common else ""), ln) for ln in lns]
    return rows


@_styled
def headline(lines: Sequence[Any], out_dir: StrPath, machine: str, acc_label: str) -> Figure | None:
    """The headline's figure, a dot plot no taller than a screen (MAX_HEADLINE_HEIGHT_PX, up to about
    HEADLINE_COLUMNS x 40 operations): a row per operation, per benchmark under its heading; on a log
    axis the speed-up over the best CPU implementation of the accelerator's best implementation (filled:
    with its PCIe transfers, hollow: kernel only), of DuckDB (a diamond) and of a peer on the
    accelerator (CuPy, squares: filled with transfers, hollow kernel only), at the compared size; a
    line at 1x. Rows that do not fit one column stand in two or three, side by side."""
    from .headline import DB_PEER, device_peers
    peers = device_peers(lines)
    ops = [ln for ln in lines if ln.cpu_best and (ln.acc or ln.db_best or any(ln.per_backend.get(p) for p in peers))]
    if not available() or not ops:
        return None
    acc = next((ln.acc for ln in ops if ln.acc), "accelerator")
    # The variant the headline compares (sql_table: the answer materialised in DuckDB; sql where a run
    # has only that).
    db_variants = sorted({ln.db_best["variant"] for ln in ops if ln.db_best})

    def backend_mark(peer: str, key: str) -> Callable[[Any], float | None]:
        return lambda ln: ln.backend_speedup(peer, key)

    marks: list[Mark] = [
        (f"{acc} with PCIe transfers", "#1f77b4", "o", True, lambda ln: ln.acc_speedup("total_median_s")),
        (f"{acc} kernel only", "#1f77b4", "o", False, lambda ln: ln.acc_speedup("kernel_median_s")),
        (f"{DB_PEER} {'/'.join(db_variants)} (best thread count)", "#2ca02c", "D", True,
         lambda ln: ln.speedup(ln.db_best, "total_median_s") if ln.db_best else None)]
    for p, color in zip(peers, ["#9467bd", "#8c564b", "#e377c2"] * len(peers), strict=False):
        marks += [(f"{p} with PCIe transfers", color, "s", True, backend_mark(p, "total_median_s")),
                  (f"{p} kernel only", color, "s", False, backend_mark(p, "kernel_median_s"))]
    marks = [m for m in marks if any(m[4](ln) for ln in ops)]  # no entry for a processor that ran none
    fig, handles = _dot_plot(_headline_rows(ops), marks, "speed-up over the best CPU (x, log)", HEADLINE_COLUMNS)
    figure = Figure("headline", "headline: speed-up over the best CPU implementation",
                    f"Per operation at the size compared in the headline table (the size after each benchmark's "
                    f"name, or after the operation where it differs): the best time on the accelerator "
                    f"({acc_label}) with its PCIe transfers (filled) and kernel-only (hollow), {DB_PEER}'s best "
                    f"time (diamond)"
                    + "".join(f", {p}'s with its transfers and kernel-only (squares)" for p in peers)
                    + ", each as the best CPU implementation's time divided by it; right of 1x is faster than "
                    "the CPU.", "headline")
    return _finish(fig, out_dir, figure, "Does the accelerator pay off? Speed-up over the best CPU implementation "
                   "(right of 1x: faster)", machine, legend=handles)


@_styled
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
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_IN, PANEL_H * len(panels) + 1.0), squeeze=False)
    for ax, ((bench, backend), groups) in zip((a[0] for a in axes), panels.items(), strict=False):
        labels = _grouped_bars(ax, groups, 1)
        _log_y(ax)
        ax.set_ylabel("million tuples per second (kernel)")
        ax.set_title(f"{bench} on {backend}", fontsize=TITLE_FONT)
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
