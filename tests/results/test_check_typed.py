"""Readers check a run by parsing it into its suite's typed classes (`report.check_run`), and the shapes a
record must fit are derived from those classes (the views declare none of their own).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import INT, Obj
from ctxgauge.report import read_checked
from ctxgauge.report._views import VIEWS, SuiteView, shapes
from ctxgauge.results import SUITES

FIXTURES = Path(__file__).resolve().parents[1] / "records" / "fixtures" / "v2"


def _damage_unit(run: Path, change) -> None:
    lines = (run / "units.jsonl").read_text(encoding="utf-8").splitlines()
    unit = json.loads(lines[0])
    change(unit)
    lines[0] = json.dumps(unit, sort_keys=True)
    (run / "units.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("name, change, message", [
    # Values the view's shapes do not look at, which a reader of the typed unit would trip over.
    ("replay-vs", lambda u: u["ranking"][0].update(score="high"), "unit.ranking[0].score: expected a number or null"),
    ("replay-vs", lambda u: u.update(tests="t.py"), "unit.tests: expected a list or null"),
    ("cases", lambda u: u["corpus"].update(name=3), "unit.corpus.name: expected a string"),
    ("qa", lambda u: u["figures"].update(llm_calls="1"), "unit.figures.llm_calls: expected an integer"),
])
def test_a_unit_value_the_typed_class_refuses_is_one_line(tmp_path, name, change, message):
    run = tmp_path / name
    shutil.copytree(FIXTURES / name, run)
    _damage_unit(run, change)
    with pytest.raises(UserError) as exc:
        read_checked(run)
    assert message in str(exc.value) and "units.jsonl" in str(exc.value) and "\n" not in str(exc.value)


def test_a_spec_value_the_typed_class_refuses_is_one_line(tmp_path):
    run = tmp_path / "replay"
    shutil.copytree(FIXTURES / "replay", run)
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    record["spec"]["depth"] = "5"
    (run / "run.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(UserError, match=r"run.json: spec.depth: expected an integer, found the string '5'"):
        read_checked(run)


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_a_typed_suite_declares_no_shapes_of_its_own(suite):
    # One source: the reader side declares no shapes for a suite with typed classes; what a record must fit
    # is derived from those classes (`Record.shape()`), and reading into them is the check.
    view, typed = VIEWS[suite], SUITES[suite]
    assert (view.spec_shape, view.results_shape, view.unit_shape) == (None, None, None)
    assert shapes(suite) == (typed.spec.shape(), typed.results.shape(), typed.unit.shape())


def test_a_suite_without_typed_classes_keeps_its_views_shapes():
    plugin = SuiteView("a plugin", spec_shape=Obj({"n": INT}, required=("n",)))
    assert shapes("plugin-suite") == (None, None, None)  # no view registered: nothing checked
    VIEWS["plugin-suite"] = plugin
    try:
        assert shapes("plugin-suite") == (plugin.spec_shape, None, None)
    finally:
        del VIEWS["plugin-suite"]
