"""Arms and protocols through the pipeline: arm specs, the context budget, the tool arm's agent loop
(tool calls counted, adoption), multi-turn history, whole-battery label extraction, the command arm."""

from __future__ import annotations

import json
import sys

import pytest

from qa_helpers import ENV, FACTS, Reply, fake_llm, oracle, qid_of  # type: ignore[import-not-found]
from ctxgauge.corpus import open_corpus
from ctxgauge.engines import Hit
from ctxgauge.errors import UserError
from ctxgauge.records import read_units as _read_units
from ctxgauge.suites.qa import QAConfig, parse_arm, run_qa
from ctxgauge.metrics.tokens import default_tokenizer
from ctxgauge.suites.qa.arms._arms import pack_context, read_within
from ctxgauge.suites.qa.judging._prompts import extract_answers


# These tests check the JSON layout the suite wrote: the typed record and units in their JSON form.
def read_units(run_dir):
    return [u.to_json() for u in _read_units(run_dir)]


@pytest.mark.parametrize("text", ["none", "context:bm25@5", "context:bm25(b=0.5,k1=1.5)@3", "tool:grep",
                                  "command:python agent.py --fast"])
def test_arm_spec_round_trips(text):
    assert str(parse_arm(text)) == text and parse_arm(str(parse_arm(text))) == parse_arm(text)


def test_an_arm_names_its_engine_canonically():
    # k1=1.2 is bm25's default: the same system as `bm25`, so the same arm.
    assert str(parse_arm("context:bm25(b=0.5,k1=1.2)@3")) == "context:bm25(b=0.5)@3"
    assert parse_arm("tool:bm25(k1=1.2)") == parse_arm("tool:bm25")


def test_arm_spec_defaults_and_errors():
    assert str(parse_arm("context:bm25")) == "context:bm25@5"
    assert parse_arm("command:x").needs_model is False and parse_arm("none").needs_corpus is False
    for bad in ("context:bm25@0", "context:bm25@x", "tool:", "bogus", "none:x"):
        with pytest.raises(UserError):
            parse_arm(bad)


def test_context_is_packed_at_the_token_budget_by_the_tokenizer(mini_battery):
    corpus = open_corpus(mini_battery.repo, mini_battery.commit)
    tok = default_tokenizer()
    hits = [Hit("pkg/mod1.py", 3.0), Hit("pkg/mod2.py", 2.0), Hit("pkg/mod3.py", 1.0, spans=((3, 3),))]
    one = corpus.text("pkg/mod1.py")
    first_of_two = corpus.text("pkg/mod2.py").splitlines(keepends=True)[0]
    # Room for mod1 whole (header `pkg/mod1.py:1-3` counts) and one line of mod2 under its own header: mod2
    # is cut after its last whole line that fits, and packing stops there (mod3 never starts).
    budget = (tok.count("pkg/mod1.py:1-3\n") + sum(tok.count(x) for x in one.splitlines(keepends=True))
              + tok.count("pkg/mod2.py:1-1\n") + tok.count(first_of_two) + 1)
    got = pack_context(hits, corpus, budget)
    assert got.text == "pkg/mod1.py:1-3\n" + one + "pkg/mod2.py:1-1\n" + first_of_two
    assert got.paths == ["pkg/mod1.py", "pkg/mod2.py"] and got.ran_out is False
    assert got.tokens == tok.count(got.text) <= budget
    # A budget the ranking cannot fill: everything fits, mod3 as the one span it handed over, and it ran out.
    full = pack_context(hits, corpus, 10_000)
    assert full.paths == [h.path for h in hits] and full.ran_out is True
    assert full.text.endswith('pkg/mod3.py:3-3\n    return "value3x"\n') and full.tokens == tok.count(full.text)
    assert pack_context([], corpus, 100) == type(full)("", 0, [], True)


