"""scripts/report on the committed fixture draws every figure and writes valid, self-contained HTML;
summary.csv is the executables' CSV files end to end; results are keyed by id and read by name
(bus copies by their transfer bandwidth, n-gram error levels by the param k); unverified results
are marked and kept out of the figures; the results reader handles MPI (EP-mode) documents."""
import contextlib
import copy
import csv
import html.parser
import io
import json
import unittest
from pathlib import Path
from unittest import mock

from helpers import CSV_COLUMNS, FIXTURE, NO_FIGURES, TempDirCase, has_matplotlib, no_figures, script

from hdb import compare, headline, plots, report, results

import make_fixture

EVERY_FIGURE = [f"{kind}-{b}" for b in ("bus", "ra", "tpch", "merge", "ngram") for kind in ("throughput", "peak")] + \
    [f"{kind}-{b}" for b in ("ra", "tpch", "merge", "ngram") for kind in ("breakdown", "speedup")] + \
    ["merge-cycles", "merge-gpu-speedup", "ngram-errors", "tpch-kernels", "headline"]
VOID = {"meta", "img", "br", "hr", "link", "input"}


class HtmlChecker(html.parser.HTMLParser):
    """Tags balanced; every image inline (data: URI); no external resource."""

    def __init__(self):
        super().__init__()
        self.stack, self.images, self.errors = [], 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images += 1
            if not a.get("src", "").startswith("data:image/"):
                self.errors.append(f"image not inline: {a.get('src', '')[:60]}")
        for k in ("href", "src"):
            if k in a and a[k].startswith(("http:", "https:", "//")):
                self.errors.append(f"external {k}: {a[k]}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def check_html(test, path):
    with Path(path).open() as f:
        text = f.read()
    test.assertTrue(text.startswith("<!DOCTYPE html>"))
    c = HtmlChecker()
    c.feed(text)
    c.close()
    test.assertEqual(c.errors, [])
    test.assertEqual(c.stack, [])
    return c, text


class ReportTest(TempDirCase):
    def test_fixture_report_has_every_figure(self):
        run = self.copy_fixture()
        p = script("report", run)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for name in ("summary.csv", "report.md", "report.html"):
            self.assertTrue(Path(run, name).is_file(), name)
        c, text = check_html(self, Path(run, "report.html"))
        with Path(run, "report.md").open() as f:
            md = f.read()
        for text_needed in ("Ceilings", "Benchmark merge", "Skipped and failed cases", "does not fit",
                            "no OpenCL device"):
            self.assertIn(text_needed, md)
        if not has_matplotlib():
            self.skipTest("matplotlib is not available: figures not checked")
        for stem in EVERY_FIGURE:
            for ext in ("png", "svg"):
                path = Path(run, "plots", f"{stem}.{ext}")
                self.assertTrue(path.is_file() and path.stat().st_size > 1000, path)
            self.assertIn(f"plots/{stem}.png", md)
        self.assertEqual(c.images, len(EVERY_FIGURE))
        with Path(run, "plots", "throughput-bus.svg").open() as f:
            svg = f.read()
        self.assertIn("fixture GPU", svg)  # every figure names host and devices
        self.assertIn("32M", svg)  # sizes as 32K..1G

    def test_status_tables_name_each_entry_and_group_reasons(self):
        run = self.copy_fixture()
        with no_figures():
            report.generate(run, stream=io.StringIO())
        with Path(run, "report.md").open() as f:
            md = f.read()
        with Path(run, "run.json").open() as f:
            entries = json.load(f)["entries"]
        executables = md.split("## Executables")[1].split("\n## ")[0]
        self.assertIn("| entry | executable | status |", executables)
        for e in entries:
            self.assertIn(f"| {e['name']} | {e['executable']} |", executables)
        # A reason that several cases share is one line with the count and their ids.
        rows = [{"benchmark": "ra", "backend": "opencl", "rank": 0, "status": "skipped", "id": f"sort/x@{k}K",
                 "reason": "64-bit keys: not in this backend"} for k in (32, 64, 128)]
        rows.append(dict(rows[0], status="failed", reason="differs", id="join/y@32K"))
        self.assertEqual(report._grouped_outcomes(rows),
                         ["ra-opencl: skipped: 64-bit keys: not in this backend — 3 cases: sort/x@32K, sort/x@64K, "
                          "sort/x@128K", "ra-opencl: failed: differs (join/y@32K)"])

    def test_headline_files_hold_the_decision_numbers(self):
        run = self.copy_fixture()
        with no_figures():
            report.generate(run, stream=io.StringIO())
        with Path(run, "headline.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        with Path(run, "headline.json").open() as f:
            recs = json.load(f)
        self.assertEqual(list(rows[0]), list(headline.RECORD_FIELDS))
        self.assertEqual(len(rows), len(recs))
        self.assertEqual([r["case_id"] for r in rows], [r["case_id"] for r in recs])
        cpu = [r for r in recs if r["processor"] == "cpu"]
        acc = [r for r in recs if r["processor"] == "cuda"]
        self.assertTrue(cpu and acc)
        for r in cpu:  # the baseline: no speed-up over itself, an empty cell in the CSV
            self.assertTrue(r["baseline"])
            self.assertIsNone(r["speedup_total"])
        self.assertTrue(all(r["speedup_total"] > 0 and r["speedup_kernel"] > 0 for r in acc))
        with_ci = [r for r in acc if r["speedup_total_ci_low"] is not None]
        self.assertTrue(with_ci, "the fixture's trials give intervals")
        for r in with_ci:
            self.assertLessEqual(r["speedup_total_ci_low"], r["speedup_total_ci_high"])
        by_case = {r["case_id"]: r for r in rows}
        for r in cpu:
            self.assertEqual((by_case[r["case_id"]]["baseline"], by_case[r["case_id"]]["speedup_total"]), ("1", ""))
        # pandas and DuckDB take both files with no options (scripts/setup installs both), the empty
        # cells as missing values and the speed-ups as numbers.
        import duckdb
        import pandas
        for frame in (pandas.read_csv(Path(run, "headline.csv")), pandas.read_json(Path(run, "headline.json"))):
            self.assertEqual(list(frame.columns), list(headline.RECORD_FIELDS))
            self.assertEqual(len(frame), len(recs))
            self.assertEqual(str(frame["speedup_total"].dtype), "float64")
            self.assertEqual(int(frame["speedup_total"].isna().sum()), len(cpu))
        con = duckdb.connect()
        for fn, name in (("read_csv_auto", "headline.csv"), ("read_json_auto", "headline.json")):
            got = con.execute(f"SELECT count(*), count(speedup_total) FROM {fn}('{Path(run, name)}')").fetchall()
            self.assertEqual(got, [(len(recs), len(acc))])
        # The overview's cells are these numbers: the first accelerator record's speed-up is in report.md.
        with Path(run, "report.md").open() as f:
            md = f.read()
        self.assertIn(f"{acc[0]['speedup_total']:.3g}"[:3], md)
        # A run without a headline (no operation both sides ran) leaves no stale files behind.
        for path in Path(run, "raw").iterdir():
            if not path.name.startswith("bus-"):
                path.unlink()
        with no_figures():
            report.generate(run, stream=io.StringIO())
        self.assertFalse(Path(run, "headline.csv").exists() or Path(run, "headline.json").exists())

    def test_benchmark_without_results_is_absent(self):
        run = self.copy_fixture()
        for path in Path(run, "raw").iterdir():
            if not path.name.startswith("bus-"):
                path.unlink()
        figs = report.generate(run, stream=io.StringIO())
        self.assertTrue(all(f.benchmark == "bus" for f in figs))
        with Path(run, "report.md").open() as f:
            self.assertNotIn("Benchmark merge", f.read())

    def test_without_matplotlib_the_report_says_so(self):
        run = self.copy_fixture()
        p = script("report", run, env={"HDB_NO_MATPLOTLIB": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("matplotlib is not available", p.stdout)
        c, _ = check_html(self, Path(run, "report.html"))
        self.assertEqual(c.images, 0)
        with Path(run, "report.md").open() as f:
            self.assertIn("python3-matplotlib", f.read())

    def test_summary_csv_is_the_raw_csv_files_end_to_end(self):
        run = self.copy_fixture()
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(run, "summary.csv").open(newline="") as f:
            summary = list(csv.reader(f))
        # The executables' columns, then the driver's own: above_ceiling (test_plausibility.py), key and
        # the medians' intervals (test_summary_csv.py).
        self.assertEqual(summary[0], CSV_COLUMNS + ["above_ceiling", "key", "kernel_median_lo_s", "kernel_median_hi_s",
                                                    "total_median_lo_s", "total_median_hi_s"])
        expected = []
        for jp in results.raw_files(run):  # the order of the JSON documents
            with Path(results.csv_path_for(jp)).open(newline="") as f:
                raw = list(csv.reader(f))
            self.assertEqual(raw[0], summary[0][:len(CSV_COLUMNS)])  # one header, the executables' own
            entry = Path(jp).name.split(".json")[0]
            # nothing of the fixture is above its ceiling; the key names the entry, rank and id; 3
            # trials a case give no 95 % interval of a median (6 are the fewest)
            expected += [r + ["", f"{entry}:{r[3]}:{r[0]}", "", "", "", ""] for r in raw[1:]]
        self.assertEqual(summary[1:], expected)
        keys = [r[summary[0].index("key")] for r in summary[1:]]
        self.assertEqual(len(set(keys)), len(keys), "summary.csv's key is unique")
        # strict=False: summary.csv has the driver's own columns after the executables'
        ids = [dict(zip(CSV_COLUMNS, r, strict=False))["id"] for r in summary[1:]]
        self.assertIn("h2d/copy[transfer=pinned]@32M", ids)
        with Path(run, "report.md").open() as f:
            self.assertNotIn("## Problems", f.read())

    def test_a_missing_csv_is_a_problem_not_invented_rows(self):
        run = self.copy_fixture()
        Path(run, "raw", "ra-cuda.csv").unlink()
        with Path(run, "raw", "tpch-cpu.csv").open("w") as f:
            f.write("benchmark,backend,test\ntpch,cpu,A\n")  # some other writer's columns
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(run, "summary.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        have = {(r["benchmark"], r["backend"]) for r in rows}
        self.assertNotIn(("ra", "cuda"), have)
        self.assertNotIn(("tpch", "cpu"), have)
        self.assertIn(("ra", "cpu"), have)
        with Path(run, "report.md").open() as f:
            md = f.read()
        problems = md[md.index("## Problems"):]
        self.assertIn("raw/ra-cuda.csv is missing", problems)
        self.assertIn("raw/tpch-cpu.csv: its header is not", problems)
        self.assertIn("Benchmark ra", md)  # the JSON is still reported
        self.assertIn("raw/ra-cuda.csv is missing", p.stdout)

    def test_per_rank_files_when_the_merged_ones_are_missing(self):
        run = self.copy_fixture()
        raw = Path(run, "raw")
        for ext in ("json", "csv"):  # an MPI run that crashed before rank 0 merged: rank files only
            Path(raw, f"bus-cpu.{ext}").rename(Path(raw, f"bus-cpu.{ext}.rank0"))
        with Path(raw, "bus-cpu.json.rank0").open() as f:
            doc = json.load(f)
        doc["context"]["mpi"] = {"active": True, "rank": 1, "size": 2}
        with Path(raw, "bus-cpu.json.rank1").open("w") as f:
            json.dump(doc, f)
        with Path(raw, "bus-cpu.csv.rank0").open() as f:
            text = f.read()
        with Path(raw, "bus-cpu.csv.rank1").open("w") as f:
            f.write(text.replace(",bus,cpu,0,", ",bus,cpu,1,"))
        with no_figures():
            report.generate(run, stream=io.StringIO())
        with Path(run, "summary.csv").open(newline="") as f:
            bus = [(r["rank"], r["id"]) for r in csv.DictReader(f)
                   if r["benchmark"] == "bus" and r["backend"] == "cpu"]
        n = len(doc["results"])
        self.assertEqual(len(bus), 2 * n)
        self.assertEqual([r for r, _ in bus], ["0"] * n + ["1"] * n)
        rows = [r for r in results.all_rows(results.load_docs(run))
                if r["benchmark"] == "bus" and r["backend"] == "cpu"]
        self.assertEqual(sorted({r["rank"] for r in rows}), [0, 1])

    def test_an_id_recorded_twice_is_a_problem(self):
        run = self.copy_fixture()
        path = Path(run, "raw", "ra-cpu.json")
        with path.open() as f:
            doc = json.load(f)
        doc["results"].append(copy.deepcopy(doc["results"][0]))
        with path.open("w") as f:
            json.dump(doc, f)
        with no_figures():
            report.generate(run, stream=io.StringIO())
        with Path(run, "report.md").open() as f:
            md = f.read()
        self.assertIn("id recorded more than once (the last one is reported): "
                      f"ra-cpu rank 0: {doc['results'][0]['id']}", md)

    def test_tables_have_parameters_as_columns_and_bus_copies_read_transfer_bandwidth(self):
        run = self.copy_fixture()
        with no_figures():
            report.generate(run, stream=io.StringIO())
        with Path(run, "report.md").open() as f:
            md = f.read()
        # Per test a table: the parameters that differ are columns, those that do not said once above it,
        # the best case (throughput with transfers) marked, a column that is '-' throughout left out.
        self.assertIn("### ra select\n\nall with dist=uniform, selectivity=0.5; best with transfers: cuda thrust, "
                      "15.9 GB/s at 32M.", md)
        # Each % of its ceiling with the ceiling's name (issue 46): its access pattern, or the copy fallback.
        self.assertIn("| cuda best | thrust | 32M | pinned | 0.1218 | 275 | 15.9 | 21.1 | 16.34 | 18.4 | copy | 1.5 "
                      "| 3 | yes |", md)
        self.assertIn("| backend | variant | k | size | transfer | kernel ms |", md)
        self.assertIn("| cuda | gpu | 4 | 1M | pinned | 0.625 | 1.68 | 1.56 | 29.2 | 0.07 | 0.1 | copy (reads and "
                      "writes undeclared) | 1.5 | 3 |", md)
        self.assertIn("| cpu | baseline | 0 | 1M | none | 1 | 1.05 | 1.05 | - | - | 8.1 | read | 1.5 | 3 |", md)
        self.assertIn("| backend | variant | size | kernel ms | kernel GB/s | with-PCIe GB/s | % of its ceiling | "
                      "ceiling | cv % | passes |\n|---|---|---|---|---|---|---|---|---|---|\n| cpu best | parallel | "
                      "32M | 1.866 |", md)
        # More rows than FOLD_ROWS: folded in HTML, under a summary that says how many.
        self.assertIn("15 series of search (a click on a column head sorts):", md)
        page = Path(run, "report.html").read_text()
        self.assertIn("<details>\n<summary>15 series of search (a click on a column head sorts)</summary>\n"
                      '<div class="scroll"><table class="details sortable">', page)
        # The ceilings: h2d/d2h by throughput.transfer_gbps (their kernel_gbps is 0), others by kernel.
        docs = results.load_docs(run)
        rows = results.all_rows(docs)
        d = report.Doc()
        report._ceilings(d, docs, rows)
        table = next(b for b in d.blocks if b[0] == "table")
        lines = {(r[0], r[1], r[3]): r for r in table[2]}
        h2d = next(r for r in rows if r["id"] == "h2d/copy[transfer=pinned]@32M")
        self.assertEqual(h2d["kernel_gbps"], 0)
        self.assertEqual(lines[("cuda", "h2d", "pinned")][5], f"{h2d['transfer_gbps']:.2f}")
        self.assertIn(("cuda", "h2d", "pageable"), lines)
        dc = next(r for r in rows if r["id"] == "device_copy/kernel@32M")
        self.assertEqual(lines[("cuda", "device_copy", "none")][5], f"{dc['kernel_gbps']:.2f}")
        # The ceilings per access pattern (issue 46), of the executables that measured them (not ra-opencl).
        self.assertIn("| executable | device | read | write | copy | add | triad | gather4 | gather32 |\n|---|", md)
        self.assertIn("| ra-cpu | fixture CPU | 26.0 | 15.0 | 20.0 | 22.0 | 21.0 | 1.2 | 6.7 |", md)
        self.assertIn("| ra-cuda | fixture GPU | 3900.0 | 2250.0 | 3000.0 | 3300.0 | 3150.0 | 187.5 | 1000.0 |", md)
        patterns = md.split("| executable | device | read |")[1].split("\n\n")[0]
        self.assertNotIn("ra-opencl", patterns)

    def test_unverified_results_are_marked_and_left_out_of_figures(self):
        run = self.copy_fixture()
        report.generate(run, stream=io.StringIO())
        with Path(run, "report.md").open() as f:
            md = f.read()
        self.assertIn("3 results were measured without verification", md)
        line = next(ln for ln in md.splitlines() if ln.startswith("| opencl | paper | 32M | pinned |"))
        self.assertTrue(line.rstrip().endswith("| not verified |"), line)
        if not has_matplotlib():
            self.skipTest("matplotlib is not available: figures not checked")
        # Lines are named by backend, variant and what tells them apart in the panel (its test, the
        # size on the x axis, the parameters and transfer mode they share are named once, in its title).
        with Path(run, "plots", "throughput-ra.svg").open() as f:
            self.assertNotIn("opencl: paper", f.read())
        p = script("report", run, "--include-unverified")
        self.assertEqual(p.returncode, 0, p.stderr)
        with Path(run, "plots", "throughput-ra.svg").open() as f:
            svg = f.read()
        self.assertIn("opencl: paper not verified", svg)
        self.assertIn("dist=uniform, selectivity=0.5, transfer=pinned", svg)

    def test_a_hetdb_bench_1_document_is_refused_naming_the_file(self):
        run = self.copy_fixture()
        path = Path(run, "raw", "bus-cpu.json")
        with path.open() as f:
            doc = json.load(f)
        doc["schema"] = "hetdb-bench/1"
        with path.open("w") as f:
            json.dump(doc, f)
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 2)
        self.assertIn("bus-cpu.json: not a hetdb-bench/2 results document (schema 'hetdb-bench/1')", p.stderr)

    def test_not_a_results_document_is_a_usage_error(self):
        run = self.copy_fixture()
        with Path(run, "raw", "ra-cpu.json").open("w") as f:
            f.write('{"schema": "something-else"}')
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 2)
        self.assertIn("ra-cpu.json", p.stderr)
        self.assertEqual(script("report", str(Path(self.tmp, "missing"))).returncode, 2)


class FigureDataTest(unittest.TestCase):
    """What the figures draw, read from the axes before the figure is written."""

    def lines(self, figure_fn, bench):
        docs = results.load_docs(FIXTURE)
        rows = [r for r in results.all_rows(docs) if r["benchmark"] == bench]
        drawn = []
        finish = plots._finish

        def capture(fig, out_dir, figure, suptitle, machine):
            for ax in fig.axes:
                drawn.append([(ln.get_label(), list(ln.get_xdata()), list(ln.get_ydata())) for ln in ax.get_lines()
                              if not ln.get_label().startswith("_")])
            plots.plt.close(fig)
            return figure
        plots._finish = capture
        try:
            figure_fn(rows, bench, "/nonexistent", "machine")
        finally:
            plots._finish = finish
        return drawn

    def setUp(self):
        if not has_matplotlib():
            self.skipTest("matplotlib is not available")

    def test_ngram_error_levels_are_the_param_k_one_line_per_series(self):
        speed, share = self.lines(plots.ngram_errors, "ngram")
        self.assertEqual(len(speed), 2, speed)  # cpu/binned and cuda/gpu, each across the error levels
        for label, xs, _ in speed:
            self.assertEqual(xs, [0, 1, 2, 3, 4], label)
            self.assertNotIn("k=", label)
        gpu = next(ys for label, _, ys in speed if label.startswith("cuda: gpu"))
        self.assertAlmostEqual(gpu[0], 20.0, places=3)  # baseline / gpu kernel time at k=0
        self.assertAlmostEqual(gpu[4], 8.0, places=3)
        self.assertEqual([xs for _, xs, _ in share], [[0, 1, 2, 3, 4]])

    def test_bus_throughput_draws_copies_by_their_transfer_bandwidth(self):
        panels = self.lines(plots.throughput, "bus")
        h2d = [ln for panel in panels for ln in panel if ln[0] == "cuda: copy[transfer=pinned]"]
        self.assertTrue(h2d)
        for label, _, ys in h2d:
            self.assertTrue(all(y > 1 for y in ys), (label, ys))  # GB/s of the bus, not a 0 kernel figure
        self.assertFalse([ln for panel in panels for ln in panel if "with PCIe" in ln[0]
                          and ln[0].startswith("cuda: copy")])


def moving_run(path, ra_samples, bus_samples=((0.0, 20.0), (1.0, 20.5))):
    """A run of bus-cpu and ra-cpu whose copy ceilings were sampled as given [(at_s, gbps)] (issue
    51), each case against the sample nearest to it as the harness records it."""
    def doc(bench, recs, samples):
        for r in recs:
            c = min(samples, key=lambda s: abs(s[0] - r["timed_at_s"]))[1]
            r["throughput"]["ceiling_gbps"] = c
            r["throughput"]["pct_of_peak"] = 100 * r["throughput"]["moved_gbps"] / c
        return make_fixture.document(bench, "cpu", recs, 0.0, samples=list(samples))

    def timed(rec, at):
        rec["timed_at_s"] = at
        return rec
    sizes = make_fixture.SIZES
    bus = [timed(make_fixture.record("memcpy", "parallel", n, make_fixture.bw(n, 18)), 0.3 * i)
           for i, n in enumerate(sizes)]
    sel = {"dist": "uniform", "selectivity": 0.5}
    ra = [timed(make_fixture.record("select", "parallel", n, make_fixture.bw(n, 1.8), params=sel), 10.0 * i)
          for i, n in enumerate(sizes)]
    docs = {"bus-cpu": doc("bus", bus, bus_samples), "ra-cpu": doc("ra", ra, ra_samples)}
    raw = Path(path, "raw")
    raw.mkdir(parents=True)
    for name, d in docs.items():
        make_fixture.write_raw(str(raw), name, d)
    with Path(path, "run.json").open("w") as f:
        json.dump(make_fixture.manifest(docs), f)
    return str(path)


MOVED = ((0.0, 20.0), (10.0, 15.0), (20.0, 20.4))  # median 20 GB/s, spread (20.4 - 15) / 20 = 27 %


class MovingCeilingTest(TempDirCase):
    """Issue 51: the copy ceiling measured again during the run. The ceilings table gives each
    executable's samples, their range and spread; a run where an executable's ceiling moved by more
    than results.CEILING_SPREAD_WARN is named in a warning on top, one that moved less is not."""

    def report(self, run):
        p = script("report", run, env={"HDB_NO_MATPLOTLIB": "1"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(run, "report.md").open() as f:
            md = f.read()
        _, page = check_html(self, Path(run, "report.html"))
        return md, page

    def test_a_ceiling_that_moved_more_than_the_limit_is_named_on_top(self):
        md, page = self.report(moving_run(Path(self.tmp, "run"), MOVED))
        warning = ("> **Warning:** the machine's copy bandwidth moved by 27.0% during this run (ra-cpu: 15.0 to "
                   "20.4 GB/s over 3 samples, spread 27.0%; the report warns above 10%); each case's % of peak is "
                   "against the ceiling measured nearest to it (throughput.ceiling_gbps), but figures from different "
                   "moments are less comparable.")
        self.assertIn(warning, md)
        self.assertLess(md.index(warning), md.index("## Machine"))
        self.assertNotIn("bus-cpu: 20.0 to", md)  # 2.5 %: within the limit
        self.assertIn("<p class=\"warning\"><strong>Warning:</strong> the machine&#39;s copy bandwidth moved by 27.0%",
                      page)
        self.assertIn("| ra-cpu | fixture CPU | 20.0 | 3 | 15.0–20.4 | 27.0 |", md)
        self.assertIn("| bus-cpu | fixture CPU | 20.2 | 2 | 20.0–20.5 | 2.5 |", md)

    def test_several_executables_are_each_named(self):
        md, _ = self.report(moving_run(Path(self.tmp, "run"), MOVED, ((0.0, 20.0), (5.0, 24.0))))
        self.assertIn("moved by up to 27.0% during this run (bus-cpu: 20.0 to 24.0 GB/s over 2 samples, spread "
                      "18.2%; ra-cpu: 15.0 to 20.4 GB/s", md)

    def test_a_ceiling_within_the_limit_gives_no_warning(self):
        # (22 - 20) / 20: exactly the limit, which is not more than it
        md, _ = self.report(moving_run(Path(self.tmp, "run"), ((0.0, 20.0), (10.0, 20.0), (20.0, 22.0))))
        self.assertEqual(results.CEILING_SPREAD_WARN, 0.10)
        self.assertNotIn("copy bandwidth moved", md)
        self.assertIn("| ra-cpu | fixture CPU | 20.0 | 3 | 20.0–22.0 | 10.0 |", md)

    def test_a_document_without_samples_has_one_ceiling_and_no_warning(self):
        run = moving_run(Path(self.tmp, "run"), MOVED)
        path = Path(run, "raw", "ra-cpu.json")
        doc = json.loads(path.read_text())
        doc["ceiling"] = {"memory_copy_gbps": 17.0, "definition": "measured copy bandwidth"}  # before issue 51
        path.write_text(json.dumps(doc))
        md, _ = self.report(run)
        self.assertNotIn("copy bandwidth moved", md)
        self.assertIn("| ra-cpu | fixture CPU | 17.0 | - | - | - |", md)
        self.assertNotIn("Ceilings per access pattern", md)  # before issue 46: none measured
        self.assertEqual(results.moving_ceilings([doc]), [])

    def test_summary_csv_carries_each_results_ceiling(self):
        run = moving_run(Path(self.tmp, "run"), MOVED)
        self.report(run)
        with Path(run, "summary.csv").open(newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["benchmark"] == "ra"]
        self.assertEqual([float(r["ceiling_gbps"]) for r in rows], [20.0, 15.0, 20.4])
        for r in rows:
            self.assertAlmostEqual(float(r["pct_of_peak"]), 100 * float(r["moved_gbps"]) / float(r["ceiling_gbps"]))

    def test_an_earlier_csv_without_the_column_goes_in_with_it_empty(self):
        """A raw CSV of an executable built before issue 51 (the columns but ceiling_gbps and
        ceiling_pattern) or before issue 46 (but ceiling_pattern) is not left out of summary.csv: its
        rows come in with those cells empty."""
        run = moving_run(Path(self.tmp, "run"), MOVED)
        raw = Path(run, "raw", "ra-cpu.csv")
        with raw.open(newline="") as f:
            now = list(csv.DictReader(f))
        for lacks in (("ceiling_gbps", "ceiling_pattern"), ("ceiling_pattern",)):
            with self.subTest(lacks=lacks):
                old = [{k: v for k, v in r.items() if k not in lacks} for r in now]
                earlier = [c for c in CSV_COLUMNS if c not in lacks]
                with raw.open("w", newline="") as f:
                    w = csv.DictWriter(f, earlier, lineterminator="\n")
                    w.writeheader()
                    w.writerows(old)
                text, problems = results.summary_csv(run)
                self.assertEqual(problems, [])
                rows = [r for r in csv.DictReader(io.StringIO(text)) if r["benchmark"] == "ra"]
                for c in lacks:
                    self.assertEqual([r[c] for r in rows], ["", "", ""])
                for c in ("id", "reason", "pct_of_peak"):
                    self.assertEqual([r[c] for r in rows], [r[c] for r in old])
                with raw.open("w", newline="") as f:
                    f.write(",".join(earlier[:-1]) + "\n")  # any other header is still left out
                self.assertIn("ra-cpu.csv: its header is not the columns", results.summary_csv(run)[1][0])
        with raw.open("w", newline="") as f:  # ceiling_pattern without ceiling_gbps: no earlier executable's
            f.write(",".join(c for c in CSV_COLUMNS if c != "ceiling_gbps") + "\n")
        self.assertIn("ra-cpu.csv: its header is not the columns", results.summary_csv(run)[1][0])


class PeerContradictionTest(TempDirCase):
    """Issue 50: a peer answers the suite's cases from the suite's data and checks its answer against
    the reference the backends are verified against. Where the peer's answer differs, the backends'
    results of that case are no longer counted as verified: marked in the tables (naming the peer's
    result), left out of the headline, named on top and under Problems. Other cases keep theirs."""

    def run_dir(self):
        sel = {"dist": "uniform", "selectivity": 0.5}
        other = {"dist": "uniform", "selectivity": 0.1}
        n = make_fixture.SIZES[-1]
        cpu = make_fixture.document("ra", "cpu", [
            make_fixture.record("select", "parallel", n, 2e-3, params=sel),
            make_fixture.record("select", "parallel", n, 1e-3, params=other)], 20.0)
        cuda = make_fixture.document("ra", "cuda", [
            make_fixture.record("select", "tuned", n, 2e-4, h2d_s=1e-3, params=sel, transfer="pinned")], 3000.0)
        wrong = make_fixture.record("select", "sql", n, 0, params=dict(sel, threads=2), status="failed",
                                    reason="verification failed: 812 rows, expected 811")
        wrong["verification"] = {"checked": True, "verified": False, "detail": "812 rows, expected 811"}
        right = make_fixture.record("select", "sql", n, 3e-3, params=dict(other, threads=2))
        duck = make_fixture.document("ra", "cpu", [wrong, right], 20.0)
        duck["backend"] = "duckdb"
        docs = {"ra-cpu": cpu, "ra-cuda": cuda, "ra-duckdb": duck}
        raw = Path(self.tmp, "run", "raw")
        raw.mkdir(parents=True)
        for name, d in docs.items():
            make_fixture.write_raw(str(raw), name, d)
        with Path(self.tmp, "run", "run.json").open("w") as f:
            json.dump(make_fixture.manifest(docs), f)
        return str(Path(self.tmp, "run")), n

    def test_a_case_a_peer_answers_otherwise_is_not_counted_verified(self):
        run, n = self.run_dir()
        rows = results.all_rows(results.load_docs(run))
        by = {(r["backend"], r["params"]["selectivity"]): r for r in rows}
        for backend in ("cpu", "cuda"):
            r = by[(backend, 0.5)]
            self.assertFalse(r["verified"], backend)
            self.assertEqual(r["contradicted_by"], "duckdb's answer (select/sql[dist=uniform,selectivity=0.5,"
                             f"threads=2]@{make_fixture.size_text(n)}) differs: verification failed: 812 rows, "
                             "expected 811")
            self.assertTrue(results.verification_text(r).startswith("no: duckdb's answer"))
        # The case the peer agrees on, and the peer's own rows, are left as they are.
        self.assertTrue(by[("cpu", 0.1)]["verified"])
        self.assertIsNone(by[("cpu", 0.1)].get("contradicted_by"))
        self.assertTrue(by[("duckdb", 0.1)]["verified"])
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("report: problem: ra-cpu select/parallel[dist=uniform,selectivity=0.5]", p.stdout)
        with Path(run, "report.md").open() as f:
            md = f.read()
        self.assertIn(f"## {report.CONTRADICTED_SECTION}", md)
        self.assertIn("2 results were verified against the suite's reference, but a peer's answer", md)
        # The headline compares only verified results: the contradicted select is not in it, the other is.
        self.assertEqual([ln.cpu_best["params"]["selectivity"] for ln in headline.lines(rows)], [0.1])
        line = next(ln for ln in md.splitlines() if ln.startswith("| cuda") and "selectivity=0.5" in ln)
        self.assertIn("no: duckdb's answer", line)
        # compare leaves them out and names them; the figures never draw them.
        pairs, only_a, only_b = compare.match(rows, rows)
        self.assertEqual(sorted((p["a"]["backend"], p["a"]["params"]["selectivity"]) for p in pairs),
                         [("cpu", 0.1), ("duckdb", 0.1)])
        out = io.StringIO()
        compare.main(run, run, out=str(Path(self.tmp, "cmp")), stream=out)
        with Path(self.tmp, "cmp", "compare.md").open() as f:
            self.assertIn("4 results of the two runs are left out: a peer answered their case otherwise", f.read())
        if not has_matplotlib():
            self.skipTest("matplotlib is not available: the figures' rows not checked")
        seen = []

        def grab(brs, *_args):
            seen.extend(brs)
        with contextlib.ExitStack() as stack:
            for name in ("throughput", "pct_of_peak", "breakdown", "speedup", "merge_cycles", "merge_gpu_speedup",
                         "ngram_errors", "tpch_kernels"):
                stack.enter_context(mock.patch.object(plots, name, grab))
            plots.all_figures(rows, results.load_docs(run), Path(self.tmp, "plots"))
        self.assertEqual({(r["backend"], r["params"]["selectivity"]) for r in seen if r["status"] == "ok"},
                         {("cpu", 0.1), ("duckdb", 0.1)})


class MpiDocumentTest(unittest.TestCase):
    def test_ep_document_gives_rows_per_rank(self):
        with (Path(__file__).parent / "fixtures" / "run-small" / "raw" / "bus-cpu.json").open() as f:
            doc = json.load(f)
        r0, r1 = copy.deepcopy(doc["results"]), copy.deepcopy(doc["results"])
        for r in r1:
            r["stats"]["kernel_s"]["median"] *= 2
        doc["results"][0]["across_ranks"] = {"n": 2, "min": 1e-5, "max": 2e-5, "mean": 1.5e-5, "stddev": 7e-6,
                                             "cv": 0.47, "outlier_ranks": [1], "per_rank": []}
        doc["mpi"] = {"mode": "ep", "size": 2, "ranks": [{"rank": 0, "exit_code": 0, "device": "dev0", "results": r0},
                                                         {"rank": 1, "exit_code": 0, "device": "dev1", "results": r1}]}
        doc["_rank"] = 0
        rows = results.rows_of(doc)
        self.assertEqual(len(rows), 2 * len(r0))
        self.assertEqual({r["rank"] for r in rows}, {0, 1})
        self.assertEqual(rows[len(r0)]["device"], "dev1")
        self.assertEqual(rows[0]["across_ranks"]["outlier_ranks"], [1])
        d = report.Doc()
        report._ranks(d, rows)
        self.assertIn("MPI ranks", d.markdown())


if __name__ == "__main__":
    unittest.main()
