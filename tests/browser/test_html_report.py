"""The HTML report in a real browser: Debian's headless Chromium loads the page from disk and, through the
DevTools protocol, the test checks that every figure drew (SVG elements with a size, no error element, no
script error) and that no request left the machine (every URL file: or data:), then saves a screenshot.

Skipped, with the reason, when Chromium or the `websockets` package is missing:
    apt-get install -y chromium        pip install websockets
unless CTXGAUGE_REQUIRE_BROWSER=1 (CI sets it), which turns the skip into a failure: CI must not pass
because the browser it was meant to install is absent.
`CTXGAUGE_SCREENSHOT_DIR=DIR` keeps the screenshot (report.png) there for a person to look at.
"""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic"]
WIDTH, HEIGHT = 1280, 900


def _chromium() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"):
        if name and (path := shutil.which(name)):
            return path
    return None


class CDP:
    """A minimal DevTools client: one websocket to one page, commands answered in order, events kept."""

    def __init__(self, ws: Any):
        self.ws = ws
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, timeout: float = 30) -> dict:
        cid = next(self.ids)
        self.ws.send(json.dumps({"id": cid, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == cid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        for e in self.events:
            if e.get("method") == method:
                return e
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.events.append(msg)
            if msg.get("method") == method:
                return msg
        raise TimeoutError(method)

    def drain(self, seconds: float) -> None:
        """Keep reading events for a while (late requests a page might make after load)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=left)))
            except TimeoutError:
                return



def _missing(reason: str) -> None:
    if os.environ.get("CTXGAUGE_REQUIRE_BROWSER"):
        pytest.fail(f"{reason}, and CTXGAUGE_REQUIRE_BROWSER is set")
    pytest.skip(reason)


@pytest.fixture
def browser(tmp_path):
    exe = _chromium()
    if exe is None:
        _missing("Debian's headless Chromium is not installed (apt-get install -y chromium)")
    if importlib.util.find_spec("websockets") is None:
        _missing("the DevTools client needs websockets (pip install websockets, in the test extra)")
    profile = tmp_path / "chromium-profile"  # a fresh profile: no cache, no extension, no saved state
    scratch = tempfile.mkdtemp(prefix="chr-")
    proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                             f"--window-size={WIDTH},{HEIGHT}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            # its singleton socket directory (org.chromium.Chromium.*) goes to TMPDIR, where
                            # nothing removed it: each test left one in /tmp. A short directory of its own, so
                            # the socket's path stays within a Unix socket's 108 bytes however deep tmp_path is
                            env={**os.environ, "TMPDIR": scratch})
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start (exit code {proc.poll()})")
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            page = next(t for t in json.load(resp) if t["type"] == "page")
        from websockets.sync.client import connect

        with connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=20) as ws:
            yield CDP(ws)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)


FIGURES_JS = """JSON.stringify({
  title: document.title,
  errors: document.querySelectorAll('.error, parsererror').length,
  sections: [...document.querySelectorAll('section.suite')].map(s => s.id),
  figures: [...document.querySelectorAll('figure.plot')].map(f => {
    const svgs = [...f.querySelectorAll('svg')];
    const boxes = svgs.map(s => s.getBoundingClientRect());
    return {id: f.id, kind: f.dataset.kind, runs: f.dataset.runs, svgs: svgs.length,
            drawn: f.querySelectorAll('svg rect, svg path, svg circle, svg line').length,
            minWidth: Math.min(...boxes.map(b => b.width)), minHeight: Math.min(...boxes.map(b => b.height)),
            links: [...f.querySelectorAll('a[href]')].length};
  }),
  overflow: document.documentElement.scrollWidth > window.innerWidth
})"""


def _load(cdp: CDP, page: Path) -> dict[str, Any]:
    cdp.send("Network.enable")
    cdp.send("Page.enable")
    cdp.send("Runtime.enable")
    cdp.send("Log.enable")
    cdp.send("Page.navigate", {"url": page.resolve().as_uri()})
    cdp.wait_for("Page.loadEventFired")
    cdp.drain(1.0)
    result = cdp.send("Runtime.evaluate", {"expression": FIGURES_JS, "returnByValue": True})
    return json.loads(result["result"]["value"])


def test_report_renders_offline_in_chromium(browser, tmp_path, factory):
    from ctxgauge.report import build_report, discover_runs, write_html

    f = factory
    root = tmp_path / "runs"
    f.replay_run(root, "replay-a", [1, 2, 5, None, 1, 3, 2, 1, None, 4], [2, 2, None, None, 1, 1, 3, 1, 1, None])
    f.replay_run(root, "cases-a", [1, None, 2, 0], [1, 1, None, 0], suite="cases", repo="cases.yaml", gaps=[1])
    f.determinism_run(root, "det-a", {"bm25": {"level": 3, "drift": {"prose": 0.0}},
                                      "grep": {"level": 1, "drift": {"prose": 0.25}, "emr": 0.8},
                                      "minilm": {"status": "skipped", "reason": "torch not installed"}})
    f.qa_run(root, "qa-a", {"none": ["fail", "pass", "fail", "fail"], "context:bm25@5": ["pass", "pass", "pass", "fail"]},
             tokens={"none": 400, "context:bm25@5": 3000}, cost={"none": 0.001, "context:bm25@5": 0.006})
    f.unfinished_run(root, "replay-crashed")
    page = write_html(build_report(discover_runs(root)), tmp_path / "site" / "report.html")

    seen = _load(browser, page)

    # Every figure drew: SVG with a real size and shapes inside, each linking to its run.
    assert seen["errors"] == 0
    assert seen["sections"] == ["suite-replay", "suite-cases", "suite-determinism", "suite-qa"]
    kinds = [fig["kind"] for fig in seen["figures"]]
    assert kinds.count("bars") >= 4 and kinds.count("paired") == 2 and kinds.count("grid") >= 3
    for fig in seen["figures"]:
        assert fig["svgs"] >= 1 and fig["drawn"] >= 3, fig
        assert fig["minWidth"] > 50 and fig["minHeight"] > 15, fig
        assert fig["links"] >= 1 and fig["runs"], fig
    assert not seen["overflow"]  # nothing wider than the window: wide tables scroll inside their card

    # No request left the machine, and the page raised no script or console error.
    urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert urls and urls[0] == page.resolve().as_uri()
    assert all(u.startswith(("file:", "data:")) for u in urls), urls
    assert not [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
    logged = [e["params"]["entry"] for e in browser.events if e.get("method") == "Log.entryAdded"]
    assert not [e for e in logged if e.get("level") == "error"], logged

    # A screenshot of the whole page.
    size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
    shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": WIDTH,
                                                            "height": size["height"], "scale": 1}})
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    target = tmp_path / "report.png"
    target.write_bytes(png)
    if os.environ.get("CTXGAUGE_SCREENSHOT_DIR"):
        keep = Path(os.environ["CTXGAUGE_SCREENSHOT_DIR"])
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, keep / "report.png")
        shutil.copyfile(page, keep / "report.html")


LAST_COLUMN_JS = """JSON.stringify([...document.querySelectorAll('section#suite-determinism table')].map(t => {
  const th = [...t.querySelectorAll('th')].pop();
  const box = (t.closest('.scroll') || t.parentElement).getBoundingClientRect();
  return {last: th.textContent.trim(), right: th.getBoundingClientRect().right, visible: box.right,
          widths: [...t.querySelectorAll("th")].map(h => [h.textContent.trim(), Math.round(h.getBoundingClientRect().width)])};
}))"""


def test_the_determinism_tables_last_column_shows_at_1400_px(browser, tmp_path, factory):
    # At 1,400 px the fingerprint column (the table's last) was scrolled out of its card.
    from ctxgauge.report import build_report, discover_runs, write_html

    root = tmp_path / "runs"
    factory.determinism_run(root, "determinism-20261201-235959-ab12cd",
                            {"bm25": {"level": 3, "drift": {"prose": 0.0, "near-duplicate": 0.1}},
                             "hybrid(engines=\"bm25,grep\")": {"level": 1, "drift": {"prose": 0.25}, "emr": 0.8},
                             "minilm": {"status": "skipped", "reason": "torch not installed"}})
    page = write_html(build_report(discover_runs(root)), tmp_path / "site" / "report.html")
    browser.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 900, "deviceScaleFactor": 1,
                                                        "mobile": False})
    _load(browser, page)
    tables = json.loads(browser.send("Runtime.evaluate", {"expression": LAST_COLUMN_JS,
                                                          "returnByValue": True})["result"]["value"])
    assert tables and all(t["last"] == "fingerprint" for t in tables), tables
    assert all(t["right"] <= t["visible"] + 0.5 for t in tables), tables


LABELS_JS = """JSON.stringify([...document.querySelectorAll('section#suite-replay figure.plot svg')].map(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('text.label')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left - box.left, right: r.right - box.left};
  });
}).filter(labels => labels.length))"""


def test_an_engine_in_two_runs_is_drawn_once_or_by_its_run_never_twice_alike(browser, tmp_path, factory):
    # bm25 replayed alone and against grep on the same commits (one measurement), and a run of the same name
    # in another folder that measured something else: each bar's label is distinct and drawn in full.
    from ctxgauge.report import build_report, discover_runs, write_html

    root = tmp_path / "runs"
    ranks = [1, 2, None, 3, 1, 5]
    factory.replay_run(root / "demo1", "replay-bm25", ranks, None)
    factory.replay_run(root / "demo1", "replay-bm25-vs-grep", ranks, [2, 2, 1, None, 1, 1])
    factory.replay_run(root / "demo2", "replay-bm25", [None, 1, 1, 1, 2, 2], None)
    page = write_html(build_report(discover_runs(root)), tmp_path / "site" / "report.html")
    _load(browser, page)
    figures = json.loads(browser.send("Runtime.evaluate", {"expression": LABELS_JS,
                                                           "returnByValue": True})["result"]["value"])
    assert figures, "no label drawn in the replay section"
    for labels in figures:
        texts = [x["text"] for x in labels]
        assert texts == ["bm25 · demo1/replay-bm25", "grep", "bm25 · demo2/replay-bm25"], texts
        assert all(x["left"] >= 0 for x in labels), labels  # nothing cut off on the left of its svg
