"""The parts of a qa run its readers read beside `spec`, `results` and the units, typed: run.json's
`context` (`QAContext`), a repetition's own `record.json` economics (`Economics`), an arm's rate table
(`RateTable`) and a judge panel's summary (`PanelSummary`). Written by `ctxgauge.suites.qa`.

Unlike the suite's own sections these are read tolerantly where the reader says so: a repetition's
record.json that is missing, unreadable or damaged shows its figures as not measured (`Economics.read`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgauge.results._base import Record, RecordError

TOKEN_FIELDS = ("tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write")
"""The four token counts, in the order every table shows them."""


@dataclass
class SourceIdentity(Record):
    """The battery or question set a qa run read, by identity."""

    hash: str | None = None
    """Its content hash: two runs on batteries with different hashes measured different things."""
    name: str | None = None
    """Its name."""


@dataclass
class QAContext(Record):
    """run.json's `context` of a qa run: where its questions came from and how answers were graded."""

    source: str | None = None
    """The battery or question set as given."""
    source_from_run: str | None = None
    """The question set's path, relative to the run (`qa rescore` reads it again)."""
    source_identity: SourceIdentity | None = None
    """The source's identity."""
    rubric: str | None = None
    """The rubric answers were graded by (`pass-fail:...`)."""


@dataclass
class Economics(Record):
    """What one repetition of one arm cost (its record.json's `economics`)."""

    tokens_input: int | None = None
    """Input tokens the answering model read."""
    tokens_output: int | None = None
    """Output tokens it wrote."""
    tokens_cache_read: int | None = None
    """Input tokens read from the provider's cache."""
    tokens_cache_write: int | None = None
    """Input tokens written to it."""
    token_source: str | None = None
    """Where the token counts come from."""
    cost_usd: float | None = None
    """The repetition's cost (None when no rate is known)."""
    cost_basis: str | None = None
    """`reported`, or `estimated:<rate table>`."""

    def tokens(self) -> int:
        """Every token the answering model read or wrote."""
        return sum(int(getattr(self, k) or 0) for k in TOKEN_FIELDS)

    def row(self) -> dict[str, Any]:
        """The token columns, token source, cost and cost basis, by name (runs.json's columns)."""
        return {k: getattr(self, k) for k in (*TOKEN_FIELDS, "token_source", "cost_usd", "cost_basis")}

    @classmethod
    def read(cls, rep_dir: Path) -> "Economics | None":
        """The economics of the repetition in `rep_dir` (its record.json); None when the file is missing,
        unreadable or its economics damaged: figures not measured, never zero."""
        path = rep_dir / "record.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not isinstance(econ := data.get("economics"), dict) or not econ:
            return None
        try:
            return cls.from_json(econ, str(path), "economics")
        except RecordError:
            return None


@dataclass
class RateTable(Record):
    """A rate table costs were estimated from (an arm's `rates`)."""

    version: str | None = None
    """Its version (`ctxgauge-list-2025-06`)."""
    basis: str | None = None
    """Where its prices come from."""
    models: dict[str, dict[str, float]] = field(default_factory=dict)
    """Model -> price per million tokens by kind (input, output, cache_read, cache_write)."""


@dataclass
class PanelSummary(Record):
    """A judge panel's summary for one arm (`--panel`)."""

    scored: int = 0
    """Answers the panel scored."""
    answers: int = 0
    """Answers given."""
    aggregate: float | None = None
    """Mean of the role-weighted aggregate."""
    sd: float | None = None
    """Mean standard deviation of the role scores."""
    agreement: float | None = None
    """Mean agreement (1 - sd/50)."""
    flagged: int = 0
    """Answers the roles disagreed on."""


@dataclass
class BaselineModels(Record):
    """The answer model and judge a qa baseline was measured with (a run compared against it must share
    them: a new judge moves every score without the engine changing)."""

    model: str | None = None
    """The answering model."""
    judge: str | None = None
    """The judge model."""


@dataclass
class BaselineArm(Record):
    """One arm's figures in a qa baseline."""

    score: float | None = None
    """Accuracy (pass/fail) or mean score (rubric) on a 0-100 scale, rounded to 4 places; None when the arm
    scored nothing."""
    questions: int = 0
    """Questions asked."""
    status: str | None = None
    """`measured`, `skipped` or `failed`."""


@dataclass
class QABaseline(Record):
    """A qa baseline file (`qa baseline save`), version 2. Version 1 recorded no `models`: read, then
    refused by `compare_baseline` with the fix (save it again)."""

    kind: str
    """`ctxgauge.qa.baseline`."""
    source: SourceIdentity
    """The battery or question set the run read, by identity (its hash must match the compared run's)."""
    arms: dict[str, BaselineArm | None]
    """Arm -> its figures."""
    version: int | None = None
    """The file's layout version."""
    run_id: str | None = None
    """The run it was saved from."""
    models: BaselineModels | None = None
    """The answer model and judge (None in version 1)."""
    trust: str | None = None
    """The trust gate's status in that run."""


@dataclass
class BaselineRow(Record):
    """One arm of `qa baseline compare`."""

    arm: str
    """The arm."""
    baseline: float | None
    """Its score in the baseline (0-100), or None."""
    run: float | None
    """Its score in the compared run, or None."""
    delta: float | None
    """run - baseline, rounded to 4 places (None when either side has no score)."""
    status: str
    """`ok`, `regression` (fell by more than the tolerance) or `not-measured`."""


@dataclass
class BaselineTrust(Record):
    """The trust gate's status on either side of a baseline comparison."""

    baseline: str | None = None
    """In the baseline's run."""
    run: str | None = None
    """In the compared run."""


@dataclass
class BaselineComparison(Record):
    """What `qa baseline compare` returns (its `--json`)."""

    baseline: str
    """The baseline file."""
    run_dir: str
    """The run compared."""
    tolerance: float
    """Points an arm may drop before it is a regression."""
    arms: list[BaselineRow] = field(default_factory=list)
    """Every arm of either side, by name."""
    regressions: list[str] = field(default_factory=list)
    """Arms that fell by more than the tolerance."""
    trust: BaselineTrust = field(default_factory=BaselineTrust)
    """The trust gate's status on either side."""
