"""Every run of the committed v1 and v2 fixtures parses into its suite's typed classes, and a v2 record
(the current layout) written back from its parsed form is the same bytes: the typed model is lossless.

Also: the classes are typed to the leaves (no stored key of a v2 fixture lands in a class's `extra`), every
field has a docstring, and a damaged value is refused with one line naming the JSON path.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ctxgauge._io import canonical_json
from ctxgauge.records import read_run, read_units
from ctxgauge.results import SUITES, Record, RecordError, ReplayResults, classes

FIXTURES = Path(__file__).resolve().parents[1] / "records" / "fixtures"
RUNS = sorted(p.parent for v in ("v1", "v2") for p in (FIXTURES / v).rglob("run.json"))


def _rel(run: Path) -> str:
    return run.relative_to(FIXTURES).as_posix()


def _sections(run: Path):
    """(what, stored JSON, class) of a run's spec, results and every unit line."""
    rec = read_run(run)
    typed = classes(rec.suite)
    assert typed is not None, f"{_rel(run)}: suite {rec.suite} has no typed classes"
    out = [("spec", rec.spec, typed.spec)]
    if rec.results is not None:
        out.append(("results", rec.results, typed.results))
    out += [(f"unit {u.id}", u.to_json(), typed.unit) for u in read_units(run)]
    return out


def _extras(obj, where: str) -> list[str]:
    if isinstance(obj, Record):
        found = [f"{where}: {type(obj).__name__}.{k}" for k in obj.extra]
        for f in dataclasses.fields(obj):
            found += _extras(getattr(obj, f.name), where)
        return found
    if isinstance(obj, list):
        return [x for v in obj for x in _extras(v, where)]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _extras(v, where)]
    return []


def test_there_are_fixture_runs_of_every_suite():
    suites = {read_run(r).suite for r in RUNS}
    assert suites == set(SUITES)
    assert len(RUNS) >= 20


@pytest.mark.parametrize("run", RUNS, ids=_rel)
def test_every_section_of_every_fixture_run_parses(run):
    for what, data, cls in _sections(run):
        obj = cls.from_json(data, f"{_rel(run)} {what}")
        assert isinstance(obj, cls)
        if _rel(run).startswith("v2/"):
            # Lossless: the parsed object writes back the stored bytes (canonical JSON: 1 and 1.0 differ).
            assert canonical_json(obj.to_json()) == canonical_json(data), f"{_rel(run)} {what}"
            assert _extras(obj, f"{_rel(run)} {what}") == []


def test_units_and_results_carry_typed_leaves():
    run = FIXTURES / "v2" / "replay-vs"
    rec = read_run(run)
    results = ReplayResults.from_json(rec.results)
    assert results.comparison is not None and results.comparison.vs == "bm25"
    assert results.comparison.metrics["hit@5"].losses == 1
    assert results.counts.scored == 4 and results.by_kind["other"].commits == 2
    unit = SUITES["replay"].unit.from_json(read_units(run)[0].to_json())
    assert unit.vs is not None and unit.vs.engine == "bm25" and unit.ranking[0].path == "CHANGELOG.md"


def test_a_v1_qa_trust_count_is_migrated_to_names():
    rec = read_run(FIXTURES / "v1" / "qa")
    assert isinstance(rec.results["trust"]["not_measured"], int)
    trust = SUITES["qa"].results.from_json(rec.results).trust
    assert trust.not_measured == [c.name for c in trust.checks if c.status == "not-measured"]
    assert len(trust.not_measured) == rec.results["trust"]["not_measured"]


@pytest.mark.parametrize("path, value, message", [
    (("summary", "hit@5"), "x", "summary.hit@5: expected a number or null, found the string 'x'"),
    (("counts", "ok"), True, "counts.ok: expected an integer, found true"),
    (("by_kind", "code"), [], "by_kind.code: expected an object, found a list"),
    (("comparison", "metrics", "mrr", "wins"), 1.5, "comparison.metrics.mrr.wins: expected an integer"),
])
def test_a_damaged_value_is_one_line_naming_its_path(path, value, message):
    data = read_run(FIXTURES / "v2" / "replay-vs").results
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(RecordError, match="^run.json: ") as exc:
        ReplayResults.from_json(data, "run.json")
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_missing_required_key_is_named():
    with pytest.raises(RecordError, match=r"comparison.metrics.mrr.ci_low: expected a number, found nothing"):
        ReplayResults.from_json({"comparison": {"engine": "a", "vs": "b", "seed": 0, "metrics": {"mrr": {
            "n": 1, "mean_a": 1, "mean_b": 1, "mean_diff": 0}}}}, "run.json")


def _undocumented(cls: type) -> list[str]:
    """Fields of a dataclass without an attribute docstring (the string right below the field)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    documented = {stmt.target.id for stmt, nxt in zip(body, body[1:])
                  if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                  and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)}
    own = [f.name for f in dataclasses.fields(cls) if f.name in cls.__dict__.get("__annotations__", {})]
    return [f"{cls.__name__}.{n}" for n in own if n not in documented]


def _all_classes() -> set[type]:
    seen: set[type] = set()
    todo = [c for entry in SUITES.values() for c in (entry.spec, entry.unit, entry.results)]
    import typing
    while todo:
        cls = todo.pop()
        for base in cls.__mro__:
            if isinstance(base, type) and issubclass(base, Record) and base not in seen:
                seen.add(base)
                for hint in typing.get_type_hints(base).values():
                    stack = [hint]
                    while stack:
                        h = stack.pop()
                        if isinstance(h, type) and issubclass(h, Record):
                            todo.append(h)
                        stack += list(typing.get_args(h))
    return seen


def test_every_field_has_a_docstring():
    classes_ = _all_classes()
    assert len(classes_) > 30
    assert [m for c in sorted(classes_, key=lambda c: c.__name__) for m in _undocumented(c)] == []


def test_importing_the_package_has_no_side_effects():
    # Importing the table opens no file, imports no suite, report or engine, and registers nothing.
    code = ("import sys, ctxgauge.results as r; "
            "bad = [m for m in sys.modules if m.startswith(('ctxgauge.suites', 'ctxgauge.report', "
            "'ctxgauge.engines', 'ctxgauge.export'))]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_suite_package_has_a_typed_entry():
    src = Path(__file__).resolve().parents[2] / "src" / "ctxgauge"
    packages = {p.name for p in (src / "suites").iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_")}
    assert packages == set(SUITES)
    for name, entry in SUITES.items():
        module = sys.modules[entry.spec.__module__]
        assert module.SUITE == name and (src / "results" / f"_{name}.py").is_file()
