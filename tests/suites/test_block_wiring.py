"""Block level in replay and cases (issue 37 item 4): gold blocks, block coverage and precision at k files
and under a token budget, and the share of gold lines outside every definition, recorded per unit and in
the summaries, read at the revision the gold lines refer to.

The repository is built here with git. `lib/calc.py` at the parent (8 lines):

    1 import math
    2
    3 def area(r):                 area:   lines 3-4
    4     return math.pi * r * r
    5
    6 def volume(r):               volume: lines 6-8
    7     h = 2
    8     return area(r) * h

The commit inserts `VERSION = 3` after line 1 and changes line 7 (`h = 3`), so its gold lines are 1 (the
line the insertion follows) and 7 (docs/replay.md, "Gold lines"). Line 1 is in no definition; line 7's
block is `volume`, lines 6-8 at the parent. At the commit itself `volume` is lines 7-9 and line 7 is its
`def`: a reader at the wrong revision would record the block [7, 9].
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.metrics.packing import header
from ctxgauge.metrics.tokens import default_tokenizer
from ctxgauge.records import read_units
from ctxgauge.suites.cases import CasesConfig, load_cases, run_cases
from ctxgauge.suites.replay import ReplayConfig, replay

CALC = ["import math\n", "\n", "def area(r):\n", "    return math.pi * r * r\n", "\n", "def volume(r):\n",
        "    h = 2\n", "    return area(r) * h\n"]
NOTES = "Shelving notes: catalogue order, shelf labels.\n"


def _calc_after() -> str:
    lines = list(CALC)
    lines[6] = "    h = 3\n"
    lines[1:1] = ["VERSION = 3\n"]
    return "".join(lines)


@pytest.fixture
def calc_repo(repo_builder) -> Path:
    b = repo_builder("calc")
    b.commit("Add calc", {"lib/calc.py": "".join(CALC), "lib/notes.md": NOTES})
    b.commit("Raise the volume height", {"lib/calc.py": _calc_after()})
    return b.path


def _tokens(first: int, last: int) -> int:
    """Tokens of lines first..last of lib/calc.py packed with their header (the packing rule, by hand)."""
    tok = default_tokenizer()
    return tok.count(header("lib/calc.py", first, last)) + sum(tok.count(line) for line in CALC[first - 1:last])


def test_replay_block_figures_by_hand(tmp_path, calc_repo):
    cut = _tokens(1, 4)  # lines 1-4 fit: `area` is in the context, `volume` is not
    assert cut < _tokens(1, 6)
    result = replay(ReplayConfig(repo=calc_repo, engine="bm25(spans=false)", vs="grep", ks=(1, 2), depth=5,
                                 budgets=(cut, 4000), out=tmp_path / "run"))
    [unit] = [u.to_json() for u in read_units(result.run_dir) if u.status == "ok"]
    assert unit["gold_lines"] == {"lib/calc.py": [[1, 1], [7, 7]]}
    assert unit["gold_blocks"] == {"lib/calc.py": [[6, 8]]}  # at the parent, not the commit's [7, 9]
    assert [h["path"] for h in unit["ranking"]][:1] == ["lib/calc.py"]
    f = unit["figures"]
    # The whole file: both definitions are in the context, one of them gold.
    assert f["block_coverage@1"] == 1.0 and f["block_precision@1"] == 0.5
    # notes.md (no grammar) adds no block at 2 files.
    assert f["block_coverage@2"] == 1.0 and f["block_precision@2"] == 0.5
    # Under `cut` only `area` is in: no gold block reached, one block handed over.
    assert f[f"block_coverage_tokens@{cut}"] == 0.0 and f[f"block_precision_tokens@{cut}"] == 0.0
    assert f["block_coverage_tokens@4000"] == 1.0 and f["block_precision_tokens@4000"] == 0.5
    # Gold line 1 is in no definition: half the gold lines.
    assert f["block_unassigned_share"] == 0.5
    pairs = unit["context"]["pairs"]
    assert pairs[f"block_coverage_tokens_micro@{cut}"] == [0.0, 1.0]
    assert pairs["block_precision_micro@1"] == [1.0, 2.0]
    assert pairs["block_unassigned_share_micro"] == [1.0, 2.0]
    s = result.results.summary
    assert s["block_coverage@1"] == 1.0 and s["block_precision_micro@1"] == 0.5
    assert s["block_unassigned_share"] == 0.5 and s["block_unassigned_share_micro"] == 0.5
    assert result.results.by_kind["code"].summary["block_coverage_tokens@4000"] == 1.0
    assert result.results.vs_summary["block_unassigned_share"] == 0.5  # the gold's: the same for both
    comp = result.results.comparison.metrics
    assert "block_coverage_tokens@4000" in comp and "block_precision_micro@1" in comp
    assert not any(name.startswith("block_unassigned_share") for name in comp)  # never compared
    entry = result.to_dict()["commits"][0]
    assert entry["gold_blocks"] == {"lib/calc.py": [[6, 8]]}


def test_cases_block_figures_on_hand_labelled_lines(tmp_path):
    corpus = tmp_path / "lib"
    corpus.mkdir()
    (corpus / "calc.py").write_text("".join(CALC))
    (corpus / "notes.md").write_text(NOTES)
    (tmp_path / "cases.yaml").write_text(
        "cases:\n"
        "  - {name: vol, query: volume, corpus: lib, expected: [calc.py], lines: {calc.py: [[4, 4], [7, 8]]}}\n"
        "  - {name: notes, query: catalogue, corpus: lib, expected: [notes.md], lines: {notes.md: [[1, 1]]}}\n")
    result = run_cases(load_cases(tmp_path / "cases.yaml"),
                       CasesConfig(engine="grep", ks=(1,), depth=5, budgets=(4000,), out=tmp_path / "run"))
    units = {u.id: u.to_json() for u in read_units(result.run_dir)}
    vol, notes = units["vol"], units["notes"]
    assert vol["gold_blocks"] == {"calc.py": [[3, 4], [6, 8]]}
    assert vol["figures"]["block_coverage@1"] == 1.0 and vol["figures"]["block_precision@1"] == 1.0
    assert vol["figures"]["block_unassigned_share"] == 0.0
    # Gold lines in a file without a grammar: no gold block, undefined at block level, all unassigned.
    assert "gold_blocks" not in notes
    assert notes["figures"]["block_coverage@1"] is None and notes["figures"]["block_unassigned_share"] == 1.0
    s = result.results.summary
    assert s["block_coverage@1"] == 1.0  # the mean over the one case with a gold block
    assert s["block_unassigned_share"] == 0.5 and s["block_unassigned_share_micro"] == pytest.approx(1 / 4)


def test_baseline_gate_on_a_context_metric(tmp_path, calc_repo):
    import subprocess
    import sys

    base = replay(ReplayConfig(repo=calc_repo, engine="bm25(spans=false)", ks=(1,), depth=5, budgets=(100, 4000),
                               out=tmp_path / "base"))
    result = replay(ReplayConfig(repo=calc_repo, engine="grep", ks=(1,), depth=5, budgets=(100, 4000),
                                 out=tmp_path / "now", baseline=tmp_path / "base",
                                 gate=("line_coverage_tokens@100", "block_coverage_tokens_micro@4000")))
    lines = {line.metric: line for line in result.results.gate.lines}
    assert list(lines) == ["line_coverage_tokens@100", "block_coverage_tokens_micro@4000"]
    line = lines["line_coverage_tokens@100"]
    assert (line.baseline, line.current) == (base.results.summary["line_coverage_tokens@100"],
                                             result.results.summary["line_coverage_tokens@100"])
    # On the command line: a name the run does not score is one line, exit 2, nothing recorded.
    bad = subprocess.run([sys.executable, "-m", "ctxgauge", "replay", str(calc_repo), "--engine", "grep",
                          "--baseline", str(tmp_path / "base"), "--gate", "line_coverage_tokens@777",
                          "--out", str(tmp_path / "bad")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--gate line_coverage_tokens@777" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "bad").exists()


def test_cases_pass_lines_on_context_figures(tmp_path):
    corpus = tmp_path / "lib"
    corpus.mkdir()
    (corpus / "calc.py").write_text("".join(CALC))
    (corpus / "notes.md").write_text(NOTES)
    cut = _tokens(1, 4)  # lines 1-4 of calc.py: gold line 4 in, 7 and 8 out
    (tmp_path / "cases.yaml").write_text(
        f"pass: {{line_coverage_tokens@{cut}: 0.3, line_coverage_tokens_micro@{cut}: 0.5, block_coverage@1: 1}}\n"
        "cases:\n"
        "  - {name: vol, query: volume, corpus: lib, expected: [calc.py], lines: {calc.py: [[4, 4], [7, 8]]}}\n")
    # The budget a pass line names is scored although --budget did not name it.
    result = run_cases(load_cases(tmp_path / "cases.yaml"),
                       CasesConfig(engine="grep", ks=(1,), depth=1, budgets=(4000,), out=tmp_path / "run"))
    lines = {line.metric: line for line in result.results.pass_lines}
    s = result.results.summary
    assert s[f"line_coverage_tokens@{cut}"] == pytest.approx(1 / 3)  # the stored mean each line is held against
    assert lines[f"line_coverage_tokens@{cut}"].value == s[f"line_coverage_tokens@{cut}"]
    assert lines[f"line_coverage_tokens@{cut}"].holds
    assert not lines[f"line_coverage_tokens_micro@{cut}"].holds  # 1/3 < 0.5
    assert lines["block_coverage@1"].holds and not result.results.passed
    assert read_run_spec(result.run_dir)["budgets"] == sorted({cut, 4000})


def read_run_spec(run_dir):
    from ctxgauge.records import read_run

    return read_run(run_dir).spec
