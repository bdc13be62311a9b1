"""The demo report in a real browser: headless Chromium loads it, no console
errors, every image decoded, and a screenshot kept for a human to look at.

Chromium is driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages separated by NUL bytes on file
descriptors 3 and 4), so no WebSocket library is needed. The screenshot and
the console log stay in ``build/test-output/browser/`` (and in the test's
``tmp_path``).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
KEEP = REPO / "build" / "test-output" / "browser"
CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless browser test needs Chromium (Debian package `chromium`, "
    "installed by tools/install.sh --test)",
)


def _above_9(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    """A headless Chromium and one page, driven over the DevTools pipe."""

    def __init__(self, profile: Path, stderr: Any = subprocess.DEVNULL, timeout: float = 60.0):
        self.timeout = timeout
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Chromium's ends above 9, so that moving them to 3 and 4 clobbers neither.
        to_chrome_r, from_chrome_w = _above_9(to_chrome_r), _above_9(from_chrome_w)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-extensions", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                "--window-size=1280,900", "about:blank"]
        # Chromium reads the protocol on fd 3 and answers on fd 4: a small Python
        # launcher puts the pipe's ends there, then becomes Chromium.
        launcher = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4);"
                    " os.execv(sys.argv[3], sys.argv[3:])")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", launcher, str(to_chrome_r), str(from_chrome_w), CHROMIUM,
             *args],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, *, session: bool = True) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str) -> dict:
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
            session=False,
        )["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expr: str):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        return r["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and errors the browser logged."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in (
                "error", "assert"
            ):
                out.append("console: " + " ".join(str(a.get("value")) for a in p["args"]))
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append("exception: " + p["exceptionDetails"].get("text", ""))
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)


@pytest.fixture(scope="module")
def demo_report(demo_output) -> Path:
    """The whole demo's report (every study; the shared run, tests/conftest.py)."""
    return demo_output[0] / "report.html"


def test_demo_report_loads_in_chromium(demo_report, tmp_path):
    log = (tmp_path / "chromium.log").open("w")
    b = Browser(tmp_path / "profile", stderr=log)
    try:
        b.open(demo_report.as_uri())
        images = b.evaluate(
            "Promise.all([...document.images].map(i => i.decode().then(() => true, () => false)))"
            ".then(ok => [...document.images].map((i, k) => ({alt: i.alt, ok: ok[k], "
            "w: i.naturalWidth, h: i.naturalHeight})))"
        )
        toc = b.evaluate("[...document.querySelectorAll('nav.toc a')].map(a => "
                         "[a.getAttribute('href'), !!document.getElementById("
                         "a.getAttribute('href').slice(1))])")
        # Every link within the page (the contents, the studies' own links) has its target.
        dangling = b.evaluate("[...document.querySelectorAll('a[href^=\"#\"]')]"
                              ".map(a => a.getAttribute('href'))"
                              ".filter(h => !document.getElementById(h.slice(1)))")
        title = b.evaluate("document.title")
        shot = b.send("Page.captureScreenshot", {"format": "png"})
        problems = b.problems()
    finally:
        b.close()
        log.close()
    png = base64.b64decode(shot["data"])
    KEEP.mkdir(parents=True, exist_ok=True)
    for d in (KEEP, tmp_path):
        (d / "demo-report.png").write_bytes(png)
        (d / "console.txt").write_text("\n".join(problems) + "\n")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert problems == [], problems
    assert "demo" in title
    assert len(images) >= 8, images  # both studies' figures
    broken = [i["alt"] for i in images if not (i["ok"] and i["w"] > 0 and i["h"] > 0)]
    assert broken == [], f"images that did not load: {broken}"
    assert len(toc) >= 5 and all(found for _, found in toc), toc
    assert dangling == [], f"links to nothing: {dangling}"
