"""Engines: the contract and its checker, the guards around every engine call, the registry, and the
reference engines (loaded lazily by name; `graph` is a subpackage of its own).

    from ctxgauge.engines import get_engine
    engine = get_engine("bm25(k1=1.2)")
    engine.build(corpus, out_dir)
    hits = engine.query(out_dir, "fix overdue fee rounding", k=10)
"""

from ctxgauge.engines._base import Engine, EngineLike, Hit, rank
from ctxgauge.engines._contract import DEGENERATE_EMPTY_SHARE, Check, ContractReport, check_engine
from ctxgauge.engines._guards import (ask_defer_writes, ask_identity, call_engine, checked_hits, query_notes,
                                      refuse_own_tree)
from ctxgauge.engines._query import run_query
from ctxgauge.engines._registry import (
    BUILTINS,
    ENTRY_POINT_GROUP,
    REFERENCE_ENGINES,
    EngineInfo,
    canonical_spec,
    describe_engines,
    engine_available,
    engine_names,
    get_engine,
    refuse_same_system,
    same_system,
    unknown_engine,
)
from ctxgauge.engines._spans import MAX_SPANS, SPAN_RULES, check_spans
from ctxgauge.engines._spec import EngineSpec, Param, parse_spec

__all__ = [
    "BUILTINS", "DEGENERATE_EMPTY_SHARE", "ENTRY_POINT_GROUP", "MAX_SPANS", "SPAN_RULES", "REFERENCE_ENGINES", "Check", "ContractReport", "Engine", "EngineInfo",
    "EngineLike", "EngineSpec", "Hit", "Param", "ask_defer_writes", "ask_identity", "call_engine", "canonical_spec", "check_engine", "check_spans", "checked_hits", "describe_engines", "query_notes",
    "engine_available", "engine_names", "get_engine", "parse_spec", "rank", "run_query", "refuse_own_tree", "refuse_same_system", "same_system",
    "unknown_engine",
]