def test_tool_read_is_cut_by_the_tokenizer(repo_builder):
    rb = repo_builder("long")
    body = "".join(f"line_{i} = {i} * 7\n" for i in range(1, 401))
    commit = rb.commit("a long file", {"long.py": body, "short.py": "x = 1\n"})
    corpus = open_corpus(rb.path, commit)
    tok = default_tokenizer()
    assert read_within(corpus, "short.py", 100) == "x = 1\n"
    out = read_within(corpus, "long.py", 100)
    kept = [ln + "\n" for ln in out.splitlines()[1:-1]]
    n = len(kept)
    assert out.startswith(f"long.py:1-{n}\n") and out.endswith(f"[... truncated: lines 1-{n} of 400 fit the read "
                                                                "budget of 100 tokens ...]")
    assert kept == body.splitlines(keepends=True)[:n]
    # The cut is where the tokenizer says, not at 4 characters a token (that would keep 400 characters).
    used = tok.count(f"long.py:1-{n}\n") + sum(tok.count(x) for x in kept)
    nxt = body.splitlines(keepends=True)[n]
    assert used <= 100 < tok.count(f"long.py:1-{n + 1}\n") + sum(tok.count(x) for x in kept + [nxt])
    assert len("".join(kept)) != 400


def test_extract_answers_by_label():
    sheet = "### q01\nvalue1x\n\n### q02\nIt is value2x.\n[q03] third\n**q04**: fourth\nq05: fifth"
    got = extract_answers(sheet, ["q01", "q02", "q03", "q04", "q05", "q06"])
    assert got == {"q01": "value1x", "q02": "It is value2x.", "q03": "third", "q04": "fourth", "q05": "fifth",
                   "q06": ""}


def cfg(mini, server, tmp_path, **kw) -> QAConfig:
    base = dict(source=str(mini.path), model="gpt-4o-mini", base_url=server.base_url, cache_dir=tmp_path / "c",
                out=tmp_path / "run", retries=0, timeout=5.0)
    base.update(kw)
    return QAConfig(**base)


def test_tool_arm_agent_loop(mini_battery, openai_server, tmp_path):
    def agent(body):
        msgs = body["messages"]
        q = qid_of(next(m["content"] for m in msgs if m["role"] == "user"))
        tool_turns = [m for m in msgs if m["role"] == "tool"]
        if q in ("q01", "q02") and not tool_turns:
            return Reply(tool_calls=[("search", {"query": f"compute_{int(q[1:])}"})])
        if q in ("q01", "q02") and len(tool_turns) == 1:
            assert FACTS[q][0] in tool_turns[0]["content"]  # the engine's ranking reached the model
            return Reply(tool_calls=[("read", {"path": FACTS[q][0]}), ("read", {"path": "nope.py"})])
        if q in ("q01", "q02"):
            assert "error: no file 'nope.py'" in tool_turns[-1]["content"]
            return f"It returns {FACTS[q][1]}."
        return "no idea"

    openai_server.route(agent)
    result = run_qa(cfg(mini_battery, openai_server, tmp_path, arms=["tool:bm25"]), env=ENV)
    s = result.to_dict()["summary"]["tool:bm25"]
    assert s["passed"] == 2 and s["not_judged"] == 8
    assert s["tool_calls"] == {"read": 4, "search": 2} and s["index_adoption"] == pytest.approx(0.2)
    assert openai_server.requests[0]["tools"][0]["function"]["name"] == "search"
    units = {u["qid"]: u for u in read_units(tmp_path / "run")}
    assert units["q01"]["figures"]["llm_calls"] == 3 and units["q03"]["figures"]["llm_calls"] == 1


def test_multi_turn_history_accumulates(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(set(FACTS)))
    run_qa(cfg(mini_battery, openai_server, tmp_path, arms=["none"], protocol="multi-turn"), env=ENV)
    sizes = [len(r["messages"]) for r in openai_server.requests]
    assert sizes == [2 + 2 * i for i in range(10)]  # system + (user, assistant) per earlier question + user


