"""Tier 1 (can only pass) and the judge over both SDKs: a clean verdict, a contradiction retried once,
a persistent contradiction adjudicated, a non-JSON reply, an outage as infra, no judge as not-judged."""

from __future__ import annotations

import json

import pytest

from qa_helpers import ENV, Reply  # type: ignore[import-not-found]
from ctxgauge.providers import ProviderConfig, make_client
from ctxgauge.suites.qa import Judge, load_battery, reads_as_pass, score_answer, tier1_match
from ctxgauge.suites.qa.judging._scoring import reads_as_fail
from ctxgauge.suites.qa.sources._battery import Gold


def gold(answer="It returns value1x from pkg/mod1.py.", variants=("value1x",)) -> Gold:
    return Gold("q01", 1, answer, tuple(variants))


def test_tier1_is_a_token_subset_of_gold_or_a_variant():
    assert tier1_match("The function returns VALUE1X, see pkg/mod1.py", gold(variants=("returns value1x",))) \
        == "returns value1x"
    # Corograph's published tier 1 (ctxgauge-qa-1) passes on a one-token variant; ctxgauge-qa-2 never does.
    assert tier1_match("The function returns VALUE1X, see pkg/mod1.py", gold(), "ctxgauge-qa-1") == "value1x"
    assert tier1_match("The function returns VALUE1X, see pkg/mod1.py", gold()) is None
    assert tier1_match("it returns value1x from pkg/mod1.py!", gold(variants=())) == "It returns value1x from pkg/mod1.py."
    assert tier1_match("it returns value2x", gold()) is None
    assert tier1_match("", gold()) is None
    # A variant with no tokens never matches (it would pass every answer).
    assert tier1_match("anything", gold(answer="...", variants=("!!",))) is None


@pytest.mark.parametrize("reason,expected", [
    ("Correctly names the renew handler.", True),
    ("Matches the key exactly.", True),
    ("Correctly rejects the false premise.", True),
    ("Misses the 405 case.", False),
    ("Correct file but wrong function.", False),
    ("Does not mention the cap.", False),
    ("Names renew but omits the method.", False),
])
def test_reads_as_pass(reason, expected):
    assert reads_as_pass(reason) is expected


def judge_for(server, mini_battery, tmp_path, kind="openai") -> Judge:
    model = "gpt-4o-mini" if kind == "openai" else "claude-3-5-haiku"
    client = make_client(ProviderConfig(model=model, kind=kind, base_url=server.base_url, cache_dir=tmp_path / "c",
                                        retries=1, backoff=0.0, timeout=5.0), env=ENV)
    return Judge(client, load_battery(mini_battery.path))


def verdict(v, reason, **facets) -> str:
    return json.dumps({"verdict": v, "reason": reason, "facets": facets})


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_contradiction_is_retried_once_then_accepted(kind, request, mini_battery, tmp_path):
    server = request.getfixturevalue(f"{kind}_server")
    server.push(verdict("fail", "Correctly names the constant."), verdict("pass", "Names the constant.", extra_correct_info=True))
    j = judge_for(server, mini_battery, tmp_path, kind)
    q = j.battery.questions[0]
    v = j.judge(q, "The constant is valueONEx")
    assert (v.result, v.tier, v.attempts) == ("pass", 2, 2) and v.facets["extra_correct_info"] is True
    assert server.count == 2
    retry = server.requests[1]
    texts = json.dumps(retry)
    assert "Your verdict and your reason disagree" in texts  # the stern second ask carries the first reply
    assert v.usage.output == 40  # both calls' tokens are the verdict's


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_persistent_contradiction_is_adjudicate(kind, request, mini_battery, tmp_path):
    server = request.getfixturevalue(f"{kind}_server")
    server.push(verdict("fail", "Matches the key."), verdict("fail", "Accurately identifies the constant."))
    j = judge_for(server, mini_battery, tmp_path, kind)
    v = j.judge(j.battery.questions[0], "valueONEx")
    assert (v.result, v.tier, v.attempts) == ("adjudicate", 2, 2) and not v.passed and v.decided
    assert server.count == 2  # bounded: never a third ask


