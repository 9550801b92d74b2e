"""The figures are made for the size they are shown at (issue 47, item 4): every PNG at most
plots.MAX_WIDTH_PX wide at 1x, the headline's at most plots.MAX_HEADLINE_HEIGHT_PX tall with 46
operations (a dot plot, its rows labelled by the test and the parameters that tell them apart);
Figure.width_px and height_px are the PNG's real size; no None in a title, label or legend; a panel
whose series have one size each is bars from 0, not one-point curves; a % axis starts at 0."""
import re
import unittest
from pathlib import Path
from unittest import mock

from helpers import FIXTURE, TempDirCase, has_matplotlib

from hdb import headline, plots, results

from make_fixture import bw, document, record

K, M = 1 << 10, 1 << 20
# A value left out of a label would have read: 'threads=None', 'k=nan', 'k=' before ',', ')' or the end.
EMPTY_VALUE = re.compile(r"\bNone\b|\bnan\b|=\s*(,|\)|\]|$)", re.MULTILINE)


def texts(fig):
    """Every text of a figure a reader sees: titles, axis labels, tick labels set as text, legends, notes."""
    out = [t.get_text() for t in fig.texts]
    if fig._suptitle is not None:
        out.append(fig._suptitle.get_text())
    for lg in fig.legends:
        out += [t.get_text() for t in lg.get_texts()]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        out += [t.get_text() for t in ax.texts]
        if ax.get_legend():
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    return [t for t in out if t]


class Drawn:
    """Calls a figure function with plots._finish wrapped: each figure's matplotlib objects are read
    (texts, and the panels through `inspect`) before the figure is written as usual."""

    def __init__(self, inspect=None):
        self.texts, self.panels, self.figures = [], [], []
        self.inspect = inspect

    def __enter__(self):
        finish = plots._finish

        def wrapped(fig, out_dir, figure, suptitle, machine, **kw):
            fig.suptitle(suptitle)
            self.texts.append((figure.stem, texts(fig)))
            if self.inspect:
                self.panels += [self.inspect(ax) for ax in fig.axes if ax.get_visible()]
            f = finish(fig, out_dir, figure, suptitle, machine, **kw)
            self.figures.append(f)
            return f
        self.patch = mock.patch.object(plots, "_finish", wrapped)
        self.patch.start()
        return self

    def __exit__(self, *exc):
        self.patch.stop()


def png_shape(path):
    """(width, height) of a PNG as matplotlib reads its pixels (not plots.png_size)."""
    import matplotlib.image
    h, w = matplotlib.image.imread(str(path)).shape[:2]
    return w, h