def test_whole_battery_one_call(mini_battery, openai_server, tmp_path):
    def sheet(body):
        text = fake_llm.last_user_text(body)
        assert all(f"[{q}]" in text for q in FACTS)
        return "\n".join(f"### {q}\nIt returns {tok}." for q, (_, tok, _) in FACTS.items() if q != "q10")

    openai_server.route(sheet)
    result = run_qa(cfg(mini_battery, openai_server, tmp_path, arms=["context:bm25@2"], protocol="whole-battery"),
                    env=ENV)
    s = result.to_dict()["summary"]["context:bm25@2"]
    assert openai_server.count == 1 and s["passed"] == 9 and s["not_judged"] == 1
    assert s["tokens"]["tokens_input"] == 100  # one call's usage, counted once
    assert s["retrieval_hit_rate"] == 1.0
    # One context for the sheet, read once: its tokens sit on the first question, as the usage does.
    sheet_text = fake_llm.last_user_text(openai_server.requests[0])
    context = sheet_text[sheet_text.index(":\n\n") + 3:sheet_text.index("\n\nAnswer every question")]
    counts = {u["qid"]: u["figures"]["context_tokens"] for u in read_units(tmp_path / "run")}
    assert counts == {q: default_tokenizer().count(context) if q == "q01" else 0 for q in FACTS}
    # q10 is not judged (no judge): no decided score, so no per-correct figure (never one over a partial score).
    assert s["context_tokens"] == counts["q01"] and s["context_tokens_per_correct"] is None


def test_command_arm_with_envelope(mini_battery, tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os, re, sys\n"
        "q = sys.stdin.read()\n"
        "n = re.search(r'compute_(\\d+)', q).group(1)\n"
        "src = open(os.path.join(os.environ['CTXGAUGE_REPO'], 'pkg', f'mod{n}.py')).read()\n"
        "token = re.search(r'return \"(\\w+)\"', src).group(1)\n"
        "print(json.dumps({'answer': f'It returns {token}.', 'usage': {'tokens_input': 7, 'tokens_output': 3},"
        " 'tool_calls': {'Read': 1}, 'cost_usd': 0.001}))\n")
    result = run_qa(QAConfig(source=str(mini_battery.path), arms=[f"command:{sys.executable} {agent}"],
                             out=tmp_path / "run"), env={})
    s = result.to_dict()["summary"][f"command:{sys.executable} {agent}"]
    assert s["status"] == "measured" and s["passed"] == 10 and s["accuracy"] == 1.0
    assert s["tokens"]["tokens_input"] == 70 and s["tool_calls"] == {"Read": 10}
    assert s["cost_usd"] == pytest.approx(0.01) and s["cost_basis"] == "reported"


def test_command_arm_failure_is_infra(mini_battery, tmp_path):
    result = run_qa(QAConfig(source=str(mini_battery.path), arms=[f"command:{sys.executable} -c 'raise SystemExit(3)'"],
                             out=tmp_path / "run"), env={})
    s = next(iter(result.to_dict()["summary"].values()))
    assert s["infra"] == 10 and s["accuracy"] is None and result.to_dict()["status"] == "error"


def test_command_arm_refuses_multi_turn(mini_battery, tmp_path):
    with pytest.raises(UserError, match="command arm runs its own sessions"):
        run_qa(QAConfig(source=str(mini_battery.path), arms=["command:true"], protocol="multi-turn",
                        out=tmp_path / "run"), env={})


def test_json_is_what_cli_prints(mini_battery, openai_server, tmp_path):
    from typer.testing import CliRunner

    from ctxgauge.cli import app

    openai_server.route(oracle({"q01"}))
    res = CliRunner().invoke(app, ["qa", "run", str(mini_battery.path), "--arm", "none", "--arm", "context:bm25@5",
                                   "--model", "gpt-4o-mini", "--base-url", openai_server.base_url,
                                   "--cache-dir", str(tmp_path / "c"), "--out", str(tmp_path / "run"), "--json"],
                             env={"OPENAI_API_KEY": "sk-x"})
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) == {"run_dir", "summary", "questions", "trust", "skipped", "notes", "finished", "unfinished",
                         "exit_code", "comparisons"}
    for arm in ("none", "context:bm25@5"):
        s = data["summary"][arm]
        assert {"questions", "passed", "accuracy", "tokens", "cost_usd"} <= set(s)
        assert s["questions"] == 10 and s["passed"] == 1 and s["accuracy"] is None  # 9 not judged
    assert data["questions"][0] == {"qid": "q01", "difficulty": 2, "categories": ["definitions"],
                                    "arms": {"none": ["pass"], "context:bm25@5": ["pass"]}}
    assert any("not judged" in n for n in data["notes"])
