"""F17: a command arm's harness that answers a broken envelope (a count that is text or 1e400, a NaN cost,
JSON nested 100,000 deep) fails that question for this arm with a one-line reason, as a command engine's
breach of its contract fails its unit: never a crash (exit 70)."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from ctxgauge.cli import app
from ctxgauge.records import read_units

ANSWERS = {
    "text-count": '{"answer": "value1x", "tool_calls": {"read": "two"}}',
    "huge-count": '{"answer": "value1x", "tool_calls": {"read": 1e400}}',
    "nan-cost": '{"answer": "value1x", "cost_usd": NaN}',
    "deep-usage": '{"answer": "value1x", "usage": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "list-usage": '{"answer": "value1x", "usage": [1, 2]}',
    "negative-tokens": '{"answer": "value1x", "usage": {"tokens_input": -5}}',
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_broken_envelope_fails_the_question_in_one_line(name, mini_battery, tmp_path):
    answer = tmp_path / "answer.json"
    answer.write_text(ANSWERS[name])
    agent = tmp_path / "agent.py"
    agent.write_text(f"import sys\nsys.stdin.read()\nsys.stdout.write(open({str(answer)!r}).read())\n")
    arm = f"command:{sys.executable} {agent}"
    res = CliRunner().invoke(app, ["qa", "run", str(mini_battery.path), "--arm", arm, "--out", str(tmp_path / "run"),
                                   "--json"], env={})
    assert res.exit_code not in (0, 70), res.output
    assert "Traceback" not in res.output and "bug in ctxgauge" not in res.output
    data = json.loads(res.stdout)
    assert data["summary"][arm]["infra"] == 10
    reasons = {u["reason"] for u in (x.to_json() for x in read_units(tmp_path / "run")) if u.get("reason")}
    assert reasons and all("\n" not in r and "answered" in r for r in reasons), reasons
    field = {"text-count": "tool_calls", "huge-count": "tool_calls", "nan-cost": "cost_usd",
             "deep-usage": "nested too deeply", "list-usage": "usage", "negative-tokens": "usage"}[name]
    assert all(field in r for r in reasons), reasons


def test_a_good_envelope_and_plain_text_still_count(mini_battery, tmp_path):
    from ctxgauge.suites.qa.arms._arms import run_command

    out = run_command(f"{sys.executable} -c \"print('{{\\\"answer\\\": \\\"x\\\", \\\"tool_calls\\\": {{\\\"r\\\": 2}}, "
                      f"\\\"cost_usd\\\": 0.5, \\\"usage\\\": {{\\\"tokens_input\\\": 3}}}}')\"",
                      "q", cwd=tmp_path, env={}, timeout=20)
    assert (out.answer, out.tool_calls, out.cost_usd, out.usage.input, out.usage_reported) == ("x", {"r": 2}, 0.5, 3, True)
    plain = run_command(f"{sys.executable} -c \"print('{{not json')\"", "q", cwd=tmp_path, env={}, timeout=20)
    assert plain.answer == "{not json" and plain.cost_usd is None


def test_deep_json_from_a_model_is_no_crash():
    # A model server's tool-call arguments and a judge's reply nested 100,000 deep: the same as broken JSON.
    from ctxgauge.providers._base import parse_arguments
    from ctxgauge.suites.qa.judging._scoring import first_json_object

    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert parse_arguments(deep) == {"_raw": deep}
    assert first_json_object("verdict: " + deep) is None
