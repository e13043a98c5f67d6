"""Every command that prints a table, at COLUMNS=80, at COLUMNS=120 and with stdout a pipe (no COLUMNS):
no id, path, number or interval is split across lines or cut, no line is wider than the width, and a pipe
gets every line whole (issue 39, item 4). replay still prints exactly what `report` prints for its run.

Tokens are taken from the records and the report model, never written out by hand: every run path, the
values and intervals of every figure, every run id and recorded file.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from ctxgauge.cli import app
from ctxgauge.report import BarsFigure, PairedFigure, Table, build_report, load_runs

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"
WIDTHS = ("80", "120", None)  # None: a pipe without COLUMNS, so no width limit at all
WORD = re.compile(r"\[[^\]\s]*, [^\]\s]*\]|\S+")


def invoke(args: list[str], columns: str | None):
    result = CliRunner().invoke(app, args, env={"COLUMNS": columns})
    assert result.exit_code in (0, 1), (args, result.stdout, result.stderr)
    return result.stdout


def assert_laid_out(out: str, columns: str | None, tokens) -> None:
    tokens = sorted({t for t in tokens if t})
    assert tokens
    missing = [t for t in tokens if t not in out]
    assert not missing, (columns, missing[:10], out[:3000])
    if columns:
        wide = [line for line in out.splitlines() if cell_len(line) > int(columns)]
        assert not wide, (columns, wide[:3])


def model_tokens(model) -> set[str]:
    """The tokens a terminal must show whole: run paths, every figure's value and interval, and each word of
    a system's label (at a narrow width a label may wrap between its words, never inside one)."""
    out = set(model.runs)
    for sec in model.sections:
        for block in sec.blocks:
            if isinstance(block, BarsFigure):
                for p in block.panels:
                    for b in p.bars:
                        out |= set(WORD.findall(b.label))
                        if b.value is not None:
                            out.add(b.text or f"{b.value:.3f}")
                        if b.low is not None and b.high is not None:
                            out.add(f"[{b.low:.3f}, {b.high:.3f}]")
            elif isinstance(block, PairedFigure):
                for r in block.rows:
                    out |= {f"{r.diff:+.3f}", f"[{r.low:+.3f}, {r.high:+.3f}]"}
            elif isinstance(block, Table) and not block.detail:
                for row in block.rows:
                    for i, c in enumerate(row):
                        if i in block.drop or i in block.free:
                            continue
                        out |= {c.text} if c.num or not c.wrap else set(WORD.findall(c.text))
    for row in model.overview.rows:
        out |= {row[0].text, row[5].text, row[6].text}  # run, finished, units: no column of it is left out
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("width") / "v2"
    shutil.copytree(V2, root, ignore=shutil.ignore_patterns("README.md", "make_fixtures.sh"))
    return root


@pytest.mark.parametrize("columns", WIDTHS)
def test_report_of_every_suite(runs, columns):
    model = build_report(load_runs([runs]))
    out = invoke(["report", str(runs)], columns)
    assert_laid_out(out, columns, model_tokens(model))
    # Figures first: the first figure comes before the Runs table.
    assert out.index("per-engine metrics") < out.index("\nRuns\n")
    if columns is None:  # a pipe: every row of the Runs table on one line, every caption on one line
        lines = out.splitlines()
        for row in model.overview.rows:
            assert any(row[0].text in line and row[5].text in line and row[6].text in line for line in lines), row
        assert any("left out of every figure and mean above." in line and line.startswith("Every run read.")
                   for line in lines)


@pytest.mark.parametrize("columns", WIDTHS)
def test_runs_list_and_show(runs, columns):
    listed = json.loads(invoke(["runs", "list", str(runs), "--json"], None))["runs"]
    out = invoke(["runs", "list", str(runs)], columns)
    assert_laid_out(out, columns, [r["path"] for r in listed] + [w for r in listed for w in WORD.findall(r["headline"] or "")])
    # A figure and its value are one token (`recall@5` / `0.912` on two lines read as two things).
    assert_laid_out(out, columns, [f.rstrip(",") for r in listed for f in (r["headline"] or "").split(", ")])
    for r in listed[:4]:
        shown = json.loads(invoke(["runs", "show", str(runs / r["path"]), "--json"], None))
        out = invoke(["runs", "show", str(runs / r["path"])], columns)
        assert_laid_out(out, columns, [shown["record"]["run_id"], *shown["integrity"]])


