"""The readers read suite data by attribute, never by a string key: an AST walk over report/, export/, cli/ and
the suites' readers of a stored run (`qa rescore`, `qa baseline`, `replay --baseline`) finds no `x["..."]`,
`x.get("...")` or `getattr(x, "...")` except the short allow-list below, each entry with why it is not suite
data. cli/ modules that never touch a run (a battery's check, an engine's answer) are listed whole, with why.

Before the typed runs (issue 35) report/ and export/ held 161 `.get("...")` and 38 `["..."]`; a reader
then typed `results.get("sumary")` and read nothing, silently. Now a misspelt attribute is an
AttributeError on the first fixture run. cli/ held 28 `.get("...")` and 55 `["..."]` before its commands
read the suites' typed results (`QARun`, `QARescore`, `QAAdjudicated`, `QABaseline`, `BaselineComparison`,
replay's and cases' typed units, `DeterminismResult`).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ctxgauge"
SCANNED = [*sorted((SRC / "report").glob("*.py")), *sorted((SRC / "export").glob("*.py")),
           *sorted((SRC / "cli").glob("*.py")),
           SRC / "suites" / "qa" / "_rescore.py", SRC / "suites" / "qa" / "_baseline.py",
           SRC / "suites" / "replay" / "_plan.py", SRC / "suites" / "replay" / "_compare.py"]

_TIMING = "the run record's own timing (records.RunRecord.timing), not suite data"
_PROVENANCE = "the run record's provenance and unit counts (records.RunRecord), not suite data"
_MANIFEST = "the export's own manifest.json, written and read by export/_tree.py, not suite data"
_BLOCK = "a report model block (a Table has `detail`, a figure `hover`), not suite data"
_STORE = ("a results-store row (records.ResultsStore.list/get: the store's own index of runs, typed in "
          "records/ if ever), not suite data")
_PROCESS = "the process's environment, or an optional attribute of `os`, an exception or an engine object"
ALLOWED: dict[tuple[str, str], str] = {
    ("report/_check.py", "id"): "the stored unit line before it is typed (the check that types it)",
    ("report/_check.py", "run_id"): "the stored unit line before it is typed: foreign lines are counted there",
    ("report/_build.py", "started_at"): _TIMING,
    ("report/_build.py", "finished_at"): _TIMING,
    ("report/_common.py", "started_at"): _TIMING,
    ("export/_summaries.py", "started_at"): _TIMING,
    ("export/_summaries.py", "finished_at"): _TIMING,
    **{("export/_summaries.py", k): _PROVENANCE for k in ("source", "ctxgauge", "commit", "dirty", "ok", "failed",
                                                         "skipped")},
    **{("export/_tree.py", k): _MANIFEST for k in ("derived", "runs", "files", "path", "counts", "did_not_finish")},
    ("export/_tree.py", "O_NOFOLLOW"): "a platform constant of `os`",
    ("report/_terminal.py", "detail"): _BLOCK,
    ("report/_markdown.py", "detail"): _BLOCK,
    ("report/_html.py", "detail"): _BLOCK,
    ("report/_html.py", "hover"): _BLOCK,
    **{("cli/runs.py", k): _STORE for k in ("finished", "status", "path", "suite", "systems", "dataset",
                                            "headline", "record")},
    ("cli/runs.py", "started_at"): _TIMING,
    ("cli/runs.py", "finished_at"): _TIMING,
    **{("cli/runs.py", k): _PROVENANCE for k in ("source", "commit", "dirty", "ctxgauge", "python", "platform",
                                                 "system", "machine", "cpu_model", "cpu_count", "memory_bytes")},
    ("cli/__init__.py", "run_dir"): _PROCESS,
    ("cli/_app.py", "_argv"): _PROCESS,
    ("cli/_app.py", "ctx"): _PROCESS,
    ("cli/_app.py", "exit_code"): _PROCESS,
    ("cli/_console.py", "COLUMNS"): _PROCESS,
    ("cli/_console.py", "isatty"): _PROCESS,
    ("cli/_crash.py", "getuid"): _PROCESS,
    ("cli/_scratch.py", "getuid"): _PROCESS,
    ("cli/_scratch.py", "TMPDIR"): _PROCESS,
    ("cli/check.py", "tools_report"): _PROCESS,
    ("cli/check.py", "close"): _PROCESS,
    ("cli/check.py", "used"): "an MCP engine's tools_report() (tools listed and used), not a run",
    ("cli/check.py", "found"): "an MCP engine's tools_report() (tools listed and used), not a run",
    ("cli/engines.py", "id"): "an engine's identity() as the registry lists it (`engines`), before any run",
    ("cli/fingerprint.py", "public_key"): "the .sig file `fingerprint sign` just wrote, not a run",
}
WHOLE_FILES: dict[str, str] = {
    "cli/battery.py": "`battery check`: the battery's own files (anchors summary, short key forms), never a run",
    "cli/query.py": "`query`: one engine's answer (`engines` hits as JSON), never a run",
}
"""cli/ modules that read no run at all: every string key in them is passed (each listed with why)."""
PENDING: dict[tuple[str, str], str] = {}
"""(module, function) whose string keys are waiting on another change: each says which, and goes once done."""


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def string_keys(path: Path) -> list[tuple[int, str, str]]:
    """(line, form, key) of every string-keyed read in `path` (a write into a dict the code builds is not a read)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                and (key := _literal(node.slice)) is not None):
            found.append((node.lineno, "[]", key))
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "get" and (key := _literal(node.args[0])) is not None:
                found.append((node.lineno, ".get", key))
            elif (isinstance(f, ast.Name) and f.id in ("getattr", "hasattr") and len(node.args) > 1
                  and (key := _literal(node.args[1])) is not None):
                found.append((node.lineno, f.id, key))
    return found


