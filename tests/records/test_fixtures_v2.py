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

And issue 35's leaderboard.csv (items 4 and 5), exactly these columns: two new last columns, `group` and
`group_n` (empty in every fixture: no comparison there has more than two systems with per-unit values), and
the interval's rule (`ci_low`, `ci_high`, `ci_basis`): a row 5d251ae gave the `units` rule keeps its interval
and rule; a row 5d251ae gave the `runs` rule (an interval over the runs' means: zero-width for bm25 in two
runs on the same cases) now has `units` (same units: the newest run's) or `pooled-units` (different units),
or nothing when the runs carry no per-unit values (determinism); a row with no interval keeps none except
qa's accuracy, which now resamples questions (`questions-repetitions`). `old_leaderboard` checks each of
these and puts 5d251ae's values back; every other byte must be 5d251ae's (its hash swapped in manifest.json).

And issue 35's item 2 in report.html (the misses tables are drawn there only): a misses table's title counts
per engine (`grep: 2 missed of 5 scored commits; bm25: 1 missed of 5 scored commits`, the known-gaps lane
apart) where 5d251ae summed the engines (`3 missed of 5 commits x engines`). `old_misses_titles` turns each
back into 5d251ae's sum, checking the engines were scored on the same units.

And issue 36's Markdown rule (item 5) in report.md: text is escaped as data (`report._markdown.md_text`): a
backslash before each character that can start markup (`_SPECIAL`) and before the `.`, `:` or `@` of a bare
autolink; and the targets of the links ctxgauge builds to run files are percent-encoded (`acme+gadgets` ->
`acme%2Bgadgets`). `old_markdown` takes exactly those backslashes out and percent-decodes link targets only (a
backslash before any other character, or a line 5d251ae wrote differently, still fails), giving 5d251ae's
bytes back. report.html's links to run files are percent-encoded the same way: `old_links` percent-decodes
`href="..."` values only (5d251ae wrote no `%` in any of them).

And the terminal's layout (issue 39, item 4): 5d251ae folded ids and paths across lines and cut headers in
its own `terminal.txt` (`demo/replay-bm` over `25`, `ok/failed/skipp` over `ed`), and printed the Runs table
before any figure. Today's terminal lays each table out for its width (`report._fit`) and prints the figures
first, so its bytes differ on purpose; what must not change is what it says. For terminal.txt the test
therefore checks that every number, id and path 5d251ae printed (every token holding a digit, `/`, `@` or
`.`, and every interval) appears whole in today's output at 120 columns, and that no line of it is wider.
Markdown, HTML and export stay byte for byte.

And issue 39's item 9 in report.html: ctxgauge's own Markdown code spans in a caption are drawn as code
(`<code>-</code>` where 5d251ae wrote `` `-` ``); record values stay escaped text. `old_html` turns each
`<code>` inside a `<p class="caption">` back into backticks (the footer's own `<code>` was there already).
And the third system colour (`report._svg.PALETTE`) is `#c2569b` where 5d251ae drew `#3f9c5a`, a green like a
grid's `hit`; `old_html` swaps it back (the new colour appears nowhere else on a page).

And issue 39's item 9 in qa's trust gate: the checks not measured are one line under the table (its
caption) instead of one row each, the title counts them instead of naming them, and why each was not
measured is a folded per-check table (HTML; the terminal and Markdown show it with --misses). `apart_trust`
takes every trust-gate card out of 5d251ae's and today's report.html and report.md (renumbering the
figures' ids, which the added card shifts), checks that today's cards name every check 5d251ae's named
with the same status, and the rest is compared byte for byte; 5d251ae's terminal tokens are looked for
outside its trust tables only, and the measured checks' values inside them.

And issue 39's item 4 in report.md and report.html: figures first, the Runs table last, as the terminal
already showed it (5d251ae put it first in Markdown and HTML); its caption says the figures are `above`
where 5d251ae's said `below`, and Markdown gives it a heading of its own level (`## Runs`, where 5d251ae's
`### Runs` came before any section). `runs_first` checks the Runs table is the page's last block, and only
its place, that one word and that heading level differ, and moves it back (the table itself, its rows and
links compared byte for byte).

And the coverage gap of a cases run (walkthrough at 80 columns): 5d251ae showed `-` where replay showed
`0.0%` for the same "no gap" (cases store no share; the report now computes replay's share from the units).
`old_gap` turns the coverage-gap row's percentages back into `-` inside the cases section only, checking
each was one.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import urllib.parse
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


MISSES_TITLE = re.compile(rb"\(((?:[^():;]+: \d+ missed of \d+ scored \w+s; )*[^():;]+: \d+ missed of \d+ scored "
                          rb"\w+s(?:; known-gaps lane, not counted: [^()]*)?)\)")


def old_misses_titles(html: bytes) -> bytes:
    """report.html as 5d251ae wrote its misses titles (the module's docstring): every title's per-engine
    counts summed back into `(N missed of M units x engines)`; asserts there was at least one wherever 5d251ae
    had one (the caller compares the rest byte for byte)."""
    def undo(m: re.Match) -> bytes:
        parts = m.group(1).decode("utf-8").split("; ")
        lane = parts.pop() if parts[-1].startswith("known-gaps lane") else ""
        counts = [re.fullmatch(r"(.+): (\d+) missed of (\d+) scored (\w+)s", p).groups() for p in parts]
        assert len({(n, u) for _, _, n, u in counts}) == 1, parts  # every engine scored on the same units
        missed = sum(int(c[1]) for c in counts)
        total = int(counts[0][2])
        if lane:
            gaps = [re.fullmatch(r"(.+) (\d+) missed of (\d+)", g).groups()
                    for g in lane.removeprefix("known-gaps lane, not counted: ").split(", ")]
            assert [g[0] for g in gaps] == [c[0] for c in counts] and len({g[2] for g in gaps}) == 1, lane
            missed += sum(int(g[1]) for g in gaps)
            total += int(gaps[0][2])
        return f"({missed} missed of {total} {counts[0][3]}s x engines)".encode("utf-8")

    return MISSES_TITLE.sub(undo, html)


LEADERBOARD_NEW = ["group", "group_n"]
INTERVAL = ["ci_low", "ci_high", "ci_basis"]


CAPTION = re.compile(rb'<p class="caption">.*?</p>', re.S)


def old_html(html: bytes) -> bytes:
    """report.html as 5d251ae wrote it, as far as issue 39's item 9 changed it (the module's docstring)."""
    html = html.replace(b"#c2569b", b"#3f9c5a")
    return CAPTION.sub(lambda m: re.sub(rb"<code>(.*?)</code>", rb"`\1`", m.group(0)), html)


TRUST_HTML = re.compile(rb'<div class="card" id="fig-\d+" data-kind="table" data-runs="[^"]*">(?:<h3>|<details><summary>)'
                        rb'Trust gate:.*?<div class="source">.*?</div></div>', re.S)
TRUST_MD = re.compile(rb"^### Trust gate:.*?^From runs?: [^\n]*\n\n?", re.S | re.M)
FIG_ID = re.compile(rb'id="fig-\d+"')


def apart_trust(name: str, today: bytes, then: bytes) -> tuple[bytes, bytes]:
    """Today's and 5d251ae's page with every trust-gate card taken out (the module's docstring), after
    checking that today's cards name every check of 5d251ae's with its status."""
    pattern = TRUST_MD if name.endswith(".md") else TRUST_HTML
    cards_then, cards_today = pattern.findall(then), pattern.findall(today)
    assert bool(cards_then) == bool(cards_today), name
    rows = re.compile(rb"(?:<tr><td class=\"nowrap\">|\| )([a-z_]+)(?:</td><td class=\"nowrap\">| \| )([^<|]+?)"
                      rb"(?:</td><td>(?:<span class=\"badge b-\w+\">)?| \| )(pass|warn|fail|not-measured)")
    for then_card in cards_then:
        assert rows.findall(then_card), (name, then_card[:200])
        for check, arm, status in rows.findall(then_card):
            label = check + (b"[" + arm.strip() + b"]" if arm.strip() != b"all" else b"")
            assert any((check in c and status in c) or (status == b"not-measured" and label in c)
                       for c in cards_today), (name, check, status)

    def out(page: bytes) -> bytes:
        page = pattern.sub(b"", page)
        numbers = iter(range(10_000))
        return FIG_ID.sub(lambda m: b'id="fig-%d"' % next(numbers), page) if name.endswith(".html") else page

    return out(today), out(then)


def old_leaderboard(today: bytes, then: bytes) -> bytes:
    """leaderboard.csv as 5d251ae wrote it: today's with the on-purpose changes (the module's docstring) checked
    row by row against 5d251ae's and undone."""
    import csv

    new_rows = list(csv.reader(io.StringIO(today.decode("utf-8"))))
    old_rows = list(csv.reader(io.StringIO(then.decode("utf-8"))))
    header = new_rows[0]
    assert header[-2:] == LEADERBOARD_NEW and header[:-2] == old_rows[0]
    assert len(new_rows) == len(old_rows)
    at = [header.index(c) for c in INTERVAL]
    keep = [i for i in range(len(header) - 2) if i not in at]
    out = [old_rows[0]]
    for new, old in zip(new_rows[1:], old_rows[1:]):
        assert [new[i] for i in keep] == [old[i] for i in keep], new
        assert new[-2:] == ["", ""], new  # no comparison of more than two systems in the fixtures
        low, high, basis = (new[i] for i in at)
        was = old[at[2]]
        if was == "units":
            assert [new[i] for i in at] == [old[i] for i in at], new
        elif was == "runs":
            assert basis in ("units", "pooled-units", ""), new
            assert (basis == "") == (new[0] == "determinism"), new
            if basis:
                assert float(low) <= float(high), new
        else:
            assert was == "" and old[at[0]] == old[at[1]] == ""
            if basis:
                assert (new[0], new[header.index("metric")], basis) == ("qa", "accuracy", "questions-repetitions")
                assert float(low) <= float(new[header.index("mean")]) <= float(high), new
            else:
                assert low == high == "", new
        row = new[:-2]
        for i in at:
            row[i] = old[i]
        out.append(row)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(out)
    return buf.getvalue().encode("utf-8")

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


MD_ESCAPE = re.compile(rb"\\([\\`*_\[\]<>!|&~$#.:@])")


LINK_TARGET = re.compile(rb"\]\(([^)\s]*)\)")


def old_markdown(md: bytes) -> bytes:
    """report.md as 5d251ae wrote it: today's with link targets percent-decoded and the data escapes'
    backslashes taken out (the docstring)."""
    md = LINK_TARGET.sub(lambda m: b"](" + urllib.parse.unquote_to_bytes(m.group(1)) + b")", md)
    return MD_ESCAPE.sub(rb"\1", md)


RUNS_CAPTION_NOW = b"left out of every figure and mean above."
RUNS_CAPTION_THEN = b"left out of every figure and mean below."
RUNS_CARD = b'<div class="card" id="fig-0" data-kind="table"'
MAIN = b'<main class="wrap">'


def runs_first(name: str, page: bytes) -> bytes:
    """report.md or report.html with the Runs table moved back to where 5d251ae put it, before any section
    (the module's docstring), after checking it is today's last block and says `above`."""
    if name.endswith(".md"):
        at = page.index(b"\n## Runs\n\n") + 1
        assert page.count(b"\n## Runs\n\n") == 1, name
        body, runs = page[:at], page[at:]  # the Runs table is the last block: all that follows its heading
        assert runs.count(RUNS_CAPTION_NOW) == 1 and runs.count(b"\n## ") == 0, name
        runs = b"#" + runs.replace(RUNS_CAPTION_NOW, RUNS_CAPTION_THEN) + b"\n"
        intro = body.index(b"\n\n", body.index(b"\n\n") + 2) + 2  # the title, then the one line under it
        return (body[:intro] + runs + body[intro:]).rstrip(b"\n") + b"\n"
    at, end = page.index(RUNS_CARD), page.index(b"<footer>")
    assert page.count(RUNS_CARD) == 1 and at < end, name
    runs = page[at:end]  # the last card, right before the footer
    assert runs.count(RUNS_CAPTION_NOW) == 1 and b"<section" not in runs, name
    page = page[:at] + page[end:]
    main = page.index(MAIN) + len(MAIN)
    return page[:main] + runs.replace(RUNS_CAPTION_NOW, RUNS_CAPTION_THEN) + page[main:]


GAP_MD = re.compile(rb"^\| coverage gap((?: \| [^|\n]*)+) \|$", re.M)
GAP_HTML = re.compile(rb'(<td>coverage gap</td>)((?:<td class="num">[^<]*</td>)+)')
PERCENT = re.compile(rb"\d+\.\d%")


def old_gap(name: str, page: bytes) -> bytes:
    """The cases section's coverage-gap cells as 5d251ae wrote them, `-` (the module's docstring)."""
    def dash(cells: bytes, cell: re.Pattern, blank: bytes) -> bytes:
        values = cell.findall(cells)
        assert values and all(PERCENT.fullmatch(v) for v in values), (name, cells)
        return cell.sub(blank, cells)

    if name.endswith(".md"):
        sections = re.split(rb"(?m)^(?=## )", page)
        fix = lambda m: b"| coverage gap" + dash(m.group(1), re.compile(rb"(?<=\| )[^|\n]*?(?= \||$)"), b"-") + b" |"
        return b"".join(GAP_MD.sub(fix, s) if s.startswith(b"## Cases") else s for s in sections)
    at = page.find(b'<section class="suite" id="suite-cases">')
    if at < 0:
        return page
    end = page.index(b"</section>", at)
    cell = re.compile(rb'(?<=<td class="num">)[^<]*(?=</td>)')
    fix = lambda m: m.group(1) + dash(m.group(2), cell, b"-")
    return page[:at] + GAP_HTML.sub(fix, page[at:end]) + page[end:]


HREF = re.compile(rb'href="([^"]*)"')


def old_links(html: bytes) -> bytes:
    """report.html with its link targets percent-decoded, as 5d251ae wrote them (the docstring)."""
    return HREF.sub(lambda m: b'href="' + urllib.parse.unquote_to_bytes(m.group(1)) + b'"', html)


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
    then_terminal = (expected / "terminal.txt").read_text(encoding="utf-8")
    # 5d251ae's trust tables (the module's docstring): a not-measured row's threshold is in the folded table.
    trust = re.compile(r"^Trust gate:.*?^from \S+$", re.S | re.M)
    measured = "".join(line for t in trust.findall(then_terminal) for line in t.splitlines(True)
                       if " pass " in line or " warn " in line or " fail " in line)
    tokens = terminal_tokens(trust.sub("", then_terminal)) + terminal_tokens(measured)
    assert len(tokens) > 10
    assert [t for t in tokens if t not in today] == []
    assert max(cell_len(line) for line in today.splitlines()) <= 120

    # `ctxgauge report RUN --md ... --html ...`: the links are relative to the page's directory.
    md = write_markdown(model, out / "report.md")
    html = write_html(model, out / "report.html")
    today_md, then_md = apart_trust("report.md", old_gap("report.md", old_markdown(runs_first(md.name, without_mark(
        md.name, md.read_bytes())))),
                                    (expected / "report.md").read_bytes())
    assert today_md == then_md
    then_html = (expected / "report.html").read_bytes()
    assert (b"missed of" in then_html) == bool(MISSES_TITLE.search(html.read_bytes()))
    today_html, then_html = apart_trust("report.html", old_gap("report.html", old_html(old_links(old_misses_titles(
        runs_first(html.name, without_mark(html.name, html.read_bytes())))))), then_html)
    assert today_html == then_html

    # `ctxgauge export RUN --out ...`: every file, byte for byte, and no file more or less. An empty
    # environment: the secret scan then looks for nothing of this machine's (it only ever refuses).
    export_runs(src, out / "export", environ={})
    exported = tree(out / "export")
    then_tree = tree(expected / "export")
    for top in ("report.md", "report.html", "leaderboard.csv"):  # the export's own files, rendered today
        today = exported[top]
        exported[top] = (old_leaderboard(today, then_tree[top]) if top == "leaderboard.csv"
                         else old_gap(top, old_markdown(runs_first(top, without_mark(top, today)))) if top == "report.md"
                         else old_gap(top, old_html(old_links(old_misses_titles(runs_first(top, without_mark(top, today)))))))
        if top != "leaderboard.csv":  # the trust cards compared apart (the module's docstring), the rest byte for byte
            mine, theirs = apart_trust(top, exported[top], then_tree[top])
            assert mine == theirs, top
            exported[top] = then_tree[top]
        # manifest.json names each derived file by its SHA-256: today's names today's bytes; 5d251ae's, the same
        # bytes without the on-purpose changes. Swapping the one for the other leaves every other byte of the manifest as is.
        now, then = (hashlib.sha256(b).hexdigest().encode("ascii") for b in (today, exported[top]))
        assert exported["manifest.json"].count(now) == 1, top
        exported["manifest.json"] = exported["manifest.json"].replace(now, then)
    assert exported == then_tree
