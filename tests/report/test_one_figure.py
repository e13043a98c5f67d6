"""One figure, one value: for every figure column of every suite's v2 fixture run, the terminal, Markdown and
HTML renderings and leaderboard.csv show the value the suite stored, rounded to the precision each shows.

The stored value is read from run.json through the typed classes (the suite computed it once); each
rendering is parsed back from its own text, so a renderer that recomputed a mean (and rounded a last bit
differently) or read another key fails here. Figure columns: replay and cases `results.summary` (and
replay's `vs_summary`) per metric, with the coverage gap; determinism's level, query-family EMR /
Jaccard / tau (shown cut, never rounded up to a 1.000 the run did not have) and drift per noise kind;
qa's accuracy, passed/questions, cost and retrieval hit rate per arm.
"""

from __future__ import annotations

import csv
import html as htmllib
import io
import re
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path

import pytest
from rich.console import Console

from ctxgauge.export import summaries
from ctxgauge.report import build_report, load_runs, render_html, render_markdown, render_terminal
from ctxgauge.report._common import pct, usd

FIXTURES = Path(__file__).resolve().parents[1] / "records" / "fixtures" / "v2"
RUNS = sorted(p.parent for p in FIXTURES.rglob("run.json"))


# -- each rendering's tables, parsed back from its text ------------------------------------------------------
def _plain(cell: str) -> str:
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell.strip())  # a Markdown link: its text
    return re.sub(r"\\(.)", r"\1", cell)  # Markdown escapes


def md_table(md: str, title: str) -> list[list[str]]:
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("### ") and line.endswith(title))
    rows = []
    for line in lines[start + 1:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("|") and not set(line) <= set("|-: "):
            rows.append([_plain(c) for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])])
    return rows


def html_table(page: str, title: str) -> list[list[str]]:
    start = page.index(f"{htmllib.escape(title, quote=False)}</h3>")
    body = page[start:page.index("</table>", start)]
    return [[htmllib.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def term_table(text: str, title: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().endswith(title))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith(("┃", "│")):
            rows.append([c.strip() for c in re.split(r"[┃│]", line)[1:-1]])
        elif rows and not line.startswith(("┏", "┡", "├", "└")):
            break
    return rows


def cell(rows: list[list[str]], row: str, column: str) -> str:
    header = rows[0]
    found = [r for r in rows[1:] if r[0] == row]
    assert len(found) == 1, (row, rows)
    return found[0][header.index(column)]


def rendered(run_dir: Path):
    (run,) = load_runs([run_dir])
    report = build_report([run])
    buf = io.StringIO()
    render_terminal(report, Console(file=buf, width=400, color_system=None))
    board = {(r["system"], r["metric"]): r for r in csv.DictReader(io.StringIO(
        summaries([run])["leaderboard.csv"].decode("utf-8")))}
    views = {"terminal": (buf.getvalue(), term_table), "markdown": (render_markdown(report, None), md_table),
             "html": (render_html(report, None), html_table)}
    return run, views, board


def check(views, title: str, row: str, column: str, expected: str) -> None:
    for name, (text, parse) in views.items():
        got = cell(parse(text, title), row, column)
        assert got == expected, f"{name}: {title} [{row}, {column}] shows {got!r}, stored value rounds to {expected!r}"


def leaderboard_mean(board, system: str, metric: str, value: float | None) -> None:
    row = board[(system, metric)]
    assert row["mean"] == ("" if value is None else f"{value:.6f}"), (system, metric, row["mean"], value)


def three(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def cut(value: float) -> str:
    exact = Decimal(repr(float(value)))
    shown = exact.quantize(Decimal("0.001"), rounding=ROUND_FLOOR)
    return f"{shown}" + ("…" if shown != exact else "")


# -- per suite ----------------------------------------------------------------------------------------------
def _retrieval(run, views, board) -> int:
    unit = "commit" if run.suite == "replay" else "case"
    title = f"Every metric, mean over scored {unit}s"
    sides = [(run.subject.systems[0], run.results.summary)]
    if run.suite == "replay" and run.results.vs_summary is not None:
        sides.append((run.subject.systems[1], run.results.vs_summary))
    checked = 0
    for engine, summary in sides:
        for metric, value in summary.items():
            if metric == "coverage_gap":
                check(views, title, "coverage gap", engine, pct(value))
            else:
                check(views, title, metric, engine, three(value))
                leaderboard_mean(board, engine, metric, value)
            checked += 1
    return checked


def _determinism(run, views, board) -> int:
    title = f"{run.subject.dataset}: Context Trust Level per engine"
    checked = 0
    for engine, result in run.results.engines.items():
        if result.status == "skipped":
            continue
        leaderboard_mean(board, engine, "ctl", None if result.level is None else float(result.level))
        query, why = result.family("query")
        if why is None:
            figures = (query.exact_match_rate, query.mean_jaccard, query.mean_kendall_tau)
            check(views, title, engine, f"EMR / Jaccard@{run.results.k} / τ", " / ".join(cut(v) for v in figures))
            for metric, value in zip(("exact_match_rate", "mean_jaccard", "mean_kendall_tau"), figures):
                leaderboard_mean(board, engine, metric, value)
        if result.drift:
            check(views, title, engine, "drift",
                  ", ".join(f"{kind} {value:.3f}" for kind, value in sorted(result.drift.items())))
            for kind, value in result.drift.items():
                leaderboard_mean(board, engine, f"drift:{kind}", value)
        checked += 1
    return checked


def _qa(run, views, board) -> int:
    title = "Arms: accuracy, tokens and cost"
    checked = 0
    for arm, s in run.results.summary.items():
        check(views, title, arm, "accuracy", pct(s.accuracy))
        check(views, title, arm, "passed", f"{s.passed}/{s.questions}")
        check(views, title, arm, "cost", usd(s.cost_usd))
        check(views, title, arm, "hit rate", pct(s.retrieval_hit_rate))
        if s.status == "measured" and s.accuracy is not None:
            leaderboard_mean(board, arm, "accuracy", s.accuracy)  # one repetition: its accuracy is the arm's
        if (arm, "retrieval_hit_rate") in board:
            leaderboard_mean(board, arm, "retrieval_hit_rate", s.retrieval_hit_rate)
        checked += 1
    return checked


SUITE_CHECKS = {"replay": _retrieval, "cases": _retrieval, "determinism": _determinism, "qa": _qa}


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_every_rendering_shows_the_stored_figure(run_dir):
    run, views, board = rendered(run_dir)
    assert SUITE_CHECKS[run.suite](run, views, board) > 0


def test_the_parsers_see_a_changed_figure(tmp_path):
    # The check could fail: a figure stored as 0.4 but shown from the units (0.5) is caught.
    run, views, board = rendered(FIXTURES / "replay-vs")
    shown = cell(md_table(views["markdown"][0], "Every metric, mean over scored commits"), "hit@5", "grep")
    assert shown == three(run.results.summary["hit@5"]) == "0.500"
    with pytest.raises(AssertionError, match="shows '0.500', stored value rounds to '0.400'"):
        check(views, "Every metric, mean over scored commits", "hit@5", "grep", three(0.4))
