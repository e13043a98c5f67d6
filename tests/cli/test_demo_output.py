"""`ctxgauge demo`'s terminal output explains CTL and drift, prints the qa hit rates and names both reports."""

from __future__ import annotations

from pathlib import Path

from ctxgauge.cli.demo import _print
from ctxgauge.demo import DemoResult


def test_the_demo_explains_what_it_printed(capsys):
    out = Path("ctxgauge-runs/demo-x")
    result = DemoResult(
        out=out, replay={"bm25": {"hit@5": 0.5, "recall@10": 0.6, "mrr": 0.4, "ndcg@10": 0.45}},
        determinism={"bm25": {"level": 3, "drift": {"prose": 0.02}}},
        qa={"summary": {"none": {"retrieval_hit_rate": None}, "context:bm25@5": {"retrieval_hit_rate": 0.8}},
            "skipped": [{"arm": "model", "reason": "no API key"}]},
        report_html=out / "report.html", report_md=out / "report.md")
    _print(result)
    text = " ".join(capsys.readouterr().out.split())
    assert "CTL (Context Trust Level, 0-4)" in text
    assert "drift: the share of results" in text
    assert "retrieval hit rate" in text and "context:bm25@5 0.800" in text and "none " not in text.split("hit rate")[1]
    assert "report.html" in text and "report.md" in text
