"""Baselines (save, compare, regressions, refusal across batteries) and `qa rescore` from the CLI."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from qa_helpers import ENV, oracle  # type: ignore[import-not-found]
from ctxgauge.cli import app
from ctxgauge.errors import UserError
from ctxgauge.suites.qa import QAConfig, compare_baseline, run_qa, save_baseline


def agent_run(mini, tmp_path, name: str, right: int, **kw):
    """A command-arm run whose agent answers the first `right` questions correctly."""
    agent = tmp_path / f"{name}.py"
    agent.write_text(
        "import re, sys\n"
        "n = int(re.search(r'compute_(\\d+)', sys.stdin.read()).group(1))\n"
        f"print(f'It returns value{{n}}x.' if n <= {right} else 'not sure')\n")
    arm = f"command:{sys.executable} {agent}"
    run_qa(QAConfig(source=str(mini.path), arms=[arm], out=tmp_path / name, **kw), env=ENV if kw else {})
    return tmp_path / name, arm


def test_save_and_compare(mini_battery, tmp_path):
    base_dir, arm = agent_run(mini_battery, tmp_path, "base", 10)
    # The agent's answers that tier 1 cannot pass stay not-judged: only a fully scored arm has a score.
    data = save_baseline(base_dir, tmp_path / "baseline.json")
    assert data.arms[arm].score == 100.0 and data.source.hash
    same = compare_baseline(base_dir, tmp_path / "baseline.json")
    assert same.regressions == [] and same.arms[0].delta == 0.0


def test_regression_and_not_measured(mini_battery, tmp_path, openai_server):
    openai_server.route(oracle({"q01", "q02", "q03", "q04", "q05", "q06", "q07", "q08"}))
    base_dir, arm = agent_run(mini_battery, tmp_path, "base", 10, judge="gpt-4o-mini",
                              base_url=openai_server.base_url, cache_dir=tmp_path / "c")
    save_baseline(base_dir, tmp_path / "baseline.json")
    worse = tmp_path / "worse"
    # Same arm string, worse agent, now judged by the loopback judge (which fails every wrong answer).
    agent = tmp_path / "base.py"
    agent.write_text(agent.read_text().replace("n <= 10", "n <= 8"))
    run_qa(QAConfig(source=str(mini_battery.path), arms=[arm], judge="gpt-4o-mini",
                    base_url=openai_server.base_url, cache_dir=tmp_path / "c", out=worse), env=ENV)
    cmp = compare_baseline(worse, tmp_path / "baseline.json", tolerance=5.0)
    assert cmp.arms[0].delta == -20.0 and cmp.regressions == [arm]
    assert compare_baseline(worse, tmp_path / "baseline.json", tolerance=25.0).regressions == []
    res = CliRunner().invoke(app, ["qa", "baseline", "compare", str(worse), str(tmp_path / "baseline.json"), "--json"])
    assert res.exit_code == 1 and json.loads(res.stdout)["regressions"] == [arm]


def test_compare_refuses_another_battery(mini_battery, tmp_path):
    base_dir, _ = agent_run(mini_battery, tmp_path, "base", 10)
    save_baseline(base_dir, tmp_path / "b.json")
    data = json.loads((tmp_path / "b.json").read_text())
    data["source"]["hash"] = "000000000000"
    (tmp_path / "b.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="not comparable"):
        compare_baseline(base_dir, tmp_path / "b.json")


def test_rescore_cli_reproduces(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle({"q01", "q02"}))
    run_qa(QAConfig(source=str(mini_battery.path), arms=["none"], model="gpt-4o-mini", judge="gpt-4o-mini",
                    base_url=openai_server.base_url, cache_dir=tmp_path / "c", out=tmp_path / "run"), env=ENV)
    n = openai_server.count
    res = CliRunner().invoke(app, ["qa", "rescore", str(tmp_path / "run"), "--judge-base-url", openai_server.base_url,
                                   "--cache-dir", str(tmp_path / "c"), "--json", "--out", str(tmp_path / "re.json")],
                             env={"OPENAI_API_KEY": "sk-x"})
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["reproduced"] and data["summary"]["none"]["passed"] == 2 and openai_server.count == n
    assert json.loads((tmp_path / "re.json").read_text())["reproduced"]
    # A judge that now passes everything changes 8 verdicts: not reproduced, exit 1, each change listed.
    openai_server.route(lambda body: json.dumps({"verdict": "pass", "reason": "Names it.", "facets": {}}))
    res = CliRunner().invoke(app, ["qa", "rescore", str(tmp_path / "run"), "--judge-base-url", openai_server.base_url,
                                   "--no-cache", "--json"], env={"OPENAI_API_KEY": "sk-x"})
    assert res.exit_code == 1 and len(json.loads(res.stdout)["changed"]) == 8


def test_rescore_without_a_judge_says_so(mini_battery, tmp_path):
    run_qa(QAConfig(source=str(mini_battery.path), arms=["context:bm25@5"], out=tmp_path / "run"), env={})
    res = CliRunner().invoke(app, ["qa", "rescore", str(tmp_path / "run")])
    # `ctxgauge` (cli.main) prints a UserError as one line with exit code 2.
    assert isinstance(res.exception, UserError) and "had no judge" in str(res.exception)


def test_compare_refuses_another_model_or_judge(mini_battery, tmp_path, openai_server):
    # On dc65eaf only the battery hash was checked: a run judged by another model compared as if the same.
    openai_server.route(oracle(set()))
    base_dir, arm = agent_run(mini_battery, tmp_path, "base", 10)
    save_baseline(base_dir, tmp_path / "b.json")
    assert json.loads((tmp_path / "b.json").read_text())["models"] == {"model": None, "judge": None}
    judged, _ = agent_run(mini_battery, tmp_path, "judged", 10, judge="gpt-4o-mini", base_url=openai_server.base_url,
                          cache_dir=tmp_path / "c")
    with pytest.raises(UserError, match="baseline judge is None, the run's is 'gpt-4o-mini'; the numbers are not comparable"):
        compare_baseline(judged, tmp_path / "b.json")
    data = json.loads((tmp_path / "b.json").read_text())
    data["models"]["model"] = "gpt-4o"
    (tmp_path / "b.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="baseline model is 'gpt-4o', the run's is None"):
        compare_baseline(base_dir, tmp_path / "b.json")
    del data["models"]
    (tmp_path / "b.json").write_text(json.dumps(data))
    res = CliRunner().invoke(app, ["qa", "baseline", "compare", str(base_dir), str(tmp_path / "b.json")])
    assert isinstance(res.exception, UserError) and "save it again" in str(res.exception)
