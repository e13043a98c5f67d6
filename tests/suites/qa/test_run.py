"""The qa pipeline end to end against a loopback OpenAI-compatible server, driven by the real SDK:
records, rescore reproducing them, the cache making a re-run free, infra and resume, skipped arms."""

from __future__ import annotations

import json
import sys

import pytest

from ctxgauge.results import ArmSummary, QARun

from qa_helpers import ENV, FACTS, Reply, fake_llm, oracle  # type: ignore[import-not-found]
from ctxgauge.records import read_run as _read_run, read_units as _read_units
from ctxgauge.errors import UserError
from ctxgauge.suites.qa import QAConfig, rescore_run, run_qa


# These tests check the JSON layout the suite wrote: the typed record and units in their JSON form.
def read_run(run_dir):
    return _read_run(run_dir).to_json()


def read_units(run_dir):
    return [u.to_json() for u in _read_units(run_dir)]


RIGHT = {"q01", "q02", "q03", "q04", "q05", "q06", "q07"}


def config(mini, server, tmp_path, **kw) -> QAConfig:
    base = dict(source=str(mini.path), arms=["none", "context:bm25@5"], model="gpt-4o-mini", judge="gpt-4o-mini",
                base_url=server.base_url, cache_dir=tmp_path / "cache", out=tmp_path / "run", retries=1,
                backoff=0.0, timeout=5.0)
    base.update(kw)
    return QAConfig(**base)


