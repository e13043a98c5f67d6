"""`ctxgauge demo`'s terminal output explains CTL and drift, prints the qa hit rates and names both reports."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.cli.demo import _print
from ctxgauge.demo import DemoResult
from ctxgauge.results import EngineResult, QAResults


def test_the_demo_explains_what_it_printed(capsys):
    out = Path("ctxgauge-runs/demo-x")
    result = DemoResult(
        out=out, replay={"bm25": {"hit@5": 0.5, "recall@10": 0.6, "mrr": 0.4, "ndcg@10": 0.45}},
        determinism={"bm25": EngineResult(status="measured", level=3, drift={"prose": 0.02})},
        qa=QAResults.from_json(
            {"summary": {"none": {"retrieval_hit_rate": None}, "context:bm25@5": {"retrieval_hit_rate": 0.8}},
             "skipped": [{"arm": "none", "reason": "needs a model: no API key"},
                         {"arm": "context:bm25@5", "reason": "retrieval only: no API key"},
                         {"arm": "context:graph@5", "reason": "retrieval only: no API key"}]}),
        report_html=out / "report.html", report_md=out / "report.md")
    _print(result)
    text = " ".join(capsys.readouterr().out.split())
    assert "CTL (Context Trust Level, 0-4)" in text
    assert "drift: the share of results" in text
    # The drift column names its noise kind (`prose 0.020`): the kind is explained too (issue 39 item 9).
    assert "prose: that file is everyday English words no request uses" in text
    assert "retrieval hit rate" in text and "context:bm25@5 0.800" in text and "none " not in text.split("hit rate")[1]
    assert "report.html" in text and "report.md" in text
    # One line per reason, naming every arm it applies to.
    assert "qa arm none: needs a model: no API key" in text
    assert "qa arms context:bm25@5, context:graph@5: retrieval only: no API key" in text


def test_the_demo_qa_phase_moves_its_bar_and_resume_reads_every_figure_back(tmp_path):
    from ctxgauge.demo import DemoConfig, run_demo

    seen: list[tuple[int, int, str]] = []
    config = DemoConfig(out=tmp_path / "demo", engines=("bm25",), commits=3, rebuilds=2, trials=2)
    first = run_demo(config, lambda done, total, label: seen.append((done, total, label)))
    qa = [(d, t) for d, t, label in seen if label.startswith("qa: ")]
    # A unit at a time (two arms x the battery's questions), never a bar standing at 0/1.
    assert {t for _, t in qa} == {2 * 18} and max(d for d, _ in qa) == 36 and len({d for d, _ in qa}) > 18
    rate = first.qa.summary["context:bm25@5"].retrieval_hit_rate
    assert rate is not None and first.determinism["bm25"].level is not None
    # --resume finds every phase finished: it measures nothing again, and reads every figure from the records.
    again = run_demo(DemoConfig(out=tmp_path / "demo", engines=("bm25",), commits=3, rebuilds=2, trials=2,
                                resume=True))
    assert again.qa == first.qa and again.determinism == first.determinism and again.replay == first.replay
