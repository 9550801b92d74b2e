"""scripts/report: summary.csv, report.md, a self-contained report.html (figures inlined as base64
PNG) and plots/*.png|svg for one run directory, all from the raw JSON (never from console output).
The report is built once as a list of blocks and rendered to Markdown and, through the Jinja2
template templates/report.html (autoescaped), to HTML."""
import base64
import csv
import io
import json
import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from . import caches, contract, headline, key_width, passes, plausibility, plots, results
from .headline import Cell
from .progress import timed_out
from .util import StrPath, duration_text, size_text, write_atomically

PLOTS_DIR = "plots"
TEMPLATES = Path(__file__).resolve().parent / "templates"
HTML_TEMPLATE = "report.html"

Row = dict[str, Any]


def _f(v: Any, fmt: str = "{:.3g}") -> str:
    return "-" if v is None or v == "" else fmt.format(v)


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:.4g}"


def _md_table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    def cell(c: Any) -> str:
        return str(c).replace("|", "\\|")
    lines = ["| " + " | ".join(cell(c) for c in header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows])


def _cells(cells: Iterable[Any]) -> list[Cell]:
    return [c if isinstance(c, Cell) else Cell(str(c)) for c in cells]


# A figure as the tables write one: 18.64, 1.1e+03, 8.82x, 0.4 ms, 1s, 73.7%, 8.0 GiB, 32M, 12/0/0.
NUMBER = re.compile(r"[-+]?\d[\d.,/]*(e[-+]?\d+)?\s*(x|ms|s|%|GiB|GB/s|[KMG])?")


def _numeric_columns(rows: Sequence[Sequence[Cell]]) -> list[bool]:
    """Per column: whether every cell of it is a figure or '-' (right-aligned in HTML; text columns,
    ids and reasons, are left-aligned)."""
    width = max((len(r) for r in rows), default=0)
    cols = [[r[i].text for r in rows if i < len(r) and r[i].text not in ("-", "")] for i in range(width)]
    return [bool(c) and all(NUMBER.fullmatch(t) for t in c) for c in cols]


def _table_block(kind: str, header: Sequence[Any], rows: Sequence[Sequence[Any]], **more: Any) -> dict[str, Any]:
    cells = [_cells(r) for r in rows]
    return {"kind": kind, "header": _cells(header), "rows": cells, "num": _numeric_columns(cells), **more}


