"""Context Trust Levels (CTL): grading a determinism run, and the degenerate-results flag.

The levels are ContextBenchmark's (`lib/metrics.mjs`, `assignLevel`):

    CTL 4  cross-machine deterministic   CTL 3, and a PASS against another machine's fingerprint
    CTL 3  machine-deterministic         identical artifacts over every rebuild, EMR 1.0, and the same spans
                                         in every trial (span EMR 1.0)
    CTL 2  stable retrieval              EMR 1.0 (artifact bytes may differ)
    CTL 1  repeatable                    mean Jaccard@k >= 0.9 and mean Kendall tau >= 0.9
    CTL 0  non-repeatable                below CTL 1

Thresholds apply to the means over queries, as the reference does, with four departures that each
fix a wrong grade the reference can give:

- **Spans are part of the answer.** The reference knows files only. An engine whose files are stable but
  whose spans (the lines it hands a model) change between trials is not machine-deterministic: CTL 3 and 4
  need the span EMR at 1.0 too (CTL 2, stable retrieval, stays the files' level, as in the reference). A
  record from before spans were measured has no span EMR and is graded on files alone.

- **Exact values.** The reference rounds the means to 4 decimals before grading, so an EMR of 0.99996
  (one trial in 25,000 differing) grades as 1.0 and reaches CTL 2. Here the exact mean is compared.
- **Not measured is not a pass.** The reference starts EMR, Jaccard and tau at 1 and leaves them there
  when the query family is not run, so `--families rebuild` grades CTL 3 without a single query. Here a
  level whose evidence is missing is *not measured*, with the reason, and the level shown is the highest
  one whose evidence is complete.
- **Degenerate results earn nothing.** An engine that returns nothing (or the same list for every query)
  is perfectly repeatable and useless; the reference graded such an engine CTL 3 with drift 0.00. Here it
  is flagged, the reason is printed, and it earns no level above 0.

Drift under noise is reported beside the level and never enters it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ctxgauge.engines import DEGENERATE_EMPTY_SHARE  # one threshold, shared with `ctxgauge check`

__all__ = [
    "DEGENERATE_EMPTY_SHARE",
    "LEVEL_NAMES",
    "REPEATABLE_THRESHOLD",
    "Evidence",
    "Flag",
    "Grade",
    "degenerate_flags",
    "grade",
]

LEVEL_NAMES: Final[Mapping[int, str]] = {
    4: "cross-machine deterministic",
    3: "machine-deterministic",
    2: "stable retrieval",
    1: "repeatable",
    0: "non-repeatable",
}
"""CTL number -> its name in ContextBenchmark's standard."""

REPEATABLE_THRESHOLD: Final = 0.9
"""CTL 1 needs mean Jaccard@k and mean Kendall tau both at least this (compared exactly, never rounded)."""



@dataclass(frozen=True)
class Flag:
    """A property of the results that overrides the level, with the sentence a reader needs."""

    name: str
    """Short name, e.g. `degenerate`."""
    reason: str
    """Why the flag was raised, e.g. `no results for 10 of 10 queries`."""

    def to_json(self) -> dict[str, str]:
        """`{flag, reason}`."""
        return {"flag": self.name, "reason": self.reason}


@dataclass(frozen=True)
class Evidence:
    """What the families measured, as the grading needs it. None means the family has no figures.

    When a figure is None, `missing` says why (family not requested, not applicable, failed), keyed by the
    family name (`rebuild`, `query`, `cross-machine`).
    """

    rebuild_identical: bool | None = None
    """Whether every rebuild gave the same artifact hash."""
    rebuild_distinct: int | None = None
    """How many distinct artifact hashes the rebuilds gave (for the reason printed)."""
    exact_match_rate: float | None = None
    """Mean EMR over queries."""
    span_exact_match_rate: float | None = None
    """Mean EMR over queries of the answers with their spans; None in a record from before spans."""
    mean_jaccard: float | None = None
    """Mean over queries of the mean pairwise Jaccard@k of the trials."""
    mean_tau: float | None = None
    """Mean over queries of the mean pairwise Kendall tau-a of the trials."""
    cross_machine: str | None = None
    """The verdict label of the comparison with another machine's fingerprint (`PASS`, `FAIL`, ...)."""
    cross_machine_reason: str | None = None
    """The comparison's first reason, printed when the verdict does not decide CTL 4."""
    missing: Mapping[str, str] = field(default_factory=dict)
    """Family name -> why it has no figures."""
    flags: Sequence[Flag] = ()
    """Flags raised on the results (see degenerate_flags)."""


