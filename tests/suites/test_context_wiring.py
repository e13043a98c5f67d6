"""Context metrics in replay and cases (issue 37 items 3-5): gold lines a unit records, spans kept in the
ranking, the ranking packed under token budgets, figures in the summary and the `--vs` comparison, the
budget curve, and old records still read.

The repository is built here with git, with known hunks: `lib/fees.py` (10 lines) has lines 3-4 replaced
and two lines inserted after line 8, so its gold lines are 3, 4 and 8 (docs/replay.md, "Gold lines").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.metrics.packing import header
from ctxgauge.metrics.tokens import default_tokenizer
from ctxgauge.records import read_run, read_units
from ctxgauge.results import CasesUnit, ReplayUnit
from ctxgauge.suites.cases import CasesConfig, load_cases, run_cases
from ctxgauge.suites.replay import ReplayConfig, replay

FIXTURES = Path(__file__).parents[1] / "records" / "fixtures"

FEES = [f"# fees line {i}: late fee rounding rules\n" if i in (1, 2) else f"value_{i} = {i} * cents\n"
        for i in range(1, 11)]
OTHER = "".join(f"shelf_{i} = 'catalogue'\n" for i in range(1, 6))


def _fees_after() -> str:
    lines = list(FEES)
    lines[2:4] = ["value_3 = round(3 * cents)\n", "value_4 = round(4 * cents)\n"]  # lines 3-4 replaced
    lines[8:8] = ["extra_a = 1\n", "extra_b = 2\n"]  # inserted after line 8
    return "".join(lines)


@pytest.fixture
def fee_repo(repo_builder) -> Path:
    b = repo_builder("fees")
    b.commit("Add fees", {"lib/fees.py": "".join(FEES), "lib/other.py": OTHER})
    b.commit("Fix late fee rounding", {"lib/fees.py": _fees_after()})
    return b.path


def _units(run_dir: Path) -> list[dict]:
    return [u.to_json() for u in read_units(run_dir) if u.status == "ok"]


def _tokens(path: str, first: int, last: int) -> int:
    """Tokens of lines first..last of FEES packed with their header (the packing rule, counted by hand)."""
    tok = default_tokenizer()
    return tok.count(header(path, first, last)) + sum(tok.count(line) for line in FEES[first - 1:last])


def test_replay_records_gold_lines_and_whole_file_contexts_for_a_file_only_engine(tmp_path, fee_repo):
    # A budget that holds exactly lines 1-3 of lib/fees.py with their header: the packing cuts after line 3.
    cut = _tokens("lib/fees.py", 1, 3)
    assert cut < _tokens("lib/fees.py", 1, 4)
    result = replay(ReplayConfig(repo=fee_repo, engine="bm25(spans=false)", ks=(1,), depth=5,
                                 budgets=(cut, 4000), out=tmp_path / "run"))
    [unit] = _units(result.run_dir)
    assert unit["gold_lines"] == {"lib/fees.py": [[3, 4], [8, 8]]}
    assert unit["ranking"][0]["path"] == "lib/fees.py" and "spans" not in unit["ranking"][0]
    f = unit["figures"]
    # The whole file is the context: 3 gold lines of 10 lines in the top file.
    assert f["line_coverage@1"] == 1.0 and f["line_precision@1"] == pytest.approx(3 / 10)
    assert f["file_coverage@1"] == 1.0 and f["file_precision@1"] == 1.0
    # Under `cut` tokens lines 1-3 fit: gold line 3 of 3, 4 and 8.
    assert f[f"line_coverage_tokens@{cut}"] == pytest.approx(1 / 3)
    assert f[f"line_precision_tokens@{cut}"] == pytest.approx(1 / 3)
    assert f[f"gold_lines_per_1k_tokens@{cut}"] == pytest.approx(1 / (cut / 1000))
    assert unit["context"]["packed"][str(cut)] == {"tokens": cut, "ran_out": False}
    assert f["line_coverage_tokens@4000"] == 1.0
    assert unit["context"]["packed"]["4000"]["ran_out"] is True  # both files fit: the ranking ran out first
    assert unit["context"]["pairs"][f"line_coverage_tokens_micro@{cut}"] == [1.0, 3.0]
    record = read_run(result.run_dir)
    assert record.suite_version == 2
    assert record.spec["budgets"] == sorted([cut, 4000])
    assert record.spec["tokenizer"] == default_tokenizer().spec and record.spec["tokenizer"]["name"] == "o200k_base"
    assert "git diff -U0" in record.spec["gold_lines"]
    s = result.results.summary
    assert s["line_coverage@1"] == 1.0 and s[f"line_coverage_tokens@{cut}"] == pytest.approx(1 / 3)
    assert s[f"line_coverage_tokens_micro@{cut}"] == pytest.approx(1 / 3)
    curve = result.results.budget_curve[result.results.engine]
    assert [p.budget for p in curve] == [250 * 2 ** i for i in range(8)]
    assert all(p.low <= p.mean <= p.high for p in curve)
    # A typed read of the record gives back the same unit.
    typed = ReplayUnit.from_json(unit)
    assert typed.gold_lines == unit["gold_lines"] and typed.context.packed["4000"].ran_out is True


def test_replay_keeps_spans_and_scores_their_lines(tmp_path, fee_repo):
    result = replay(ReplayConfig(repo=fee_repo, engine="bm25(spans=true)", vs="bm25(spans=false)", ks=(1, 2),
                                 depth=5, budgets=(4000,), out=tmp_path / "run"))
    [unit] = _units(result.run_dir)
    gold = {3, 4, 8}
    # Line coverage at 1 and 2 files, by hand from the spans the engine handed over (none: the whole file).
    for k in (1, 2):
        fee_lines: set[int] = set()  # gold lines live in lib/fees.py only
        for hit in unit["ranking"][:k]:
            if hit["path"] == "lib/fees.py":
                for s, e in hit.get("spans") or [[1, 10]]:
                    fee_lines |= set(range(s, e + 1))
        assert unit["figures"][f"line_coverage@{k}"] == pytest.approx(len(gold & fee_lines) / 3)
    assert any(h.get("spans") for h in unit["ranking"]), "bm25(spans=true) hands over spans"
    assert all("spans" not in h for h in unit["vs"]["ranking"])
    # --vs compares the context figures too, micro ones as ratios of sums.
    comp = result.results.comparison.metrics
    assert comp["line_coverage_tokens@4000"] is not None and comp["line_coverage_tokens_micro@4000"].n == 1
    assert set(result.results.budget_curve) == {result.results.engine, result.results.vs}
    assert result.results.vs_summary["line_coverage_tokens@4000"] == 1.0


def test_cases_score_hand_labelled_lines_on_whole_files(tmp_path):
    corpus = tmp_path / "lib"
    corpus.mkdir()
    (corpus / "fees.py").write_text("".join(FEES))
    (corpus / "other.py").write_text(OTHER)
    (tmp_path / "cases.yaml").write_text(
        "cases:\n"
        "  - {name: fee, query: late fee rounding, corpus: lib, expected: [fees.py], lines: {fees.py: [[3, 4]]}}\n"
        "  - {name: shelf, query: catalogue, corpus: lib, expected: [other.py]}\n")
    result = run_cases(load_cases(tmp_path / "cases.yaml"),
                       CasesConfig(engine="grep", ks=(1,), depth=5, budgets=(4000,), out=tmp_path / "run"))
    units = {u["id"]: u for u in _units(result.run_dir)}
    fee, shelf = units["fee"], units["shelf"]
    assert fee["gold_lines"] == {"fees.py": [[3, 4]]} and shelf["gold_lines"] == {}
    assert [h["path"] for h in fee["ranking"]] == ["fees.py"]  # grep: only fees.py holds the words
    # grep hands over whole files: 2 gold lines of the file's 10.
    assert fee["figures"]["line_coverage@1"] == 1.0
    assert fee["figures"]["line_precision@1"] == pytest.approx(2 / 10)
    assert fee["context"]["packed"]["4000"] == {"tokens": _tokens("fees.py", 1, 10), "ran_out": True}
    # A case without lines counts at file level only.
    assert shelf["figures"]["file_coverage@1"] == 1.0 and shelf["figures"]["line_coverage@1"] is None
    s = result.results.summary
    assert s["line_coverage@1"] == 1.0 and s["file_coverage@1"] == 1.0  # means over the units defining each
    assert s["line_precision_micro@1"] == pytest.approx(2 / 10)
    typed = CasesUnit.from_json(fee)
    assert typed.gold_lines == {"fees.py": [[3, 4]]}


@pytest.mark.parametrize("fixture", ["v2/replay", "v2/cases-vs", "v1/cases"])
def test_records_before_context_figures_still_read(fixture):
    cls = ReplayUnit if "replay" in fixture else CasesUnit
    for line in (FIXTURES / fixture / "units.jsonl").read_text().splitlines():
        unit = cls.from_json(json.loads(line))
        assert unit.gold_lines == {} and unit.context is None
        assert all(r.spans == [] for r in unit.ranking or [])


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "160"})


def test_budget_option_on_the_command_line(tmp_path, fee_repo):
    r = _cli("replay", str(fee_repo), "--engine", "grep", "-k", "1", "--depth", "5", "--budget", "500",
             "--budget", "2000", "--out", str(tmp_path / "run"), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"line_coverage@1", "line_coverage_tokens@500", "line_coverage_tokens@2000",
            "file_precision_tokens_micro@2000", "gold_lines_per_1k_tokens@500", "line_coverage_auc"} \
        <= set(out["summary"])
    assert "line_coverage_tokens@1000" not in out["summary"]
    assert out["commits"][0]["gold_lines"] == {"lib/fees.py": [[3, 4], [8, 8]]}
    table = _cli("report", str(tmp_path / "run"), cwd=tmp_path)
    assert "line_coverage_tokens@2000" in table.stdout  # the middle budget of 500 and 2000 (the larger)
    bad = _cli("replay", str(fee_repo), "--engine", "grep", "--budget", "0", "--out", str(tmp_path / "bad"),
               cwd=tmp_path)
    assert bad.returncode == 2 and "--budget" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "bad").exists()
