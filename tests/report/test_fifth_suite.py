"""Adding a suite touches its own code and one registry entry: a tiny fifth suite, end to end.

`wordcount` "measures" an engine by counting the words of each file of a directory (one unit per file).
Its own code is `run_wordcount` (writing its record through RunDir, like every suite) and its view
(`section`, `leaderboard`); its one registry entry is the `register` call. Nothing else in ctxgauge changes,
yet the report draws it, the leaderboard averages it, the store lists it and the export publishes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pytest

from ctxgauge.export import check_export, export_runs, summaries
from ctxgauge.records import ResultsStore, RunDir, RunRef, Subject, discover_runs
from ctxgauge.report import VIEWS, Attempt, Cell, Section, SuiteView, Table, Value, build_report, register, \
    render_markdown

# -- the suite's own code ----------------------------------------------------------------------------------
SUITE = "wordcount"
SUITE_VERSION = 1


def run_wordcount(corpus: Path, out: Path) -> Path:
    """Count each file's words; one unit per file; the mean as the result and headline."""
    subject = Subject(dataset=corpus.name, systems=["split"])
    with RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec={"sep": None}) as run:
        counts = {}
        for f in sorted(corpus.iterdir()):
            counts[f.name] = len(f.read_text().split())
            run.add_unit(f.name, "ok", figures={"words": counts[f.name]})
        mean = sum(counts.values()) / len(counts)
        run.finish("success", results={"mean_words": mean}, headline=f"mean words {mean:.1f}")
    return out


def wordcount_section(suite: str, title: str, runs: Sequence[RunRef]) -> Section:
    rows = [[Cell(u.id, run=r.rel), Cell(str(u.figures["words"]), num=True)] for r in runs if r.finished
            for u in r.units()]
    return Section(suite, title, [Table("Words per file", ["file", "words"], rows, sources=[r.rel for r in runs])])


def wordcount_leaderboard(run: RunRef) -> list[Attempt]:
    words = tuple(float(u.figures["words"]) for u in run.units())
    return [Attempt(s, "valid", (Value("words", sum(words) / len(words), words, 0),)) for s in run.subject.systems]


VIEW = SuiteView("Word count: how long is each file?", wordcount_section, wordcount_leaderboard)


# -- the one registry entry ----------------------------------------------------------------------------------
@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setattr("ctxgauge.report._views.VIEWS", dict(VIEWS))  # the test's entry does not outlive it
    register(SUITE, VIEW)


# -- what every reader then does with it ---------------------------------------------------------------------
@pytest.fixture
def runs(tmp_path, factory) -> Path:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.txt").write_text("one two three\n")
    (corpus / "b.txt").write_text("four five\n")
    root = tmp_path / "runs"
    run_wordcount(corpus, root / "wc-1")
    factory.replay_run(root, "replay-a", [1, 2], [2, None])
    return root


def test_the_report_draws_the_fifth_suite(runs, registered):
    report = build_report(discover_runs(runs))
    assert [s.suite for s in report.sections] == ["replay", SUITE]
    sec = report.sections[1]
    assert sec.title == VIEW.title
    assert [[c.text for c in row] for row in sec.blocks[0].rows] == [["a.txt", "3"], ["b.txt", "2"]]
    overview = {row[0].text: [c.text for c in row] for row in report.overview.rows}
    assert overview["wc-1"][1:5] == [SUITE, "finished", "split", "docs"]
    assert "Words per file" in render_markdown(report, None)


def test_without_its_entry_the_suite_is_listed_not_drawn(runs):
    report = build_report(discover_runs(runs))
    assert report.sections[1].title == f"{SUITE}: a suite this version of ctxgauge cannot draw"
    assert b"wordcount" not in summaries(discover_runs(runs))["leaderboard.csv"]


def test_the_leaderboard_store_and_export_read_it(runs, registered, tmp_path):
    board = summaries(discover_runs(runs))["leaderboard.csv"].decode().splitlines()
    row = next(line for line in board if line.startswith(f"{SUITE},"))
    assert row.startswith(f"{SUITE},docs,split,,,,,,,words,1,1,1,0,0,2.500000,2.500000,2.500000,")
    with ResultsStore.open(runs) as store:
        listed = store.list(suite=SUITE)
    assert [(r["dataset"], r["systems"], r["headline"]) for r in listed] == [("docs", ["split"], "mean words 2.5")]
    done = export_runs(runs, tmp_path / "export")
    assert done.runs == 2 and check_export(runs, tmp_path / "export").ok
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    assert {r["suite"] for r in manifest["runs"]} == {"replay", SUITE}
