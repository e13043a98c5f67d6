"""The budget curve in a real browser (issue 37, item 9): headless Chromium draws it from a run record that
carries `results.budget_curve` (a v2 replay fixture run with the field added), and no request leaves the
machine. Skipped like the other browser tests when Chromium is absent (unless CTXGAUGE_REQUIRE_BROWSER)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "report"))

from test_html_report import WIDTH, _load, browser  # noqa: E402,F401  (the fixture, shared)
from test_budget_curve import run_with_curve  # noqa: E402

CURVE_JS = """JSON.stringify([...document.querySelectorAll('figure.plot[data-kind="curve"] svg.curve')].map(s => {
  const box = s.getBoundingClientRect();
  return {width: box.width, height: box.height,
          lines: [...s.querySelectorAll('polyline')].map(p => p.getTotalLength()),
          bands: [...s.querySelectorAll('polygon')].map(p => p.getBBox().height),
          dots: s.querySelectorAll('circle').length,
          links: s.querySelectorAll('a[href]').length};
}))"""


def test_budget_curve_renders_offline_in_chromium(browser, tmp_path):
    from ctxgauge.report import build_report, load_runs, write_html

    run = run_with_curve(tmp_path)
    page = write_html(build_report(load_runs([run.parent])), tmp_path / "site" / "report.html")
    seen = _load(browser, page)
    assert seen["errors"] == 0 and not seen["overflow"]
    curves = json.loads(browser.send("Runtime.evaluate", {"expression": CURVE_JS,
                                                          "returnByValue": True})["result"]["value"])
    assert len(curves) == 1, curves
    [c] = curves
    assert c["width"] > 400 and c["height"] > 200, c
    assert len(c["lines"]) == 2 and all(n > 300 for n in c["lines"]), c  # a line across the plot per engine
    assert len(c["bands"]) == 2 and all(h > 10 for h in c["bands"]), c
    assert c["dots"] == 16 and c["links"] == 2, c

    urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(("file:", "data:")) for u in urls), urls
    assert not [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]

    if os.environ.get("CTXGAUGE_SCREENSHOT_DIR"):
        size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                       "clip": {"x": 0, "y": 0, "width": WIDTH,
                                                                "height": size["height"], "scale": 1}})
        keep = Path(os.environ["CTXGAUGE_SCREENSHOT_DIR"])
        keep.mkdir(parents=True, exist_ok=True)
        (keep / "budget-curve.png").write_bytes(base64.b64decode(shot["data"]))
        shutil.copyfile(page, keep / "budget-curve.html")
