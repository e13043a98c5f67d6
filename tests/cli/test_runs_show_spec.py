"""`runs show` prints every spec value whole, as JSON, at 80 and 120 columns and through a pipe (issue 39,
item 9: a value was cut to `{"id": "sha256:3c24…` at 80 columns, and earlier printed as a Python repr)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from ctxgauge.cli import app

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"
WORD = re.compile(r"\S+")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("spec") / "v2"
    shutil.copytree(V2, root, ignore=shutil.ignore_patterns("README.md", "make_fixtures.sh"))
    return root


@pytest.mark.parametrize("columns", ["80", "120", None])
@pytest.mark.parametrize("name", ["replay-vs", "cases-swebench", "determinism"])
def test_every_spec_value_whole_as_json(runs, name, columns):
    run = runs / name
    spec = json.loads(CliRunner().invoke(app, ["runs", "show", str(run), "--json"]).stdout)["record"]["spec"]
    out = CliRunner().invoke(app, ["runs", "show", str(run)], env={"COLUMNS": columns}).stdout
    assert "'" not in out.split("\nspec\n", 1)[1].split("\nfiles\n", 1)[0]  # no Python repr
    structured = [v for v in spec.values() if isinstance(v, (dict, list)) and v]
    assert structured
    for value in spec.values():
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
        for word in WORD.findall(text):
            assert word in out, (columns, word)
        if columns is None:  # a pipe: each value on one line
            assert text in out, text
    assert "…" not in out
    if columns:
        assert max(cell_len(line) for line in out.splitlines()) <= int(columns)
