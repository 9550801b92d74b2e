"""report.html as a reader sees it, in a real browser (issue 28): the committed fixture, with a DuckDB
peer (both variants: its answer materialised in DuckDB, sql_table, and transferred to NumPy, sql; on
select and on join, whose suite side takes sorted input) and a verified OpenCL case added so that the
headline has four processors and DuckDB's cells their longest notes, reported and loaded
in headless Chromium at a laptop's width (1366 px). The page logs nothing to the console; a screenshot
at 1366 px is not blank; the DOM Chromium built has the headline's figure and then its overview (one
row per operation, a column per processor) as the section's first table; at 1366 px the overview fits
the window, is not cut by its scroll container (the page's column), and no cell of it wraps over lines.
report_page.py's checks (the page at 1366x900 and 390x844: no wider than the window, the verdict and
the table of contents on the first screen, nothing on hover only) hold for it, and see a page that
breaks each of them.

Skipped when no Chromium is found (Debian's package chromium; $HDB_CHROMIUM names another binary).
$HDB_BROWSER_SHOTS=<folder> keeps the screenshots (report-1366.png, the first screen, and
report-1366-full.png, a window tall enough for the whole headline and more) for a person to look at."""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib
from pathlib import Path

from helpers import TempDirCase, script

import report_page
from browser import Page, chromium
from make_fixture import document, record, write_raw

M = 1 << 20
WIDTH = 1366
SEL = {"dist": "uniform", "selectivity": 0.5}
JOIN = {"dist": "uniform", "fanout": 1, "match": 1}  # the fixture's, compared at 1M


CHROMIUM = chromium()


def png_pixels(path):
    """(width, height, distinct byte values of the image data): enough to tell a blank page (one
    colour, a few values) from a drawn one, without an image library."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    return width, height, len(set(zlib.decompress(idat)))


# Where the headline's overview ends at 1366 px, where its scroll container cuts it, and which of its
# cells wrap over lines: evaluated in the report (browser.Page, a window of exactly 1366x900).
OVERVIEW = """(() => {
  const d = document, t = d.querySelector("table.headline");
  const out = {viewport: window.innerWidth, page_width: d.documentElement.scrollWidth, cells: 0, wrapped: []};
  if (t) {
    out.table_right = t.getBoundingClientRect().right;
    // Its scroll container's visible right edge: a table wider than the page's column is cut there.
    out.shown_right = t.parentElement.getBoundingClientRect().right;
    for (const c of t.querySelectorAll("th, td")) {
      out.cells++;
      const range = d.createRange();
      range.selectNodeContents(c);
      const rects = Array.from(range.getClientRects()).filter(x => x.width > 0);
      const first = Math.min(...rects.map(x => x.bottom));
      if (rects.some(x => x.top >= first - 1)) out.wrapped.push(c.textContent);
    }
  }
  return out;
})()"""


class Dom(html.parser.HTMLParser):
    """From the DOM Chromium dumps: the order of the headline section's elements (figure images,
    tables by class) up to the next h2, and the headline overview's header cells."""

    def __init__(self):
        super().__init__()
        self.in_headline, self.seen_h2, self.text = False, False, ""
        self.order, self.headers, self.in_overview_head, self.th = [], [], False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self.seen_h2, self.text = True, ""
        elif self.in_headline and tag == "img":
            self.order.append(("img", a.get("alt", "")))
        elif self.in_headline and tag == "table":
            self.order.append(("table", a.get("class") or ""))
            self.in_overview_head = a.get("class") == "headline" and not self.headers
        elif self.in_overview_head and tag == "th":
            self.th = [a.get("title") or "", ""]

    def handle_endtag(self, tag):
        if tag == "h2" and self.seen_h2:
            self.in_headline = self.text.startswith("Headline")
            self.seen_h2 = False
        elif tag == "th" and self.th is not None:
            self.headers.append((self.th[1].strip(), self.th[0]))
            self.th = None
        elif tag == "thead":
            self.in_overview_head = False

    def handle_data(self, data):
        if self.seen_h2:
            self.text += data
        if self.th is not None:
            self.th[1] += data


@unittest.skipUnless(CHROMIUM, "no Chromium found (install Debian's package chromium, or set HDB_CHROMIUM to "
                               "a Chromium or Chrome binary): the report is not checked in a browser")
