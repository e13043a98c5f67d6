"""Readers check a run by parsing it into its suite's typed classes (`report.check_run`), and the shapes the
report's views declare are a part of what those classes declare (so the shapes can be derived from them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import ListOf, MapOf, Obj, Opt
from ctxgauge.report import read_checked
from ctxgauge.report._views import VIEWS
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


def _covered(view, typed, path: str) -> list[str]:
    """Paths the view's shape checks that the typed shape does not declare (with the same container)."""
    while isinstance(view, Opt):
        view = view.inner
    while isinstance(typed, Opt):
        typed = typed.inner
    if isinstance(view, Obj):
        if not isinstance(typed, Obj):
            return [path]
        out = []
        for key, shape in view.fields.items():
            out += _covered(shape, typed.fields[key], f"{path}.{key}") if key in typed.fields else [f"{path}.{key}"]
        return out
    if isinstance(view, MapOf) and isinstance(typed, Obj):
        return []  # the typed class names the keys the view reads as "any key"
    if isinstance(view, (ListOf, MapOf)):
        if type(typed) is not type(view):
            return [path]
        inner = "item" if isinstance(view, ListOf) else "value"
        return _covered(getattr(view, inner), getattr(typed, inner), f"{path}[]")
    return []


NOT_THIS_SUITE = {
    # The retrieval view's shapes are shared by replay and cases: each checks keys only the other writes.
    "replay": ["results.known_gap_summary", "results.pass"],
    "cases": ["results.vs_summary", "results.gate", "results.counts", "results.skipped", "results.by_kind"],
    # Untyped still: a determinism family's figures differ by family (drift's are keyed by noise kind).
    "determinism": ["results.engines[].families[].figures"],
    "qa": [],
}


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_shape_a_view_declares_is_declared_by_the_typed_classes(suite):
    view, typed = VIEWS[suite], SUITES[suite]
    missing: list[str] = []
    for what, shape, cls in (("spec", view.spec_shape, typed.spec), ("results", view.results_shape, typed.results),
                             ("unit", view.unit_shape, typed.unit)):
        if shape is not None:
            missing += _covered(shape, cls.shape(), what)
    assert sorted(missing) == sorted(NOT_THIS_SUITE[suite])
