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
