"""Cases from elsewhere: SWE-bench-style instances, TREC qrels with their queries, and external rankings.

- SWE-bench-style instances (JSON list or JSON lines of `{instance_id, repo, base_commit,
  problem_statement, patch}`): one case per instance; query = the problem statement, corpus = a local
  clone of `repo` at `base_commit`, expected = the files the patch modifies, deletes or renames (by
  their old path; files it adds did not exist, as in replay), gold lines = the patch's pre-image lines
  (`git.pre_image`, the rule of docs/replay.md).
- TREC qrels plus a queries file (`QID<TAB>TEXT` lines, or JSON lines `{qid, text}`) over one corpus:
  one case per query with at least one relevant file (relevance > 0).
- External rankings for `--run`: a TREC run, or JSON lines `{qid, ranking: [path | {path, score}]}`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from ctxgauge._io import parse_data, read_input_bytes, read_text, unsafe_name_reason
from ctxgauge.errors import UserError
from ctxgauge.git import pre_image
from ctxgauge.suites.cases._model import Case, CaseFile

def patch_files(patch: str) -> list[str]:
    """Files a unified (git) diff modifies, deletes or renames, by their path before the patch, in patch
    order, each once. Added files are left out. Read by the one diff walker (`git.pre_image`), which skips
    hunk bodies by their line counts, so a removed line that happens to start with `--` is never read as a
    file header."""
    return list(pre_image(patch))


def _records(path: Path) -> list[dict]:
    """A JSON list of records, or JSON lines (one record a line), through the one input reader."""
    data = read_input_bytes(path, "records file")
    raw = parse_data(data, "records file", path, fmt="json") if _starts_list(data) else None
    if raw is None:
        lines = data.split(b"\n")
        raw = [parse_data(line, "records file", f"{path} line {n}") for n, line in enumerate(lines, start=1)
               if line.strip()]
    if not isinstance(raw, list) or not all(isinstance(d, dict) for d in raw):
        raise UserError(f"{path.name}: every record must be a JSON object (one per line, or a JSON list of them)")
    return raw


def _starts_list(data: bytes) -> bool:
    return data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")


def _repo_parts(repo: str, where: str) -> tuple[str, str]:
    """`OWNER/NAME` split into two safe names (the one safe-name rule, `_io.unsafe_name_reason`).

    Both become path components under --repos: `../x`, `acme/..`, `a//etc` or `/etc` would otherwise make
    the importer look for (and measure) a directory outside it."""
    owner, sep, name = repo.partition("/")
    reason = None if sep else "it is not OWNER/NAME"
    for part in (owner, name):
        reason = reason or unsafe_name_reason(part)
    if reason:
        raise UserError(f"{where}: repo {repo!r} refused ({reason}); write it as OWNER/NAME, as SWE-bench does "
                        "(e.g. \"django/django\")")
    return owner, name


def _clone_dir(repos_dir: Path, repo: str, where: str) -> Path:
    owner, name = _repo_parts(repo, where)
    candidates = [repos_dir / f"{owner}__{name}", repos_dir / name, repos_dir / owner / name,
                  repos_dir / f"{owner}+{name}" / "repo", repos_dir / f"{owner}+{name}"]
    for c in candidates:
        if c.is_dir():
            return c
    raise UserError(f"no clone of {repo} under {repos_dir}: clone it to {repos_dir / (owner + '__' + name)} "
                    "(or pass --repos DIR where it is)")


def is_swebench(path: Path) -> bool:
    """Whether a JSON/JSONL file looks like SWE-bench instances (its first record has patch and base_commit)."""
    if path.suffix.lower() not in (".json", ".jsonl"):
        return False
    try:
        first = _records(path)[:1]
    except UserError:
        return False
    return bool(first) and {"patch", "base_commit", "repo"} <= set(first[0])


def load_swebench(path: str | Path, repos_dir: str | Path | None = None) -> tuple[CaseFile, dict[str, int]]:
    """Cases from SWE-bench-style instances; returns the cases and, by reason, the instances left out."""
    p = Path(path)
    if not os.path.lexists(p):  # any other kind of file is refused by the reader
        raise UserError(f"{path}: no such file")
    base = Path(repos_dir) if repos_dir is not None else p.parent
    cases, dropped = [], {"no-modified-file": 0}
    seen: dict[str, int] = {}
    for n, rec in enumerate(_records(p), start=1):
        missing = [k for k in ("repo", "base_commit", "problem_statement", "patch") if not isinstance(rec.get(k), str)]
        if missing:
            raise UserError(f"{p.name}: instance {n}: needs {', '.join(missing)} (SWE-bench fields)")
        name = str(rec.get("instance_id") or f"{rec['repo']}#{n}")
        if name in seen:
            raise UserError(f"{p.name}: instance {n}: instance_id {name!r} repeats instance {seen[name]} (each "
                            "instance is one case, and case names are unique); remove or rename one")
        seen[name] = n
        gold = pre_image(rec["patch"])  # the gold patch's pre-image lines, the rule replay uses, in patch order
        expected = list(gold)
        if not expected:
            dropped["no-modified-file"] += 1
            continue
        clone = _clone_dir(base, rec["repo"], f"{p.name}: instance {n}")
        lines = tuple((path, tuple(gold[path])) for path in sorted(expected) if gold.get(path))
        cases.append(Case(name, rec["problem_statement"].strip(), f"{clone.resolve()}@{rec['base_commit']}",
                          tuple(expected), lines=lines))
    if not cases:
        raise UserError(f"{p.name}: no instance modifies an existing file; nothing to score")
    return CaseFile(p.name, tuple(cases)), dropped


def read_queries(path: str | Path) -> dict[str, str]:
    """Query id -> text from `QID<TAB>TEXT` lines or JSON lines `{qid|query_id|id: ..., text|query: ...}`."""
    p = Path(path)
    if not os.path.lexists(p):  # any other kind of file is refused by the reader
        raise UserError(f"{path}: no such queries file")
    text = read_text(p, "queries file")
    out = {}
    if text.lstrip().startswith("{"):
        for rec in _records(p):
            qid = _first(rec, ("qid", "query_id", "_id", "id"))
            q = _first(rec, ("text", "query"))
            if qid is None or q is None:
                raise UserError(f"{p.name}: each JSON line needs a qid and a text")
            out[str(qid)] = str(q)
        return out
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        qid, sep, q = line.partition("\t")
        if not sep or not q.strip():
            raise UserError(f"{p.name}:{lineno}: a queries line reads QID<TAB>TEXT")
        out[qid.strip()] = q.strip()
    return out


def _first(rec: dict, keys: tuple[str, ...]) -> Any:
    return next((rec[k] for k in keys if rec.get(k) is not None), None)


def load_qrels_cases(qrels: str | Path, queries: str | Path, corpus: str) -> tuple[CaseFile, dict[str, int]]:
    """One case per query of `qrels` with a relevant file, asked with its text from `queries`."""
    from ctxgauge.trec import read_qrels

    judged = read_qrels(qrels)
    texts = read_queries(queries)
    cases, dropped = [], {"no-relevant-file": 0}
    for qid, docs in judged.items():
        relevant = tuple(d for d, rel in docs.items() if rel > 0)
        if not relevant:
            dropped["no-relevant-file"] += 1
            continue
        if qid not in texts:
            raise UserError(f"{Path(queries).name}: no text for query {qid!r} of {Path(qrels).name}")
        cases.append(Case(qid, texts[qid], corpus, relevant))
    if not cases:
        raise UserError(f"{Path(qrels).name}: no query has a relevant file (relevance > 0)")
    return CaseFile(Path(qrels).name, tuple(cases)), dropped


def read_rankings(path: str | Path) -> dict[str, list[str]]:
    """Query id -> ranked paths from a TREC run (ordered as trec_eval orders it) or JSON lines
    `{qid|query_id|id|name: ..., ranking|hits|results: [path | {path, score}]}` (in the order given)."""
    from ctxgauge.trec import read_run

    p = Path(path)
    if not os.path.lexists(p):  # any other kind of file is refused by the reader
        raise UserError(f"{path}: no such run file")
    if not read_text(p, "run file").lstrip().startswith("{"):
        return {qid: [d for d, _ in docs] for qid, docs in read_run(p).items()}
    out: dict[str, list[str]] = {}
    for n, rec in enumerate(_records(p), start=1):
        qid = _first(rec, ("qid", "query_id", "id", "name"))
        hits = _first(rec, ("ranking", "hits", "results"))
        if qid is None or not isinstance(hits, list):
            raise UserError(f"{p.name}: line {n}: needs a qid and a ranking list, e.g. "
                            '{"qid": "q1", "ranking": ["src/a.py", "src/b.py"]}')
        paths = list(_paths_of(hits, p.name, n))
        if len(set(paths)) != len(paths):
            raise UserError(f"{p.name}: line {n}: the ranking of {qid!r} lists a path twice")
        out[str(qid)] = paths
    return out


def _paths_of(hits: list, source: str, n: int) -> Iterator[str]:
    for h in hits:
        path = h.get("path") if isinstance(h, dict) else h
        if not isinstance(path, str):
            raise UserError(f"{source}: line {n}: a ranking holds paths or {{path, score}} objects")
        yield path
