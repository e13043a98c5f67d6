"""Cases from ContextBench's gold (EuniAI/ContextBench): one case per instance, its gold context as expected
files and gold lines.

ContextBench's evaluator (`contextbench.evaluate --gold FILE`) reads its gold from a JSON file (one record
or a list), JSON lines, or the parquet of its published data set; ctxgauge reads the same three:

- a record names its instance by `instance_id`, `inst_id` or `original_inst_id` (the first present);
- its repository by `repo` (`OWNER/NAME`), else by a GitHub `repo_url`, else by an instance id of the form
  `OWNER__NAME-N`; its revision by `base_commit`, else `commit`;
- its gold context is a list of `{file, start_line, end_line}` (1-based, inclusive), under `gold_context`
  (the parquet column, a list or a JSON string of one), `gold_ctx`, or `init_ctx` plus `add_ctx`;
- its request is `problem_statement` (ContextBench's evaluator does not read it; a case needs one).

One case per instance: query = the problem statement, corpus = the local clone of the repository (found
under `--repos` as SWE-bench clones are) at the revision, expected = the gold context's files in the order
they first appear, gold lines = the union of its spans per file (overlapping and adjacent spans merged, as
ContextBench merges them). Paths are read as ContextBench reads them: a `/testbed/` prefix, a
`/workspace/<dir>/` prefix, a leading `/` and a leading `./` dropped. Reading the parquet needs pyarrow.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ctxgauge._io import parse_data, read_input_bytes
from ctxgauge.errors import UserError
from ctxgauge.metrics._lines import runs
from ctxgauge.suites.cases._importers import _clone_dir
from ctxgauge.suites.cases._model import Case, CaseFile

GOLD_KEYS = ("gold_context", "gold_ctx", "init_ctx", "add_ctx")
"""The fields that hold an instance's gold context, in any of ContextBench's gold files."""
_ID_KEYS = ("instance_id", "inst_id", "original_inst_id")


def is_contextbench(path: Path) -> bool:
    """Whether a file looks like ContextBench gold: a parquet file, or JSON/JSONL whose first record holds a
    gold context field (`GOLD_KEYS`)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return True
    if suffix not in (".json", ".jsonl"):
        return False
    try:
        first = _json_records(path)[:1]
    except UserError:
        return False
    return bool(first) and any(k in first[0] for k in GOLD_KEYS)


def _json_records(path: Path) -> list[dict]:
    """A JSON object, a JSON list of objects, or JSON lines, through the one input reader."""
    data = read_input_bytes(path, "ContextBench gold file")
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"[") or (path.suffix.lower() == ".json" and head.startswith(b"{")):
        raw = parse_data(data, "ContextBench gold file", path, fmt="json")
        raw = raw if isinstance(raw, list) else [raw]
    else:
        raw = [parse_data(line, "ContextBench gold file", f"{path} line {n}")
               for n, line in enumerate(data.split(b"\n"), start=1) if line.strip()]
    if not all(isinstance(d, dict) for d in raw):
        raise UserError(f"{path.name}: every ContextBench record must be a JSON object")
    return raw


def _parquet_records(path: Path) -> list[dict]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found]
    except ImportError:
        raise UserError(f"{path.name}: reading ContextBench parquet needs pyarrow: pip install pyarrow "
                        "(or give the gold as JSON lines)") from None
    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UserError(f"{path.name}: not a readable parquet file ({exc})") from None


def read_records(path: str | Path) -> list[dict]:
    """ContextBench's gold records from JSON, JSON lines or parquet."""
    p = Path(path)
    if not os.path.lexists(p):
        raise UserError(f"{path}: no such file")
    return _parquet_records(p) if p.suffix.lower() == ".parquet" else _json_records(p)


def normalize_path(path: str) -> str:
    """A gold path as ContextBench makes it repository-relative (`parsers.gold._normalize_rel_path`), except
    that only a leading `./` is dropped (ContextBench strips every leading `.` and `/`, which turns
    `.github/x.yml` into `github/x.yml`)."""
    p = path.replace("\\", "/")
    if p.startswith("/testbed/"):
        return p[len("/testbed/"):]
    if p.startswith("/workspace/"):
        rest = p[len("/workspace/"):].split("/", 1)
        return rest[1] if len(rest) == 2 else rest[0]
    if p.startswith("/"):
        return p.lstrip("/")
    while p.startswith("./"):
        p = p[2:]
    return p


