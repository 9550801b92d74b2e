"""scripts/report on the committed fixture draws every figure and writes valid, self-contained HTML;
the results reader handles MPI (EP-mode) documents."""
import copy
import html.parser
import json
import os
import unittest

from helpers import TempDirCase, has_matplotlib, script

from hdb import report, results

EVERY_FIGURE = [f"{kind}-{b}" for b in ("bus", "ra", "tpch", "merge", "ngram") for kind in ("throughput", "peak")] + \
    [f"{kind}-{b}" for b in ("ra", "tpch", "merge", "ngram") for kind in ("breakdown", "speedup")] + \
    ["merge-cycles", "merge-gpu-speedup", "ngram-errors", "tpch-kernels"]
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
    with open(path) as f:
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
            self.assertTrue(os.path.isfile(os.path.join(run, name)), name)
        c, text = check_html(self, os.path.join(run, "report.html"))
        with open(os.path.join(run, "report.md")) as f:
            md = f.read()
        for text_needed in ("Ceilings", "Benchmark merge", "Skipped and failed cases", "does not fit",
                            "no OpenCL device"):
            self.assertIn(text_needed, md)
        if not has_matplotlib():
            self.skipTest("matplotlib is not available: figures not checked")
        for stem in EVERY_FIGURE:
            for ext in ("png", "svg"):
                path = os.path.join(run, "plots", f"{stem}.{ext}")
                self.assertTrue(os.path.isfile(path) and os.path.getsize(path) > 1000, path)
            self.assertIn(f"plots/{stem}.png", md)
        self.assertEqual(c.images, len(EVERY_FIGURE))
        with open(os.path.join(run, "plots", "throughput-bus.svg")) as f:
            svg = f.read()
        self.assertIn("fixture GPU", svg)  # every figure names host and devices
        self.assertIn("32M", svg)  # sizes as 32K..1G

    def test_benchmark_without_results_is_absent(self):
        run = self.copy_fixture()
        for name in os.listdir(os.path.join(run, "raw")):
            if not name.startswith("bus-"):
                os.remove(os.path.join(run, "raw", name))
        figs = report.generate(run, stream=open(os.devnull, "w"))
        self.assertTrue(all(f.benchmark == "bus" for f in figs))
        with open(os.path.join(run, "report.md")) as f:
            self.assertNotIn("Benchmark merge", f.read())

    def test_without_matplotlib_the_report_says_so(self):
        run = self.copy_fixture()
        p = script("report", run, env={"HDB_NO_MATPLOTLIB": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("matplotlib is not available", p.stdout)
        c, _ = check_html(self, os.path.join(run, "report.html"))
        self.assertEqual(c.images, 0)
        with open(os.path.join(run, "report.md")) as f:
            self.assertIn("python3-matplotlib", f.read())

    def test_not_a_results_document_is_a_usage_error(self):
        run = self.copy_fixture()
        with open(os.path.join(run, "raw", "ra-cpu.json"), "w") as f:
            f.write('{"schema": "something-else"}')
        p = script("report", run)
        self.assertEqual(p.returncode, 2)
        self.assertIn("ra-cpu.json", p.stderr)
        self.assertEqual(script("report", os.path.join(self.tmp, "missing")).returncode, 2)


class MpiDocumentTest(unittest.TestCase):
    def test_ep_document_gives_rows_per_rank(self):
        with open(os.path.join(os.path.dirname(__file__), "fixtures", "run-small", "raw", "bus-cpu.json")) as f:
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
