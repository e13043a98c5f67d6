"""Runs written by 5d251ae, rendered by today's readers into the same bytes 5d251ae rendered.

`fixtures/v2/` holds the untouched output of 5d251ae's commands on the bundled sample, two small fixture
repositories and a plain directory, for every suite and shape (see `fixtures/v2/README.md` for the
commands and `make_fixtures.sh`, which regenerates them); `fixtures/v2-derived/<run>/` holds what
5d251ae's `ctxgauge report` printed (`terminal.txt`, COLUMNS=120) and wrote (`report.md`, `report.html`)
and what its `ctxgauge export` wrote (`export/`), per run and for all of them (`all/`). Today's readers
must render every one byte for byte.

The renders are made as the CLI made them: from a copy of `v2/` in a working directory, with the same
relative paths (`v2/<run>` in, `v2-derived/<run>/...` out), so the runs' names and the links between the
pages and the runs come out the same. Nothing is normalised: a render holds no clock of its own (the
times it shows are the runs' recorded ones).

Changed on purpose since 5d251ae, and only these (the module's docstring): every Markdown and HTML report carries the
output rule's generator mark (`_output.MARK_LINE`, its own line at the top of report.md and right after
HTML's doctype), by which a later `report --md/--html` recognises a file it may replace. The test removes
exactly that line, once, where it must be, and asserts it was there (and, in an export's manifest.json, swaps
the hash of those bytes for the hash of the bytes without it).

And the terminal's layout (issue 39, item 4): 5d251ae folded ids and paths across lines and cut headers in
its own `terminal.txt` (`demo/replay-bm` over `25`, `ok/failed/skipp` over `ed`), and printed the Runs table
before any figure. Today's terminal lays each table out for its width (`report._fit`) and prints the figures
first, so its bytes differ on purpose; what must not change is what it says. For terminal.txt the test
therefore checks that every number, id and path 5d251ae printed (every token holding a digit, `/`, `@` or
`.`, and every interval) appears whole in today's output at 120 columns, and that no line of it is wider.
Markdown, HTML and export stay byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from ctxgauge._output import MARK_LINE
from ctxgauge.export import export_runs
from ctxgauge.records import load_runs, read_run
from ctxgauge.report import build_report, render_terminal, write_html, write_markdown

FIXTURES = Path(__file__).with_name("fixtures")
V2 = FIXTURES / "v2"
DERIVED = FIXTURES / "v2-derived"
COMMIT = "5d251ae"
RUNS = ("cases", "cases-dir", "cases-swebench", "cases-vs", "demo", "determinism", "qa", "qa-adjudicated",
        "qa-retrieval", "replay", "replay-repos", "replay-vs")


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A working directory holding a copy of v2/ (the runs only), as make_fixtures.sh's was."""
    root = tmp_path_factory.mktemp("v2work")
    shutil.copytree(V2, root / "v2", ignore=shutil.ignore_patterns("README.md", "make_fixtures.sh"))
    return root


def without_mark(name: str, data: bytes) -> bytes:
    """A report as 5d251ae wrote it: today's bytes with the generator mark's line taken out (the module's docstring)."""
    mark = MARK_LINE.encode("ascii") + b"\n"
    at = {".md": 0, ".html": len(b"<!DOCTYPE html>\n")}[Path(name).suffix]
    assert data[at:at + len(mark)] == mark, name
    return data[:at] + data[at + len(mark):]


_INTERVAL = re.compile(r"\[[-+]?\d[\d.]*, [-+]?\d[\d.]*\]")
_SEPARATORS = re.compile(r"[\s\u2500-\u257f]+")  # whitespace and box drawing


def terminal_tokens(text: str) -> list[str]:
    """Every number, id and path of a terminal rendering: its intervals, and each token holding a digit, `/`,
    `@` or an inner `.` (the punctuation of running text around it taken off; a token 5d251ae cut with `…`
    kept up to the cut, which today's whole token still contains)."""
    out = _INTERVAL.findall(text)
    for chunk in _SEPARATORS.split(_INTERVAL.sub(" ", text)):
        token = chunk.strip("(),;:").rstrip(".").split("…")[0]
        if re.search(r"[\d/@]|\w\.\w", token):
            out.append(token)
    return sorted(set(out))


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_shape_is_there_and_written_by_5d251ae():
    assert sorted(p.name for p in V2.iterdir() if p.is_dir()) == list(RUNS)
    assert sorted(p.name for p in DERIVED.iterdir()) == sorted((*RUNS, "all"))
    runs = [p.parent for p in V2.rglob("run.json")]
    assert len(runs) == 18  # 10 runs, replay-repos holds 3 more, demo 5
    for run in runs:
        rec = read_run(run)
        assert rec.status == "success", run
        assert json.loads((run / "run.json").read_text())["provenance"]["source"] == {
            "commit": rec.provenance["source"]["commit"], "dirty": False}
        assert rec.provenance["source"]["commit"].startswith(COMMIT), run
    suites = {read_run(r).suite for r in runs}
    assert suites == {"replay", "cases", "determinism", "qa"}
    arms = read_run(V2 / "qa").subject.systems
    assert arms == ["none", "context:bm25@3", "tool:grep", "command:qa_harness.py"]
    assert (V2 / "qa-adjudicated" / "adjudications.jsonl").is_file()


@pytest.mark.parametrize("name", (*RUNS, "all"))
def test_todays_readers_render_what_5d251ae_rendered(name, work, monkeypatch):
    monkeypatch.chdir(work)
    src = "v2" if name == "all" else f"v2/{name}"
    out = Path("v2-derived") / name
    expected = DERIVED / name
    model = build_report(load_runs([src]))

    # `ctxgauge report RUN > terminal.txt` with COLUMNS=120: a console 120 wide on a file (no colour).
    buf = io.StringIO()
    render_terminal(model, Console(file=buf, width=120, highlight=False, color_system=None, force_terminal=False,
                                   legacy_windows=False))
    today = buf.getvalue()
    tokens = terminal_tokens((expected / "terminal.txt").read_text(encoding="utf-8"))
    assert len(tokens) > 10
    assert [t for t in tokens if t not in today] == []
    assert max(cell_len(line) for line in today.splitlines()) <= 120

    # `ctxgauge report RUN --md ... --html ...`: the links are relative to the page's directory.
    md = write_markdown(model, out / "report.md")
    html = write_html(model, out / "report.html")
    assert without_mark(md.name, md.read_bytes()) == (expected / "report.md").read_bytes()
    assert without_mark(html.name, html.read_bytes()) == (expected / "report.html").read_bytes()

    # `ctxgauge export RUN --out ...`: every file, byte for byte, and no file more or less. An empty
    # environment: the secret scan then looks for nothing of this machine's (it only ever refuses).
    export_runs(src, out / "export", environ={})
    exported = tree(out / "export")
    for top in ("report.md", "report.html"):  # the export's own reports, rendered today (not the runs' files)
        today = exported[top]
        exported[top] = without_mark(top, today)
        # manifest.json names each derived file by its SHA-256: today's names today's bytes; 5d251ae's, the same
        # bytes without the mark. Swapping the one for the other leaves every other byte of the manifest as is.
        now, then = (hashlib.sha256(b).hexdigest().encode("ascii") for b in (today, exported[top]))
        assert exported["manifest.json"].count(now) == 1, top
        exported["manifest.json"] = exported["manifest.json"].replace(now, then)
    assert exported == tree(expected / "export")
