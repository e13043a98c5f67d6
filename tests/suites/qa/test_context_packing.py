"""The context arm's packed context, end to end against a loopback OpenAI-compatible server driven by the
real SDK: the prompt the server received holds the engine's spans under `path:start-end` headers, within
the budget by the tokenizer's count; each answer records that count; the summary's context tokens per
correct answer is the sum of those counts over the answers passed."""

from __future__ import annotations

import io
import json
import re

import pytest

from qa_helpers import ENV, FACTS, oracle  # type: ignore[import-not-found]
from ctxgauge.corpus import open_corpus
from ctxgauge.engines import get_engine
from ctxgauge.errors import UserError
from ctxgauge.metrics.packing import pack
from ctxgauge.metrics.tokens import default_tokenizer
from ctxgauge.records import read_run, read_units
from ctxgauge.report import Table, build_report, discover_runs, render_terminal, write_html, write_markdown
from rich.console import Console
from ctxgauge.results import QAResults
from ctxgauge.suites.qa import QAConfig, SUITE_VERSION, run_qa
from ctxgauge.suites.qa._summary import context_summary

INTRO = "Files retrieved from the repository for this question:\n\n"
HEADER = re.compile(r"^(\S+):(\d+)-(\d+)$", re.M)
ARM = "context:bm25(span_lines=2)@3"  # spans are on by default
RIGHT = {"q01", "q02", "q03"}
BUDGET = 40


def context_of(user: str) -> str:
    """The packed context inside a question's prompt (between the intro and the question)."""
    assert user.startswith(INTRO), user[:80]
    return user[len(INTRO):user.index("\n\nQuestion: ")]


def test_packed_context_reaches_the_model_within_the_budget(mini_battery, openai_server, tmp_path):
    openai_server.route(oracle(RIGHT))
    result = run_qa(QAConfig(source=str(mini_battery.path), arms=["none", ARM], model="gpt-4o-mini",
                             judge="gpt-4o-mini", base_url=openai_server.base_url, cache_dir=tmp_path / "c",
                             out=tmp_path / "run", retries=0, timeout=5.0, token_budget=BUDGET), env=ENV)
    tok = default_tokenizer()
    corpus = open_corpus(mini_battery.repo, mini_battery.commit)
    engine, index = get_engine(ARM[len("context:"):-len("@3")]), tmp_path / "index"
    index.mkdir()
    engine.build(corpus, index)
    # Every context prompt the server received, by question.
    contexts = {}
    for body in openai_server.requests:
        user = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
        if not user.startswith(INTRO):
            continue  # the none arm, or the judge
        q = next(q for q, (_, _, prompt) in FACTS.items() if prompt in user)
        contexts[q] = context_of(user)
    assert sorted(contexts) == sorted(FACTS)
    cut = partial = 0
    for q, text in contexts.items():
        # Fits the budget by the tokenizer's count, and is made of headers each followed by exactly the lines
        # it names, from the file at the battery's commit.
        assert 0 < tok.count(text) <= BUDGET
        heads = list(HEADER.finditer(text))
        assert heads and heads[0].start() == 0
        for h, nxt in zip(heads, heads[1:] + [None]):
            path, start, end = h.group(1), int(h.group(2)), int(h.group(3))
            body = text[h.end() + 1:nxt.start() if nxt else len(text)]
            assert body == "".join(corpus.text(path).splitlines(keepends=True)[start - 1:end])
        # Exactly the engine's hits, spans and all, packed by the one packing function.
        hits = engine.query(index, FACTS[q][2], 3)
        assert text == pack(hits, corpus.read, BUDGET, tok).text
        partial += any(h.spans and h.spans != ((1, len(corpus.text(h.path).splitlines())),) for h in hits)
        cut += tok.count(text) + 30 > BUDGET  # near the budget: the packing stopped on it
    assert cut > 0 and partial > 0

    units = {u.data["qid"]: u for u in read_units(tmp_path / "run") if u.data["arm"] == ARM}
    for q, text in contexts.items():
        f = units[q].figures
        # ctxgauge's count is the tokenizer's count of the very text the model read, beside the provider's.
        assert f["context_tokens"] == tok.count(text) and f["tokens_input"] == 100
        assert f["context_ran_out"] is False  # 3 files of 3 lines never fit 40 tokens: the budget cut them
        assert f["in_context"] == list(dict.fromkeys(path for path, _, _ in HEADER.findall(text)))
    none_units = [u for u in read_units(tmp_path / "run") if u.data["arm"] == "none"]
    assert all("context_tokens" not in u.figures for u in none_units)

    # The summary: hand-computed from what the server received: the contexts' tokens over the 3 passed.
    s = result.to_dict()["summary"]
    total = sum(tok.count(t) for t in contexts.values())
    assert s[ARM]["passed"] == 3 and s[ARM]["accuracy"] == pytest.approx(0.3)
    assert s[ARM]["context_tokens"] == total
    assert s[ARM]["context_tokens_per_correct"] == pytest.approx(total / 3)
    assert s[ARM]["context_ran_out"] == 0
    assert "context_tokens" not in s["none"] and "context_tokens_per_correct" not in s["none"]
    # The run records the suite's version and the tokenizer; the per-repetition record carries the count.
    record = read_run(tmp_path / "run")
    assert record.suite_version == SUITE_VERSION == 2
    assert record.spec["tokenizer"] == tok.spec == {"name": "o200k_base", "version": tok.version}
    # The report's arms table shows it (terminal, Markdown and HTML read the one table).
    report = build_report(discover_runs(tmp_path / "run"))
    table = next(b for sec in report.sections if sec.suite == "qa" for b in sec.blocks
                 if isinstance(b, Table) and b.title.startswith("Arms"))
    col = table.columns.index("context/correct")
    shown = {row[0].text: row[col].text for row in table.rows}
    assert shown == {ARM: f"{total / 3:,.0f}", "none": "-"}
    md = write_markdown(report, tmp_path / "report.md").read_text()
    assert "context/correct" in md and f"{total / 3:,.0f}" in md
    assert "context/correct" in write_html(report, tmp_path / "report.html").read_text()
    buf = io.StringIO()
    render_terminal(report, Console(file=buf, width=200))
    assert "context/correct" in buf.getvalue()
    path = next(r["path"] for r in result.to_dict()["runs"] if r["arm"] == ARM)
    econ = json.loads((tmp_path / "run" / path / "record.json").read_text())["economics"]
    assert econ["context_tokens"] == total and econ["tokens_input"] == 1000
    assert {r["qid"]: r["context_tokens"] for r in econ["per_question"]} == {
        q: tok.count(t) for q, t in contexts.items()}