class ReportInBrowser(TempDirCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="hdb-browser-test-"))
        cls.run_dir = cls.dir / "run-small"
        shutil.copytree(Path(__file__).resolve().parent / "fixtures" / "run-small", cls.run_dir)
        raw = cls.run_dir / "raw"
        # DuckDB on the fixture's ra select (32M) and join (1M), at two thread counts, in both variants.
        duck = document("ra", "cpu", [record(test, variant, size, seconds * f, params=dict(params, threads=t))
                                      for test, params, size, seconds in (("select", SEL, 32 * M, 40e-3),
                                                                          ("join", JOIN, M, 0.3))
                                      for variant, f in (("sql_table", 1.0), ("sql", 1.4)) for t in (1, 2)], 20.0)
        duck["backend"] = "duckdb"
        duck["context"]["device"] = {"kind": "cpu", "name": "DuckDB 1.1 on fixture CPU"}
        write_raw(raw, "ra-duckdb", duck)
        # A verified OpenCL case beside the fixture's unverified ones: a fourth processor.
        ocl = json.loads((raw / "ra-opencl.json").read_text())
        ocl["context"]["device"]["type"] = "gpu"
        ocl["results"].append(record("select", "paper", 32 * M, 0.5e-3, h2d_s=2e-3, params=SEL,
                                     transfer="pinned"))
        write_raw(raw, "ra-opencl", ocl)
        p = script("report", str(cls.run_dir), timeout=600)  # one report; a busy machine takes minutes
        if p.returncode != 0:
            raise AssertionError(p.stdout + p.stderr)
        cls.page = (cls.run_dir / "report.html").as_uri()
        cls.profile = cls.dir / "profile"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def chromium(self, *args, height=900):
        """Headless Chromium at 1366 px: (stdout, stderr). --enable-logging=stderr puts every console
        message on stderr as '...:INFO:CONSOLE:<line>] "<message>", source: <url>'."""
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={self.profile}",
                            f"--window-size={WIDTH},{height}", "--enable-logging=stderr", "--v=0", *args],
                           capture_output=True, text=True, timeout=180)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return p.stdout, p.stderr

    @staticmethod
    def console(stderr):
        return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]

    def shots(self):
        keep = os.environ.get("HDB_BROWSER_SHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            return Path(keep)
        return Path(self.tmp)

    def test_console_messages_are_seen(self):
        """The check below sees console errors at all: a page with one logs it."""
        bad = Path(self.tmp, "bad.html")
        bad.write_text("<!DOCTYPE html><title>bad</title><script>undefinedFunction();</script>")
        _, err = self.chromium("--dump-dom", bad.as_uri())
        self.assertTrue([ln for ln in self.console(err) if "undefinedFunction" in ln], err[-2000:])

    def test_the_report_loads_without_console_messages_and_draws_a_page(self):
        shot = self.shots() / "report-1366.png"
        _, err = self.chromium(f"--screenshot={shot}", self.page)
        self.assertEqual(self.console(err), [])
        width, height, values = png_pixels(shot)
        self.assertEqual((width, height), (WIDTH, 900))
        self.assertGreater(values, 32, "the screenshot is blank")
        full = self.shots() / "report-1366-full.png"
        _, err = self.chromium(f"--screenshot={full}", self.page, height=4000)
        self.assertEqual(self.console(err), [])
        self.assertGreater(png_pixels(full)[2], 32, "the screenshot is blank")

    def test_the_headline_figure_then_the_overview_one_column_per_processor(self):
        out, err = self.chromium("--dump-dom", self.page)
        self.assertEqual(self.console(err), [])
        dom = Dom()
        dom.feed(out)
        tables = [cls for kind, cls in dom.order if kind == "table"]
        self.assertTrue(tables, dom.order)
        self.assertEqual(tables[0], "headline", dom.order)  # the section's first table is the overview
        if any(kind == "img" for kind, _ in dom.order):      # the figure (matplotlib drew it) before it
            self.assertEqual(dom.order[0], ("img", "headline: speed-up over the best CPU implementation"))
        # A column per processor, named short; its full name on hover.
        self.assertEqual(dom.headers, [
            ("operation", ""), ("size", "the input size compared (TPC-H on real tables: its tables)"),
            ("CPU (baseline)", "CPU (fixture CPU, ? threads)"), ("cuda", "cuda: fixture GPU"),
            ("opencl", "opencl: fixture OpenCL device [gpu device]"),
            ("duckdb (sql_table)", "duckdb (peer)\nsql_table: DuckDB's answer materialised in DuckDB\n"
                                   "+NumPy (each cell's title): sql, DuckDB's answer transferred to NumPy"),
            ("break-even size (cuda)", "the accelerator, transfers included, against the best CPU implementation")])
        self.assertIn("details", tables)  # the case ids, folded below

    def test_the_page_fits_a_laptop_and_a_phone_and_opens_with_the_verdict(self):
        """report_page.py's checks (issue 47, 'done when'; scripts/test runs them on the quick run's
        report): no wider than the window at 1366x900 and 390x844, the verdict and the table of
        contents on the first screen at both, the overview without a scrollbar at 1366, nothing of
        substance on hover only, no script error."""
        self.assertEqual(report_page.problems(self.run_dir / "report.html", self.shots()), [])

    def test_the_page_checks_see_what_they_check(self):
        """A page wider than a phone, without a verdict, with a case id on hover only, whose script
        throws: each is reported."""
        bad = Path(self.tmp, "report.html")
        bad.write_text('<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width">'
                       '</head><body><nav class="toc">x</nav><div style="width:800px">wide</div>'
                       '<table class="headline"><tr><td title="best: select/tuned[k=1]@32M, 1.5 ms">2x</td>'
                       '</tr></table><script>undefinedFunction();</script></body></html>')
        found = "\n".join(report_page.problems(bad))
        self.assertIn("at 390x844 (phone): the page is 8", found)
        self.assertIn("at 1366x900 (laptop): the verdict is missing", found)
        self.assertIn("on hover only, not in the page's text: select/tuned[k=1]@32M, 1.5", found)
        self.assertIn("the page reported errors", found)

    def test_at_1366_px_the_overview_fits_and_no_cell_wraps(self):
        with Page(WIDTH, 900) as page:
            page.load(self.run_dir / "report.html")
            m = page.evaluate(OVERVIEW)
            logged = [e["params"] for e in page.events
                      if e.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown")]
        self.assertEqual(logged, [])
        self.assertEqual(m["viewport"], WIDTH, m)
        self.assertGreater(m["cells"], 20, m)
        self.assertEqual(m["wrapped"], [], m)
        self.assertLessEqual(m["table_right"], WIDTH, m)
        self.assertLessEqual(m["table_right"], m["shown_right"] + 0.5, m)  # not cut by its scroll container
        self.assertLessEqual(m["page_width"], WIDTH, m)  # no horizontal scrolling


if __name__ == "__main__":
    unittest.main()
