"""A suite's `spec` and `results` are checked against the shapes its readers declared, once, when a record is read
(`ctxgauge.report.check_run`, the one check every reader uses).

The probe: every node of every v1 fixture run.json replaced by null and by "x", the record read and drawn the
three ways `ctxgauge report` draws it. Each input either draws or is refused with one UserError line naming the
file and the JSON path; before the shapes, 400 of these 2,422 inputs raised TypeError/AttributeError/ValueError
deep in the report.
"""

from __future__ import annotations

import copy
import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from ctxgauge.errors import UserError
from ctxgauge.records import INT, NUMBER, ListOf, MapOf, Obj, Opt
from ctxgauge.records._shape import check_sections
from ctxgauge.report import build_report, load_runs, read_checked, render_html, render_markdown, render_terminal

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "v1"
RUNS = ("cases", "determinism", "qa", "replay", "replay-cancelled")


def nodes(value, path=()):
    """Every path into a JSON document (the root included)."""
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        yield from nodes(v, path + (k,))


def replaced(doc, path, new):
    if not path:
        return new
    out = copy.deepcopy(doc)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = new
    return out


def draw(root: Path) -> None:
    model = build_report(load_runs([root]))
    render_terminal(model, Console(file=io.StringIO(), width=120), details=True)
    render_markdown(model, details=True)
    render_html(model)


@pytest.mark.parametrize("name", RUNS)
def test_every_node_null_or_a_string_draws_or_is_one_user_error(name, tmp_path):
    base = json.loads((FIXTURES / name / "run.json").read_text(encoding="utf-8"))
    run = tmp_path / "runs" / name
    shutil.copytree(FIXTURES / name, run)
    crashes, refused, drawn = [], 0, 0
    for path in list(nodes(base)):
        for new in (None, "x"):
            (run / "run.json").write_text(json.dumps(replaced(base, path, new)), encoding="utf-8")
            try:
                draw(tmp_path / "runs")
                drawn += 1
            except UserError as exc:
                assert "\n" not in str(exc)
                refused += 1
            except Exception as exc:  # noqa: BLE001 - any other exception is what this test counts
                crashes.append(f"{'.'.join(map(str, path))} = {new!r}: {type(exc).__name__}: {exc}")
    assert crashes == []
    assert drawn and refused  # both outcomes happen: the probe reaches the check and the renderers


def test_the_fixtures_themselves_pass(tmp_path):
    for name in RUNS:
        shutil.copytree(FIXTURES / name, tmp_path / name)
    draw(tmp_path)


def test_the_refusal_names_the_file_and_the_json_path(tmp_path):
    run = tmp_path / "replay"
    shutil.copytree(FIXTURES / "replay", run)
    doc = json.loads((run / "run.json").read_text(encoding="utf-8"))
    doc["results"]["comparison"]["metrics"]["hit@5"]["wins"] = None
    (run / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UserError) as exc:
        read_checked(run)
    assert str(exc.value) == (f"{run / 'run.json'}: results.comparison.metrics.hit@5.wins: expected an integer, "
                              "found null; the record is damaged or not written by ctxgauge")


def test_unknown_keys_and_absent_optional_ones_are_allowed():
    shapes = {"results": Obj({"n": INT, "m": Opt(MapOf(ListOf(NUMBER)))}, required=("n",))}
    check_sections(shapes, {"results": {"n": 1, "new-in-a-later-version": "x"}}, "run.json")
    check_sections(shapes, {"results": None}, "run.json")  # an unfinished run has none
    with pytest.raises(UserError, match=r"run.json: results.n: expected a value, found nothing"):
        check_sections(shapes, {"results": {}}, "run.json")
    with pytest.raises(UserError, match=r"results.m.a\[1\]: expected a number, found true"):
        check_sections(shapes, {"results": {"n": 1, "m": {"a": [1.5, True]}}}, "run.json")
    with pytest.raises(UserError, match=r"results.n: expected an integer, found a number"):
        check_sections(shapes, {"results": {"n": 1.5}}, "run.json")
