"""ctxgauge's own code spans render as `<code>` in the HTML report; record values stay escaped text
(issue 39, item 9: a caption's `` `-` `` showed literal backticks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctxgauge.report import build_report, load_runs, render_html
from ctxgauge.report._html import own_text

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"


def test_own_text_draws_code_spans_and_keeps_quoted_data_escaped():
    assert own_text("`-` means not measured") == "<code>-</code> means not measured"
    assert own_text("a <b> `x`") == "a &lt;b&gt; <code>x</code>"
    said = own_text("Difference e`rm`x − `bm25`", data=["e`rm`x"])
    assert said == "Difference e`rm`x − <code>bm25</code>"


def test_caption_code_span_rendered(tmp_path):
    html = render_html(build_report(load_runs([V2 / "qa"])))
    assert "<code>-</code> means not measured" in html
    assert "`-`" not in html


def test_record_value_with_backticks_stays_escaped(tmp_path):
    run = tmp_path / "replay-vs"
    shutil.copytree(V2 / "replay-vs", run)
    record = json.loads((run / "run.json").read_text())
    odd = "grep(note=`<i>x</i>`)"
    record["results"]["comparison"]["engine"] = odd
    (run / "run.json").write_text(json.dumps(record))
    html = render_html(build_report(load_runs([run])))
    assert "Difference grep(note=`&lt;i&gt;x&lt;/i&gt;`) − bm25" in html
    assert "<code>&lt;i&gt;" not in html and "<i>x</i>" not in html