def test_clean_fail_is_accepted_without_retry(openai_server, mini_battery, tmp_path):
    openai_server.push(verdict("fail", "Names the wrong constant.", erroneous_assertion=True))
    j = judge_for(openai_server, mini_battery, tmp_path)
    v = j.judge(j.battery.questions[0], "value9x")
    assert (v.result, v.attempts) == ("fail", 1) and v.facets == {
        "extra_correct_info": False, "missing_minor": False, "erroneous_assertion": True}
    assert openai_server.count == 1


def test_non_json_reply_is_retried_then_adjudicated(openai_server, mini_battery, tmp_path):
    openai_server.push("I think it passes.", "Still not JSON.")
    j = judge_for(openai_server, mini_battery, tmp_path)
    v = j.judge(j.battery.questions[0], "value9x")
    assert v.result == "adjudicate" and "not the JSON" in v.reason


def test_judge_outage_is_infra(openai_server, mini_battery, tmp_path):
    openai_server.push(Reply(status=502), Reply(status=503))
    j = judge_for(openai_server, mini_battery, tmp_path)
    v = j.judge(j.battery.questions[0], "value9x")
    assert v.result == "infra" and v.tier is None and not v.decided


def test_judge_sees_one_answer_with_key_policies_and_exemplars(openai_server, mini_battery, tmp_path):
    openai_server.push(verdict("pass", "Names the constant."))
    j = judge_for(openai_server, mini_battery, tmp_path)
    j.judge(j.battery.questions[0], "CANDIDATE-TEXT")
    user = openai_server.requests[0]["messages"][1]["content"]
    for part in ("QUESTION [q01]", "ANSWER KEY (gold revision 1)", "Accepted variants", "BATTERY POLICIES",
                 "S1: Paths may be spelled", "GRADED EXEMPLARS", "FACET GUIDE", "CANDIDATE ANSWER\nCANDIDATE-TEXT"):
        assert part in user
    assert user.count("CANDIDATE ANSWER") == 1


def test_score_answer_tiers(mini_battery):
    b = load_battery(mini_battery.path)
    q = b.questions[0]
    assert score_answer(q, "returns value1x", b.gold["q01"], None).to_dict()["tier"] == 1
    nj = score_answer(q, "something else", b.gold["q01"], None)
    assert nj.result == "not-judged" and not nj.decided and not nj.passed


@pytest.mark.parametrize("reason,expected", [
    ("Misses the wiring site and names the wrong file.", True),
    ("Invents a cron job; the schedule is wrong.", True),
    ("Correct component; missing_minor: omits the boot run.", False),  # praises: a pass may note a gap
    ("Names the runner and its schedule.", False),
])
def test_reads_as_fail(reason, expected):
    assert reads_as_fail(reason) is expected


@pytest.mark.parametrize("scorer,attempts,result", [("ctxgauge-qa-2", 2, "fail"), ("ctxgauge-qa-1", 1, "pass")])
def test_pass_whose_reason_describes_a_failure_is_retried(openai_server, mini_battery, tmp_path, scorer,
                                                          attempts, result):
    openai_server.push(verdict("pass", "Misses the constant and names the wrong file."),
                       verdict("fail", "Names the wrong constant.", erroneous_assertion=True))
    j = judge_for(openai_server, mini_battery, tmp_path)
    j.scorer = scorer
    v = j.judge(j.battery.questions[0], "value9x")
    # Corograph's published judge (ctxgauge-qa-1) only ever retried fail verdicts.
    assert (v.result, v.attempts, v.scorer) == (result, attempts, scorer) and openai_server.count == attempts
    d = v.to_dict()
    assert d["transport"] == "openai" and d["judge"] == "openai:gpt-4o-mini" and d["judged_at"].endswith("Z")
