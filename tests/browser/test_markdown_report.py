"""The Markdown report of hostile data in a real browser (F13): markdown-it-py renders `report --md`
with raw HTML allowed, Debian's headless Chromium loads the page, and through the DevTools protocol the test
checks that no script ran (no dialog, no exception, no marker set by an `onerror`), no image element exists,
no request left the machine, and every link is a file link ctxgauge built.

Skipped, with the reason, without Chromium or `websockets` (see test_html_report.py, whose fixture this
uses), unless CTXGAUGE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from urllib.parse import unquote

HERE = Path(__file__).resolve().parent


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_html_test = _module(HERE / "test_html_report.py", "_ctxgauge_browser_html")
_md_test = _module(HERE.parent / "report" / "test_markdown_injection.py", "_ctxgauge_md_injection")
browser = _html_test.browser  # the fixture: one headless Chromium with a DevTools websocket

PROBE = """JSON.stringify({
  images: document.images.length,
  scripts: document.scripts.length,
  handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
  links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  pwned: window.__pwned || null
})"""


def test_markdown_report_runs_no_script_in_chromium(browser, tmp_path):
    from markdown_it import MarkdownIt

    md, text = _md_test.hostile_markdown(tmp_path)
    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    page = md.with_suffix(".html")
    page.write_text("<!doctype html><meta charset=utf-8><title>report</title>\n" + body, encoding="utf-8")

    browser.send("Network.enable")
    browser.send("Page.enable")
    browser.send("Runtime.enable")
    # alert() would block the page (and this test) until dismissed: it sets the marker instead.
    browser.send("Page.addScriptToEvaluateOnNewDocument",
                 {"source": "window.alert = (x) => { window.__pwned = String(x); };"})
    browser.send("Page.navigate", {"url": page.as_uri()})
    browser.wait_for("Page.loadEventFired")
    browser.drain(1.0)
    seen = json.loads(browser.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True})["result"]["value"])

    assert seen["pwned"] is None, seen
    assert seen["images"] == 0 and seen["scripts"] == 0 and seen["handlers"] == 0, seen
    assert seen["links"] and all(u.startswith("file:") and "javascript" not in u.split(":", 1)[0] for u in seen["links"]), seen
    assert all(Path(unquote(u[len("file://"):])).is_file() for u in seen["links"]), seen
    methods = [e.get("method") for e in browser.events]
    assert "Page.javascriptDialogOpening" not in methods and "Runtime.exceptionThrown" not in methods
    urls = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(("file:", "data:")) for u in urls), urls
