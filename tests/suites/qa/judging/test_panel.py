"""The judge panel: aggregation as formulas (role weights, mean, sd, agreement, flags), every role over
the same provider interface as the judge (loopback servers, both APIs), every role carrying the
numeric-claims cap, outages as gaps, and a scripted run whose panel feeds the trust gate."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qa_helpers import ENV, Reply, fake_llm  # type: ignore[import-not-found]
from ctxgauge.cli import app
from ctxgauge.errors import UserError
from ctxgauge.providers import ProviderConfig, make_client
from ctxgauge.suites.qa import QAConfig, run_qa
from ctxgauge.suites.qa.sources._battery import Question
from ctxgauge.suites.qa.judging._panel import ROLES, Panel, aggregate_panel

SETS = Path(__file__).parent.parent / "question_sets"
RUBRIC = {"correctness": 90, "completeness": 60, "specificity": 10, "code_quality": 100, "actionability": 40}
# What each role says, by the title its system prompt carries.
ROLE_SCORES = {"technical expert": {"correctness": 80, "depth": 50},
               "developer advocate": {"usefulness": 70, "actionability": 30},
               "documentation reviewer": {"completeness": 100, "fidelity_to_context": 60}}


def test_roles_and_weights():
    assert [r.name for r in ROLES] == ["technical_expert", "developer_advocate", "doc_reviewer"]
    assert [tuple(r.weights) for r in ROLES] == [("correctness", "depth"), ("usefulness", "actionability"),
                                                 ("completeness", "fidelity_to_context")]
    assert [r.weight for r in ROLES] == [2.0, 1.0, 1.0]


def test_aggregate_formulas():
    out = aggregate_panel({"technical_expert": 80.0, "developer_advocate": 50.0, "doc_reviewer": 20.0})
    assert out["aggregate"] == pytest.approx((2 * 80 + 50 + 20) / 4)
    assert out["mean"] == 50.0
    sd = math.sqrt((30 ** 2 + 0 + 30 ** 2) / 3)
    assert out["sd"] == pytest.approx(sd, abs=1e-4) and out["agreement"] == pytest.approx(1 - sd / 50, abs=1e-4)
    # 30 points apart is not flagged (more than 30 is); 60 is.
    assert out["flags"] == ["technical_expert 80 vs doc_reviewer 20: 60 points apart"]
    same = aggregate_panel({"technical_expert": 70.0, "developer_advocate": 70.0, "doc_reviewer": 70.0})
    assert (same["sd"], same["agreement"], same["flags"]) == (0.0, 1.0, [])
    widest = aggregate_panel({"technical_expert": 0.0, "developer_advocate": 100.0}, {"technical_expert": ["wrong"]})
    assert widest["agreement"] == 0.0
    assert "numeric claims: judged wrong by technical_expert, not by developer_advocate" in widest["flags"]


def role_of(body) -> str:
    system = fake_llm.system_text(body)
    return next(t for t in ROLE_SCORES if f"You are a {t} on a panel" in system)


def scripted(claims_verdict: dict[str, str] | None = None):
    """A judge server: the rubric and each panel role answer as scripted; `claims_verdict` by role title."""
    def respond(body):
        system = fake_llm.system_text(body)
        user = fake_llm.last_user_text(body)
        n = len(re.findall(r"^\d+\. ", user.split("NUMERIC CLAIMS\n", 1)[1], re.M)) if "NUMERIC CLAIMS" in user else 0
        if system.startswith("You score"):
            grounded = {"factual_grounding": 70} if "factual_grounding" in system else {}
            return json.dumps({**RUBRIC, **grounded, **({"numeric_claims": ["correct"] * n} if n else {}),
                               "reason": "rubric"})
        if "on a panel" in system:
            title = role_of(body)
            verdict = (claims_verdict or {}).get(title, "correct")
            return json.dumps({**ROLE_SCORES[title], **({"numeric_claims": [verdict] * n} if n else {}),
                               "reason": title})
        return "The fee is 25 cents a day; the router is in routing.py."
    return respond


def panel(server, tmp_path, **kw) -> Panel:
    return Panel(make_client(ProviderConfig(model="judge-m", base_url=server.base_url, cache_dir=tmp_path / "c",
                                            retries=0, timeout=5.0, **kw), env=ENV))


def expected_role_scores() -> dict[str, float]:
    te, da, dr = ROLE_SCORES.values()
    return {"technical_expert": (2 * te["correctness"] + te["depth"]) / 3,
            "developer_advocate": (da["usefulness"] + da["actionability"]) / 2,
            "doc_reviewer": (dr["completeness"] + dr["fidelity_to_context"]) / 2}


def test_panel_over_the_judge_interface(openai_server, tmp_path):
    openai_server.route(scripted())
    out, usage = panel(openai_server, tmp_path).score(Question("a", 1, "Where is routing?"), "routing.py", "chunk")
    assert out["result"] == "scored" and openai_server.count == 3 and usage.to_dict()["tokens_input"] == 300
    want = expected_role_scores()
    assert {n: r["score"] for n, r in out["roles"].items()} == pytest.approx(want)
    assert out["aggregate"] == pytest.approx((2 * want["technical_expert"] + want["developer_advocate"]
                                              + want["doc_reviewer"]) / 4, abs=1e-4)
    assert out["mean"] == pytest.approx(statistics.fmean(want.values()), abs=1e-4)
    assert out["sd"] == pytest.approx(statistics.pstdev(want.values()), abs=1e-4)
    # Each role saw the same question, ground truth and answer, under its own instructions.
    users = {fake_llm.last_user_text(b) for b in openai_server.requests}
    assert len(users) == 1 and "GROUND TRUTH\nchunk" in users.pop()
    assert len({fake_llm.system_text(b) for b in openai_server.requests}) == 3


def test_every_role_carries_the_numeric_claims_cap(openai_server, tmp_path):
    openai_server.route(scripted({t: "wrong" for t in ROLE_SCORES}))
    out, _ = panel(openai_server, tmp_path).score(Question("fee", 1, "Fee?"), "25 dollars", None, ("25 cents a day",))
    want = expected_role_scores()
    for name, r in out["roles"].items():
        assert r["numeric_claims"] == ["wrong"] and r["judged_score"] == pytest.approx(want[name], abs=1e-4)
        assert r["score"] == min(40.0, round(want[name], 4))
    assert all("NUMERIC CLAIMS\n1. 25 cents a day" in fake_llm.last_user_text(b) for b in openai_server.requests)
    assert all('"numeric_claims"' in fake_llm.system_text(b) for b in openai_server.requests)


def test_one_role_capped_is_flagged(openai_server, tmp_path):
    openai_server.route(scripted({"technical expert": "wrong"}))
    out, _ = panel(openai_server, tmp_path).score(Question("fee", 1, "Fee?"), "x", None, ("25 cents a day",))
    assert out["roles"]["technical_expert"]["score"] == 40.0 and out["roles"]["doc_reviewer"]["score"] == 80.0
    assert any(f.startswith("numeric claims: judged wrong by technical_expert") for f in out["flags"])


def test_outage_is_infra_and_garbage_is_unscored(openai_server, tmp_path):
    openai_server.push(Reply(status=500))
    out, _ = panel(openai_server, tmp_path).score(Question("a", 1, "Q?"), "x")
    assert out["result"] == "infra" and "technical_expert" in out["reason"]
    openai_server.route(lambda body: "no json here")
    out, _ = panel(openai_server, tmp_path).score(Question("b", 1, "R?"), "y")
    assert out["result"] == "unscored" and "aggregate" not in out and "agreement" not in out


def test_panel_on_the_anthropic_api(anthropic_server, tmp_path):
    anthropic_server.route(scripted())
    out, _ = panel(anthropic_server, tmp_path, kind="anthropic").score(Question("a", 1, "Q?"), "x")
    assert out["result"] == "scored" and anthropic_server.count == 3
    assert {n: r["score"] for n, r in out["roles"].items()} == pytest.approx(expected_role_scores())


def test_scripted_run_with_panel_feeds_the_gate(openai_server, tmp_path):
    openai_server.route(scripted({"technical expert": "wrong"}))
    res = CliRunner().invoke(app, ["qa", "run", str(SETS / "v2_valid.json"), "--arm", "none", "--model", "m",
                                   "--judge", "m", "--panel", "--base-url", openai_server.base_url,
                                   "--cache-dir", str(tmp_path / "c"), "--out", str(tmp_path / "run")],
                             env={**ENV, "COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    # 3 answers + 3 rubric scores + 3 x 3 panel roles.
    assert openai_server.count == 3 + 3 + 9
    # The terminal output is the run's report (the panel table, the trust gate's checks); the gate's verdict
    # line is repeated on stderr beside where the run lies.
    out = res.stdout
    rep = CliRunner().invoke(app, ["report", str(tmp_path / "run")], env={"COLUMNS": "300"})
    assert out == rep.stdout
    assert re.search(r"│ none +│ +3/3 │ +\d+\.\d │ +\d+\.\d │ +0\.\d\d │ +1 │", out), out
    assert "Trust gate: warn on " in out
    assert re.search(r"judge_independence +│ all +│ warn +│ +- │ judge is not the answer model +│ the judge model 'm' "
                     r"is the answer model", out), out
    assert re.search(r"inter_rater_agreement +│ all +│ (pass|warn) +│ +0\.\d+", out), out
    line = next(x for x in res.stderr.splitlines() if x.startswith("trust gate:"))
    assert line.startswith("trust gate: warn on ") and "inter_rater_agreement" not in line.split("not measured:")[1]
    # The report shows the panel and the trust gate's verdict line.
    rep = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--md", str(tmp_path / "r.md")], env={"COLUMNS": "300"})
    assert rep.exit_code == 0, rep.output
    md = (tmp_path / "r.md").read_text()
    assert "Judge panel (technical expert, developer advocate, doc reviewer)" in md
    assert re.search(r"\| \[none\]\(run/run.json\) \| 3/3 \| \d+\.\d \| \d+\.\d \| 0\.\d\d \| 1 \|", md), md
    assert "Trust gate: warn on " in md and re.search(r"Not measured \(\d+\): questions_scored", md), md


def test_panel_needs_a_question_set_and_a_judge(mini_battery, tmp_path):
    with pytest.raises(UserError, match="--panel scores a question set"):
        run_qa(QAConfig(source=str(mini_battery.path), arms=["none"], judge="j", panel=True, out=tmp_path / "r"), env={})
    with pytest.raises(UserError, match="--panel scores a question set"):
        run_qa(QAConfig(source=str(SETS / "v2_valid.json"), arms=["none"], panel=True, out=tmp_path / "r"), env={})


def test_rescore_of_a_panel_run_reproduces_from_the_cache(openai_server, tmp_path):
    from ctxgauge.suites.qa import rescore_run

    openai_server.route(scripted({"technical expert": "wrong"}))
    run_qa(QAConfig(source=str(SETS / "v2_valid.json"), arms=["none"], model="m", judge="j", panel=True,
                    grounded_from_topics=True, base_url=openai_server.base_url, cache_dir=tmp_path / "c",
                    out=tmp_path / "run"), env=ENV)
    n = openai_server.count
    again = rescore_run(tmp_path / "run", judge_base_url=openai_server.base_url, cache_dir=tmp_path / "c", env=ENV)
    # Same judge, same grounding (the flag is in the spec), same panel: every request is a cache hit.
    assert again.reproduced and again.changed == [] and openai_server.count == n
    assert again.results.summary["none"].panel["scored"] == 3