def gold_items(rec: dict, where: str) -> list[dict]:
    """The record's gold context items, in ContextBench's order of preference: `init_ctx` + `add_ctx`, else
    `gold_ctx`, else `gold_context` (the parquet column: a list, or its JSON text)."""
    raw: Any = list(rec.get("init_ctx") or []) + list(rec.get("add_ctx") or [])
    if not raw:
        raw = rec.get("gold_ctx")
    if not raw:
        raw = rec.get("gold_context")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raise UserError(f"{where}: gold_context is not valid JSON") from None
    raw = raw or []
    if not isinstance(raw, list) or not all(isinstance(i, dict) for i in raw):
        raise UserError(f"{where}: the gold context must be a list of {{file, start_line, end_line}} objects")
    return raw


def gold_lines(items: list[dict], where: str) -> dict[str, list[tuple[int, int]]]:
    """`{path: [(start, end), ...]}` of gold items, each file's spans merged into sorted runs, files in the
    order they first appear. A span with start < 1 or end < start is refused, never mended."""
    out: dict[str, set[int]] = {}
    for n, item in enumerate(items, start=1):
        path = item.get("file")
        s, e = item.get("start_line"), item.get("end_line")
        if not isinstance(path, str) or not path.strip():
            raise UserError(f"{where}: gold item {n}: needs a `file`")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (s, e)):
            raise UserError(f"{where}: gold item {n} ({path}): start_line and end_line must be integers")
        if s < 1 or e < s:
            raise UserError(f"{where}: gold item {n} ({path}): [{s}, {e}] must have 1 <= start_line <= end_line")
        out.setdefault(normalize_path(path.strip()), set()).update(range(s, e + 1))
    return {p: runs(v) for p, v in out.items() if p}


_GITHUB = re.compile(r"^(?:https?://|git@)github\.com[/:]([^/]+)/([^/]+?)(?:\.git)?/?$")
_INSTANCE = re.compile(r"^([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+)-\d+$")


def repo_of(rec: dict, name: str) -> str | None:
    """`OWNER/NAME` of the record's repository: `repo`, else a GitHub `repo_url`, else the instance id."""
    repo = rec.get("repo")
    if isinstance(repo, str) and "/" in repo:
        return repo.strip()
    m = _GITHUB.match(str(rec.get("repo_url") or "").strip())
    if m:
        return f"{m.group(1)}/{m.group(2)}"
    m = _INSTANCE.match(name)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def load_contextbench(path: str | Path, repos_dir: str | Path | None = None) -> tuple[CaseFile, dict[str, int]]:
    """Cases from ContextBench gold; returns the cases and, by reason, the instances left out."""
    p = Path(path)
    records = read_records(p)
    base = Path(repos_dir) if repos_dir is not None else p.parent
    cases: list[Case] = []
    dropped = {"no-gold-context": 0}
    seen: dict[str, int] = {}
    for n, rec in enumerate(records, start=1):
        name = next((str(rec[k]) for k in _ID_KEYS if rec.get(k)), None)
        where = f"{p.name}: instance {n}" + (f" ({name})" if name else "")
        if name is None:
            raise UserError(f"{where}: needs an instance_id (or inst_id, original_inst_id)")
        if name in seen:
            raise UserError(f"{where}: instance id {name!r} repeats instance {seen[name]}; each instance is one "
                            "case, and case names are unique")
        seen[name] = n
        lines = gold_lines(gold_items(rec, where), where)
        if not lines:
            dropped["no-gold-context"] += 1
            continue
        query = rec.get("problem_statement")
        if not isinstance(query, str) or not query.strip():
            raise UserError(f"{where}: needs a problem_statement (the request a case asks the engine)")
        commit = rec.get("base_commit") or rec.get("commit")
        if not isinstance(commit, str) or not commit.strip():
            raise UserError(f"{where}: needs a base_commit (or commit): the revision the gold lines are at")
        repo = repo_of(rec, name)
        if repo is None:
            raise UserError(f"{where}: needs a repo (OWNER/NAME) or a GitHub repo_url")
        clone = _clone_dir(base, repo, where)
        cases.append(Case(name, query.strip(), f"{clone.resolve()}@{commit.strip()}", tuple(lines),
                          lines=tuple((f, tuple(spans)) for f, spans in sorted(lines.items()))))
    if not cases:
        raise UserError(f"{p.name}: no instance has a gold context; nothing to score")
    return CaseFile(p.name, tuple(cases)), dropped
