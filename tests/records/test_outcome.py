"""The one rule for exit codes 6 and 7 of every suite, from a finished run's unit counts."""

from __future__ import annotations

import pytest

from ctxgauge.records import RunDir, Subject, outcome, read_run


@pytest.mark.parametrize("counts,state,code", [
    ({"ok": 3, "failed": 0, "skipped": 1}, "measured", None),
    ({"ok": 2, "failed": 1, "skipped": 0}, "unfinished", 6),
    ({"ok": 0, "failed": 4, "skipped": 0}, "nothing-measured", 7),
    ({"ok": 0, "failed": 0, "skipped": 5}, "nothing-measured", 7),
    ({}, "nothing-measured", 7),
])
def test_outcome_from_counts(counts, state, code):
    o = outcome(counts)
    assert (o.state, o.exit_code) == (state, code)
    assert (o.message is None) == (code is None)


def test_a_run_whose_units_all_failed_says_nothing_was_measured(tmp_path):
    run = RunDir.start(tmp_path / "run", suite="s", suite_version=1, subject=Subject("demo", ["x"]), spec={})
    run.add_unit("a", "failed", reason="engine crashed")
    run.add_unit("b", "failed", reason="engine crashed")
    run.finish("success", headline="hit@10 0.000")
    rec = read_run(tmp_path / "run")
    assert rec.headline.startswith("nothing measured: 2 of 2 unit(s) failed")
    assert outcome(rec.counts).exit_code == 7


def test_a_skipped_unit_that_holds_a_figure_measured_something(tmp_path):
    # A qa arm that needs a model is skipped, but it measured its retrieval: not "nothing measured".
    run = RunDir.start(tmp_path / "run", suite="s", suite_version=1, subject=Subject("demo", ["x"]), spec={})
    run.add_unit("q1", "skipped", reason="needs a model", figures={"retrieved": 1.0})
    run.add_unit("q2", "skipped", reason="needs a model", figures={"retrieved": None})
    run.finish("success", headline="context:bm25@5 -")
    assert read_run(tmp_path / "run").headline == "context:bm25@5 -"
    assert outcome({"skipped": 2}, measured=1).state == "measured"
    assert outcome({"skipped": 2}, measured=0).state == "nothing-measured"


def test_a_command_ends_by_the_units_not_the_counts_alone(tmp_path):
    # Every unit skipped, one holding a figure (a qa context arm with no model measured its retrieval): the
    # command ends 0 like the record's headline says, never 7 from the counts alone.
    import typer

    from ctxgauge.cli._common import exit_for_run

    run = RunDir.start(tmp_path / "run", suite="s", suite_version=1, subject=Subject("demo", ["x"]), spec={})
    run.add_unit("q1", "skipped", reason="needs a model", figures={"retrieved": ["a.py"]})
    run.finish("success", headline="x -")
    with pytest.raises(typer.Exit) as end:
        exit_for_run(tmp_path / "run", True)
    assert end.value.exit_code == 0
