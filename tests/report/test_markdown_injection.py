"""Data in the Markdown report is text, never markup (F13).

A real repository whose commit subjects and paths hold raw HTML (`<img onerror>`, `</script>`), a
`javascript:` link and a remote image, replayed from the shell into a run directory named `javascript:` too;
`report --md --misses --title ...` is rendered with markdown-it-py, raw HTML enabled (the most permissive
CommonMark renderer): no tag comes from data, no image appears, and every link is one ctxgauge built (a
relative path to a run file that exists), never a `javascript:` or remote URL.
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import RepoBuilder  # noqa: E402

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(2)</script>"
JS_LINK = "[click](javascript:alert(3))"
REMOTE = "![](http://remote.example/x.png)"
AUTOLINK = "<http://remote.example/> www.remote.example"
PATHS = [f"src/{IMG}.py", f"src/{JS_LINK}.py", f"src/{REMOTE.replace('/', '_')}.py", "src/plain.py"]
SUBJECTS = [f"Fix {IMG} now", f"Close {SCRIPT}", f"See {JS_LINK} {AUTOLINK}", f"Show {REMOTE} ```\n# boom"]
TITLE = f"{IMG} {JS_LINK} {REMOTE}"
LABEL = "javascript:alert(4)"


def ctxgauge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200"}, timeout=120)
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr
    return proc


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def hostile_markdown(root: Path) -> tuple[Path, str]:
    """Replay a hostile repository into `root/runs/LABEL`; write `report --md` of it; its path and text."""
    b = RepoBuilder(root / "repo")
    decoys = {f"src/d{i:02}.py": "fix close see show now img src onerror alert script click remote example png boom\n"
              for i in range(12)}
    b.commit("init", {p: f"# {i}\n" for i, p in enumerate(PATHS)} | decoys)
    for i, subject in enumerate(SUBJECTS):
        b.commit(subject, {PATHS[i]: f"# {i} changed\n"})
    runs = root / "runs"
    ctxgauge("replay", str(b.path), "-e", "grep", "--out", str(runs / LABEL))
    md = root / "site" / "report.md"
    ctxgauge("report", str(runs), "--md", str(md), "--misses", "--title", TITLE)
    return md, md.read_text()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, str, str]:
    from markdown_it import MarkdownIt

    md, text = hostile_markdown(tmp_path_factory.mktemp("mdinj"))
    return md, text, MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough").render(text)


def test_the_report_holds_the_data(rendered):
    _, text, html = rendered
    assert "Misses at 5" in text and "(grep: 4 missed of 4 scored commits" in text and "javascript:alert(4)" in html
    # Subjects and paths visible as typed (markdown-it turns the escapes back into the characters).
    for shown in ("&lt;img src=x onerror=alert(1)&gt;", "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;",
                  "[click](javascript:alert(3))", "![](http://remote.example/x.png)", "``` # boom"):
        assert shown in html, (shown, html)


def test_no_raw_html_image_or_foreign_link_from_data(rendered):
    md, _, html = rendered
    parser = Tags()
    parser.feed(html)
    names = {t for t, _ in parser.tags}
    assert not names & {"img", "script", "iframe", "object", "svg"}, html
    assert all(not any(k.startswith("on") for k in attrs) for _, attrs in parser.tags), html
    links = [attrs.get("href", "") for t, attrs in parser.tags if t == "a"]
    assert links, html
    for href in links:
        # Only ctxgauge's own links: relative paths to run files that exist, never a scheme.
        assert ":" not in href.split("/")[0] and not href.startswith(("//", "http", "javascript")), href
        assert (md.parent / unquote(href)).is_file(), href
