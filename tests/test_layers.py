"""The layers of the package, checked: the table in `ctxgauge.__doc__` is the truth about its imports.

Reads every module under src/ctxgauge as source (ast, so imports inside functions count: a circle hidden in
a function still breaks a partial import and still tangles the design), builds the import graph, and
fails naming each import that points up or sideways in the table, each module missing from the table and
each circle. Same rules as the project's layer tool, but self-contained: the default tests depend only on
the checkout.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import ctxgauge

SRC = Path(ctxgauge.__file__).resolve().parent

# Circles allowed while another change removes them: none (records <-> report went with the typed record).
PENDING: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every ctxgauge module `path` imports, at any depth of its syntax tree; `from P import x` counts as
    an import of P (that runs P's `__init__`, which is what makes a package importing itself a circle) and
    of P.x when that is a module."""
    mod = module_name(path)
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "ctxgauge" or target.startswith("ctxgauge."):
                out.add(target)
                out.update(f"{target}.{a.name}" for a in node.names)  # kept only where it is a module
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name == "ctxgauge" or a.name.startswith("ctxgauge."))
    return out


def module_graph() -> dict[str, set[str]]:
    mods = {module_name(p): imports_of(p) for p in sorted(SRC.rglob("*.py"))}
    return {m: {t for t in targets if t in mods and t != m} for m, targets in mods.items()}


def top(module: str) -> str:
    """The layer unit of a module: `ctxgauge.suites.qa._run` -> `ctxgauge.suites`."""
    return ".".join(module.split(".")[:2])


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m, targets in graph.items():
        for t in targets:
            if top(m) != top(t):
                out.setdefault(top(m), set()).add(top(t))
    return out


def all_circles() -> list[list[str]]:
    """Circles between packages, and circles between the modules of one package."""
    graph = module_graph()
    found = circles(package_graph(graph))
    found += [c for c in circles(graph) if len({top(m) for m in c}) == 1]
    return found


def layer_table(doc: str) -> dict[str, int]:
    """Package -> row in the table of `ctxgauge.__doc__` (0 is the top)."""
    block = doc.split("Layers, top to bottom.", 1)[1].split("\n\n", 2)[1]
    rank = {}
    for row, line in enumerate(block.splitlines()):
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        for name in names.split(" · "):
            rank["ctxgauge" if name == "ctxgauge" else f"ctxgauge.{name}"] = row
    return rank


def layer_breaches(graph: dict[str, set[str]], rank: dict[str, int]) -> list[str]:
    out = []
    for unit in sorted({top(m) for m in graph}):
        if unit not in rank:
            out.append(f"{unit} is in no row of the layer table in src/ctxgauge/__init__.py: add it")
    for a, targets in sorted(package_graph(graph).items()):
        for b in sorted(targets):
            if a in rank and b in rank and rank[b] <= rank[a] and (a, b) not in PENDING:
                where = sorted(m for m in graph if top(m) == a and any(top(t) == b for t in graph[m]))
                out.append(f"{a} imports {b} (row {rank[b]}, not below row {rank[a]}) in {', '.join(where)}")
    return out


def test_no_circle_between_packages_or_within_one():
    found = [c for c in all_circles() if not (len(c) == 2 and tuple(c) in PENDING)]
    assert not found, "circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_import_points_down_the_layer_table():
    rank = layer_table(ctxgauge.__doc__ or "")
    assert len(set(rank.values())) >= 8, "the layer table in ctxgauge.__doc__ did not parse"
    breaches = layer_breaches(module_graph(), rank)
    assert not breaches, "\n".join(breaches)


def test_records_no_longer_imports_report():
    # records is the bottom of everything that reads runs: neither the report nor the export above it.
    graph = package_graph(module_graph())
    assert not {"ctxgauge.report", "ctxgauge.export"} & graph.get("ctxgauge.records", set())
    assert "ctxgauge.export" not in graph.get("ctxgauge.report", set())


# -- the checks themselves, on graphs whose answer is known ---------------------------------------------

def test_a_circle_hidden_in_a_function_is_found(tmp_path, monkeypatch):
    pkg = tmp_path / "ctxgauge"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from ctxgauge.a._x import f\n")
    (pkg / "a" / "_x.py").write_text("def f():\n    from ctxgauge.a import g\n")
    (pkg / "b.py").write_text("def h():\n    import ctxgauge.c\n")
    (pkg / "c.py").write_text("from . import b\n")
    monkeypatch.setattr(f"{__name__}.SRC", pkg)
    assert sorted(all_circles()) == [["ctxgauge.a", "ctxgauge.a._x"], ["ctxgauge.b", "ctxgauge.c"]]


def test_an_upward_import_and_an_unlisted_package_are_breaches():
    graph = {"ctxgauge.git": {"ctxgauge.engines._base"}, "ctxgauge.engines._base": set(), "ctxgauge.new": set()}
    breaches = layer_breaches(graph, {"ctxgauge.engines": 0, "ctxgauge.git": 1})
    assert breaches == ["ctxgauge.new is in no row of the layer table in src/ctxgauge/__init__.py: add it",
                        "ctxgauge.git imports ctxgauge.engines (row 0, not below row 1) in ctxgauge.git"]


# -- where modules live (the moves of this round stay made) ---------------------------------------------

def test_no_loose_top_level_module_with_a_misleading_name():
    assert not [n for n in ("api.py", "contract.py", "paths.py") if (SRC / n).exists()]
    assert not list((SRC / "engines").glob("_graph_*.py")), "graph modules belong in engines/graph/"
    assert (SRC / "engines" / "graph" / "__init__.py").is_file()


def test_tests_mirror_the_source_tree():
    tests = Path(__file__).resolve().parent
    # Not mirrors of a module: the opt-in browser tier, the docs/ pages' examples, the fuzz harness (fuzz/, beside
    # src/), the installable plugin used as a fixture, and this file.
    exempt = {tests / "browser", tests / "docs", tests / "fuzz", tests / "plugin_pkg", tests / "test_layers.py"}
    strays = []
    for f in sorted(tests.rglob("test_*.py")):
        if any(e == f or e in f.parents for e in exempt):
            continue
        rel = f.parent.relative_to(tests)
        if rel.parts:
            if not (SRC / rel / "__init__.py").is_file():
                strays.append(str(f.relative_to(tests)))
        elif not ((SRC / f"{f.stem[5:]}.py").is_file() or (SRC / f.stem[5:]).is_dir()):
            strays.append(str(f.relative_to(tests)))
    assert not strays, f"tests with no source module or package of the same path: {strays}"


def test_no_suite_reaches_into_another():
    # What two suites share (scoring a ranking against labels, default requests) lives beside the metrics or
    # in a shared `suites/_*.py` module, so a suite can change without breaking its neighbour.
    def suite(m: str) -> str | None:
        parts = m.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "suites" and not parts[2].startswith("_") else None

    graph = module_graph()
    crossings = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                       if suite(m) and suite(t) and suite(m) != suite(t))
    assert not crossings, crossings
