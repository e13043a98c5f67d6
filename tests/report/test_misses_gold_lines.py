"""The misses view puts each missed unit's gold lines beside the spans the engine returned (issue 37,
item 9), read from the unit's `gold_lines` and its ranking entries' `spans`; a run recorded before spans
shows the table it always showed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctxgauge.report import build_report, load_runs, misses, render_markdown
from ctxgauge.report._model import Table

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"
MISSED = "8b70c4f787"


def with_spans(tmp_path: Path) -> Path:
    run = tmp_path / "replay"
    shutil.copytree(V2 / "replay", run)
    lines = []
    for line in (run / "units.jsonl").read_text().splitlines():
        unit = json.loads(line)
        if unit["id"].startswith(MISSED):
            unit["gold_lines"] = {"web/src/components/BookList.ts": [[3, 9]], "web/src/main.ts": [[1, 1], [20, 24]]}
            unit["ranking"][0]["spans"] = [[10, 30], [41, 41]]
            unit["ranking"].append({"path": "web/src/main.ts", "score": 0.1, "spans": [[18, 22]]})
        lines.append(json.dumps(unit))
    (run / "units.jsonl").write_text("\n".join(lines) + "\n")
    return run


def _misses_table(model) -> Table:
    return next(b for s in model.sections for b in s.blocks if isinstance(b, Table) and b.title.startswith("Misses"))


def test_gold_lines_beside_the_returned_spans(tmp_path):
    run = with_spans(tmp_path)
    table = _misses_table(build_report(load_runs([run])))
    assert table.columns[-1] == "gold lines / lines returned"
    [row] = table.rows
    assert row[-1].text == ("web/src/components/BookList.ts: gold 3-9, returned not returned; "
                            "web/src/main.ts: gold 1, 20-24, returned 18-22")
    assert row[3].text == "web/src/components/BookList.ts (not in the top 6); web/src/main.ts (rank 6)"
    assert row[4].text.startswith("shelfd/handlers/books.py (10-30, 41); shelfd/middleware.py (whole file); ")
    [miss] = misses(load_runs([run])[0], 5, ["bm25"])
    assert miss.expected[1].gold == ((1, 1), (20, 24)) and miss.expected[1].returned == ((18, 22),)
    assert "gold lines / lines returned" in render_markdown(build_report(load_runs([run])), details=True)


def test_a_run_without_gold_lines_keeps_its_table():
    table = _misses_table(build_report(load_runs([V2 / "replay"])))
    assert table.columns[-1] == "top 5 instead" and "(" not in table.rows[0][4].text