@dataclass(frozen=True)
class Grade:
    """The level an engine reached, the levels above it that could not be decided, and why."""

    level: int | None
    """The highest CTL whose evidence is complete and met; None when not even CTL 0-1 could be decided."""
    not_measured: tuple[tuple[int, str], ...]
    """(level, why) for each level above `level` that might have been reached but lacked evidence."""
    reasons: tuple[str, ...]
    """Why the level is what it is, one sentence each (the first unmet requirement above it, caps)."""
    flags: tuple[Flag, ...] = ()
    """Flags raised on the results; a degenerate flag caps the level at 0."""

    @property
    def label(self) -> str:
        """`CTL 3`, or `not measured`."""
        return "not measured" if self.level is None else f"CTL {self.level}"

    @property
    def name(self) -> str | None:
        """The level's name in the standard (`machine-deterministic`), None when not measured."""
        return None if self.level is None else LEVEL_NAMES[self.level]

    def to_json(self) -> dict[str, Any]:
        """`{level, label, name, not_measured: [{level, reason}], reasons, flags}`."""
        return {
            "level": self.level,
            "label": self.label,
            "name": self.name,
            "not_measured": [{"level": lvl, "reason": why} for lvl, why in self.not_measured],
            "reasons": list(self.reasons),
            "flags": [f.to_json() for f in self.flags],
        }


def degenerate_flags(rankings: Mapping[str, Sequence[str]]) -> list[Flag]:
    """Flag results that are repeatable only because they carry no information.

    `rankings` maps each query to the engine's ranked paths on the base build. Degenerate when
    - at least half the queries (DEGENERATE_EMPTY_SHARE) returned nothing, or
    - there are two or more queries and every one returned the same non-empty list (one query alone
      cannot show that the answer ignores the question).
    """
    flags: list[Flag] = []
    n = len(rankings)
    if n == 0:
        return flags
    empty = sum(1 for paths in rankings.values() if not paths)
    if empty >= DEGENERATE_EMPTY_SHARE * n:
        flags.append(Flag("degenerate", f"no results for {empty} of {n} queries: identical empty lists show "
                                        "repeatability, not retrieval"))
    distinct = {tuple(paths) for paths in rankings.values()}
    if n >= 2 and len(distinct) == 1 and empty == 0:
        flags.append(Flag("degenerate", f"the same {len(next(iter(distinct)))} files, in the same order, for "
                                        f"every one of {n} queries: the answer does not depend on the question"))
    return flags


def _why_missing(evidence: Evidence, family: str) -> str:
    return evidence.missing.get(family) or f"the {family} family did not run"


def grade(evidence: Evidence) -> Grade:
    """The Context Trust Level the evidence supports (see the module docstring for the rules)."""
    flags = tuple(evidence.flags)
    q = (evidence.exact_match_rate, evidence.mean_jaccard, evidence.mean_tau)
    if any(value is None for value in q):
        # CTL 0 is "below CTL 1", and even that needs the query trials.
        why = _why_missing(evidence, "query")
        return Grade(None, ((1, why), (2, why), (3, why), (4, why)), (f"query stability not measured: {why}",), flags)
    emr, jaccard, tau = (float(v) for v in q)  # type: ignore[arg-type]

    reasons: list[str] = []
    not_measured: list[tuple[int, str]] = []
    if emr == 1.0:
        level = 2
    elif jaccard >= REPEATABLE_THRESHOLD and tau >= REPEATABLE_THRESHOLD:
        level = 1
        reasons.append(f"CTL 2 needs EMR 1.0; measured {emr!r}")
    else:
        level = 0
        reasons.append(f"CTL 1 needs mean Jaccard@k and tau >= {REPEATABLE_THRESHOLD}; measured Jaccard "
                       f"{jaccard!r}, tau {tau!r}")

    if level == 2:
        if evidence.rebuild_identical is None:
            why = _why_missing(evidence, "rebuild")
            not_measured += [(3, why), (4, why)]
            reasons.append(f"CTL 3 not measured: {why}")
        elif not evidence.rebuild_identical:
            reasons.append(f"CTL 3 needs identical artifacts; the rebuilds gave {evidence.rebuild_distinct} "
                           "distinct hashes")
        elif evidence.span_exact_match_rate is not None and float(evidence.span_exact_match_rate) != 1.0:
            reasons.append("CTL 3 needs the same spans in every trial (span EMR 1.0); measured "
                           f"{float(evidence.span_exact_match_rate)!r}")
        else:
            level = 3

    if level == 3:
        verdict = evidence.cross_machine
        if verdict == "PASS":
            level = 4
        elif verdict == "FAIL":
            reasons.append("CTL 4 needs a PASS against another machine's fingerprint; the comparison FAILED"
                           + (f" ({evidence.cross_machine_reason})" if evidence.cross_machine_reason else ""))
        else:
            # No fingerprint, or a verdict that decides nothing (NOT COMPARABLE, INCONCLUSIVE, REFUSED, and
            # PASS (UNVERIFIED), whose identity is unattributable): CTL 4 is open, never granted.
            why = (_why_missing(evidence, "cross-machine") if verdict is None
                   else f"the comparison gave {verdict}"
                   + (f" ({evidence.cross_machine_reason})" if evidence.cross_machine_reason else ""))
            not_measured.append((4, why))
            reasons.append(f"CTL 4 not measured: {why}")

    degenerate = [f for f in flags if f.name == "degenerate"]
    if degenerate and level > 0:
        reasons = [f"capped at CTL 0 (would be CTL {level}): degenerate results, {degenerate[0].reason}"]
        level, not_measured = 0, []
    return Grade(level, tuple(not_measured), tuple(reasons), flags)
