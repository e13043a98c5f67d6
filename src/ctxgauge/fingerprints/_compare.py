"""Cross-machine identity: what two fingerprints of the same system on the same inputs show.

Follows ContextBenchmark's `compareFingerprints` (lib/fingerprint.mjs, format 2) and departs from it where it
reports a verdict the evidence does not support:

- **k is a controlled variable.** The reference ignores `k`; a k=5 run against a k=10 run has different result
  lists by construction, which it reports as FAIL (nondeterminism). Here: NOT COMPARABLE.
- **Symmetric.** The reference counts only A's queries, so a query only B ran is invisible and `compare(a, b)`
  can PASS while `compare(b, a)` FAILs. Here every query of either file is compared, and a query run on one
  side only is a difference.
- **A difference in the query sets alone is INCONCLUSIVE, not FAIL.** FAIL claims "same inputs, different
  output"; a query that one side never ran is a different input, not a different output. When an artifact or a
  shared query differs, FAIL (or INCONCLUSIVE if identity is undeclared) stands as in the reference.
- **A file compared with itself is REFUSED.** The reference says PASS (exit 0) for `compare x.json x.json`;
  the same path, or byte-identical content, is no evidence of cross-machine identity. Nor are two fingerprints
  naming the same run (`ctxgauge.runId`; a copy with `env.os` edited is one), nor two identical once their run
  ids are set aside. When everything but `env` agrees and a side names no run (ContextBenchmark's files, older
  ctxgauge's), a copy cannot be told from a second machine: PASS stands, with a warning saying so. Forgery of
  an unsigned fingerprint is not detectable at all; signatures (`ctxgauge sign`/`verify`) are the answer.
- **The corpus is its content.** The reference blocks on the corpus name, which is a folder name: the same
  clone under another folder was NOT COMPARABLE. Here equal corpus hashes make the names a label (noted);
  the name blocks only when a side recorded no hash.
- **Spans are results too.** ctxgauge's files also hold `ctxgauge.spanHashes` (each query's files with the
  lines handed over); when both sides hold them, a query whose files match but whose spans differ is a
  difference like any other. When one side has none (another tool's file, an older ctxgauge), spans are not
  compared, and a reason says so.
- **Exit codes.** NOT COMPARABLE is 4 (the reference uses 2, which our CLI, like most, keeps for usage errors);
  REFUSED is 5. PASS, PASS (UNVERIFIED), FAIL and INCONCLUSIVE keep the reference's 0, 0, 1 and 3.

As in the reference, a controlled variable that either side did not record (format 1, `system: null`) is
"unattributable": it cannot block a comparison, but it makes a PASS unverified and turns a FAIL into
INCONCLUSIVE.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from types import MappingProxyType
from typing import Any, Final

from ._hashing import EMPTY_QUERY_HASH, SPAN_HASHES
from ._io import read_fingerprint
from ._model import NAMESPACE, RUN_ID_KEY, Fingerprint

__all__ = ["EXIT_CODES", "Comparison", "ExitCode", "QueryDetail", "QueryStatus", "Verdict", "compare"]


class ExitCode(IntEnum):
    """Process exit codes of a comparison (and of a usage error), stable for CI scripts."""

    PASS = 0
    """PASS and PASS (UNVERIFIED): CI stays green, as in the reference."""
    FAIL = 1
    """Provably identical inputs, different results: the system is nondeterministic."""
    USAGE = 2
    """Bad invocation or unreadable/malformed file (UserError)."""
    INCONCLUSIVE = 3
    """Results differ but an input is unattributable."""
    NOT_COMPARABLE = 4
    """A controlled variable differs (the reference: 2)."""
    REFUSED = 5
    """A file compared with itself (the reference: PASS)."""


class Verdict(StrEnum):
    """Outcome of a comparison; the value is the label printed to users."""

    PASS = "PASS"
    PASS_UNVERIFIED = "PASS (UNVERIFIED)"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    NOT_COMPARABLE = "NOT COMPARABLE"
    REFUSED = "REFUSED"

    @property
    def label(self) -> str:
        """The label as printed, e.g. `PASS (UNVERIFIED)`."""
        return self.value

    @property
    def exit_code(self) -> ExitCode:
        """The process exit code for this verdict."""
        return EXIT_CODES[self]


EXIT_CODES: Final[Mapping[Verdict, ExitCode]] = MappingProxyType({
    Verdict.PASS: ExitCode.PASS,
    Verdict.PASS_UNVERIFIED: ExitCode.PASS,
    Verdict.FAIL: ExitCode.FAIL,
    Verdict.INCONCLUSIVE: ExitCode.INCONCLUSIVE,
    Verdict.NOT_COMPARABLE: ExitCode.NOT_COMPARABLE,
    Verdict.REFUSED: ExitCode.REFUSED,
})
"""Verdict -> exit code; the one table both the API and the CLI use."""


class QueryStatus(StrEnum):
    """How one query's results compare."""

    MATCH = "match"
    DIFFER = "differ"
    ONLY_A = "only in A"
    ONLY_B = "only in B"


