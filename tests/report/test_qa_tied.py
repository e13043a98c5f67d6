"""The qa section's arms table says which arms are statistically tied on accuracy when more than two are
compared: rank groups over the questions every arm answered (`metrics.groups.tied_groups` through
`_leaderboard.cross_groups`, as the leaderboard's `group` column), with n in the column's name."""

from __future__ import annotations

from ctxgauge.records import discover_runs
from ctxgauge.report import Table, build_report, render_markdown

TITLE = "Arms: accuracy, tokens and cost"


def _arms_table(root) -> Table:
    sec = next(s for s in build_report(discover_runs(root)).sections if s.suite == "qa")
    return next(b for b in sec.blocks if isinstance(b, Table) and b.title == TITLE)


def test_four_arms_get_hand_computed_groups(tmp_path, factory):
    # 20 questions. a passes all; b all but one (one paired difference: p = 1, tied with a); c passes 8 (12
    # differences against a, all one way: exact sign-flip p = 2/4096, Holm x2 still < 0.05: not tied); d passes
    # none (20 against a). Then c anchors group 2: d differs from it on 8 questions, all one way (p = 2/256 <
    # 0.05): d is group 3.
    arms = {"a": ["pass"] * 20, "b": ["pass"] * 19 + ["fail"], "c": ["pass"] * 8 + ["fail"] * 12,
            "d": ["fail"] * 20}
    factory.qa_run(tmp_path, "four", arms)
    table = _arms_table(tmp_path)
    assert table.columns[-1] == "tied group (n 20)"
    assert {row[0].text: row[-1].text for row in table.rows} == {"a": "1", "b": "1", "c": "2", "d": "3"}
    assert "Holm-adjusted" in table.caption
    assert "| tied group (n 20) |" in render_markdown(build_report(discover_runs(tmp_path)), None)


def test_two_arms_have_no_group_column(tmp_path, factory):
    factory.qa_run(tmp_path, "two", {"a": ["pass"] * 5, "b": ["fail"] * 5})
    table = _arms_table(tmp_path)
    assert table.columns[-1] == "valid runs" and all(len(r) == len(table.columns) for r in table.rows)


def test_arms_without_decided_answers_have_no_group(tmp_path, factory):
    # Not judged (no verdict decided): no per-question outcome to compare, so no group, not a group of zeros.
    factory.qa_run(tmp_path, "open", {"a": ["not-judged"] * 4, "b": ["not-judged"] * 4, "c": ["not-judged"] * 4})
    assert _arms_table(tmp_path).columns[-1] == "valid runs"