def panel(ax):
    """What a panel draws: its lines with data (not the 100 % or 1x rules), its bars, its value axis."""
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) and not ln.get_label().startswith("_")]
    bars = [p for c in ax.containers for p in c]
    return {"title": ax.get_title(), "lines": lines, "bars": bars, "xlim": ax.get_xlim(), "ylim": ax.get_ylim(),
            "yticks": [t.get_text() for t in ax.get_yticklabels()], "ylabel": ax.get_ylabel(),
            "headings": [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"],
            "xlabel": ax.get_xlabel()}


def ra_doc(backend, cases, ceiling=20.0):
    doc = document("ra", "cpu" if backend == "duckdb" else backend, cases, ceiling)
    doc["backend"] = backend
    return doc


# The reference CPU run's headline: 46 operations of five benchmarks, the set operations at another size.
RA_TESTS = ["project", "select", ("unique", "sorted"), ("unique", "unsorted"), "reduce", ("reduce_by_key", "sorted"),
            ("reduce_by_key", "unsorted"), ("join", "sorted"), ("join", "unsorted"), "add", "subtract", "multiply",
            "sort", ("set_union", "sorted"), ("set_union", "unsorted"), ("set_intersection", "sorted"),
            ("set_intersection", "unsorted"), ("set_difference", "sorted"), ("set_difference", "unsorted"), "product"]


def operations_docs():
    """cpu, opencl (with transfers) and duckdb documents of 46 operations."""
    cpu, ocl, duck = [], [], []

    def add(bench, test, params, sizes, i):
        for s in sizes:
            n = s or 64 * M
            size_kw = {} if s else {"input_bytes": n}
            for v, g in (("serial", 0.5), ("parallel", 1.5)):
                cpu.append((bench, record(test, v, s, bw(n, g * (1 + i % 3)), params=params, **size_kw)))
            ocl.append((bench, record(test, "paper", s, bw(n, 4.0 / (1 + i % 4)), bw(n, 12), bw(n, 12) / 4,
                                      params=params, transfer="pinned", ceiling=200.0, **size_kw)))
            duck.append((bench, record(test, "sql_table", s, bw(n, 0.8 + i % 5), params=dict(params, threads=2),
                                       **size_kw)))
    i = 0
    for t in RA_TESTS:
        test, order = (t, None) if isinstance(t, str) else t
        params = {"dist": "uniform", "key": 32} | ({"input": order} if order else {})
        add("ra", test, params, (1 * M, 32 * M if test.startswith("set_") or test == "product" else 256 * M), i)
        i += 1
    for q in "ABC":
        add("tpch", q, {"data": "random", "key": 32}, (1 * M, 256 * M), i)
        add("tpch", q, {"data": "tpch", "key": 32, "sf": 1}, (0,), i + 1)
        i += 2
    for q in ("q1.1", "q1.2", "q1.3", "q2.1", "q2.2", "q2.3", "q3.1", "q3.2", "q3.3", "q3.4", "q4.1", "q4.2", "q4.3"):
        add("ssb", q, {"data": "generated", "sf": 1}, (0,), i)
        i += 1
    for step in ("delta_dict", "dict_merge", "reencode", "merge"):
        add("merge", step, {"delta": 1, "type": "u32", "unique": 1}, (1 * M, 256 * M), i)
        i += 1
    for test in ("index", "search", "batch"):
        add("ngram", test, {"k": 0} if test != "index" else {}, (1 * M, 32 * M), i)
        i += 1
    docs = []
    for backend, recs, ceiling in (("cpu", cpu, 20.0), ("opencl", ocl, 200.0), ("duckdb", duck, 20.0)):
        for bench in dict.fromkeys(b for b, _ in recs):
            doc = document(bench, "cpu" if backend == "duckdb" else backend, [r for b, r in recs if b == bench],
                           ceiling)
            doc["backend"] = backend
            docs.append(doc)
    return docs


class PlotsTest(TempDirCase):
    def setUp(self):
        super().setUp()
        if not has_matplotlib():
            self.skipTest("matplotlib is not available")

    def assert_fits(self, figure, max_height=None):
        path = Path(self.tmp, "plots", f"{figure.stem}.png")
        w, h = png_shape(path)
        self.assertEqual((figure.width_px, figure.height_px), (w, h), figure.stem)
        self.assertLessEqual(w, plots.MAX_WIDTH_PX, figure.stem)
        self.assertGreater(w, plots.MAX_WIDTH_PX * 0.8, figure.stem)  # drawn for the column, not for a corner
        if max_height:
            self.assertLessEqual(h, max_height, figure.stem)

    def assert_no_empty_values(self, drawn):
        for stem, ts in drawn.texts:
            for t in ts:
                self.assertIsNone(EMPTY_VALUE.search(t), f"{stem}: {t!r}")

    def test_every_figure_of_the_fixture_fits_the_column(self):
        docs = results.load_docs(FIXTURE)
        rows = results.all_rows(docs)
        with Drawn() as drawn:
            figs = plots.all_figures(rows, docs, Path(self.tmp, "plots"))
            figs.append(plots.headline(headline.lines(rows), Path(self.tmp, "plots"), results.machine_line(docs),
                                       "fixture GPU"))
        self.assertGreater(len(figs), 20)
        for f in figs:
            self.assert_fits(f)
        self.assert_no_empty_values(drawn)
        # Text no smaller than FONT points, which are CSS points at DPI: nothing shrinks in the page.
        self.assertEqual(plots.DPI, 96)

    def test_the_headline_of_46_operations_fits_a_screen(self):
        docs = operations_docs()
        ls = headline.lines(results.all_rows(docs))
        self.assertEqual(len(ls), 46)
        with Drawn(panel) as drawn:
            f = plots.headline(ls, Path(self.tmp, "plots"), results.machine_line(docs), "opencl device")
        self.assert_fits(f, plots.MAX_HEADLINE_HEIGHT_PX)
        self.assertGreaterEqual(f.height_px, 500)  # rows still readable: about 15 px or more each
        self.assert_no_empty_values(drawn)
        labels = [t for p in drawn.panels for t in p["yticks"]]
        # A row per operation and a heading per benchmark (again where a column begins inside one).
        headings = [t for p in drawn.panels for t in p["headings"]]
        self.assertEqual(len(labels) - len(headings), 46)
        for heading in ("ra at 256M per input", "tpch at 256M per input", "ssb", "merge at 256M per input",
                        "ngram at 32M per input"):
            self.assertIn(heading, headings)
        # Short labels: the test and only the parameters that tell its operations apart; the size once,
        # in the heading, or after an operation compared at another.
        for label in ("project", "unique (input=sorted)", "set_union (input=unsorted) @32M", "A (data=random)",
                      "A (data=tpch, sf=1)", "q2.3", "delta_dict", "batch"):
            self.assertIn(label, labels)
        self.assertFalse([t for t in labels if "[" in t or "dist=" in t or "key=" in t], labels)
        # Dots, not bars: markers on a log axis of speed-up with a line at 1x.
        self.assertFalse([b for p in drawn.panels for b in p["bars"]])
        self.assertTrue(all(p["xlim"][0] < 1 < p["xlim"][1] for p in drawn.panels))

    def test_no_none_when_a_parameter_is_fixed_at_no_value(self):
        """DuckDB's cases carry threads, the suite's do not: with more than MAX_SERIES series the panel
        keeps the cases without threads, and says nothing of threads (it said 'threads=None')."""
        sel = {"dist": "uniform", "selectivity": 0.5}
        cpu = [record("select", v, s, bw(s, g), params=dict(sel, key=k)) for v, g in
               (("serial", 1), ("parallel", 2), ("pstl", 1.5)) for k in (32, 64) for s in (1 * M, 32 * M)]
        ocl = [record("select", v, s, bw(s, 3), bw(s, 12), bw(s, 40), params=dict(sel, key=k), transfer="pinned",
                      ceiling=200.0) for v in ("paper", "tuned") for k in (32, 64) for s in (1 * M, 32 * M)]
        duck = [record("select", "sql_table", s, bw(s, 1), params=dict(sel, key=32, threads=t))
                for t in (1, 2) for s in (1 * M, 32 * M)]
        docs = [ra_doc("cpu", cpu), ra_doc("opencl", ocl, 200.0), ra_doc("duckdb", duck)]
        rows = results.all_rows(docs)
        with Drawn(panel) as drawn:
            for fn in (plots.throughput, plots.pct_of_peak, plots.breakdown, plots.speedup):
                self.assert_fits(fn(rows, "ra", Path(self.tmp, "plots"), "machine"))
        self.assert_no_empty_values(drawn)
        every = " ".join(t for _, ts in drawn.texts for t in ts)
        self.assertNotIn("threads", every)
        self.assertIn("transfer=pinned", every)  # the one transfer mode, named once in the panel's note
        throughput = drawn.panels[0]
        self.assertLessEqual(len([ln for ln in throughput["lines"] if "with PCIe" not in ln.get_label()]),
                             plots.MAX_SERIES)

    def test_a_panel_of_one_size_is_bars_from_zero(self):
        """The n-gram search of the fixture ran at one size: a bar per series, labelled, from 0;
        the same test at three sizes is curves."""
        docs = results.load_docs(FIXTURE)
        rows = [r for r in results.all_rows(docs) if r["benchmark"] == "ngram"]
        with Drawn(panel) as drawn:
            for fn in (plots.throughput, plots.pct_of_peak):
                self.assert_fits(fn(rows, "ngram", Path(self.tmp, "plots"), "machine"))
        self.assertEqual(len(drawn.panels), 2)
        for p in drawn.panels:
            self.assertEqual(p["lines"], [], p["title"])
            self.assertEqual(p["xlim"][0], 0, p["title"])
            self.assertIn("at 1M per input", p["title"])
            self.assertEqual(p["yticks"], ["cpu: baseline", "cpu: binned", "cuda: gpu"])
        tput, pct = drawn.panels
        self.assertEqual(len(tput["bars"]), 4)  # cuda's with its PCIe transfers beside its kernel-only bar
        self.assertEqual(len(pct["bars"]), 3)
        self.assertIn("throughput", tput["xlabel"])
        ra = [r for r in results.all_rows(docs) if r["benchmark"] == "ra"]
        with Drawn(panel) as drawn:
            plots.throughput(ra, "ra", Path(self.tmp, "plots"), "machine")
        self.assertTrue(all(p["lines"] and not p["bars"] for p in drawn.panels))

    def test_a_percent_axis_starts_at_zero(self):
        """Curves between 72 and 100 % of the copy ceiling: the axis from 0, not from 72 %."""
        cpu = [record("select", v, s, bw(s, 1), params={"dist": "uniform"}) for v in ("serial", "parallel")
               for s in (32 * K, 1 * M, 32 * M)]
        for r, pct in zip(cpu, (72, 80, 90, 75, 85, 99), strict=True):
            r["throughput"]["pct_of_peak"] = pct
        rows = results.all_rows([ra_doc("cpu", cpu)])
        with Drawn(panel) as drawn:
            self.assert_fits(plots.pct_of_peak(rows, "ra", Path(self.tmp, "plots"), "machine"))
        [p] = drawn.panels
        self.assertEqual(len(p["lines"]), 2)
        self.assertEqual(p["ylim"][0], 0)


if __name__ == "__main__":
    unittest.main()
