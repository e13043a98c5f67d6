"""One rendering of "no coverage gap" (walkthrough at 80 columns, issue 39): a cases run's "Every metric" table
read `-` where a replay run's read `0.0%` for the same thing. Both now give the share, expected files the
corpus does not index over all expected files, a cases run's computed from its units as replay stores it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctxgauge.report import Table, build_report, load_runs

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"


def gap_cells(root: Path) -> dict[str, list[str]]:
    out = {}
    for sec in build_report(load_runs([root])).sections:
        for block in sec.blocks:
            if isinstance(block, Table) and block.title.startswith("Every metric"):
                row = next(r for r in block.rows if r[0].text == "coverage gap")
                out[sec.suite] = [c.text for c in row[1:]]
    return out


def test_no_gap_reads_the_same_in_cases_and_replay(tmp_path):
    for name in ("cases", "cases-vs", "replay", "replay-vs"):
        shutil.copytree(V2 / name, tmp_path / name)
    cells = gap_cells(tmp_path)
    assert set(cells) == {"cases", "replay"}
    assert set(cells["replay"]) == {"0.0%"}  # replay's stored share
    assert set(cells["cases"]) == {"0.0%"}, cells


def test_a_cases_gap_is_the_share_of_expected_files(tmp_path):
    run = tmp_path / "cases"
    shutil.copytree(V2 / "cases", run)
    lines = [json.loads(line) for line in (run / "units.jsonl").read_text().splitlines()]
    ok = [u for u in lines if u.get("status") == "ok" and not u.get("known_gap")]  # the known-gaps lane apart
    ok[0]["coverage_gap"] = ok[0]["expected"][:1]
    (run / "units.jsonl").write_text("".join(json.dumps(u) + "\n" for u in lines))
    expected = sum(len(u["expected"]) for u in ok)
    assert gap_cells(tmp_path)["cases"] == [f"{100 / expected:.1f}%"]