def slug(text: str) -> str:
    """A heading's anchor as GitHub makes it from Markdown ('Benchmark ra' -> 'benchmark-ra'), so that
    the table of contents links the same places in report.md and report.html."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


FOLD_ROWS = 12  # a table with more rows than this is folded under its summary (details)


class Doc:
    """Blocks: ('h', level, text) ('p', text) ('warn', text) ('table', header, rows, css class)
    ('details', summary, header, rows) ('fig', Figure) ('list', items) ('toc',) ('pre', summary, text).
    A table's cells are text or headline.Cell (a note after the text, a title shown on hover in HTML).
    Every heading has an anchor (slug); 'toc' is the table of contents of the level-2 headings, with
    the level-3 ones under each."""

    def __init__(self) -> None:
        self.blocks: list[tuple[Any, ...]] = []
        self.problems: list[str] = []
        self.headline: list[dict[str, Any]] = []  # headline.records, written as headline.csv and .json

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def warn(self, text: str) -> None:
        """A paragraph a reader must not miss (a run that mixes builds): marked in both renderings."""
        self.blocks.append(("warn", text))

    def table(self, header: Sequence[Any], rows: Sequence[Sequence[Any]], cls: str = "") -> None:
        if rows:
            self.blocks.append(("table", header, rows, cls))

    def details(self, summary: str, header: Sequence[Any], rows: Sequence[Sequence[Any]], cls: str = "") -> None:
        """A table a reader opens when wanted: folded under `summary` in HTML, after it in Markdown."""
        if rows:
            self.blocks.append(("details", summary, header, rows, cls))

    def pre(self, summary: str, text: str) -> None:
        """Text as it is (a command line, a configuration), folded under `summary` in HTML."""
        if text:
            self.blocks.append(("pre", summary, text))

    def toc(self) -> None:
        self.blocks.append(("toc",))

    def fig(self, f: plots.Figure) -> None:
        self.blocks.append(("fig", f))

    def items(self, items: Sequence[Any]) -> None:
        if items:
            self.blocks.append(("list", items))

    def anchors(self) -> dict[int, str]:
        """Block index -> the anchor of the heading there, unique in the document (a repeated heading
        gets -1, -2 after it, as GitHub numbers them)."""
        seen: dict[str, int] = {}
        out = {}
        for i, b in enumerate(self.blocks):
            if b[0] == "h":
                base = slug(b[2])
                n = seen.get(base, 0)
                seen[base] = n + 1
                out[i] = base if n == 0 else f"{base}-{n}"
        return out

    def contents(self) -> list[dict[str, Any]]:
        """The table of contents: [{'text', 'anchor', 'sub': [{'text', 'anchor'}]}] of the level-2
        headings after the title, each with its level-3 headings."""
        out: list[dict[str, Any]] = []
        for i, a in self.anchors().items():
            level, text = self.blocks[i][1], self.blocks[i][2]
            if level == 2:
                out.append({"text": text, "anchor": a, "sub": []})
            elif level == 3 and out:
                out[-1]["sub"].append({"text": text, "anchor": a})
        return out

    def markdown(self) -> str:
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "warn":
                out.append(f"> **Warning:** {b[1]}")
            elif b[0] == "list":
                out.append("\n".join(f"- {i}" for i in b[1]))
            elif b[0] == "toc":
                out.append("\n".join(f"- [{e['text']}](#{e['anchor']})"
                                     + ("".join(f"\n  - [{s['text']}](#{s['anchor']})" for s in e["sub"]))
                                     for e in self.contents()))
            elif b[0] == "table":
                out.append(_md_table(b[1], b[2]))
            elif b[0] == "details":
                out.append(f"{b[1]}:\n\n" + _md_table(b[2], b[3]))
            elif b[0] == "pre":
                out.append(f"{b[1]}:\n\n```\n{b[2]}\n```")
            elif b[0] == "fig":
                f = b[1]
                # No link to the SVG beside the PNG: a folder committed without its SVGs (the reference
                # runs) would link files that are not there.
                out.append(f"![{f.title}]({PLOTS_DIR}/{f.stem}.png)\n\n*{f.caption}*")
        return "\n\n".join(out) + "\n"

    def html(self, plots_dir: StrPath, title: str) -> str:
        """The page, self-contained: the template's style and script inline, every figure a data: URI.
        Needs jinja2 (ImportError without it)."""
        import jinja2
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                 undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        anchors = self.anchors()
        blocks: list[dict[str, Any]] = []
        for i, b in enumerate(self.blocks):
            if b[0] == "h":
                blocks.append({"kind": "h", "level": b[1], "text": b[2], "id": anchors[i]})
            elif b[0] in ("p", "warn"):
                blocks.append({"kind": b[0], "text": b[1]})
            elif b[0] == "list":
                blocks.append({"kind": "list", "items": [str(i) for i in b[1]]})
            elif b[0] == "toc":
                blocks.append({"kind": "toc", "entries": self.contents()})
            elif b[0] == "pre":
                blocks.append({"kind": "pre", "summary": b[1], "text": b[2]})
            elif b[0] == "table":
                blocks.append(_table_block("table", b[1], b[2], cls=b[3]))
            elif b[0] == "details":
                blocks.append(_table_block("details", b[2], b[3], summary=b[1], cls=f"details {b[4]}".strip()))
            elif b[0] == "fig":
                f = b[1]
                data = base64.b64encode((Path(plots_dir) / f"{f.stem}.png").read_bytes()).decode("ascii")
                blocks.append({"kind": "fig", "title": f.title, "caption": f.caption,
                               "src": f"data:image/png;base64,{data}",
                               "width": getattr(f, "width_px", None), "height": getattr(f, "height_px", None)})
        return env.get_template(HTML_TEMPLATE).render(title=title, blocks=blocks)


def _run_name(run_dir: StrPath) -> str:
    return Path(run_dir).resolve().name


def _relative(path: StrPath, run_dir: StrPath) -> str:
    """`path` relative to the run folder ('raw/ra-cpu.json'), or as it is when outside it."""
    try:
        return Path(path).resolve().relative_to(Path(run_dir).resolve()).as_posix()
    except ValueError:
        return str(path)


def _machine(doc, docs):
    seen = OrderedDict()
    for d in docs:
        c = d.get("context", {})
        key = c.get("host", "?")
        if key not in seen:
            seen[key] = [key, c.get("cpu", "?"), c.get("logical_cores", "?"),
                         _f(c.get("memory_bytes", 0) / 2**30, "{:.1f} GiB") if c.get("memory_bytes") else "-",
                         c.get("os", "?"), c.get("compiler", "?"), c.get("git_commit", "?")]
    doc.table(["host", "CPU", "logical cores", "memory", "OS", "compiler", "git commit"], list(seen.values()))
    devs = OrderedDict()
    for d in docs:
        dev = d.get("context", {}).get("device", {})
        key = (d["backend"], dev.get("name", "?"))
        if key in devs:
            continue
        if results.host_execution_doc(d):  # the limits it emulates are no device's
            devs[key] = [d["backend"], dev.get("name", "?"), HOST_DEVICE_DETAIL]
            continue
        detail = []
        if dev.get("platform"):
            detail.append(f"platform {dev['platform']}")
        if dev.get("compute_capability"):
            detail.append(f"sm {dev['compute_capability']}, {dev.get('sm_count', '?')} SMs")
        if dev.get("global_memory_bytes"):
            detail.append(f"{dev['global_memory_bytes'] / 2**30:.1f} GiB")
        pcie = dev.get("pcie") or {}
        if pcie.get("gen"):
            detail.append(f"PCIe gen {pcie['gen']} x{pcie.get('width', '?')}")
        if dev.get("threads"):
            detail.append(f"{dev['threads']} threads")
        devs[key] = [d["backend"], dev.get("name", "?"), ", ".join(detail)]
    doc.table(["backend", "device", "details"], list(devs.values()))


def _passes(doc, rows, docs):
    header, table = passes.machine_table(docs)
    if table:
        doc.table(header, table)
    header, table = passes.backend_table(rows)
    if not table:
        return
    doc.p("How the passes were taken (docs/methodology.md, 'Cold, warm and hot'): hot timed passes find what the "
          "previous pass left in the caches, warm ones follow a flush of the LLC (and a device's L2, --flush-caches). "
          "The cold pass is each case's first, kept apart from the trials: its time against the timed median says "
          "what a first query costs. Energy is read around the timed passes (RAPL for a CPU, NVML for a CUDA GPU), "
          "or the reason there is no reading.")
    doc.table(header, table)


def busy_runs(docs: Iterable[Mapping[str, Any]]) -> list[str]:
    """'ra-cpu: before 1.0 cores (cc1plus 0.98)' for every document whose context.load says another
    process held a quarter of a core or more when it started or ended (harness/load.hpp)."""
    out = []
    for d in docs:
        load = d.get("context", {}).get("load") or {}
        parts = []
        for when in ("before", "after"):
            m = load.get(when) or {}
            if m.get("busy"):
                procs = ", ".join(f"{p.get('name', '?')} {p.get('cores', 0):.2f}"
                                  for p in m.get("other_busy_processes", []))
                parts.append(f"{when}: {m.get('other_cores', 0):.2f} cores in other processes ({procs or '?'})")
        if parts:
            rank = f" rank {d['_rank']}" if d.get("_rank") else ""
            out.append(f"{Path(d.get('_path', d['benchmark'] + '-' + d['backend'])).name}{rank}: "
                       + "; ".join(parts))
    return out


def _executables(doc, manifest):
    if not manifest:
        return
    doc.h(2, "Executables")
    rows = []
    for e in manifest.get("entries", []):
        if not isinstance(e, dict):
            continue
        c = e.get("cases") or {}
        if not isinstance(c, dict):
            c = {}
        # The entry's name tells apart what one executable ran twice (ra-cpu, ra-cpu-large) and which
        # OpenCL implementation or peer it was (ra-opencl-pocl, ra-duckdb).
        rows.append([e.get("name", "?"), e.get("executable", "?"), e.get("status", "?"),
                     duration_text(e.get("duration_s")),
                     f"{c.get('ok', 0)}/{c.get('skipped', 0)}/{c.get('failed', 0)}" if c else "-",
                     e.get("reason", "")])
    doc.table(["entry", "executable", "status", "time", "cases ok/skipped/failed", "reason"], rows)


def _ceiling_line(d):
    """One executable's copy ceiling: the median of its samples, how many, their range and spread
    ('-' for a document with one ceiling measured at start-up: before issue 51, or a peer's)."""
    c = results.ceiling_samples(d)
    return [f"{d['benchmark']}-{d['backend']}", d.get("context", {}).get("device", {}).get("name", "?"),
            _f(d.get("ceiling", {}).get("memory_copy_gbps"), "{:.1f}"),
            c["samples"] if c else "-", f"{c['min']:.1f}–{c['max']:.1f}" if c else "-",
            _f(c["spread"] * 100, "{:.1f}") if c else "-"]


def _rate(v: float) -> str:
    return f"{v:.1f}" if v >= 1 else f"{v:.2g}"


def _pattern_lines(docs):
    """(header, rows) of the ceilings per access pattern (ceiling.patterns, issue 46): one row per
    executable that measured them, a column per pattern any of them has; ([], []) when none did."""
    have = [d for d in docs if d.get("_rank", 0) == 0 and isinstance((d.get("ceiling") or {}).get("patterns"), dict)
            and d["ceiling"]["patterns"]]
    names = [p for p in contract.PATTERNS if any(p in d["ceiling"]["patterns"] for d in have)]
    if not names:
        return [], []
    rows = []
    for d in have:
        pat = d["ceiling"]["patterns"]
        rows.append([f"{d['benchmark']}-{d['backend']}", d.get("context", {}).get("device", {}).get("name", "?")]
                    + [_rate(pat[p]) if isinstance(pat.get(p), (int, float)) and pat[p] > 0 else "-" for p in names])
    return ["executable", "device"] + names, rows


def _ceilings(doc, docs, rows):
    bus = [r for r in rows if r["benchmark"] == "bus" and r["status"] == "ok" and r["rank"] == 0]
    ceil = [_ceiling_line(d) for d in docs if d.get("_rank", 0) == 0]
    pattern_header, pattern_rows = _pattern_lines(docs)
    if not bus and not ceil:
        return
    doc.h(2, "Ceilings")
    doc.p("Bus bandwidth per test (GB/s of data moved once) at the largest size that ran, which is the "
          "ceiling once that size exceeds the caches, and the best over all sizes: host<->device copies "
          "(h2d, d2h) by their transfer time (throughput.transfer_gbps), the others by kernel time; then the "
          "copy ceiling (bytes read + written) of every executable, measured at start-up, again before a case "
          "once its interval (ceiling.interval_s, 10 s) had passed since the last sample, and after the last "
          "case: the median of its samples, how many, their range and spread ((max - min) / median). "
          + ("Each case's '% of its ceiling' is against the ceiling of the access pattern its bytes declare, "
             "where its executable measured them (the last table), scaled to the copy sample nearest to it; a "
             "case that declares no split, or whose executable measured only the copy, against that sample "
             "itself; the benchmark tables name each case's ceiling (throughput.ceiling_pattern). "
             if pattern_rows else
             "Each case's '% of its ceiling' is against the sample nearest to it (throughput.ceiling_gbps). ")
          + "'-': no samples recorded (an executable built before issue 51, whose one measurement at start-up "
          "every case used, or a peer's). Where a device states its memory rate (a CUDA GPU: NVML's memory clock "
          "x bus width, context.device.memory_theoretical_gbps), the tables give '% of stated peak' beside, the "
          "declared bytes moved over that rate, as nvbench's BWUtil does: the measured and the theoretical limit.")
    series: OrderedDict[Any, Any] = OrderedDict()
    for r in bus:
        series.setdefault(results.series_key(r), []).append(r)
    lines = []
    for rs in series.values():
        big = max(rs, key=lambda r: r["size_bytes"])
        # A figure above the run's ceiling (plausibility.py) is never the best a bus measured.
        best = max(plausibility.plausible(rs), key=lambda r: results.headline_gbps(r) or 0, default=None)
        variant = big["variant"] + ("" if big["checked"] else " (not verified)") \
            + (f" ({ABOVE})" if plausibility.above_ceiling(big) else "")
        lines.append([big["backend"], big["test"], variant, big["transfer"], big["params_text"] or "-",
                      _f(results.headline_gbps(big), "{:.2f}"), size_text(big["size_bytes"]),
                      _f((results.headline_cv(big) or 0) * 100, "{:.1f}"),
                      _f(results.headline_gbps(best), "{:.2f}") if best else "-",
                      size_text(best["size_bytes"]) if best else "-"])
    doc.table(["backend", "test", "variant", "transfer", "params", "GB/s at largest size", "largest size", "cv %",
               "best GB/s", "best at"], lines)
    doc.table(["executable", "device", "copy ceiling GB/s (read+write, median)", "samples", "min–max GB/s",
               "spread %"], ceil)
    if pattern_rows:
        doc.p("Ceilings per access pattern (ceiling.patterns), in GB/s of bytes read + written, measured with "
              "each executable's first sample beyond the cache: read (a sum), write (a fill), copy, add (c = a + b), "
              "triad, and gather4/gather32 (4- and 32-byte items read at random from a table beyond the cache, "
              "counting the items' bytes). A case whose mix lies between two patterns is against the time per "
              "byte interpolated between them; its random reads add their time at the gather rate "
              "(docs/methodology.md, 'A ceiling per access pattern').")
        doc.table(pattern_header, pattern_rows)


def _best_series(lines: Sequence[Row]) -> Row | None:
    """The case a test's table marks best: the highest throughput with transfers among its verified
    results with no figure above the ceiling."""
    good = [r for r in plausibility.plausible(lines) if r["checked"] and r["verified"] and r["total_gbps"]]
    return max(good, key=lambda r: r["total_gbps"], default=None)


def _param_columns(rs: Sequence[Row]) -> tuple[list[str], dict[str, Any]]:
    """(parameters that differ between a test's series: a column each, as nvbench prints its axes;
    those with one value throughout, said once above the table)."""
    varying = results.differing_keys(r["params"] for r in rs)
    first = rs[0]["params"] if rs else {}  # a key that does not vary is in every row, the first's order theirs
    return varying, {k: results.value_text(v) for k, v in first.items() if k not in varying}


def _bench_table(doc, brs):
    """Per test a table, one line per series at its largest size (what the paper's tables quote): its
    parameters as columns, the best case marked; a column that is '-' throughout left out; a long table
    folded under a summary naming its best case."""
    ok = [r for r in brs if r["status"] == "ok" and r["rank"] == 0]
    series: OrderedDict[Any, Any] = OrderedDict()
    for r in sorted(ok, key=lambda r: (r["test"], r["backend"], r["variant"], r["params_text"], r["transfer"])):
        key = results.series_key(r)
        if key not in series or r["size_bytes"] > series[key]["size_bytes"]:
            series[key] = r
    tests: OrderedDict[str, list[Row]] = OrderedDict()
    for r in series.values():
        tests.setdefault(r["test"], []).append(r)
    every_verified = all(_verified(r) == "yes" for r in series.values())
    if series and every_verified:  # a column that says yes on every row says it once
        doc.p(f"Every result in these tables was verified against the reference ({len(series)} series).")
    for test, rs in tests.items():
        varying, fixed = _param_columns(rs)
        best = _best_series(rs)
        transfers = any(r["transfer"] != "none" for r in rs)
        header = ["backend", "variant"] + varying + ["size"] + (["transfer"] if transfers else []) \
            + ["kernel ms", "kernel GB/s", "with-PCIe GB/s", "bus GB/s", "parity", "% of its ceiling", "ceiling",
               "% of stated peak", "cv %", "passes"] \
            + ([] if every_verified else ["verified"])
        lines = []
        for r in rs:
            mark = r is best
            lines.append([Cell(r["backend"], "best" if mark else "", strong=mark), r["variant"]]
                         + [results.value_text(r["params"].get(k)) if k in r["params"] else "-" for k in varying]
                         + [size_text(r["size_bytes"]) if r["size_bytes"] else "its tables"]
                         + ([r["transfer"]] if transfers else [])
                         + [_ms(r["kernel_median_s"]), _f(r["kernel_gbps"]) if r["kernel_gbps"] else "-",
                            Cell(_f(r["total_gbps"]), strong=mark),
                            _f(r["transfer_gbps"]) if r["transfer_gbps"] else "-",
                            _f(r["parity"], "{:.2f}") if r["parity"] else "-",
                            _f(r["pct_of_peak"], "{:.1f}") if r["pct_of_peak"] else "-",
                            # the ceiling's name (issue 46): its access pattern, or the copy fallback
                            (r.get("ceiling_pattern") or "-") if r["pct_of_peak"] else "-",
                            # against the device's stated memory rate, where it states one (a CUDA GPU)
                            _f(r["pct_of_stated"], "{:.1f}") if r.get("pct_of_stated") else "-",
                            _f((results.headline_cv(r) or 0) * 100, "{:.1f}"), str(r["passes"])]
                         + ([] if every_verified else [_verified(r)]))
        keep = [i for i in range(len(header)) if i < 2 or any(str(ln[i]) not in ("-", "") for ln in lines)]
        header, lines = [header[i] for i in keep], [[ln[i] for i in keep] for ln in lines]
        doc.h(3, f"{rs[0]['benchmark']} {test}")
        said = ", ".join(f"{k}={v}" for k, v in fixed.items())
        best_text = (f"best with transfers: {best['backend']} {best['variant']}"
                     + "".join(f" {k}={results.value_text(best['params'][k])}" for k in varying
                               if k in best["params"])
                     + f", {_f(best['total_gbps'])} GB/s at {size_text(best['size_bytes'])}") if best else ""
        if said or best_text:
            doc.p("; ".join(x for x in (f"all with {said}" if said else "", best_text) if x) + ".")
        if len(lines) > FOLD_ROWS:
            doc.details(f"{len(lines)} series of {test} (a click on a column head sorts)", header, lines, "sortable")
        else:
            doc.table(header, lines, "sortable")


def _grouped_outcomes(bad: list[Row]) -> list[str]:
    """Skipped and failed cases, one line per executable, status and reason with how many cases and
    their ids (a reason that 32 cases share is written once)."""
    groups: OrderedDict[tuple[str, str, str], list[str]] = OrderedDict()
    for r in bad:
        who = f"{r['benchmark']}-{r['backend']}" + (f" rank {r['rank']}" if r["rank"] else "")
        groups.setdefault((who, r["status"], r["reason"] or "no reason recorded"), []).append(r["id"])
    return [f"{who}: {status}: {reason}" + (f" ({ids[0]})" if len(ids) == 1 else
                                            f" — {len(ids)} cases: {', '.join(ids)}")
            for (who, status, reason), ids in groups.items()]


ABOVE = "ABOVE CEILING"  # how the tables mark a result with a figure above the run's ceiling


def _verified(row):
    """The verification column of a table: 'yes', 'no', 'not verified', and 'ABOVE CEILING' for a
    result with a figure above the physical ceiling of the run (listed on top of the report)."""
    return results.verification_text(row) + (f"; {ABOVE}" if plausibility.above_ceiling(row) else "")


def _moving_ceilings(doc, docs):
    """The warning on top of a run whose copy ceiling moved by more than results.CEILING_SPREAD_WARN
    within an executable: which, between what rates, and what that means for % of peak."""
    moving = results.moving_ceilings(docs)
    if moving:
        doc.warn(results.moving_ceiling_text(moving))


ABOVE_SECTION = "Figures above the physical ceiling"


def _above_ceiling(doc, rows):
    """The warning on top: every figure of a real processor's result above the physical ceiling of
    this run (plausibility.py), with the ceiling and where it comes from."""
    found = [f for r in rows for f in r.get(plausibility.FLAG) or []]
    if not found:
        return
    n = len({(f["benchmark"], f["backend"], f["rank"], f["id"]) for f in found})
    doc.h(2, ABOVE_SECTION)
    doc.warn(f"{len(found)} figures of {n} results are above the physical ceiling this run measured for them, so "
             "they cannot be true as measured (an empty input, a time that missed the work, a wrong byte count). "
             "These results are left out of the headline, the figures and the key-width pairs, marked "
             f"'{ABOVE}' in the tables, flagged in summary.csv (column {plausibility.FLAG}) and judge no target. "
             "Find the cause before quoting any of them. The rule and its margins: docs/methodology.md, "
             "'Figures above the ceiling'.")
    doc.table(*plausibility.table(found))


CONTRADICTED_SECTION = "Answers a peer contradicts"


def _contradicted(doc, every_row):
    """The warning on top: backend results verified against the suite's reference whose case a peer
    answered otherwise (results.contradict marked them not verified)."""
    marked = [r for r in every_row if r.get("contradicted_by")]
    if not marked:
        return
    doc.h(2, CONTRADICTED_SECTION)
    doc.warn(f"{len(marked)} results were verified against the suite's reference, but a peer's answer to the same "
             "case differs from that reference: the input data (a repeated key, a value out of range), the reference "
             "or the peer is wrong. They are marked not verified (the tables' 'verified' column names the peer's "
             "result) and left out of the headline and the figures. Find the cause before quoting any of them.")
    doc.table(["result", "contradicted by"],
              [[f"{r['benchmark']}-{r['backend']} {r['id']}", r["contradicted_by"]] for r in marked])


VERDICT_SECTION = "Verdict"


def _not_run(manifest: Mapping[str, Any] | None) -> list[str]:
    """'cuda: 9 entries skipped, not built' per backend and outcome of the entries that did not run or
    did not end ok (the executable's name taken out of a reason, so that entries skipped alike are
    counted once; the Executables table names each)."""
    groups: OrderedDict[tuple[str, str], list[str]] = OrderedDict()
    for e in (manifest or {}).get("entries", []):
        if not isinstance(e, dict) or e.get("status") == "ok":
            continue
        status = str(e.get("status", "?"))
        reason = str(e.get("reason") or "no reason recorded").removeprefix(f"{status}: ")
        exe = str(e.get("executable") or "")
        reason = re.sub(r" \(.*\)$", "", reason.replace(exe, "its executable")) if exe else reason
        who = str(e.get("backend") or e.get("name") or "?")
        groups.setdefault((who, f"{status}, {reason}"), []).append(str(e.get("name", "?")))
    return [f"{who}: {len(names)} {'entry' if len(names) == 1 else 'entries'} {why}" if len(names) > 1 else
            f"{names[0]} {why}" for (who, why), names in groups.items()]


def _what_ran(doc: Doc, manifest: Mapping[str, Any] | None, procs: Mapping[str, headline.Processor],
              host_rows: Sequence[Row]) -> None:
    """One short paragraph on top: the processors that ran (host execution said apart: no processor's
    times) and what did not run, by backend and reason; when and how are in the folded run details."""
    parts = []
    if procs:
        parts.append("Ran: " + "; ".join(p.label for p in procs.values())
                     + ("; host execution of the CUDA sources (correctness only)" if host_rows else ""))
    elif host_rows:
        parts.append("Ran: only host execution of the CUDA sources (correctness only, no processor's times)")
    missing = _not_run(manifest)
    if missing:
        parts.append("Not run or not ended ok: " + "; ".join(missing) + " (see Executables)")
    if parts:
        doc.p(". ".join(parts) + ".")


def _verdict(doc: Doc, ls: list[headline.Line], procs: Mapping[str, headline.Processor]) -> None:
    """The answer first: one sentence and per processor how often and by how much it beats the best
    CPU implementation, and how close its fastest cases come to the copy ceiling."""
    if not ls:
        return
    doc.h(2, VERDICT_SECTION)
    doc.p(headline.verdict_sentence(ls, procs))
    doc.table(*headline.verdict(ls, procs), cls="verdict")


def _run_details(doc: Doc, manifest: Mapping[str, Any]) -> None:
    """When the run ran, its command and the configuration it was started with, folded."""
    state = manifest.get("state")
    when = (f"ended {manifest.get('ended_utc', '?')} incomplete" if state == "incomplete" else
            f"finished {manifest.get('finished_utc') or 'not yet'}")
    config = manifest.get("config")
    text = (f"Configuration '{manifest.get('config_name', '?')}', started {manifest.get('started_utc', '?')}, {when}; "
            f"git {manifest.get('git_commit', '?')}" + (f"; MPI ranks {manifest['mpi']}" if manifest.get("mpi") else "")
            + ".\n\n" + (f"Command: {manifest['command_line']}\n\n" if manifest.get("command_line") else "")
            + ("The configuration as the driver read it:\n" + json.dumps(config, indent=1, sort_keys=True)
               if isinstance(config, dict) else ""))
    doc.pre(f"Run: configuration '{manifest.get('config_name', '?')}', started {manifest.get('started_utc', '?')}; "
            "command and configuration", text.strip())


def _headline(doc: Doc, ls: list[headline.Line], procs: Mapping[str, headline.Processor], rows: list[Row],
              docs: list[dict[str, Any]], plots_dir: Path,
              beyond_caches: Mapping[str, Any] | None = None) -> None:
    """The answer on top: its figure first, then per operation a row and per processor a column
    (speed-ups over the best CPU implementation, break-even), the case ids folded below.
    beyond_caches: run.json's record of the sizes beyond the caches (caches.read_record)."""
    if not ls:
        return
    doc.headline = headline.records(ls, procs)
    doc.h(2, "Headline: does the accelerator pay off?")
    acc = next((ln.acc for ln in ls if ln.acc), None)
    f = plots.headline(ls, plots_dir, results.machine_line(docs),
                       procs[acc].label if acc is not None and acc in procs else "none ran")
    if f is not None:
        doc.fig(f)
    for sentence in headline.summary(ls, procs, docs, beyond_caches):
        doc.p(sentence)
    energy = passes.energy_sentence(rows)
    if energy:
        doc.p(energy)
    doc.table(*headline.overview(ls, procs), cls="headline")
    doc.p(headline.processor_note(ls, procs))
    note = headline.db_column_note(ls)
    doc.p("One row per operation (a test with the parameters most processors ran, at the largest size the CPU and "
          "the accelerator both ran), a column per processor. A cell is that processor's fastest verified case "
          "as a speed-up over the best CPU implementation's time, with its PCIe transfers counted, then "
          "kernel-only in parentheses; the CPU's cell is its best time with transfers (the baseline); where the "
          "CPU did not run an operation, a cell gives times. The break-even size is the smallest measured size "
          "from which the accelerator, transfers included, stays faster than the best CPU implementation. "
          "The operation column names only the parameters that tell apart the rows of one test; the case ids, "
          "all parameters and the times behind each cell (shown on hover in report.html) are in the table that "
          "follows."
          + (f" {note}" if note else ""))
    doc.details("Case ids and times per operation and processor", *headline.table(ls, procs))
    header, geo = headline.geomean_table(ls, procs)
    if geo:
        doc.p("Whole workloads (SSB's 13 queries): per processor the geometric mean of its best time over the "
              "queries it ran, and of its speed-up over the best CPU implementation over the queries both ran.")
        doc.table(header, geo)
    header, text = headline.text_peer_table(rows)
    if text:
        doc.p("n-gram search against PostgreSQL pg_trgm (word_similarity %> at a threshold, GIN trigram index) on "
              "the same corpus and queries: other semantics than nsearch's k missing n-grams, so besides the "
              "time per query the table shows how far the hit sets agree (docs/peers.md).")
        doc.table(header, text)


def _key_widths(doc, rows, plots_dir, docs, include_unverified):
    """32- vs 64-bit keys side by side, where the run measured both."""
    ps = key_width.pairs([r for r in rows if r["checked"] or include_unverified])
    if not ps:
        return
    doc.h(2, "32- vs 64-bit keys")
    doc.p("Every case measured at both key widths (the `key` parameter), paired on all its other parameters, at "
          "the largest size both ran. An input of a given size holds fewer tuples with 64-bit keys, so the "
          "comparison is per tuple: the last column is how much longer a tuple takes with a 64-bit key.")
    doc.table(*key_width.table(ps))
    if plots.available():
        f = plots.key_widths(ps, plots_dir, results.machine_line(docs))
        if f is not None:
            doc.fig(f)


HOST_SECTION = "Host execution of the CUDA backend (correctness only, not a GPU)"
HOST_DEVICE_DETAIL = "host execution on this CPU, not a GPU: correctness only (see the section on host execution)"


def _host_execution(doc, host_rows):
    """cuda-host in a section of its own: every case with its status and verification, no time and
    no throughput (an emulation's times are no processor's)."""
    if not host_rows:
        return
    doc.h(2, HOST_SECTION)
    devices = sorted({r["device"] for r in host_rows})
    doc.p("hdb-<benchmark>-cuda-host runs the CUDA backend's sources compiled by the C++ compiler on this CPU, "
          "every GPU thread a fiber, to check on a machine without a GPU that the CUDA code computes the right "
          f"answers (device: {'; '.join(devices)}). Its results are verified against the reference like every "
          "backend's, and a failed case fails the run; but its times are a CPU's emulation of a GPU, meaningless "
          "as performance, so they are in no headline, benchmark table, figure or speed-up of this report and "
          "scripts/compare leaves them out (summary.csv and raw/ keep them, backend cuda-host).")
    per: OrderedDict[str, list[Row]] = OrderedDict()
    for r in host_rows:
        name = results.entry_of(r["path"]) if r["path"] else f"{r['benchmark']}-{r['backend']}"
        per.setdefault(name + (f" rank {r['rank']}" if r["rank"] else ""), []).append(r)
    def n(rs: list[Row], pred: Callable[[Row], bool]) -> int:
        return sum(1 for r in rs if pred(r))

    def ok_verified(r: Row) -> bool:
        return r["status"] == "ok" and bool(r["checked"]) and bool(r["verified"])

    def ok_unchecked(r: Row) -> bool:
        return r["status"] == "ok" and not r["checked"]

    def failed(r: Row) -> bool:
        return r["status"] == "failed"

    def skipped(r: Row) -> bool:
        return r["status"] == "skipped"
    doc.p(f"{len(host_rows)} cases: {n(host_rows, ok_verified)} ok and verified, {n(host_rows, failed)} failed, "
          f"{n(host_rows, skipped)} skipped" + (f", {n(host_rows, ok_unchecked)} ok but not verified (--no-verify)"
                                               if n(host_rows, ok_unchecked) else "") + ".")
    doc.table(["executable", "cases", "ok and verified", "ok, not verified", "failed", "skipped"],
              [[name, len(rs), n(rs, ok_verified), n(rs, ok_unchecked), n(rs, failed), n(rs, skipped)]
               for name, rs in per.items()])

    def verification(r):
        if r["status"] == "skipped" or (r["status"] == "failed" and not r["checked"]):
            return "-"
        return results.verification_text(r)
    doc.table(["executable", "id", "status", "verified", "reason"],
              [[name, r["id"], r["status"], verification(r), r["reason"] or "-"] for name, rs in per.items()
               for r in rs])


TRAFFIC_SECTION = "What the kernels ask of memory"
TRAFFIC_WIDTHS = ("1", "2", "4", "8", "16")  # traffic.access_width: bytes of a thread's access


def _traffic(doc, host_rows):
    """cuda-host --traffic (results[].traffic, docs/results-schema.md): what each case's kernels ask of
    memory, counted under host execution; its DRAM bytes and model_ms are a model of a GPU, no time.
    The table keeps to what a reader compares (it fits a laptop's width); every other figure is in
    the folded table below it."""
    rows = [r for r in host_rows if isinstance(r.get("traffic"), dict)]
    if not rows:
        return
    models = OrderedDict((m.get("name", "?"), m) for m in (r["traffic"].get("device_model") or {} for r in rows))
    doc.h(2, TRAFFIC_SECTION)
    doc.p("hdb-<benchmark>-cuda-host --traffic runs each case once more after its timed passes with every kernel "
          "load and store counted under host execution: warp-level requests, the 32-byte sectors they touch "
          "(sector efficiency: the bytes the requests deliver over the sectors' bytes), the width of each thread's "
          "access, and the DRAM bytes through an LRU model of the L2 of "
          + "; ".join(f"{name} ({_f((m.get('l2_bytes') or 0) / 2**20, '{:.4g}')} MiB: {m.get('source') or '?'})"
                      for name, m in models.items())
          + ", cold at the start of the pass (traffic ratio: those bytes over the case's declared minimum). "
          "model ms is a model of the time on that device (the DRAM bytes at its copy rate plus a launch time per "
          "launch), not a measurement: it is in no headline, speed-up, target, comparison or figure. CUB/Thrust "
          "calls run as host stand-ins and are not profiled: a row with library calls (\u2020) counts its kernels "
          "only.")
    several = len({(r["benchmark"], r["backend"], r["rank"]) for r in rows}) > 1

    def n(t, k):
        return _f(t.get(k), "{:.0f}")

    def size(t, k):
        v = t.get(k)
        return f"{v / 2**20:.3g} MiB" if isinstance(v, (int, float)) and v > 0 else n(t, k)

    def profiled(t, text):  # a case whose device work was all library calls has no figure of its own
        return text if any(t.get(k) for k in ("requests", "atomics", "memsets", "device_copies")) else "-"

    def name(r):
        exe = f"{r['benchmark']}-{r['backend']}" + (f" rank {r['rank']}" if r["rank"] else "")
        return (f"{exe}: " if several else "") + r["id"] + (" \u2020" if r["traffic"].get("library_calls") else "")

    short, full = [], []
    for r in rows:
        t = r["traffic"]
        se, widths = t.get("sector_efficiency"), t.get("access_width") or {}
        short.append([name(r), _f(t.get("launches_per_op"), "{:.3g}"), n(t, "requests"),
                      _f(None if se is None else se * 100, "{:.1f}%"),
                      " ".join(f"{w}B:{widths[w]}" for w in TRAFFIC_WIDTHS if widths.get(w)) or "-",
                      size(t, "dram_bytes_model"), profiled(t, _f(t.get("traffic_ratio"), "{:.2f}")),
                      profiled(t, _f(t.get("model_ms"), "{:.4g}"))])
        full.append([name(r), f"{n(t, 'requests_ld')}/{n(t, 'requests_st')}",
                     f"{n(t, 'sectors_ld')}/{n(t, 'sectors_st')}",
                     size(t, "requested_bytes"), size(t, "delivered_bytes"), n(t, "vectorised_accesses"),
                     size(t, "unique_bytes"), f"{size(t, 'dram_read_bytes_model')}/{size(t, 'dram_write_bytes_model')}",
                     f"{n(t, 'blocks')}/{n(t, 'threads')}", f"{n(t, 'barriers')}/{n(t, 'shuffles')}",
                     f"{n(t, 'atomics')} ({n(t, 'atomic_addresses')})", f"{n(t, 'memsets')}/{n(t, 'device_copies')}",
                     n(t, "library_calls")])
    doc.table(["case", "launches/op", "requests", "sector efficiency", "access widths", "DRAM bytes (model)",
               "traffic ratio", f"model ms on {', '.join(models)}"], short)
    doc.details("Every traffic figure per case", ["case", "requests ld/st", "sectors ld/st", "requested bytes",
                                                  "delivered bytes", "vectorised accesses", "unique bytes",
                                                  "DRAM read/written (model)", "blocks/threads", "barriers/shuffles",
                                                  "atomics (addresses)", "memsets/device copies", "library calls"],
                full)


def _ranks(doc, rows):
    """Statistics across MPI ranks as the harness computed them (results[].across_ranks)."""
    lines = []
    for r in rows:
        a = r.get("across_ranks")
        if r["rank"] != 0 or not a or not a.get("n"):
            continue
        lines.append([f"{r['benchmark']}-{r['backend']}", r["id"], a["n"], _ms(a.get("min")), _ms(a.get("mean")),
                      _ms(a.get("max")), _f((a.get("cv") or 0) * 100, "{:.1f}"),
                      ",".join(map(str, a.get("outlier_ranks", []))) or "-"])
    if lines:
        doc.h(2, "MPI ranks")
        doc.p("Median kernel time of each case on every rank (each rank on its own device): spread across ranks "
              "and the ranks the harness flagged as outliers.")
        doc.table(["executable", "id", "ranks", "min ms", "mean ms", "max ms", "cv %", "outlier ranks"], lines)


def _run_state(doc, manifest, run_dir):
    """A paragraph when the run did not finish: interrupted (by which signal), failed, or still
    marked running (its driver still runs, or was killed with -9)."""
    state = manifest.get("state")
    rid = manifest.get("run_id", _run_name(run_dir))
    resume = f"finish it with scripts/run-all --resume {rid}"
    if state == "interrupted":
        i = manifest.get("interrupted") or {}
        doc.p(f"This run was interrupted by {i.get('signal', '?')} at {i.get('at_utc', '?')}"
              + (f" while {', '.join(i['running'])} ran" if i.get("running") else "")
              + f": the results below are those taken before; {resume}.")
    elif state == "failed":
        doc.p(f"This run stopped on an error ({manifest.get('error', '?')}): the results below are those taken "
              f"before; {resume}.")
    elif state == "incomplete":
        left = [x for x in manifest.get("incomplete") or [] if isinstance(x, dict)]
        doc.p(f"This run is incomplete: {len(left)} executable(s) stopped before their last case ("
              + "; ".join(f"{x.get('name', '?')}: {x.get('reason', '?')}" for x in left)
              + f"): the results below are those they took; once the cause is fixed, {resume} (it reruns them)"
              + ("; one timed out, and the same limit would stop it again: give it longer with --timeout SECONDS."
                 if timed_out(manifest.get("entries") or [], left) else "."))
    elif state == "running" or (state is None and not manifest.get("finished_utc")):
        doc.p(f"This run has not finished: its driver is still running, or was killed without marking the run; "
              f"{resume} (a driver that still runs holds run.lock and makes --resume refuse).")


def _resume_changes(doc, manifest):
    """What a --resume changed for the rest of the run (run.json resume_changes): a new time limit,
    peers dropped. Said, since the entries did not all run as the configuration planned."""
    for c in manifest.get("resume_changes") or []:
        if not isinstance(c, dict):
            continue
        said = []
        limits = c.get("timeout_s") if isinstance(c.get("timeout_s"), dict) else {}
        if limits:
            said.append("the time limit of " + ", ".join(
                f"{name} ({' s -> '.join(f'{v:g}' if isinstance(v, (int, float)) else str(v) for v in change)} s)"
                if isinstance(change, list) else str(name) for name, change in limits.items()) + " changed (--timeout)")
        if c.get("peers_dropped"):
            said.append(f"the peers {', '.join(map(str, c['peers_dropped']))} were dropped (--no-peers): not run")
        if said:
            doc.p(f"A resume at {c.get('at_utc', '?')} changed the rest of the run: " + "; ".join(said) + ".")


def mixed_builds(manifest: Mapping[str, Any] | None) -> list[tuple[str, str, str, str]]:
    """[(entry name, build folder, sha256, what differs)] of the entries that ran binaries other than
    the run's build (run.json entries[].mixed_build: a --resume --allow-mixed-builds, or a rebuild
    while the run went on)."""
    out = []
    for e in (manifest or {}).get("entries", []):
        if isinstance(e, dict) and e.get("mixed_build"):
            b: dict[str, Any] = e["binary"] if isinstance(e.get("binary"), dict) else {}
            out.append((e.get("name", "?"), b.get("build_dir", "?"), b.get("sha256") or "-", e["mixed_build"]))
    return out


def _mixed_builds(doc, manifest):
    """A warning on top, and the entries with their builds, when the run's results come from more
    than one build."""
    mixed = mixed_builds(manifest)
    if not mixed:
        return
    build = (manifest.get("build") or {}).get("build_dir") or manifest.get("build_dir", "?")
    doc.warn(f"this run mixes builds: {', '.join(m[0] for m in mixed)} ran binaries other than the run's build "
             f"({build}); their results are not comparable with the others' as one build's would be. "
             "See 'Builds' below.")


def _builds(doc, manifest):
    mixed = mixed_builds(manifest)
    if not mixed:
        return
    doc.h(2, "Builds")
    build = manifest.get("build") or {}
    doc.p(f"The run began with build {build.get('build_dir') or manifest.get('build_dir', '?')}; these entries ran "
          "other binaries (each entry's binary and sha256 are in run.json):")
    doc.table(["entry", "build folder", "sha256", "differs from the run's build"],
              [[name, folder, sha[:16], why] for name, folder, sha, why in mixed])


def _missing_results(manifest, run_dir, docs, broken):
    """Executables the manifest says ended ok whose JSON is not there: named, never counted ok."""
    have = {Path(d["_path"]).resolve() for d in docs}
    out = []
    for e in manifest.get("entries", []) if manifest else []:
        if not isinstance(e, dict) or e.get("status") != "ok" or not e.get("name"):
            continue
        path = Path(run_dir, results.RAW_DIR, e["name"] + ".json")
        rel = _relative(path, run_dir)
        ranks = [p for p in have if p.name.startswith(e["name"] + ".json.rank")]
        if path.resolve() not in have and not ranks and not any(b.startswith(rel + ":") for b in broken):
            out.append(f"{rel} is missing: {e.get('executable', e['name'])} ended ok but its results are not there")
    return out


def build(run_dir: StrPath, include_unverified: bool = False, problems: Iterable[str] = (),
          loaded: tuple[list[dict[str, Any]], list[str], list[str]] | None = None
          ) -> tuple[Doc, list[Row], list[plots.Figure], str]:
    """The report's blocks of one run: (document, every result row, figures drawn, title)."""
    manifest, manifest_problem = results.read_manifest(run_dir)
    docs, broken, foreign = loaded if loaded is not None else results.load_docs_tolerant(run_dir)
    every_row = results.all_rows(docs)
    # Real processors everywhere but in the host-execution section: cuda-host's times are an emulation's.
    rows = results.processor_rows(every_row)
    host_rows = [r for r in every_row if results.host_execution(r)]
    proc_docs = results.processor_docs(docs)
    found = ([manifest_problem] if manifest_problem else []) + broken + foreign \
        + _missing_results(manifest, run_dir, docs, broken) + list(problems) \
        + [f"{_relative(d['_path'], run_dir)} is marked incomplete ({results.incomplete_text(d)}): its "
           "executable did not finish; the results it holds are reported" for d in docs if results.incomplete(d)] \
        + [f"id recorded more than once (the last one is reported): {d}" for d in results.duplicates(docs)] \
        + [f"a figure that cannot be used: {m}" for m in results.bad_figure_lines(docs, run_dir)] \
        + [f"{r['benchmark']}-{r['backend']} {r['id']}: verified, but {r['contradicted_by']}: marked not verified"
           for r in every_row if r.get("contradicted_by")]
    title = f"hetdb-bench report: {_run_name(run_dir)}"
    doc = Doc()
    doc.problems = found
    doc.h(1, title)
    ls = headline.lines(rows)
    procs = headline.processors(proc_docs)
    _what_ran(doc, manifest, procs, host_rows)
    if manifest:
        _mixed_builds(doc, manifest)  # before any figure: they are not one build's
    _verdict(doc, ls, procs)
    if docs:
        doc.toc()
    if manifest:
        _run_details(doc, manifest)
        _run_state(doc, manifest, run_dir)
        _resume_changes(doc, manifest)
    if not docs:
        doc.p("No executable wrote results in this run.")
    if host_rows:
        doc.p(f"This run includes host execution of the CUDA backend (cuda-host, {len(host_rows)} cases): the CUDA "
              "sources run on the CPU, checked for correctness only; its results are in the section "
              f"'{HOST_SECTION}', never counted as a GPU's.")
    unchecked = [r for r in rows if r["status"] == "ok" and not r["checked"]]
    if unchecked:
        doc.p(f"{len(unchecked)} results were measured without verification (--no-verify): they are marked "
              "'not verified' in the tables and "
              + ("drawn in the figures (--include-unverified)." if include_unverified else
                 "left out of the figures (scripts/report --include-unverified draws them)."))
    _moving_ceilings(doc, proc_docs)
    _contradicted(doc, every_row)
    _above_ceiling(doc, rows)
    plots_dir = Path(run_dir, PLOTS_DIR)
    _headline(doc, ls, procs, rows, proc_docs, plots_dir, caches.read_record(run_dir))
    busy = busy_runs(proc_docs)  # about times: host execution's are never quoted
    if busy:
        doc.p(f"{len(busy)} of {len(proc_docs)} result files were taken on a busy machine (another process held a "
              "quarter of a core or more when the executable started or ended): their times may be slower than this "
              "machine can do; rerun them on an idle machine before quoting them.")
        doc.items(busy)
    if docs:
        doc.h(2, "Machine")  # a heading of its own: its tables are not the headline's
    _machine(doc, docs)
    _passes(doc, rows, proc_docs)
    _executables(doc, manifest)
    _builds(doc, manifest)
    _ceilings(doc, proc_docs, rows)
    figs = plots.all_figures(rows, proc_docs, plots_dir, include_unverified=include_unverified)
    if not plots.available():
        doc.p(f"No figures: matplotlib is not available to this Python ({plots.MATPLOTLIB_ERROR}). Install "
              "python3-matplotlib (Debian) or set HDB_PYTHON to an interpreter that has it, then run "
              "scripts/report on this folder.")
    benches: OrderedDict[str, list[Row]] = OrderedDict()
    for r in rows:
        benches.setdefault(r["benchmark"], []).append(r)
    for bench, brs in benches.items():
        doc.h(2, f"Benchmark {bench}")
        _bench_table(doc, brs)
        for f in figs:
            if f.benchmark == bench:
                doc.fig(f)
    _key_widths(doc, rows, plots_dir, proc_docs, include_unverified)
    _ranks(doc, rows)
    _host_execution(doc, host_rows)
    _traffic(doc, host_rows)
    bad = [r for r in rows if r["status"] != "ok"]
    host_bad = [r for r in host_rows if r["status"] != "ok"]
    if bad or host_bad:
        doc.h(2, "Skipped and failed cases")
        doc.items(_grouped_outcomes(bad)
                  + ([f"host execution (cuda-host): {sum(r['status'] == 'failed' for r in host_bad)} failed, "
                      f"{sum(r['status'] == 'skipped' for r in host_bad)} skipped cases, listed with their reasons "
                      f"in '{HOST_SECTION}'"] if host_bad else []))
    if found:
        doc.h(2, "Problems")
        doc.items(found)
    kept = results.interrupted_copies(run_dir)
    if kept:
        doc.h(2, "Kept from interrupted attempts")
        doc.p("What an executable measured before its run was interrupted, kept when --resume reran it; not in "
              "the tables above (the rerun's results are):")
        doc.items(kept)
    return doc, every_row, figs, title


def generate(run_dir: StrPath, stream: IO[str] = sys.stdout,
             include_unverified: bool = False) -> list[plots.Figure]:
    return generate_checked(run_dir, stream, include_unverified)[0]


def main(run_dir: StrPath, stream: IO[str] = sys.stdout, include_unverified: bool = False) -> int:
    """scripts/report: 0 when every raw file was read, 1 when one was broken or missing (the report
    covers the others and names it), 2 when one is of another kind (another schema version) or holds a
    figure that cannot be used (a negative, NaN, string or sub-nanosecond time: a data error; the case
    is left out of the report, which names it under Problems, and the rest is reported)."""
    figs, broken, foreign, bad = generate_checked(run_dir, stream, include_unverified)
    for m in foreign + broken:
        print(f"report: error: {m}", file=sys.stderr)
    for m in bad:
        print(f"report: error: a figure that cannot be used: {m}", file=sys.stderr)
    return 2 if foreign or bad else 1 if broken else 0


HEADLINE_CSV, HEADLINE_JSON = "headline.csv", "headline.json"


def write_headline_files(run_dir: StrPath, recs: list[dict[str, Any]]) -> None:
    """headline.csv and headline.json: the decision numbers (headline.records), empty cells and nulls
    where a figure does not apply; none written, and stale ones removed, where the run has no headline."""
    paths = [Path(run_dir, HEADLINE_CSV), Path(run_dir, HEADLINE_JSON)]
    if not recs:
        for path in paths:
            path.unlink(missing_ok=True)
        return
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(headline.RECORD_FIELDS)
    for r in recs:
        w.writerow(["" if r[k] is None else int(r[k]) if isinstance(r[k], bool) else r[k]
                    for k in headline.RECORD_FIELDS])
    write_atomically(paths[0], out.getvalue())
    # A top-level list of records: pandas.read_json and DuckDB's read_json_auto make a row of each.
    write_atomically(paths[1], json.dumps(recs, indent=1) + "\n")


def generate_checked(run_dir: StrPath, stream: IO[str] = sys.stdout,
                     include_unverified: bool = False) -> tuple[list[plots.Figure], list[str], list[str], list[str]]:
    """-> (figures, broken, foreign, bad): the report of every usable result, the files left out, and
    the cases left out for a figure that cannot be used (results.bad_figure_lines). A folder that is
    not a run is refused before anything is written there."""
    results.check_run_dir(run_dir)
    loaded = results.load_docs_tolerant(run_dir)
    problems = results.write_summary_csv(run_dir, loaded[0])
    manifest, manifest_problem = results.read_manifest(run_dir)
    _, broken, foreign = loaded
    broken = broken + ([manifest_problem] if manifest_problem else []) \
        + _missing_results(manifest, run_dir, loaded[0], broken)
    doc, rows, figs, title = build(run_dir, include_unverified, problems, loaded)
    write_headline_files(run_dir, doc.headline)
    write_atomically(Path(run_dir, "report.md"), doc.markdown())
    try:
        page = doc.html(Path(run_dir, PLOTS_DIR), title)
    except ImportError as e:  # jinja2 missing: the Markdown report stands, and says so
        print(f"report: no report.html: jinja2 is not available ({e}); run scripts/setup, which installs it",
              file=stream)
        page = None
    if page is not None:
        write_atomically(Path(run_dir, "report.html"), page)
    written = Path(run_dir, "report.html" if page is not None else "report.md")
    print(f"report: {len(rows)} results, {len(figs)} figures -> {written}", file=stream)
    for p in doc.problems:
        print(f"report: problem: {p}", file=stream)
    if not plots.available():
        print(f"report: no figures, matplotlib is not available ({plots.MATPLOTLIB_ERROR})", file=stream)
    return figs, broken, foreign, results.bad_figure_lines(loaded[0], run_dir)
