"""Case files: hand-labelled requests with expected files and the pass lines a suite must hold.

A case file is YAML or JSON:

    pass:                          # optional: metric -> threshold the mean over counted cases must reach
      recall@5: 0.6
      mrr: 0.5
    corpus: ./shelfd               # optional default corpus of every case
    cases:
      - name: overdue-fee          # unique; the unit id in the run record
        query: fix overdue fee rounding
        corpus: shelfd@v1.2        # a directory, or a git repository at a revision (REPO@REV)
        expected: [shelfd/loans.py]
        expected_any_of: [docs/fees.md, README.md]   # optional: one group, or a list of groups;
                                                     # finding any member finds the group, once
        known_gap: true            # optional: runs and reports, never counts toward the pass lines
        lines:                     # optional: gold lines of expected files, [start, end] 1-based inclusive
          shelfd/loans.py: [[40, 52], [88, 88]]

Relative corpus paths are read from the case file's directory. Anything malformed is a UserError naming
the file, the case and the fix, before any engine runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgauge._io import read_data
from ctxgauge.errors import UserError
from ctxgauge.metrics import MetricSpecError, parse_metric
from ctxgauge.metrics.scoring import Labels, PassLine

_CASE_KEYS = {"name", "query", "corpus", "expected", "expected_any_of", "known_gap", "lines"}
_FILE_KEYS = {"pass", "corpus", "cases", "name", "description"}


@dataclass(frozen=True)
class Case:
    """One labelled request."""

    name: str
    """Unique name: the unit id in the run record and the query id in TREC files."""
    query: str
    """The request the engine is asked."""
    corpus: str
    """Where the files are: a directory, or `REPO@REV` (resolved against the case file's directory)."""
    expected: tuple[str, ...] = ()
    """Files the answer needs, each one relevant item."""
    any_of: tuple[tuple[str, ...], ...] = ()
    """Groups of alternatives: any member found finds the group (one relevant item per group)."""
    known_gap: bool = False
    """Runs and is reported, but never counts toward the pass lines (a known weakness being tracked)."""
    lines: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()
    """Gold lines, `(path, ((start, end), ...))` by path: hand-labelled `lines`, or a SWE-bench gold patch's
    pre-image lines (the rule of docs/replay.md). An expected file without an entry counts at file level only."""

    def gold_lines(self) -> dict[str, list[tuple[int, int]]]:
        """`{path: [(start, end), ...]}` of the case's gold lines."""
        return {path: list(spans) for path, spans in self.lines}

    def labels(self, indexed: set[str] | None = None) -> tuple[Labels, tuple[str, ...]]:
        """The case's labels against a corpus's indexed paths, and its coverage gap (expected files the
        corpus does not index, left out of every denominator as in replay)."""
        if indexed is None:
            return Labels(frozenset(self.expected), tuple(frozenset(g) for g in self.any_of)), ()
        gap = tuple(p for p in self.expected if p not in indexed)
        groups = tuple(frozenset(p for p in g if p in indexed) for g in self.any_of)
        gap += tuple(" | ".join(g) for g, kept in zip(self.any_of, groups) if not kept)
        return Labels(frozenset(p for p in self.expected if p in indexed), tuple(g for g in groups if g)), gap


@dataclass(frozen=True)
class CaseFile:
    """A loaded case file (or cases made by an importer)."""

    source: str
    """Where the cases came from (a file name), for messages and records."""
    cases: tuple[Case, ...]
    """The cases, in file order."""
    pass_lines: tuple[PassLine, ...] = field(default=())
    """Thresholds every counted mean must hold."""


def parse_pass_lines(raw: Any, where: str) -> tuple[PassLine, ...]:
    """`{metric: threshold}` into pass lines; a UserError naming `where` on a bad metric or value. A metric
    may be a ranking one (`recall@5`) or a context one (`line_coverage_tokens@4000`, `line_coverage_auc`,
    a `_micro` family): each is held against the run's stored summary figure."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise UserError(f"{where}: `pass` must map metrics to thresholds, e.g. pass: {{recall@5: 0.6}}")
    lines = []
    for metric, value in raw.items():
        try:
            m = parse_metric(str(metric))
        except MetricSpecError as exc:
            raise UserError(f"{where}: pass line {metric!r}: {exc}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserError(f"{where}: pass line {m}: the threshold must be a number, e.g. {m}: 0.6")
        lines.append(PassLine(str(m), float(value), m.higher_is_better))
    return tuple(lines)


def _paths(value: Any, what: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise UserError(f"{where}: `{what}` must be a list of file paths, e.g. {what}: [src/a.py]")
    return tuple(p.strip().removeprefix("./") for p in value)


def _groups(value: Any, where: str) -> tuple[tuple[str, ...], ...]:
    if value is None:
        return ()
    if isinstance(value, list) and value and all(isinstance(g, list) for g in value):
        return tuple(_paths(g, "expected_any_of", where) for g in value)
    return (_paths(value, "expected_any_of", where),)


def resolve_corpus(spec: str, base: Path) -> str:
    """A corpus spec with a relative path made absolute against `base` (the case file's directory)."""
    path, rev = split_corpus(spec)
    p = Path(path).expanduser()
    full = str(p if p.is_absolute() else (base / p))
    return f"{full}@{rev}" if rev is not None else full


def split_corpus(spec: str) -> tuple[str, str | None]:
    """`REPO@REV` -> (REPO, REV); a plain directory -> (dir, None). A directory whose own name holds `@`
    is taken whole when it exists."""
    if "@" in spec and not Path(spec).exists():
        path, rev = spec.rsplit("@", 1)
        if path and rev:
            return path, rev
    return spec, None


def case_from_dict(raw: Any, index: int, source: str, default_corpus: str | None, base: Path) -> Case:
    """One case from its parsed YAML/JSON object (see the module docstring for the fields)."""
    where = f"{source}: case {index}"
    if not isinstance(raw, dict):
        raise UserError(f"{where}: each case must be a mapping with name, query, corpus, expected")
    name = raw.get("name")
    if name is not None:
        where = f"{source}: case {index} ({name!r})"
    unknown = sorted(set(raw) - _CASE_KEYS)
    if unknown:
        raise UserError(f"{where}: unknown field {unknown[0]!r} (fields: {', '.join(sorted(_CASE_KEYS))})")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: needs a `name` (a short unique label, e.g. name: overdue-fee)")
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UserError(f"{where}: needs a `query` (the request, e.g. query: fix overdue fee rounding)")
    corpus = raw.get("corpus", default_corpus)
    if not isinstance(corpus, str) or not corpus.strip():
        raise UserError(f"{where}: needs a `corpus` (a directory or REPO@REV), here or at the top of the file")
    expected = _paths(raw.get("expected", []), "expected", where)
    any_of = _groups(raw.get("expected_any_of"), where)
    if not expected and not any_of:
        raise UserError(f"{where}: needs `expected` files (or `expected_any_of`): what should the engine find?")
    known_gap = raw.get("known_gap", False)
    if not isinstance(known_gap, bool):
        raise UserError(f"{where}: `known_gap` must be true or false")
    lines = _lines(raw.get("lines"), expected, where)
    return Case(name.strip(), query.strip(), resolve_corpus(corpus.strip(), base), expected, any_of, known_gap,
                lines)


def _lines(value: Any, expected: tuple[str, ...], where: str) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """`lines: {path: [[start, end], ...]}` checked: each path expected, each pair 1-based with start <= end,
    no two pairs of a file sharing a line (refused, never mended)."""
    if value is None:
        return ()
    example = "lines: {src/a.py: [[10, 24]]}"
    if not isinstance(value, dict):
        raise UserError(f"{where}: `lines` must map expected files to [start, end] pairs, e.g. {example}")
    out = []
    for path, pairs in value.items():
        p = str(path).strip().removeprefix("./")
        if p not in expected:
            raise UserError(f"{where}: `lines` names {p!r}, which is not an expected file")
        ok = isinstance(pairs, list) and all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in x)
            for x in pairs)
        if not ok:
            raise UserError(f"{where}: `lines` of {p!r} must be a list of [start, end] pairs, e.g. {example}")
        spans = sorted((int(a), int(b)) for a, b in pairs)
        for a, b in spans:
            if a < 1 or b < a:
                raise UserError(f"{where}: `lines` of {p!r}: [{a}, {b}] must have 1 <= start <= end")
        for (a, b), (c, d) in zip(spans, spans[1:]):
            if c <= b:
                raise UserError(f"{where}: `lines` of {p!r}: [{a}, {b}] and [{c}, {d}] overlap")
        out.append((p, tuple(spans)))
    return tuple(sorted(out))


