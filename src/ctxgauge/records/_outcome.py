"""What a finished run measured, from its units: the one rule behind exit codes 0/1, 6 and 7 of every suite.

DESIGN.md's table: 6 *unfinished* (some units failed: infra gaps, a crashed engine; `--resume` fills them),
7 *nothing measured* (no unit measured anything: every one failed or was skipped, so no figure in the record
is a result). A run in which every unit failed used to be recorded as `success` with exit 0. Every suite
command asks `outcome` the same question, so the codes cannot drift apart between suites.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from ctxgauge.errors import EXIT_NOTHING_MEASURED, EXIT_UNFINISHED
from ctxgauge.records._model import UNIT_STATUSES, Unit


@dataclass(frozen=True)
class Outcome:
    """A finished run's verdict on itself, from its unit counts."""

    state: str
    """`measured`, `unfinished` or `nothing-measured`."""
    exit_code: int | None
    """6 or 7 for the last two; None when measured (the command's gates decide between 0 and 1)."""
    message: str | None
    """The one line the command prints when not measured."""


def outcome(counts: Mapping[str, int], measured: int | None = None) -> Outcome:
    """The outcome of a run with these unit counts (`ok`, `failed`, `skipped`); `measured`: how many units
    measured something (default: the ok ones; a skipped unit that still holds a figure, such as a qa arm that
    needs a model but measured its retrieval, counts too)."""
    ok, failed, skipped = (int(counts.get(k, 0) or 0) for k in ("ok", "failed", "skipped"))
    total = ok + failed + skipped
    if (ok if measured is None else measured) == 0:
        return Outcome("nothing-measured", EXIT_NOTHING_MEASURED,
                       f"nothing measured: {failed} of {total} unit(s) failed and {skipped} were skipped; no figure "
                       "in the record is a result (see the units' reasons)")
    if failed:
        return Outcome("unfinished", EXIT_UNFINISHED,
                       f"unfinished: {failed} of {total} unit(s) failed; run again with --resume (same --out) to "
                       "retry them")
    return Outcome("measured", None, None)


def measured_something(unit: Unit) -> bool:
    """Whether a unit measured something: it is ok, or it was skipped but holds a figure (a qa
    arm that needs a model still measured its retrieval)."""
    return unit.status == "ok" or (unit.status == "skipped" and any(v is not None for v in unit.figures.values()))


def tally(units: Iterable[Unit]) -> tuple[dict[str, int], int]:
    """(unit counts by status, how many units measured something): the two arguments of `outcome`, from a
    run's units. The record's `counts` and every command's exit code are read through this one count."""
    counts = {s: 0 for s in UNIT_STATUSES}
    measured = 0
    for u in units:
        counts[u.status] = counts.get(u.status, 0) + 1
        measured += measured_something(u)
    return counts, measured


def outcome_of(units: Iterable[Unit]) -> Outcome:
    """The outcome of a run with these units (`outcome(*tally(units))`)."""
    return outcome(*tally(units))
