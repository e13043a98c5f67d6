"""Typed suite results: what each suite keeps in a run record, one model for the writer and every reader.

A run record (`ctxgauge.records.RunRecord`) is typed to its sections; what a suite keeps inside `spec`,
`results` and each unit line is typed here, one module per suite (`_replay`, `_cases`, `_determinism`,
`_qa`, with the retrieval parts replay and cases share in `_retrieval`), on one base (`_base.Record`:
attribute docstrings, `from_json` that checks and migrates, `to_json` that writes back exactly what was
read). The anchor is inspect_ai's log model (`EvalSample`, `EvalResults`, `EvalLog` typed to the leaves).

`SUITES` is the one table suite -> classes. Importing this package registers nothing and opens nothing.
A fifth suite adds its module and its entry; a suite without an entry is read as plain JSON.

    suites (write) ─▶ results ─▶ records        report, export, cli (read) ─▶ results
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxgauge.results import _cases, _determinism, _qa, _replay
from ctxgauge.results._base import OMIT_EMPTY, OMIT_NONE, Record, RecordError, shape_of
from ctxgauge.results._cases import CasesComparison, CasesResults, CasesSpec, CasesUnit, CorpusRef, PassLine
from ctxgauge.results._determinism import DeterminismResults, DeterminismSpec, DeterminismUnit, EngineResult
from ctxgauge.results._qa import ArmSummary, QAFigures, QAResults, QARun, QASpec, QAUnit, Verdict
from ctxgauge.results._replay import (
    Gate, GateLine, KindSummary, ReplayComparison, ReplayCounts, ReplayResults, ReplaySpec, ReplayUnit,
)
from ctxgauge.results._retrieval import (
    Comparison, CurvePoint, EngineIdentity, PackedBudget, Paired, Ranked, RetrievalUnit, TokenizerRef, UnitBase,
    UnitContext, VsPart,
)


@dataclass(frozen=True)
class SuiteClasses:
    """The typed classes of one suite's record."""

    spec: type[Record]
    """run.json's `spec`."""
    unit: type[Record]
    """A units.jsonl line."""
    results: type[Record]
    """run.json's `results`."""


def _entry(module: Any) -> tuple[str, SuiteClasses]:
    return module.SUITE, SuiteClasses(*module.CLASSES)


SUITES: dict[str, SuiteClasses] = dict(_entry(m) for m in (_replay, _cases, _determinism, _qa))
"""Suite name -> its classes (the names come from each module's SUITE)."""


def classes(suite: str) -> SuiteClasses | None:
    """The classes of `suite`, or None for a suite without typed classes (read as plain JSON)."""
    return SUITES.get(suite)


__all__ = [
    "OMIT_EMPTY", "OMIT_NONE", "Record", "RecordError", "SUITES", "SuiteClasses", "classes", "shape_of",
    "CasesComparison", "CasesResults", "CasesSpec", "CasesUnit", "CorpusRef", "PassLine",
    "DeterminismResults", "DeterminismSpec", "DeterminismUnit", "EngineResult",
    "ArmSummary", "QAFigures", "QAResults", "QARun", "QASpec", "QAUnit", "Verdict",
    "Gate", "GateLine", "KindSummary", "ReplayComparison", "ReplayCounts", "ReplayResults", "ReplaySpec",
    "ReplayUnit", "Comparison", "CurvePoint", "EngineIdentity", "PackedBudget", "Paired", "Ranked", "RetrievalUnit",
    "TokenizerRef", "UnitBase", "UnitContext", "VsPart",
]