def load_cases(path: str | Path) -> CaseFile:
    """Read and check a YAML or JSON case file."""
    p = Path(path)
    if not os.path.lexists(p):  # anything else there (a FIFO, a device, a directory) is refused by the reader
        raise UserError(f"{path}: no such case file")
    raw = read_data(p, "case file", fmt="json" if p.suffix.lower() == ".json" else "yaml")
    return cases_from_dict(raw, p.name, p.parent)


def cases_from_dict(raw: Any, source: str, base: Path) -> CaseFile:
    """A case file from its parsed object (a mapping with `cases`, or a bare list of cases)."""
    if isinstance(raw, list):
        raw = {"cases": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("cases"), list) or not raw["cases"]:
        raise UserError(f"{source}: a case file holds `cases:`, a list of cases with name, query, corpus, expected")
    unknown = sorted(set(raw) - _FILE_KEYS)
    if unknown:
        raise UserError(f"{source}: unknown top-level field {unknown[0]!r} (fields: {', '.join(sorted(_FILE_KEYS))})")
    default_corpus = raw.get("corpus")
    cases = tuple(case_from_dict(c, i, source, default_corpus, base) for i, c in enumerate(raw["cases"], start=1))
    seen: set[str] = set()
    for c in cases:
        if c.name in seen:
            raise UserError(f"{source}: two cases are named {c.name!r}; names must be unique")
        seen.add(c.name)
    return CaseFile(source, cases, parse_pass_lines(raw.get("pass"), source))


def case_to_dict(case: Case) -> dict:
    """A case as a case file writes it (for importers' `--write-cases`)."""
    out: dict = {"name": case.name, "query": case.query, "corpus": case.corpus, "expected": list(case.expected)}
    if case.any_of:
        out["expected_any_of"] = [list(g) for g in case.any_of]
    if case.known_gap:
        out["known_gap"] = True
    if case.lines:
        out["lines"] = {path: [[a, b] for a, b in spans] for path, spans in case.lines}
    return out
