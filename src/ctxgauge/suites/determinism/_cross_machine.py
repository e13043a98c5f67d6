"""Cross-Machine Identity: this run's fingerprint compared with fingerprints another machine wrote.

The fingerprints given with `--against` are matched to engines by their `adapter` (the engine's spec
string); each match is compared with fingerprints.compare (symmetric, k a controlled variable, a file
compared with itself refused). Figures:

    comparisons   [{against, env, verdict, reasons}] one per matching fingerprint
    verdict       PASS when every comparison PASSed; FAIL when one FAILed; else the first other verdict

Only PASS reaches CTL 4: PASS (UNVERIFIED), INCONCLUSIVE, NOT COMPARABLE and REFUSED leave it not measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxgauge.fingerprints import Fingerprint, Verdict, compare

from ._work import NOT_MEASURED, OK, FamilyResult

__all__ = ["run_cross_machine"]


def run_cross_machine(engine_name: str, ours: Path, against: Sequence[Fingerprint]) -> FamilyResult:
    """Compare the fingerprint file `ours` with each of `against` whose adapter is `engine_name`."""
    if not against:
        return FamilyResult("cross-machine", NOT_MEASURED,
                            "no fingerprint from another machine (give one with --against)")
    matching = [fp for fp in against if fp.adapter == engine_name]
    if not matching:
        adapters = ", ".join(sorted({fp.adapter for fp in against}))
        return FamilyResult("cross-machine", NOT_MEASURED,
                            f"no --against fingerprint for {engine_name} (given: {adapters})")
    comparisons = []
    verdicts = []
    for theirs in matching:
        result = compare(ours, theirs)
        verdicts.append(result.verdict)
        comparisons.append({
            "against": theirs.path.name if theirs.path is not None else None,
            "env": theirs.env,
            "verdict": result.verdict.label,
            "reasons": list(result.reasons),
            "warnings": list(result.warnings),
        })
    if all(v is Verdict.PASS for v in verdicts):
        overall = Verdict.PASS
    elif Verdict.FAIL in verdicts:
        overall = Verdict.FAIL
    else:
        overall = next(v for v in verdicts if v is not Verdict.PASS)
    return FamilyResult("cross-machine", OK, None, {"comparisons": comparisons, "verdict": overall.label})
