"""A suite is named in its own package and in the one registry of suite views, nowhere else.

A suite's own code is `suites/<name>/` and its sub-command module `cli/<name>.py` (the command is named
after the suite, and shows the suite's own data); everything shared (records, report, export, demo, the
other suites) reads the name from the suite's `SUITE` constant or from the registry.

Shared code that tests `run.suite == "qa"` is the per-suite if-chain this project removed: a fifth suite
would have to touch it. This test reads every module's string literals (docstrings and prose included only
when the whole literal is a suite's name), so it fails on dc65eaf, whose report, summaries and store said
`"replay"`, `"cases"`, `"determinism"` and `"qa"` in if-chains.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ctxgauge.report import VIEWS

SRC = Path(__file__).resolve().parents[2] / "src" / "ctxgauge"
REGISTRY = SRC / "report" / "_views.py"
SUITES = ("replay", "cases", "determinism", "qa")


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string constant in a module, f-string parts included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def offenders(root: Path, names: tuple[str, ...]) -> list[str]:
    """`module:line: literal` for every literal equal to a suite name outside that suite and the registry."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "suites" and len(rel.parts) > 2:
            own = rel.parts[1]
        elif rel.parts[0] == "cli" and len(rel.parts) == 2:
            own = rel.stem
        elif rel.parts[0] == "results" and len(rel.parts) == 2:
            own = rel.stem.lstrip("_")  # results/_<suite>.py: the suite's typed record
        else:
            own = None
        if rel == REGISTRY.relative_to(SRC):
            continue
        for line, text in literals(path):
            if text in names and text != own:
                out.append(f"{rel}:{line}: {text!r}")
    return out


def test_the_registry_knows_every_suite_package():
    packages = {p.name for p in (SRC / "suites").iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert set(SUITES) == packages & set(VIEWS) == set(VIEWS)


def test_no_module_outside_a_suite_and_the_registry_names_a_suite():
    assert offenders(SRC, SUITES) == []


def test_the_check_finds_a_suite_name(tmp_path):
    # The check itself can fail: a literal equal to a suite's name is found (in shared code, or in another
    # suite's package), a sentence mentioning it is not, nor the registry, nor the suite's own package.
    for rel, text in {"report/_probe.py": '"""The replay section."""\nif suite == "replay":\n    pass\n',
                      "report/_views.py": 'VIEWS = {"replay": 1}\n',
                      "suites/replay/_plan.py": 'SUITE = "replay"\n',
                      "suites/cases/_run.py": 'OTHER = "qa"\n',
                      "cli/qa.py": 'app.add_typer(qa_app, name="qa")\n',
                      "cli/runs.py": 'DEFAULT = "replay"\n'}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert offenders(tmp_path, SUITES) == ["cli/runs.py:1: 'replay'", "report/_probe.py:2: 'replay'",
                                           "suites/cases/_run.py:1: 'qa'"]