def _rel(path: Path) -> str:
    return path.relative_to(SRC / "suites" if "suites" in path.parts else SRC).as_posix()


def _pending_lines(path: Path, rel: str) -> set[int]:
    """Lines of the functions of `path` listed in PENDING."""
    names = {fn for (module, fn) in PENDING if module == rel}
    return {line for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef) and node.name in names
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}


def _checked(path: Path) -> list[tuple[int, str, str]]:
    """The string keys of `path` that no whole-file or pending entry passes."""
    rel = _rel(path)
    if rel in WHOLE_FILES:
        return []
    pending = _pending_lines(path, rel)
    return [(line, form, key) for line, form, key in string_keys(path) if line not in pending]


def test_no_string_keyed_access_to_suite_data():
    bad = []
    for path in SCANNED:
        rel = _rel(path)
        for line, form, key in _checked(path):
            if (rel, key) not in ALLOWED:
                bad.append(f"{rel}:{line}: {form} {key!r}")
    assert not bad, "string-keyed reads (read the typed attribute instead):\n" + "\n".join(bad)


def test_every_allowed_entry_is_still_needed():
    # An entry nothing uses any more is removed, so the list stays the short list of real exceptions.
    used = set()
    for path in SCANNED:
        used |= {(_rel(path), key) for _, _, key in _checked(path)}
    assert set(ALLOWED) <= used, sorted(set(ALLOWED) - used)
    # A whole file listed must still hold a string key, a pending function must still exist and hold one.
    by_rel = {_rel(p): p for p in SCANNED}
    assert not [r for r in WHOLE_FILES if r not in by_rel or not string_keys(by_rel[r])], WHOLE_FILES
    stale = [(m, fn) for (m, fn) in PENDING
             if m not in by_rel or not (_pending_lines(by_rel[m], m) & {ln for ln, _, _ in string_keys(by_rel[m])})]
    assert not stale, f"pending entries whose function reads no string key any more (remove them): {stale}"


def test_the_walk_finds_each_form(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('a = run.results["summary"]\nb = run.results.get("summary")\nc = getattr(run, "spec")\n'
                     'd = run.results[name]\ne = run.results.summary\n')
    assert [(f, k) for _, f, k in string_keys(probe)] == [("[]", "summary"), (".get", "summary"),
                                                        ("getattr", "spec")]
