"""The determinism suite: is an engine's context the same every time? ContextBenchmark's families and levels.

    from ctxgauge.suites.determinism import DeterminismConfig, run_determinism
    result = run_determinism(DeterminismConfig(source=Path("repo"), engines=("bm25", "graph")))
    result.engines["bm25"].grade.label        # "CTL 3"
    result.to_json()["engines"]["bm25"]        # {level, families, flags, fingerprint, ...}

Families (one module each): Rebuild Identity (`_rebuild`), Query Stability (`_query`), Drift Under Noise
(`_drift`, noise kinds in `_noise`), Update Identity (`_update`), Cross-Machine Identity (`_cross_machine`).
Levels and the degenerate flag: `_levels`. The pipeline and its run record: `_run`; fingerprints: `_fingerprint`.
"""

from ._config import DEFAULT_FAMILIES, DeterminismConfig, load_queries, parse_list
from ._fingerprint import FINGERPRINT_DIR, RUNTIME_VARIABLES, fingerprint_file_name, runtime_info
from ._levels import (
    DEGENERATE_EMPTY_SHARE,
    LEVEL_NAMES,
    REPEATABLE_THRESHOLD,
    Evidence,
    Flag,
    Grade,
    degenerate_flags,
    grade,
)
from ._noise import LARGE_BYTES, NOISE_KINDS, NOISE_SEED, Noise, make_noise, noise_directory, unrelated_words
from ._plan import UPDATE_DISTANCE, Plan, make_plan
from ._results import DeterminismResult, EngineResult, evidence_of
from ._run import SUITE, SUITE_VERSION, run_determinism
from ._work import FAILED, FAMILIES, NOT_MEASURED, OK, FamilyResult

__all__ = [
    "DEFAULT_FAMILIES",
    "DEGENERATE_EMPTY_SHARE",
    "FAILED",
    "FAMILIES",
    "FINGERPRINT_DIR",
    "LARGE_BYTES",
    "LEVEL_NAMES",
    "NOISE_KINDS",
    "NOISE_SEED",
    "NOT_MEASURED",
    "OK",
    "REPEATABLE_THRESHOLD",
    "RUNTIME_VARIABLES",
    "UPDATE_DISTANCE",
    "DeterminismConfig",
    "DeterminismResult",
    "EngineResult",
    "Evidence",
    "FamilyResult",
    "Flag",
    "Grade",
    "Noise",
    "Plan",
    "degenerate_flags",
    "evidence_of",
    "fingerprint_file_name",
    "grade",
    "load_queries",
    "make_noise",
    "make_plan",
    "noise_directory",
    "parse_list",
    "run_determinism",
    "runtime_info",
    "unrelated_words",
]