@pytest.mark.parametrize("columns", WIDTHS)
def test_engines(columns):
    engines = json.loads(invoke(["engines", "--json"], None))["engines"]
    out = invoke(["engines"], columns)
    tokens = [e["name"] for e in engines]
    if columns is None:  # no width limit: every identity id whole
        tokens += [e["identity"]["id"] for e in engines if e.get("identity")]
    assert_laid_out(out, columns, tokens)


def test_demo_output(capsys, monkeypatch):
    from ctxgauge.cli.demo import _print
    from ctxgauge.demo import DemoResult
    from ctxgauge.metrics.scoring import headline_metrics
    from ctxgauge.results import EngineResult

    out_dir = Path("ctxgauge-runs/demo-with-a-long-name-20261206-193428-a1b2c3")
    names = ["grep", "bm25", "minilm(max_chunks_per_file=6,test_chunks=1)", "fusion(bm25,minilm)"]
    replay = {n: {"hit@5": 0.5 + i / 17, "recall@5": 0.55 + i / 13, "recall@10": 0.6 + i / 19, "mrr": 0.4 + i / 23,
                  "ndcg@5": 0.45 + i / 29, "ndcg@10": 0.45 + i / 31}
              for i, n in enumerate(names)}
    result = DemoResult(out=out_dir, replay=replay,
                        determinism={n: EngineResult(status="measured", level=3, drift={"prose": 0.02, "code": 0.125})
                                     for n in names},
                        qa=None, report_html=out_dir / "report.html", report_md=out_dir / "report.md")
    for columns in WIDTHS:
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        _print(result)
        out = capsys.readouterr().out
        shown = headline_metrics(dict.fromkeys(m for s in replay.values() for m in s))
        assert shown
        tokens = names + [f"{s[m]:.3f}" for s in replay.values() for m in shown]
        assert_laid_out(out, columns, tokens + ["0.020", "0.125", str(out_dir / "report.html")])


@pytest.mark.parametrize("columns", WIDTHS)
def test_replay_prints_what_report_prints_and_check_and_cache_show(repo_builder, tmp_path, columns):
    b = repo_builder("repo")
    paths = [f"src/widgets/{name}_with_a_rather_long_module_name.py" for name in ("alpha", "beta", "gamma")]
    b.commit("start the widget registry", {paths[0]: "def registry():\n    return {}\n"})
    b.commit("widget parser reads identifiers", {paths[1]: "def parse(text):\n    return text.split()\n"})
    b.commit("widget registry keeps parsed identifiers", {paths[0]: "def registry():\n    return {'a': 1}\n",
                                                         paths[2]: "IDENTIFIERS = ['a']\n"})
    b.commit("parser handles empty identifiers", {paths[1]: "def parse(text):\n    return text.split() or []\n"})
    out_dir = tmp_path / "replay-with-a-long-run-name-20261206-193428-a1b2c3d4"
    replayed = invoke(["replay", str(b.path), "--engine", "bm25", "--vs", "grep", "--out", str(out_dir)], columns)
    reported = invoke(["report", str(out_dir)], columns)
    assert replayed == reported
    model = build_report(load_runs([out_dir]))
    assert_laid_out(reported, columns, model_tokens(model) | {out_dir.name})

    out = invoke(["check", "bm25", "--source", str(b.path)], columns)
    report = json.loads(invoke(["check", "bm25", "--source", str(b.path), "--json"], None))
    assert_laid_out(out, columns, [c["name"] for c in report["checks"]])

    usage = json.loads(invoke(["cache", "show", "--json"], None))
    out = invoke(["cache", "show"], columns)
    assert_laid_out(out, columns, [s["name"] for s in usage["stages"]] + [s["key"][:12] for s in usage["stages"]])
