"""Typed suite results: what each suite keeps in a run record, one model for the writer and every reader.

A run record (`ctxgauge.records.RunRecord`) is typed to its sections; what a suite keeps inside `spec`,
`results` and each unit line is typed here, one module per suite (`_replay`, `_cases`, `_determinism`,
`_qa`, with the retrieval parts replay and cases share in `_retrieval`), on one base (`_base.Record`:
attribute docstrings, `from_json` that checks and migrates, `to_json` that writes back exactly what was
read). The anchor is inspect_ai's log model (`EvalSample`, `EvalResults`, `EvalLog` typed to the leaves).

`SUITES` is the one table suite -> classes. Importing this package registers nothing and opens nothing.
A fifth suite adds its module and its entry; a suite without an entry is read as plain JSON.

`TypedRun` (`typed(ref)`) is a run as every reader receives it: its spec, results and units as instances
of these classes.

    suites (write) ─▶ results ─▶ records        report, export, cli (read) ─▶ results
"""

from __future__ import annotations

from ctxgauge.results._base import OMIT_EMPTY, OMIT_NONE, Record, RecordError, shape_of
from ctxgauge.results._cases import CasesComparison, CasesResults, CasesSpec, CasesUnit, CorpusRef, PassLine
from ctxgauge.results._determinism import DeterminismResults, DeterminismSpec, DeterminismUnit, EngineResult
from ctxgauge.results._qa import ArmSummary, QAFigures, QAResults, QARun, QASpec, QAUnit, Verdict
from ctxgauge.results._replay import (
    Gate, GateLine, KindSummary, ReplayComparison, ReplayCounts, ReplayResults, ReplaySpec, ReplayUnit,
)
from ctxgauge.results._replay_many import PooledFigure, RepoFigures, ReplayManySummary
from ctxgauge.results._retrieval import (
    Comparison, CurvePoint, EngineIdentity, PackedBudget, Paired, Ranked, RetrievalUnit, TokenizerRef, UnitBase,
    UnitContext, VsPart,
)
from ctxgauge.results._run import TypedRun, typed
from ctxgauge.results._table import SUITES, SuiteClasses, classes


__all__ = [
    "OMIT_EMPTY", "OMIT_NONE", "Record", "RecordError", "SUITES", "SuiteClasses", "TypedRun", "classes", "shape_of",
    "typed",
    "CasesComparison", "CasesResults", "CasesSpec", "CasesUnit", "CorpusRef", "PassLine",
    "DeterminismResults", "DeterminismSpec", "DeterminismUnit", "EngineResult",
    "ArmSummary", "QAFigures", "QAResults", "QARun", "QASpec", "QAUnit", "Verdict",
    "Gate", "GateLine", "KindSummary", "ReplayComparison", "ReplayCounts", "ReplayResults", "ReplaySpec",
    "ReplayUnit", "PooledFigure", "RepoFigures", "ReplayManySummary", "Comparison", "CurvePoint", "EngineIdentity", "PackedBudget", "Paired", "Ranked", "RetrievalUnit",
    "TokenizerRef", "UnitBase", "UnitContext", "VsPart",
]