def test_end_to_end_records_and_rescore(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    result = run_qa(config(mini_battery, openai_server, tmp_path), env=ENV)
    # run_qa returns the typed result: the same classes every reader of the run parses into.
    assert isinstance(result, QARun) and isinstance(result.results.summary["none"], ArmSummary)
    assert result.to_dict()["summary"]["none"]["passed"] == result.results.summary["none"].passed
    assert result.results.to_json() == read_run(result.run_dir)["results"]
    s = result.to_dict()["summary"]
    for arm in ("none", "context:bm25@5"):
        # 7 right answers pass at tier 1; the other 3 go to the judge, which fails them.
        assert s[arm]["questions"] == 10 and s[arm]["passed"] == 7 and s[arm]["failed"] == 3
        assert s[arm]["accuracy"] == pytest.approx(7 / 10)
        assert s[arm]["tokens"]["tokens_input"] == 10 * 100 and s[arm]["tokens"]["tokens_output"] == 10 * 20
        assert s[arm]["cost_usd"] == pytest.approx(10 * (100 * 0.15 + 20 * 0.60) / 1e6)
    # Each question's file is its only match for "compute_N": bm25 retrieves every evidence file.
    assert s["context:bm25@5"]["retrieval_hit_rate"] == 1.0 and s["none"]["retrieval_hit_rate"] is None
    # 20 answers + 3 judge calls reached the wire: the judge sees only question and answer, so the second
    # arm's three identical wrong answers are judged from the cache.
    assert openai_server.count == 20 + 3
    trust = {(c["name"], c["arm"]): c for c in result.to_dict()["trust"]["checks"]}
    assert trust[("questions_scored", None)]["status"] == "pass" and trust[("questions_scored", None)]["value"] == 10
    assert trust[("context_arm_mean", "context:bm25@5")]["value"] == pytest.approx(70.0)
    assert trust[("mean_delta", "context:bm25@5")]["value"] == 0.0
    assert trust[("multi_run_std", None)]["status"] == "not-measured"

    run_dir = tmp_path / "run"
    record = read_run(run_dir)
    assert record["status"] == "success" and record["suite"] == "qa"
    assert "base_url" not in record["spec"] and "sk-test" not in (run_dir / "run.json").read_text()
    units = read_units(run_dir)
    assert len(units) == 20 and all(u["status"] == "ok" for u in units)
    answer = (run_dir / "arms/context_bm25@5/rep01/answers/q01.md").read_text()
    assert answer.endswith("It returns value1x.\n") and answer.startswith("<!-- qid: q01")
    sub = json.loads((run_dir / "arms/context_bm25@5/rep01/record.json").read_text())
    assert sub["validity"]["ok"] and sub["scoring"]["total"] == 7 and sub["scoring"]["denominator"] == 10
    assert sub["scoring"]["tier_census"] == {"tier1": 7, "tier2": 3, "human": 0}
    assert sub["identity"]["arm"] == "context:bm25@5" and sub["identity"]["engine_identity"]["id"].startswith("sha256:")
    verdicts = json.loads((run_dir / "arms/none/rep01/verdicts.json").read_text())["verdicts"]
    assert [v["result"] for v in verdicts].count("fail") == 3 and verdicts[7]["reason"] == "Wrong constant named."
    for secretless in run_dir.rglob("*"):
        if secretless.is_file():
            assert b"sk-test-never-written" not in secretless.read_bytes()

    # Rescore: the judge's verdicts come back from the cache, the answer model is never asked.
    before = openai_server.count
    again = rescore_run(run_dir, judge_base_url=openai_server.base_url, cache_dir=tmp_path / "cache", env=ENV)
    assert again.reproduced and again.changed == [] and openai_server.count == before
    assert again.results.summary["none"].accuracy == s["none"]["accuracy"]
    # Without the cache the judge is asked again (6 calls), answers still come from the records, same verdicts.
    fresh = rescore_run(run_dir, judge_base_url=openai_server.base_url, use_cache=False, env=ENV)
    assert fresh.reproduced and openai_server.count == before + 6


def test_second_run_is_served_by_the_cache(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    first = run_qa(config(mini_battery, openai_server, tmp_path), env=ENV)
    n = openai_server.count
    second = run_qa(config(mini_battery, openai_server, tmp_path, out=tmp_path / "run2"), env=ENV)
    assert openai_server.count == n  # not one request
    assert second.to_dict()["summary"] == first.to_dict()["summary"]
    units = read_units(tmp_path / "run2")
    assert all(u["figures"]["cache_hits"] == u["figures"]["llm_calls"] == 1 for u in units)


def test_repetitions_are_independent_sessions(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    result = run_qa(config(mini_battery, openai_server, tmp_path, arms=["none"], repeat=2, judge=None), env=ENV)
    assert openai_server.count == 20  # the repetition index is in the cache key: no hits across repetitions
    assert result.to_dict()["summary"]["none"]["questions"] == 20 and result.to_dict()["summary"]["none"]["not_judged"] == 6
    assert result.to_dict()["summary"]["none"]["accuracy"] is None  # not judged: no score is presented
    std = next(c for c in result.to_dict()["trust"]["checks"] if c["name"] == "multi_run_std")
    assert std["status"] == "not-measured"  # repetitions without a full score never enter the gate


def test_outage_is_infra_then_resume_fills_the_gap(mini_battery, openai_server, tmp_path):
    calls = {"n": 0}
    answer = oracle(RIGHT)

    def flaky(body):
        calls["n"] += 1
        if "compute_4 " in fake_user(body) and calls["n"] < 40:
            return Reply(status=503, text="overloaded")
        return answer(body)

    openai_server.route(flaky)
    cfg = config(mini_battery, openai_server, tmp_path, arms=["none"])
    first = run_qa(cfg, env=ENV)
    s = first.to_dict()["summary"]["none"]
    assert s["infra"] == 1 and s["accuracy"] is None and s["valid_runs"] == 0
    assert first.to_dict()["runs"][0]["validity"] == {"ok": False, "reason": "did-not-finish", "detail": "unanswered: q04"}
    units = {u["qid"]: u for u in read_units(tmp_path / "run")}
    assert units["q04"]["status"] == "failed" and units["q04"]["answer_status"] == "infra"
    assert "503" in units["q04"]["reason"] or "InternalServerError" in units["q04"]["reason"]
    assert not (tmp_path / "run/arms/none/rep01/answers/q04.md").exists()  # an outage is never an answer

    # The run is published with its gap and marked error; a resumed run asks only what failed.
    assert first.to_dict()["status"] == "error" and "--resume" in read_run(tmp_path / "run")["error"]
    calls["n"] = 100
    n = openai_server.count
    resumed = run_qa(QAConfig(**{**cfg.__dict__, "resume": True}), env=ENV)
    assert openai_server.count == n + 1  # q04 only (it passes at tier 1: no judge call)
    assert resumed.to_dict()["summary"]["none"]["accuracy"] == pytest.approx(0.7) and resumed.to_dict()["summary"]["none"]["infra"] == 0
    assert resumed.to_dict()["status"] == "success"


def fake_user(body: dict) -> str:
    return fake_llm.last_user_text(body) + " "


def test_judge_outage_is_infra_not_a_fail(mini_battery, openai_server, tmp_path):
    def judge_down(body):
        return Reply(status=500, text="judge down")

    openai_server.route(oracle(RIGHT, judge_says=judge_down))
    result = run_qa(config(mini_battery, openai_server, tmp_path, arms=["none"]), env=ENV)
    s = result.to_dict()["summary"]["none"]
    assert s["passed"] == 7 and s["failed"] == 0 and s["infra"] == 3 and s["accuracy"] is None


def test_no_model_runs_retrieval_and_says_what_it_skipped(mini_battery, tmp_path):
    result = run_qa(QAConfig(source=str(mini_battery.path), arms=["none", "context:bm25@5", "tool:bm25"],
                             out=tmp_path / "run"), env={})
    s = result.to_dict()["summary"]
    assert s["none"]["status"] == "skipped" and "no model configured" in s["none"]["reason"]
    # The demo shows this reason too, and has no --model of its own: the hint names the command that has one.
    assert "ctxgauge qa run --model MODEL" in s["none"]["reason"] and "(give --model)" not in s["none"]["reason"]
    assert s["tool:bm25"]["status"] == "skipped"
    assert s["context:bm25@5"]["status"] == "retrieval-only" and s["context:bm25@5"]["retrieval_hit_rate"] == 1.0
    assert {x["arm"] for x in result.to_dict()["skipped"]} == {"none", "tool:bm25", "context:bm25@5"}
    hit = next(c for c in result.to_dict()["trust"]["checks"] if c["name"] == "retrieval_hit_rate")
    assert hit["status"] == "pass"
    assert result.to_dict()["trust"]["status"] == "pass" and len(result.to_dict()["trust"]["not_measured"]) >= 5
    assert result.to_dict()["trust"]["verdict"].startswith(f"pass on {result.to_dict()['trust']['measured']} of ")


def test_missing_key_skips_with_the_reason(mini_battery, tmp_path):
    result = run_qa(QAConfig(source=str(mini_battery.path), arms=["none"], model="gpt-4o-mini",
                             out=tmp_path / "run"), env={})
    assert "OPENAI_API_KEY is not set" in result.to_dict()["summary"]["none"]["reason"]


def test_facts_fixture_is_consistent():
    assert len(FACTS) == 10 and len(RIGHT) == 7


def test_unknown_engine_fails_the_arm_not_the_run(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    result = run_qa(config(mini_battery, openai_server, tmp_path, arms=["none", "context:nosuch@5"]), env=ENV)
    assert result.to_dict()["summary"]["none"]["accuracy"] == pytest.approx(0.7)
    bad = result.to_dict()["summary"]["context:nosuch@5"]
    assert bad["status"] == "failed" and "unknown engine 'nosuch'" in bad["reason"] and bad["infra"] == 10
    assert result.to_dict()["status"] == "error"  # a gap, resumable; never a zero
    assert bad["accuracy"] is None


def test_anthropic_answers_and_judges(mini_battery, anthropic_server, tmp_path):
    anthropic_server.route(oracle(RIGHT))
    cfg = config(mini_battery, anthropic_server, tmp_path, arms=["none"], model="claude-3-5-haiku",
                 judge="claude-3-5-haiku", provider="anthropic")
    result = run_qa(cfg, env=ENV)
    s = result.to_dict()["summary"]["none"]
    assert s["passed"] == 7 and s["failed"] == 3 and s["accuracy"] == pytest.approx(0.7)
    assert s["cost_usd"] == pytest.approx(10 * (100 * 0.80 + 20 * 4.00) / 1e6)
    assert anthropic_server.requests[0]["system"].startswith("You answer questions about the source code")


def test_shipped_battery_with_a_perfect_reader(openai_server, tmp_path):
    """The shelfd battery on the bundled sample: a scripted model that answers right exactly when an
    evidence file reached its prompt, so the context arm's accuracy must equal its in-context evidence rate."""
    pytest.importorskip("ctxgauge.sample", reason="the bundled sample is not in this build yet")
    import re

    from ctxgauge.suites.qa import load_battery

    b = load_battery("shelfd")
    by_prompt = {q.prompt: q.qid for q in b.questions}

    def reader(body):
        user = fake_llm.last_user_text(body)
        if fake_llm.system_text(body).startswith("You grade"):
            return json.dumps({"verdict": "fail", "reason": "Misses the required facts.", "facets": {}})
        g = b.gold[next(q for p, q in by_prompt.items() if p in user)]
        seen = set(re.findall(r"^(\S+):\d+-\d+$", user, re.M))  # each span's `path:start-end` header
        return g.answer_gold_variants[0] if seen & set(g.evidence_files) else "Not sure."

    openai_server.route(reader)
    result = run_qa(QAConfig(source="shelfd", arms=["none", "context:bm25@5"], model="gpt-4o-mini",
                             judge="gpt-4o-mini", base_url=openai_server.base_url, cache_dir=tmp_path / "c",
                             out=tmp_path / "run"), env=ENV)
    none, ctx = result.to_dict()["summary"]["none"], result.to_dict()["summary"]["context:bm25@5"]
    assert none["questions"] == ctx["questions"] == 18 and none["passed"] == 0 and none["accuracy"] == 0.0
    units = [u for u in read_units(tmp_path / "run") if u["arm"] == "context:bm25@5"]
    in_context = sum(bool(set(u["figures"]["in_context"]) & set(b.gold[u["qid"]].evidence_files)) for u in units)
    assert ctx["passed"] == in_context and ctx["accuracy"] == pytest.approx(in_context / 18)
    assert ctx["retrieval_hit_rate"] >= ctx["accuracy"]  # retrieved but cut by the budget cannot help
    assert result.to_dict()["trust"]["status"] in ("pass", "warn")


def _rename_question(bdir, old: str, new: str) -> None:
    for name in ("questions.json", "gold.json", "exemplars.json"):
        p = bdir / name
        p.write_text(p.read_text().replace(f'"{old}"', json.dumps(new)))


def test_question_id_cannot_write_outside_the_run(mini_battery, tmp_path):
    # `../../x` passed battery validation, and the answer was written above the run (five levels climb out of
    # arms/<arm>/rep01/answers/ and the run itself).
    _rename_question(mini_battery.path, "q01", "../../../../../escaped")
    agent = tmp_path / "agent.py"
    agent.write_text("import sys\nsys.stdin.read()\nprint('It returns value1x.')\n")
    out = tmp_path / "deep" / "er" / "run"
    run_qa(QAConfig(source=str(mini_battery.path), arms=[f"command:{sys.executable} {agent}"], out=out), env={})
    outside = [p for p in tmp_path.rglob("escaped*") if out not in p.parents]
    assert outside == []
    answers = sorted(p.name for p in out.rglob("answers/*.md"))
    assert "_._.._.._.._.._escaped.md" in answers and len(answers) == 10


def test_question_ids_that_collide_once_made_safe_are_refused(mini_battery, tmp_path):
    _rename_question(mini_battery.path, "q01", "a/b")
    _rename_question(mini_battery.path, "q02", "a_b")
    with pytest.raises(UserError, match=r"question ids 'a/b' and 'a_b' both become the file name 'a_b'"):
        run_qa(QAConfig(source=str(mini_battery.path), arms=["none"], out=tmp_path / "run"), env={})
    assert not (tmp_path / "run").exists()


def test_a_bad_rate_table_is_refused_before_the_run_even_with_no_model(mini_battery, tmp_path):
    # It was read only when a client was made, so with no model a malformed --rates ran to the end unreported.
    rates = tmp_path / "rates.json"
    rates.write_text("{bad", encoding="utf-8")
    with pytest.raises(UserError, match="not valid JSON"):
        run_qa(QAConfig(source=str(mini_battery.path), arms=["none"], rates=str(rates), out=tmp_path / "run"), env={})
    assert not (tmp_path / "run").exists()