def test_context_tokens_per_correct_is_none_without_a_correct_answer():
    units = [{"figures": {"context_tokens": 7, "context_ran_out": True}}, {"figures": {"context_tokens": 5}}]
    assert context_summary("context", units, 0, True) == {"context_tokens": 12, "context_tokens_per_correct": None,
                                                          "context_ran_out": 1}
    assert context_summary("context", units, 2, True)["context_tokens_per_correct"] == 6.0
    assert context_summary("context", units, 2, False)["context_tokens_per_correct"] is None  # no decided score
    assert context_summary("none", units, 2, True) == {}
    assert context_summary("context", [{"figures": {}}], 2, True) == {}  # a run before the count: nothing


def test_typed_results_keep_old_summaries_as_they_were():
    old = {"summary": {"context:bm25@5": {"status": "measured", "passed": 1}}}
    assert "context_tokens" not in QAResults.from_json(old, "run", "results").to_json()["summary"]["context:bm25@5"]
    new = {"summary": {"context:bm25@5": {"status": "measured", "passed": 0, "context_tokens": 9,
                                          "context_tokens_per_correct": None, "context_ran_out": 0}}}
    back = QAResults.from_json(new, "run", "results")
    written = back.to_json()["summary"]["context:bm25@5"]
    assert back.summary["context:bm25@5"].context_tokens == 9
    assert {k: written[k] for k in new["summary"]["context:bm25@5"]} == new["summary"]["context:bm25@5"]


def test_a_budget_below_one_token_is_one_line(mini_battery, tmp_path):
    for bad in (0, -5, 2.5):
        with pytest.raises(UserError, match="--token-budget must be a whole number of tokens"):
            run_qa(QAConfig(source=str(mini_battery.path), arms=["context:bm25@3"], token_budget=bad,
                            out=tmp_path / f"run{bad}"))
