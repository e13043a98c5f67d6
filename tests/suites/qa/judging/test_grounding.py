"""Grounded judging: ground_truth_chunk grounds without a flag, expected_topics only under
--grounded-from-topics and only at a 40-character mean, the run records which questions were grounded,
and a numeric claim judged wrong caps correctness at 40 in Python (whatever the judge scored)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qa_helpers import ENV, fake_llm  # type: ignore[import-not-found]
from ctxgauge.cli import app
from ctxgauge.errors import UserError
from ctxgauge.providers import ProviderConfig, make_client
from ctxgauge.records import read_run, read_units
from ctxgauge.suites.qa import QAConfig, RubricJudge, aggregate, load_question_set, run_qa
from ctxgauge.suites.qa.sources._battery import Question
from ctxgauge.suites.qa.judging._grounding import TOPICS_MIN_MEAN_CHARS, grounding_for, plan_grounding
from ctxgauge.suites.qa.sources._questions import SetRecord

SETS = Path(__file__).parent.parent / "question_sets"
DIMS = {"correctness": 90, "completeness": 60, "specificity": 10, "code_quality": 100, "actionability": 40}


def test_chunk_grounds_without_a_flag():
    qs = load_question_set(SETS / "v2_valid.json")
    g = plan_grounding(qs)
    assert g["router"].grounded and g["router"].source == "ground_truth_chunk"
    assert g["router"].text == qs.records["router"].ground_truth_chunk
    # Topics never ground without the flag, however long.
    assert not g["fee"].grounded and "--grounded-from-topics" in g["fee"].detail
    assert not g["loans"].grounded


def test_topics_ground_only_with_the_flag_and_a_40_character_mean():
    qs = load_question_set(SETS / "v2_valid.json")
    g = plan_grounding(qs, from_topics=True)
    assert g["fee"].grounded and g["fee"].source == "expected_topics"
    assert g["fee"].text == "\n".join(f"- {t}" for t in qs.records["fee"].expected_topics)
    # "storage", "sqlite", "loans table": (7 + 6 + 11) / 3 = 8 characters, keywords.
    assert not g["loans"].grounded and "average 8.0 characters, under 40" in g["loans"].detail


@pytest.mark.parametrize("lengths,grounded", [((40, 40), True), ((41, 39), True), ((40, 39), False), ((19,), False)])
def test_topics_mean_boundary(lengths, grounded):
    assert TOPICS_MIN_MEAN_CHARS == 40
    rec = SetRecord("a", expected_topics=tuple("x" * n for n in lengths))
    assert grounding_for(rec, from_topics=True).grounded is grounded


def test_chunk_wins_over_ground_truth_and_topics():
    rec = SetRecord("a", ground_truth_chunk="chunk", ground_truth="answer", expected_topics=("t" * 50,))
    assert grounding_for(rec, from_topics=True).source == "ground_truth_chunk"
    assert grounding_for(SetRecord("a", ground_truth="answer"), from_topics=True).source == "ground_truth"


def rubric_judge(server, tmp_path) -> RubricJudge:
    return RubricJudge(make_client(ProviderConfig(model="gpt-4o-mini", base_url=server.base_url,
                                                  cache_dir=tmp_path / "c", retries=0, timeout=5.0), env=ENV))


def test_numeric_claim_judged_wrong_caps_correctness_at_40(openai_server, tmp_path):
    # The judge gives correctness 90 yet calls the first claim wrong: Python caps it, the judge does not.
    openai_server.push(json.dumps({**DIMS, "numeric_claims": ["wrong", "correct"], "reason": "fee off"}))
    s = rubric_judge(openai_server, tmp_path).score(Question("fee", 1, "Fee?"), "25 dollars a day.", None,
                                                     ("the fee is 25 cents a day", "the cap is 20 dollars"))
    assert s.scores["correctness"] == 40.0 and s.judged_correctness == 90.0 and s.capped
    assert s.aggregate == pytest.approx((2 * 40 + 60 + 100 + 40) / 5)
    assert s.numeric_claims == ["wrong", "correct"]
    user = openai_server.requests[0]["messages"][1]["content"]
    assert "NUMERIC CLAIMS\n1. the fee is 25 cents a day\n2. the cap is 20 dollars" in user
    assert '"numeric_claims"' in openai_server.requests[0]["messages"][0]["content"]


def test_claims_right_or_absent_do_not_cap_and_a_low_score_stays(openai_server, tmp_path):
    openai_server.push(json.dumps({**DIMS, "numeric_claims": ["correct", "absent"], "reason": "fine"}),
                       json.dumps({**DIMS, "correctness": 20, "numeric_claims": ["wrong"], "reason": "off"}))
    j = rubric_judge(openai_server, tmp_path)
    s = j.score(Question("fee", 1, "Fee?"), "25 cents.", None, ("a", "b"))
    assert s.scores["correctness"] == 90.0 and not s.capped
    low = j.score(Question("cap", 1, "Cap?"), "x", None, ("c",))
    assert low.scores["correctness"] == 20.0 and not low.capped  # a cap only ever lowers


def test_a_reply_without_a_verdict_per_claim_is_retried(openai_server, tmp_path):
    openai_server.push(json.dumps({**DIMS, "numeric_claims": ["wrong"], "reason": "one of two"}),
                       json.dumps({**DIMS, "numeric_claims": ["correct", "wrong"], "reason": "two"}))
    s = rubric_judge(openai_server, tmp_path).score(Question("fee", 1, "Fee?"), "x", None, ("a", "b"))
    assert openai_server.count == 2 and s.result == "scored" and s.scores["correctness"] == 40.0


def scripted_judge(body):
    """A rubric judge that calls every numeric claim wrong and scores correctness 90."""
    system = fake_llm.system_text(body)
    if not system.startswith("You score"):
        return "The fee is 25 dollars a day."
    user = fake_llm.last_user_text(body)
    claims = re.findall(r"^\d+\. ", user.split("NUMERIC CLAIMS\n", 1)[1], re.M) if "NUMERIC CLAIMS" in user else []
    grounded = {"factual_grounding": 70} if "factual_grounding" in system else {}
    return json.dumps({**DIMS, **grounded, **({"numeric_claims": ["wrong"] * len(claims)} if claims else {}),
                       "reason": "scripted"})


def test_run_records_grounding_and_caps(openai_server, tmp_path):
    openai_server.route(scripted_judge)
    result = run_qa(QAConfig(source=str(SETS / "v2_valid.json"), arms=["none"], model="m", judge="m",
                             base_url=openai_server.base_url, cache_dir=tmp_path / "c", out=tmp_path / "run",
                             grounded_from_topics=True), env=ENV)
    grounding = result.to_dict()["grounding"]
    assert grounding["from_topics"] is True and grounding["grounded"] == ["router", "fee"]
    assert grounding["questions"]["loans"]["grounded"] is False
    verdicts = {u["qid"]: u["verdict"] for u in (x.to_json() for x in read_units(tmp_path / "run"))}
    assert verdicts["router"]["grounding_source"] == "ground_truth_chunk" and verdicts["router"]["grounded"]
    assert verdicts["fee"]["grounding_source"] == "expected_topics"
    assert verdicts["fee"]["scores"]["correctness"] == 40.0 and verdicts["fee"]["judged_correctness"] == 90.0
    assert verdicts["router"]["scores"]["correctness"] == 90.0 and not verdicts["router"]["capped"]
    assert verdicts["loans"]["grounded"] is False
    # Two scales: the grounded mean and the ungrounded mean, never one average.
    s = result.to_dict()["summary"]["none"]
    assert s["mean_score"] is None
    assert s["mean_score_by_scale"]["ungrounded"] == pytest.approx(aggregate(DIMS, grounded=False))
    assert s["mean_score_by_scale"]["grounded"] == pytest.approx(statistics_mean(
        aggregate({**DIMS, "factual_grounding": 70}, grounded=True),
        aggregate({**DIMS, "correctness": 40, "factual_grounding": 70}, grounded=True)))


def statistics_mean(*xs: float) -> float:
    return sum(xs) / len(xs)


def test_without_the_flag_only_the_chunk_grounds(openai_server, tmp_path):
    openai_server.route(scripted_judge)
    result = run_qa(QAConfig(source=str(SETS / "v2_valid.json"), arms=["none"], model="m", judge="m",
                             base_url=openai_server.base_url, cache_dir=tmp_path / "c", out=tmp_path / "run"), env=ENV)
    assert result.to_dict()["grounding"]["grounded"] == ["router"] and result.to_dict()["grounding"]["from_topics"] is False


def test_invalid_set_fails_before_any_model_call(openai_server, tmp_path):
    openai_server.route(scripted_judge)
    with pytest.raises(UserError, match="5 invalid records"):
        run_qa(QAConfig(source=str(SETS / "invalid_many_records.json"), arms=["none"], model="m", judge="m",
                        base_url=openai_server.base_url, cache_dir=tmp_path / "c", out=tmp_path / "run"), env=ENV)
    assert openai_server.count == 0 and not (tmp_path / "run").exists()


def test_cli_flag_and_battery_refusal(mini_battery, tmp_path):
    res = CliRunner().invoke(app, ["qa", "run", str(SETS / "v2_valid.json"), "--arm", "none", "--grounded-from-topics",
                                   "--json", "--out", str(tmp_path / "cli")], env={})
    # No model: every unit is skipped and nothing is measured (exit 7, the one outcome rule); the record
    # still says which questions would be graded against ground truth.
    assert res.exit_code == 7, res.output
    assert read_run(tmp_path / "cli").results["grounding"]["grounded"] == ["router", "fee"]
    with pytest.raises(UserError, match="--grounded-from-topics reads a question set"):
        run_qa(QAConfig(source=str(mini_battery.path), arms=["none"], grounded_from_topics=True,
                        out=tmp_path / "run"), env={})
