"""The readers read suite data by attribute, never by a string key: an AST walk over report/, export/ and the
suites' readers of a stored run (`qa rescore`, `replay --baseline`) finds no `x["..."]`, `x.get("...")` or
`getattr(x, "...")` except the short allow-list below, each entry with why it is not suite data.

Before the typed runs (issue 35) report/ and export/ held 161 `.get("...")` and 38 `["..."]`; a reader
then typed `results.get("sumary")` and read nothing, silently. Now a misspelt attribute is an
AttributeError on the first fixture run.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ctxgauge"
SCANNED = [*sorted((SRC / "report").glob("*.py")), *sorted((SRC / "export").glob("*.py")),
           SRC / "suites" / "qa" / "_rescore.py", SRC / "suites" / "replay" / "_plan.py"]

_TIMING = "the run record's own timing (records.RunRecord.timing), not suite data"
_PROVENANCE = "the run record's provenance and unit counts (records.RunRecord), not suite data"
_MANIFEST = "the export's own manifest.json, written and read by export/_tree.py, not suite data"
_BLOCK = "a report model block (a Table has `detail`, a figure `hover`), not suite data"
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
}


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


def test_no_string_keyed_access_to_suite_data():
    bad = []
    for path in SCANNED:
        rel = path.relative_to(SRC / "suites" if "suites" in path.parts else SRC).as_posix()
        for line, form, key in string_keys(path):
            if (rel, key) not in ALLOWED:
                bad.append(f"{rel}:{line}: {form} {key!r}")
    assert not bad, "string-keyed reads (read the typed attribute instead):\n" + "\n".join(bad)


def test_every_allowed_entry_is_still_needed():
    # An entry nothing uses any more is removed, so the list stays the short list of real exceptions.
    used = set()
    for path in SCANNED:
        rel = path.relative_to(SRC / "suites" if "suites" in path.parts else SRC).as_posix()
        used |= {(rel, key) for _, _, key in string_keys(path)}
    assert set(ALLOWED) <= used, sorted(set(ALLOWED) - used)


def test_the_walk_finds_each_form(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('a = run.results["summary"]\nb = run.results.get("summary")\nc = getattr(run, "spec")\n'
                     'd = run.results[name]\ne = run.results.summary\n')
    assert [(f, k) for _, f, k in string_keys(probe)] == [("[]", "summary"), (".get", "summary"),
                                                        ("getattr", "spec")]