@dataclass(frozen=True)
class QueryDetail:
    """One query of the union of both files."""

    query: str
    """The query text."""
    status: QueryStatus
    """Match, differ, or present on one side only."""
    hash_a: str | None
    """A's result hash, None when A did not run the query."""
    hash_b: str | None
    """B's result hash, None when B did not run the query."""
    spans_a: str | None = None
    """A's span hash (`ctxgauge.spanHashes`), None when spans are not compared (absent on either side)."""
    spans_b: str | None = None
    """B's span hash, None when spans are not compared."""


@dataclass(frozen=True)
class Comparison:
    """The verdict of comparing fingerprint A with fingerprint B, and the evidence behind it."""

    verdict: Verdict
    """The outcome."""
    reasons: tuple[str, ...]
    """Why, one sentence each, in the order a reader needs them."""
    blockers: tuple[str, ...]
    """Controlled variables that differ, e.g. `k (5 vs 10)`; non-empty exactly when NOT COMPARABLE."""
    unknowns: tuple[str, ...]
    """Controlled variables at least one side did not record; non-empty makes the result unverified."""
    warnings: tuple[str, ...]
    """Caveats that do not change the verdict (same machine, empty results, no queries)."""
    artifact_match: bool
    """Whether the artifact hashes are equal."""
    queries: tuple[QueryDetail, ...]
    """Every query of either file: A's in A's order, then those only in B."""

    @property
    def exit_code(self) -> ExitCode:
        """The process exit code for the verdict."""
        return self.verdict.exit_code

    @property
    def verified(self) -> bool:
        """True when every controlled variable was recorded on both sides."""
        return not self.unknowns

    def _with(self, status: QueryStatus) -> tuple[str, ...]:
        return tuple(detail.query for detail in self.queries if detail.status is status)

    @property
    def matched(self) -> tuple[str, ...]:
        """Queries whose result hashes are equal."""
        return self._with(QueryStatus.MATCH)

    @property
    def differing(self) -> tuple[str, ...]:
        """Queries both sides ran with different results."""
        return self._with(QueryStatus.DIFFER)

    @property
    def only_in_a(self) -> tuple[str, ...]:
        """Queries only A ran."""
        return self._with(QueryStatus.ONLY_A)

    @property
    def only_in_b(self) -> tuple[str, ...]:
        """Queries only B ran."""
        return self._with(QueryStatus.ONLY_B)

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-ready dict (for `--json` output and run records)."""
        return {
            "verdict": self.verdict.label,
            "exitCode": int(self.exit_code),
            "verified": self.verified,
            "reasons": list(self.reasons),
            "blockers": list(self.blockers),
            "unknowns": list(self.unknowns),
            "warnings": list(self.warnings),
            "artifactMatch": self.artifact_match,
            "queries": [
                {"query": d.query, "status": d.status.value, "hashA": d.hash_a, "hashB": d.hash_b,
                 **({"spanHashA": d.spans_a, "spanHashB": d.spans_b} if d.spans_a is not None else {})}
                for d in self.queries
            ],
        }


def _load(item: Fingerprint | str | os.PathLike[str]) -> Fingerprint:
    return item if isinstance(item, Fingerprint) else read_fingerprint(item)


def _content_sha(fp: Fingerprint) -> str:
    # A fingerprint built in memory has no file; its content is the text it would be written as.
    return fp.file_sha256 or hashlib.sha256(fp.to_text().encode("utf-8")).hexdigest()


def _same_file(a: Fingerprint, b: Fingerprint) -> bool:
    if a.path is None or b.path is None:
        return False
    try:
        return os.path.samefile(a.path, b.path)
    except OSError:
        return a.path.resolve() == b.path.resolve()


def _set_aside(fp: Fingerprint, *keys: str) -> str:
    """`fp`'s text with our namespace's `keys` and, for "env", the top-level `env` removed: what is left to
    tell two fingerprints apart."""
    data = fp.to_json()
    namespace = data.get(NAMESPACE)
    if isinstance(namespace, dict):
        data[NAMESPACE] = {k: v for k, v in namespace.items() if k not in keys}
    if "env" in keys:
        data.pop("env", None)
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _refusal(a: Fingerprint, b: Fingerprint) -> str | None:
    if _same_file(a, b):
        return f"A and B are the same file ({a.path}): a file compared with itself is no evidence"
    if _content_sha(a) == _content_sha(b):
        return (f"A and B are byte-identical (sha256 {_content_sha(a)[:16]}): a copy of one file, or two runs in "
                "one environment, is no evidence of cross-machine identity")
    if a.run_id is not None and a.run_id == b.run_id:
        # A copy of one run's fingerprint with its env (or anything else) edited: still one run.
        return (f"A and B name the same run ({a.run_id}): two fingerprints of one run are no evidence of "
                "cross-machine identity, whatever else in them differs")
    if _set_aside(a, RUN_ID_KEY) == _set_aside(b, RUN_ID_KEY):
        return ("A and B are identical once their run ids are set aside: a copy with a new run id, or two runs "
                "in one environment, is no evidence of cross-machine identity")
    return None


def _controlled(a: Fingerprint, b: Fingerprint) -> tuple[list[str], list[str], list[str]]:
    blockers: list[str] = []
    unknowns: list[str] = []
    notes: list[str] = []
    checks: list[tuple[str, Any, Any]] = [
        ("adapter", a.adapter, b.adapter),
        ("corpus", a.corpus.name, b.corpus.name),
        ("corpus content", a.corpus.hash, b.corpus.hash),
        ("benchmark version", a.benchmark_version, b.benchmark_version),
        ("system identity", a.system.id if a.system else None, b.system.id if b.system else None),
        ("k", a.k, b.k),
    ]
    if a.corpus.hash is not None and a.corpus.hash == b.corpus.hash and a.corpus.name != b.corpus.name:
        # The name is a label (a folder name: the same clone under another folder is another name); identity
        # rests on content, which both recorded and which is the same.
        checks = [c for c in checks if c[0] != "corpus"]
        notes.append(f"corpus names differ ({a.corpus.name} vs {b.corpus.name}); the content is identical, and "
                     "content is what is compared")
    for label, x, y in checks:
        if x is None or y is None:
            unknowns.append(label)
            side = "A and B" if x is None and y is None else "A" if x is None else "B"
            notes.append(f"unattributable: {label} not recorded in {side}")
        elif x != y:
            blockers.append(f"{label} ({x} vs {y}{_scheme_note(a, b) if label == 'system identity' else ''})")
    return blockers, unknowns, notes


def identity_scheme(fp: Fingerprint) -> int | None:
    """How ctxgauge computed `fp`'s system id (`ctxgauge.identity_scheme`; files of ctxgauge before it was
    recorded are scheme 1); None for a file another tool wrote."""
    if NAMESPACE not in fp.extra:
        return None
    scheme = fp.ctxgauge.get("identity_scheme", 1)
    return scheme if isinstance(scheme, int) and not isinstance(scheme, bool) else None


def _scheme_note(a: Fingerprint, b: Fingerprint) -> str:
    # Ids computed by two schemes differ for the same code: say so, or the reader hunts for a code change.
    sa, sb = identity_scheme(a), identity_scheme(b)
    if sa is None or sb is None or sa == sb:
        return ""
    return (f"; identity schemes differ: {sa} vs {sb}, so the same code has another id: measure both "
            "with one ctxgauge release")


def span_hashes(fp: Fingerprint) -> Mapping[str, str] | None:
    """`ctxgauge.spanHashes` of `fp` (query -> span hash), None when the file has none."""
    value = fp.ctxgauge.get(SPAN_HASHES)
    return value if isinstance(value, Mapping) else None


def _query_details(a: Fingerprint, b: Fingerprint) -> tuple[QueryDetail, ...]:
    details: list[QueryDetail] = []
    sa, sb = span_hashes(a), span_hashes(b)
    both = sa is not None and sb is not None
    for query, hash_a in a.query_hashes.items():
        hash_b = b.query_hashes.get(query)
        spans = (sa.get(query), sb.get(query)) if both and hash_b is not None else (None, None)  # type: ignore[union-attr]
        if hash_b is None:
            status = QueryStatus.ONLY_A
        else:
            status = QueryStatus.MATCH if hash_a == hash_b and spans[0] == spans[1] else QueryStatus.DIFFER
        details.append(QueryDetail(query, status, hash_a, hash_b, *spans))
    for query, hash_b in b.query_hashes.items():
        if query not in a.query_hashes:
            details.append(QueryDetail(query, QueryStatus.ONLY_B, None, hash_b))
    return tuple(details)


def _warnings(a: Fingerprint, b: Fingerprint, queries: tuple[QueryDetail, ...]) -> list[str]:
    warnings: list[str] = []
    if a.env == b.env:
        warnings.append(f"A and B report the same environment ({a.env.get('os')}/{a.env.get('arch')}): "
                        "agreement shows repeatability on one machine, not cross-machine identity")
    elif (a.run_id is None or b.run_id is None) and _set_aside(a, RUN_ID_KEY, "env") == _set_aside(b, RUN_ID_KEY, "env"):
        # Everything but `env` agrees and a side names no run: a second machine looks exactly like a copy of
        # one file with `env.os` edited. Not refused (ContextBenchmark's files name no run, and two of its real
        # runs look like this too), never silent either.
        missing = "A and B" if a.run_id is None and b.run_id is None else "A" if a.run_id is None else "B"
        warnings.append(f"A and B differ only in env, and {missing} name{'s' if missing != 'A and B' else ''} no "
                        "run: a copy of one fingerprint with env edited would look exactly like this; unsigned "
                        "fingerprints cannot tell the two apart (`ctxgauge sign` / `verify`)")
    if not queries:
        warnings.append("no query results in either file: the verdict rests on the artifact hash alone")
    empty = [d for d in queries if d.status is QueryStatus.MATCH and d.hash_a == EMPTY_QUERY_HASH]
    if empty:
        # Identical empty lists are identical, and say nothing about retrieval (ContextBenchmark graded a
        # system whose every query returned nothing as CTL 3).
        warnings.append(f"{len(empty)} of {len(queries)} queries returned no results on both sides")
    return warnings


def compare(
    a: Fingerprint | str | os.PathLike[str],
    b: Fingerprint | str | os.PathLike[str],
) -> Comparison:
    """Compare two fingerprints (or fingerprint files) of one system run on two machines.

    Verdicts, in the order they are decided:
    1. REFUSED: A and B are the same file, have byte-identical content, name the same run, or are identical
       once their run ids are set aside.
    2. NOT COMPARABLE: a controlled variable differs: adapter, corpus name, corpus hash, benchmark version,
       system id, or k.
    3. PASS: the artifact hash and every query hash of either file match; PASS (UNVERIFIED) when a
       controlled variable is unrecorded on a side (`system` absent or null, a format 1 file).
    4. FAIL: the artifact or a query both ran differs, and every controlled variable was recorded;
       INCONCLUSIVE when one was not.
    5. INCONCLUSIVE: everything both sides ran matches, but the query sets differ.

    The verdict does not depend on argument order. Reading a path can raise UserError.
    """
    fa, fb = _load(a), _load(b)
    queries = _query_details(fa, fb)
    artifact_match = fa.artifact_hash == fb.artifact_hash
    blockers, unknowns, notes = _controlled(fa, fb)
    warnings = _warnings(fa, fb, queries)

    def result(verdict: Verdict, reasons: list[str]) -> Comparison:
        # Caveats qualify a verdict about results; a refused or incomparable pair has none to qualify.
        caveats = warnings if verdict not in (Verdict.REFUSED, Verdict.NOT_COMPARABLE) else []
        return Comparison(verdict, tuple(reasons), tuple(blockers), tuple(unknowns), tuple(caveats),
                          artifact_match, queries)

    refusal = _refusal(fa, fb)
    if refusal:
        return result(Verdict.REFUSED, [refusal])
    if blockers:
        return result(Verdict.NOT_COMPARABLE, [f"controlled variable differs: {item}" for item in blockers]
                      + ["neither PASS nor FAIL would mean anything"])

    counts = {status: sum(d.status is status for d in queries) for status in QueryStatus}
    reasons = [
        "artifact hash identical" if artifact_match
        else f"artifact hash differs ({fa.artifact_hash} vs {fb.artifact_hash})",
        f"query results: {counts[QueryStatus.MATCH]}/{len(queries)} identical",
    ]
    if counts[QueryStatus.DIFFER]:
        reasons.append(f"{counts[QueryStatus.DIFFER]} queries returned different results")
        spans_only = sum(1 for d in queries if d.status is QueryStatus.DIFFER and d.hash_a == d.hash_b)
        if spans_only:
            reasons.append(f"{spans_only} of them ranked the same files but handed over different lines (spans)")
    if (span_hashes(fa) is None) != (span_hashes(fb) is None):
        reasons.append(f"spans not compared: {'A' if span_hashes(fa) is None else 'B'} records no span hashes")
    for status, side in ((QueryStatus.ONLY_A, "A"), (QueryStatus.ONLY_B, "B")):
        if counts[status]:
            reasons.append(f"{counts[status]} queries were run only in {side}")
    reasons.extend(notes)

    verified = not unknowns
    if artifact_match and counts[QueryStatus.MATCH] == len(queries):
        return result(Verdict.PASS if verified else Verdict.PASS_UNVERIFIED, reasons)
    if not artifact_match or counts[QueryStatus.DIFFER]:
        if verified:
            reasons.append("inputs are provably identical and the results are not: the system is nondeterministic")
            return result(Verdict.FAIL, reasons)
        reasons.append("results differ but an input is unattributable: a changed system looks exactly like this")
        return result(Verdict.INCONCLUSIVE, reasons)
    reasons.append("every query both sides ran matches, but the query sets differ: different inputs, "
                   "not different outputs")
    return result(Verdict.INCONCLUSIVE, reasons)
