"""report.html as a reader sees it on a laptop (1366x900) and on a phone (390x844), in headless
Chromium (browser.py): the checks of issue 47's 'done when', for the driver tests' fixture and for
the quick run scripts/test makes.

- The page is no wider than the window at either width (a wide table scrolls inside its own box).
- The verdict and the table of contents start within the first screen at either width.
- At 1366 px the headline's overview fits its column: no horizontal scrollbar.
- Nothing of substance is on hover only: every case id, speed-up with its interval and time in a
  title of the verdict or the headline's overview is also in the page's text (folded tables count).
- The page's script throws nothing.

As a script: report_page.py RUN_DIR [--shots DIR]: exit 0 when every check holds, 1 with the
problems, 77 (skipped) without Chromium; --shots keeps a screenshot of each width's first screen."""
import argparse
import re
import sys
from pathlib import Path
from typing import Any

from browser import Page, chromium

LAPTOP = (1366, 900)
PHONE = (390, 844)

MEASURE = """(() => {
  const d = document, at = e => e ? e.getBoundingClientRect().top + window.scrollY : null;
  const out = {width: window.innerWidth, height: window.innerHeight,
               page_width: d.documentElement.scrollWidth,
               verdict_top: at(d.getElementById("verdict")), toc_top: at(d.querySelector("nav.toc"))};
  const t = d.querySelector("table.headline");
  if (t) { out.headline_width = t.scrollWidth; out.headline_box = t.parentElement.clientWidth; }
  out.titles = Array.from(d.querySelectorAll("table.verdict [title], table.headline [title]"))
    .map(e => e.getAttribute("title"));
  const body = d.body.cloneNode(true);
  body.querySelectorAll("script, style").forEach(e => e.remove());
  out.text = body.textContent.replace(/\\s+/g, " ");
  return out;
})()"""

# What a title says that must be on the page too: a case id, a speed-up with its interval, a time.
CASE_ID = re.compile(r"[\w-]+/[\w.+-]+(?:\[[^\]]*\])?(?:@\w+)?")
SPEEDUP = re.compile(r"\d[\d.e+]*x \(95% CI [^)]*\)")
TIME = re.compile(r"(\d[\d.e+-]*) ms\b")


def hover_only(titles: list[str], text: str) -> list[str]:
    """The figures and ids of the titles that the page's text lacks."""
    missing = []
    for title in titles:
        for line in title.splitlines():
            for frag in CASE_ID.findall(line) + SPEEDUP.findall(line) + TIME.findall(line):
                if frag not in text and frag not in missing:
                    missing.append(frag)
    return missing


def measure(report: Path, size: tuple[int, int], shot: Path | None = None) -> dict[str, Any]:
    with Page(*size) as page:
        page.load(report)
        m = page.evaluate(MEASURE)
        m["errors"] = page.console_errors()
        if shot is not None:
            page.screenshot(shot)
    return m


def problems(report: Path, shots: Path | None = None) -> list[str]:
    """Every check that fails, as a sentence; [] when the page holds."""
    out = []
    for name, size in (("laptop", LAPTOP), ("phone", PHONE)):
        w, h = size
        shot = shots / f"report-{w}x{h}.png" if shots else None
        m = measure(report, size, shot)
        where = f"at {w}x{h} ({name})"
        if m["width"] != w:
            out.append(f"{where}: the window is {m['width']} px wide, not {w}: the measurement is not at that width")
        if m["page_width"] > w:
            out.append(f"{where}: the page is {m['page_width']} px wide, wider than the window")
        for what, key in (("the verdict", "verdict_top"), ("the table of contents", "toc_top")):
            if m[key] is None:
                out.append(f"{where}: {what} is missing")
            elif m[key] >= h:
                out.append(f"{where}: {what} starts at {m[key]:.0f} px, below the first screen ({h} px)")
        if size == LAPTOP and m.get("headline_width", 0) > m.get("headline_box", 0) + 0.5:
            out.append(f"{where}: the headline's overview is {m['headline_width']} px wide in a "
                       f"{m['headline_box']} px column: it scrolls sideways")
        if m["errors"]:
            out.append(f"{where}: the page reported errors: {'; '.join(m['errors'])}")
        if size == LAPTOP:
            missing = hover_only(m["titles"], m["text"])
            if missing:
                out.append(f"on hover only, not in the page's text: {', '.join(missing[:10])}"
                           + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--shots", type=Path, help="keep a screenshot of each width's first screen here")
    a = ap.parse_args(argv)
    if chromium() is None:
        print("report_page: skipped: no Chromium (scripts/setup installs Debian's chromium)")
        return 77
    report = a.run_dir / "report.html"
    if not report.is_file():
        print(f"report_page: error: {report} does not exist", file=sys.stderr)
        return 2
    if a.shots:
        a.shots.mkdir(parents=True, exist_ok=True)
    found = problems(report, a.shots)
    for p in found:
        print(f"report_page: {report}: {p}", file=sys.stderr)
    if not found:
        print(f"report_page: {report}: fits 1366x900 and 390x844, the verdict and the contents on the first "
              "screen, nothing on hover only")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
