"""Rubric mode: the weights as formulas, grounded vs ungrounded never averaged, the judge over loopback,
and a dokimi question set run end to end in rubric mode."""

from __future__ import annotations

import json

import pytest

from qa_helpers import ENV, Reply, fake_llm  # type: ignore[import-not-found]
from ctxgauge.providers import ProviderConfig, make_client
from ctxgauge.suites.qa import QAConfig, RubricJudge, RubricScore, aggregate, mean_aggregate, run_qa
from ctxgauge.suites.qa.sources._battery import Question

DIMS = {"correctness": 80, "completeness": 60, "specificity": 10, "code_quality": 100, "actionability": 40}


def test_aggregate_weights():
    # correctness 2, completeness 1, code quality 1, actionability 1, specificity 0
    assert aggregate(DIMS, grounded=False) == pytest.approx((2 * 80 + 60 + 100 + 40) / 5)
    grounded = {**DIMS, "factual_grounding": 30}
    assert aggregate(grounded, grounded=True) == pytest.approx((2 * 80 + 60 + 100 + 40 + 2 * 30) / 7)
    with pytest.raises(ValueError, match="factual_grounding"):
        aggregate(DIMS, grounded=True)


def test_grounded_and_ungrounded_are_never_averaged():
    a = RubricScore("a", "scored", False, aggregate=70.0)
    b = RubricScore("b", "scored", True, aggregate=50.0)
    assert mean_aggregate([a, RubricScore("c", "scored", False, aggregate=50.0)]) == 60.0
    assert mean_aggregate([a, RubricScore("x", "infra")]) == 70.0  # an outage is a gap, not a zero
    with pytest.raises(ValueError, match="never averaged"):
        mean_aggregate([a, b])


def rubric_judge(server, tmp_path) -> RubricJudge:
    return RubricJudge(make_client(ProviderConfig(model="gpt-4o-mini", base_url=server.base_url,
                                                  cache_dir=tmp_path / "c", retries=0, timeout=5.0), env=ENV))


def test_rubric_judge_grounded_and_retry(openai_server, tmp_path):
    openai_server.push("not json", json.dumps({**DIMS, "factual_grounding": 30, "reason": "ok"}))
    s = rubric_judge(openai_server, tmp_path).score(Question("a", 1, "Where?"), "There.", "shelfd/routing.py")
    assert s.result == "scored" and s.grounded and s.aggregate == pytest.approx((2 * 80 + 60 + 100 + 40 + 60) / 7)
    assert "GROUND TRUTH\nshelfd/routing.py" in openai_server.requests[0]["messages"][1]["content"]
    assert "factual_grounding" in openai_server.requests[0]["messages"][0]["content"]


def test_rubric_judge_out_of_range_then_outage(openai_server, tmp_path):
    openai_server.push(json.dumps({**DIMS, "correctness": 140}), json.dumps({**DIMS, "correctness": -1}))
    j = rubric_judge(openai_server, tmp_path)
    assert j.score(Question("a", 1, "Where?"), "x").result == "unscored"
    openai_server.push(Reply(status=500))
    assert j.score(Question("b", 1, "Why?"), "y").result == "infra"


def test_question_set_runs_in_rubric_mode(mini_battery, openai_server, tmp_path):
    qs = tmp_path / "questions.v2.json"
    qs.write_text(json.dumps({"version": 2, "questions": [
        {"id": f"d{i}", "question": f"What does compute_{i} return?",
         **({"ground_truth": f"value{i}x"} if i == 1 else {})} for i in range(1, 4)]}))

    def respond(body):
        if fake_llm.system_text(body).startswith("You score"):
            grounded = "factual_grounding" in fake_llm.system_text(body)
            return json.dumps({**DIMS, **({"factual_grounding": 100} if grounded else {}), "reason": "fine"})
        return "It returns a constant."

    openai_server.route(respond)
    # d1 carries ground truth, d2 and d3 do not: two scales, reported apart, never one mean.
    result = run_qa(QAConfig(source=str(qs), arms=["none"], model="m", judge="m", base_url=openai_server.base_url,
                             cache_dir=tmp_path / "c", out=tmp_path / "mixed"), env=ENV)
    s = result.to_dict()["summary"]["none"]
    assert s["mean_score"] is None and s["accuracy"] is None
    assert s["mean_score_by_scale"] == {
        "grounded": pytest.approx(aggregate({**DIMS, "factual_grounding": 100}, grounded=True)),
        "ungrounded": pytest.approx(aggregate(DIMS, grounded=False))}
    assert next(c for c in result.to_dict()["trust"]["checks"] if c["name"] == "questions_scored")["status"] == "not-measured"
    assert "different scales" in result.to_dict()["runs"][0]["scoring"]["note"]


def test_question_set_ungrounded_mean(mini_battery, openai_server, tmp_path):
    qs = tmp_path / "questions.json"
    qs.write_text(json.dumps([{"question_text": f"What does compute_{i} return?"} for i in range(1, 4)]))
    openai_server.route(lambda body: json.dumps({**DIMS, "reason": "fine"})
                        if fake_llm.system_text(body).startswith("You score") else "A constant.")
    result = run_qa(QAConfig(source=str(qs), arms=["none", "context:bm25@2"], model="m", judge="m",
                             base_url=openai_server.base_url, cache_dir=tmp_path / "c", out=tmp_path / "run",
                             repo=mini_battery.repo), env=ENV)
    for arm in ("none", "context:bm25@2"):
        s = result.to_dict()["summary"][arm]
        assert s["accuracy"] is None and s["mean_score"] == pytest.approx(aggregate(DIMS, grounded=False))
    legacy = [n for n in result.to_dict()["notes"] if "legacy format" in n]
    assert len(legacy) == 1 and "`question_text` read as `question`" in legacy[0]
