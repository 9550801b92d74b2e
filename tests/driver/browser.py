"""A page in headless Chromium at an exact window size, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: no port, no websocket library): load a file, evaluate a script in it, take
a screenshot. The report tests use it to look at report.html as a reader on a laptop (1366x900) and
on a phone (390x844) would; Chromium's --window-size alone cannot make a window narrower than 500 px.
Run as a script, it saves screenshots: browser.py REPORT.html OUT_DIR [WIDTHxHEIGHT[#anchor] ...]."""
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def chromium() -> str | None:
    for name in (os.environ.get("HDB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome",
                 "google-chrome-stable"):
        path = name and shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Page:
    """One tab of a headless Chromium of its own; use as a context manager."""

    def __init__(self, width: int, height: int, timeout_s: float = 60.0) -> None:
        exe = chromium()
        if exe is None:
            raise BrowserError("no Chromium found (chromium, chromium-browser, google-chrome or $HDB_CHROMIUM)")
        self.timeout_s = timeout_s
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds() -> None:  # the protocol's pipe: Chromium reads fd 3 and writes fd 4
            # Moved out of the way first: a pipe may already be 3 or 4. A copy may itself land on 3 or 4
            # when they are free, and dup2 onto itself leaves it close-on-exec: hence set_inheritable.
            read, write = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read, 3)
            os.dup2(write, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.profile = os.environ.get("TMPDIR", "/tmp") + f"/hdb-chromium-{os.getpid()}-{id(self)}"
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, close_fds=False)  # close_fds would close 3 and 4 after fds() made them
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        self.call("Page.enable")
        self.call("Runtime.enable")

    def __enter__(self) -> "Page":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise BrowserError("Chromium closed the protocol pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error'].get('message')}")
                return m.get("result", {})
            self.events.append(m)

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self._call(method, params, self.session)

    def wait_for(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        for i, m in enumerate(self.events):
            if m.get("method") == event:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == event:
                return m
            self.events.append(m)

    def load(self, path: str | Path) -> None:
        """Opens a file and waits for its load event (images decoded, scripts run)."""
        self.events = [m for m in self.events if m.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if r.get("exceptionDetails"):
            raise BrowserError(f"script failed: {r['exceptionDetails'].get('text')} "
                               f"{r['exceptionDetails'].get('exception', {}).get('description', '')}")
        return r["result"].get("value")

    def console_errors(self) -> list[str]:
        """Exceptions and console errors the page reported so far."""
        out = []
        for m in self.events:
            if m.get("method") == "Runtime.exceptionThrown":
                out.append(m["params"]["exceptionDetails"].get("text", "exception"))
            elif m.get("method") == "Runtime.consoleAPICalled" and m["params"].get("type") == "error":
                out.append(" ".join(str(a.get("value", "")) for a in m["params"].get("args", [])))
        return out

    def screenshot(self, out: str | Path) -> None:
        """The window as it is now (the first screen, or where the page was scrolled to)."""
        Path(out).write_bytes(base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"]))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    report, out_dir = Path(argv[0]), Path(argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for spec in argv[2:] or ["1366x900", "390x844"]:
        size, _, anchor = spec.partition("#")
        w, h = (int(x) for x in size.split("x"))
        with Page(w, h) as page:
            page.load(report)
            if anchor:
                page.evaluate(f"document.getElementById({json.dumps(anchor)}).scrollIntoView()")
            name = out_dir / f"{report.parent.name}-{w}{'-' + anchor if anchor else ''}.png"
            page.screenshot(name)
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
