"""An engine measured alone and again as another run's `--vs` links to the run that measured it itself
(issue 39, item 9: the demo's hybrid row linked to `replay-fusion-vs-hybrid`, first in path order)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctxgauge.report import BarsFigure, Table, build_report, load_runs, render_html

DEMO = Path(__file__).parents[1] / "records" / "fixtures" / "v2" / "demo"


def test_bar_and_column_link_to_the_engines_own_run(tmp_path):
    runs = tmp_path / "runs"
    # The comparison run sorts first, as `replay-fusion-vs-hybrid` sorts before `replay-hybrid`.
    shutil.copytree(DEMO / "replay-grep-vs-bm25", runs / "a-grep-vs-bm25")
    shutil.copytree(DEMO / "replay-bm25", runs / "b-bm25")
    shutil.copytree(DEMO / "replay-grep", runs / "c-grep")
    model = build_report(load_runs([runs]))
    blocks = [b for s in model.sections for b in s.blocks]
    bars = [b for b in blocks if isinstance(b, BarsFigure)][0]
    linked = {bar.label: bar.run for p in bars.panels for bar in p.bars}
    assert linked == {"bm25": "b-bm25", "grep": "a-grep-vs-bm25"}  # grep is measured itself in both
    # bm25's figures still come from both runs that measured them (listed under the figure).
    assert set(bars.sources) == {"a-grep-vs-bm25", "b-bm25", "c-grep"}
    html = render_html(build_report(load_runs([runs])))
    assert '<title>bm25: hit@5' in html
    bm25_bar = html.split("<title>bm25: hit@5", 1)[0].rsplit("<a href=", 1)[1]
    assert bm25_bar.startswith('"') and "b-bm25/run.json" in bm25_bar
